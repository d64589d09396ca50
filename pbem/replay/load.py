"""A round opened for `pbem replay`: from its signed archive, or for a trustless game, from its
chain followed again (pbem.replay.trustless). `load_replay` finds one in a store, a shared game
folder or a packet file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pbem.replay.rounds import Replay, build, verify_archive
from pbem.replay.sources import open_source, pick_game, pick_round

if TYPE_CHECKING:
    from pbem.protocol.crypto import Identity
    from pbem.replay.trustless import Followed


def load_replay(source: str | Path | None, *, db: Path | None = None, round_no: int | None = None,
                game: str | None = None, reader: tuple[str, Identity] | None = None,
                followed: Followed | None = None, home: Path | None = None) -> Replay:
    """The round, with the table talk found with it placed between its moves (`reader`: a seat
    and its key, which opens the whispers sealed to that seat; `followed`: a trustless game's
    chain in `source` followed already, by pbem.replay.trustless.follow_chain; `home`: the
    reader's key home, where its seat keeps how far it checked a trustless game's chain)."""
    src = open_source(source, db, rounds=())  # a replay reads the archive alone
    g = pick_game(src, game)
    if src.trustless(g):  # no archive: the round is opened from the chain
        from pbem.replay.talk import on_chain
        from pbem.replay.trustless import chain_round  # the mental-poker modules load only for such a game

        replay = chain_round(src, g, round_no, followed, (home, reader[1]) if reader and home else None)
        packets = {seq: src.blocks[next(iter(v))] for seq, v in src.packets.get(g, {}).items() if len(v) == 1}
        replay.talk = on_chain(list(src.talk.get(g, {}).values()), packets, replay.round, replay.invitation.doc, reader)
        return replay
    r = pick_round(src, g, round_no)
    payload, origin = src.archive(g, r)
    archive, invitation = verify_archive(payload)
    replay = build(archive, invitation, origin)
    from pbem.replay.talk import check

    replay.talk, _ = check(list(src.talk.get(g, {}).values()), archive.doc, invitation.doc, reader)
    return replay
