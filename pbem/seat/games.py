"""A player's list of games: every game joined with this key home, and whose turn it is.

Read from the key home alone (no key unlocked): the invitation kept on joining names the
seats and the host; the latest packet saved (mail play, `pbem inbox`) says the round and
whose turn it is and by when (its signed deadline); a move file kept for that packet says
it was answered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pbem.errors import PbemError
from pbem.protocol.documents import Packet, read_blocks
from pbem.seat import keys
from pbem.seat.home import joined_games, latest_saved_packet, load_invitation, move_path


def my_games(home: Path) -> list[dict[str, Any]]:
    mine = {k.encode() for _, k in keys.list_identities(home)}
    out = []
    for game in joined_games(home):
        try:
            inv = load_invitation(home, game).doc
        except PbemError:
            continue
        seat = next((s.name for s in inv.seats if s.key in mine), None)
        row: dict[str, Any] = {"game": game, "name": inv.name, "seat": seat, "host": inv.host.name, "round": None,
                               "seq": None, "to_move": None, "phase": None, "due": None, "yours": False,
                               "answered": False}
        latest = latest_saved_packet(home, game)
        if latest is not None:
            try:
                doc: Packet | None = read_blocks(latest.read_text(encoding="utf-8"))[0].expect(Packet).doc
            except (PbemError, IndexError, OSError):
                doc = None
            if doc is not None:
                over = doc.phase == "game-over"
                answered = bool(seat and move_path(home, game, seat, doc.seq).exists())
                row.update(round=doc.round, seq=doc.seq, phase=doc.phase, to_move=None if over else doc.to_move,
                           due=doc.deadline.due if doc.deadline is not None and not over else None,
                           answered=answered, yours=bool(not over and seat and doc.to_move == seat and not answered))
        out.append(row)
    return out
