"""Where replays and audits find their blocks: a host's store (a path, a URL or a game's name),
an archive or packet file, or a player's folder of received files, sorted into a `Source` by
game (signatures not yet checked: pbem.replay.rounds and pbem.replay.audit check them), and the
game and round picked from it.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pbem.atomic import read_bounded
from pbem.errors import BadPacket, PbemError, Text, UsageError, msg
from pbem.protocol.armor import dearmor_all
from pbem.protocol.documents import Archive, Invitation, Packet, Signed, Talk, parse, payload_hash, read_text
from pbem.ui.words import t

if TYPE_CHECKING:
    from pbem.host.interface import GameHost

ALL = "all"


def audit_hint() -> str:
    return t("run 'pbem audit' on the same source for the full list of faults")


def ended_hint() -> str:
    return t("a round can be replayed once it is over: its last packet carries the archive "
             "(the host can also write it with 'pbem archive GAME --round N')")


class NotReplayable(PbemError):
    """The source holds no archive of the round asked for: it has not ended, or is not there."""

    exit_code = 2


@dataclass
class Source:
    """The archives and packets found in a source, by game (signatures not yet checked)."""

    label: str
    archives: dict[tuple[str, int], dict[str, tuple[bytes, str]]] = field(default_factory=dict)
    packets: dict[str, dict[int, dict[str, str]]] = field(default_factory=dict)  # game -> seq -> hash -> origin
    # hash -> a packet as read here, its signature not yet checked (check_signature): an audit
    # checks it without reading the packet a second time
    blocks: dict[str, Signed[Packet]] = field(default_factory=dict)
    rounds: dict[str, int] = field(default_factory=dict)  # game -> latest round a packet shows
    skipped: list[Text] = field(default_factory=list)  # files that could not be read, and why
    invitations: dict[str, dict[str, bytes]] = field(default_factory=dict)  # game -> hash -> payload
    spans: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)  # the packets each archive chains
    talk: dict[str, dict[str, Signed[Talk]]] = field(default_factory=dict)  # game -> hash -> a line of table talk

    def add(self, kind: str, payload: bytes, origin: str) -> None:
        """Sort a block in by its (typed, not yet verified) document; a malformed one is skipped, saying so."""
        try:
            block = parse(kind, payload, check_signature=False)
        except PbemError as exc:
            self.skipped.append(msg("{label}: {value}", label=origin, value=exc))
            return
        doc = block.doc
        game = doc.game
        if isinstance(doc, Archive):
            self.archives.setdefault((game, doc.round), {}).setdefault(payload_hash(payload), (payload, origin))
            if doc.chain:
                lo, hi = self.spans.get((game, doc.round), (doc.chain[0].seq, doc.chain[-1].seq))
                self.spans[(game, doc.round)] = (min(lo, doc.chain[0].seq), max(hi, doc.chain[-1].seq))
            self.rounds[game] = max(self.rounds.get(game, 0), doc.round)
        elif isinstance(doc, Packet):
            h = payload_hash(payload)
            self.packets.setdefault(game, {}).setdefault(doc.seq, {}).setdefault(h, origin)
            self.blocks.setdefault(h, block)
            self.rounds[game] = max(self.rounds.get(game, 0), doc.round)
        elif isinstance(doc, Talk):
            self.talk.setdefault(game, {}).setdefault(payload_hash(payload), block)
        elif isinstance(doc, Invitation):
            self.rounds.setdefault(game, 0)
            self.invitations.setdefault(game, {}).setdefault(payload_hash(payload), payload)

    def games(self) -> list[str]:
        return sorted(set(self.rounds) | {g for g, _ in self.archives})

    def trustless(self, game: str) -> bool:
        """Whether `game` is a trustless one (its invitation says so): audited from its chain,
        by pbem.replay.trustless, which alone loads the trustless protocol (rbcl)."""
        return any(parse("invitation", p, check_signature=False).expect(Invitation).doc.trustless
                   for p in self.invitations.get(game, {}).values())

    def archived(self, game: str) -> list[int]:
        return sorted(r for g, r in self.archives if g == game)

    def archive(self, game: str, round_no: int) -> tuple[bytes, str]:
        versions = self.archives[(game, round_no)]
        if len(versions) > 1:
            where = ", ".join(sorted(origin for _, origin in versions.values()))
            raise BadPacket(t("{source} holds {n} different archives of round {round} of game {game}",
                              source=self.label, n=len(versions), round=round_no, game=game),
                            hint=t("the host signed two histories; audit each file alone ({files})", files=where))
        return next(iter(versions.values()))


def _file_blocks(path: Path) -> list[tuple[str, bytes]]:
    if path.suffix.lower() == ".eml":
        from pbem.mail.message import extract_blocks, iter_messages

        return [b for _, msg in iter_messages(path) for b in extract_blocks(msg)]
    return dearmor_all(read_text(path))


def _is_db(path: Path) -> bool:
    return read_bounded(path, 16, head=True) == b"SQLite format 3\x00"


def _from_db(where: str | Path, only: str | None = None, rounds: Collection[int] | None = None) -> Source:
    """Every game of a host's store, classic and trustless (or only the game called `only`).
    With `rounds`, only the packets those rounds' archives chain are read (and each game's
    newest, which says who holds which seat now): an audit of one round then costs one round,
    not the whole game."""
    from pbem.host.games import open_game
    from pbem.host.paths import as_url
    from pbem.host.store import Store

    src = Source(str(where))
    with Store(as_url(where)) as store:
        trustless = {g for g, _, _ in store.trustless_list()}
        for game_id in [store.find(only)] if only else store.game_ids() + sorted(trustless):
            with open_game(store, game_id) as host:  # a trustless round is audited from its whole chain
                _add_game(src, host, str(where), None if game_id in trustless else rounds)
    return src


def _add_game(src: Source, host: GameHost, where: str, rounds: Collection[int] | None = None) -> None:
    """A host's invitation, archives and packets (all, or those `rounds` need), as blocks of `src`."""
    game = host.game_id()
    status = host.status()
    src.rounds[game] = status["round"]
    for kind, payload in dearmor_all(host.invitation()):
        src.add(kind, payload, f"{where} invitation")
    for round_no, armored in host.archives().items():
        for kind, payload in dearmor_all(armored):
            src.add(kind, payload, f"{where} round {round_no}")
    for said in host.talk():
        for kind, payload in dearmor_all(said.armored):
            src.add(kind, payload, f"{where} talk {said.id}")
    if rounds is None:
        spans: list[tuple[int, int | None]] = [(1, None)]
    else:
        newest = status["seq"]
        spans = sorted({src.spans[(game, r)] for r in rounds if (game, r) in src.spans} | {(newest, newest)})
    read = 0
    for lo, hi in spans:
        for seq, armored in host.packets(since=max(lo - 1, read), until=hi):
            for kind, payload in dearmor_all(armored):
                src.add(kind, payload, f"{where} packet {seq}")
        read = max(read, hi or 0)


MOST_ENTRIES = 100_000  # files and folders looked at under one folder: a game's folder holds hundreds


def received_files(root: Path) -> list[Path]:
    """The `.pbem` and `.eml` regular files under `root`, hidden names and linked folders left
    out. A folder holding more than MOST_ENTRIES entries (a home, or `/` by mistake) is refused
    before anything is read, rather than walked for minutes."""
    found: list[Path] = []
    seen = 0
    folders = [root]
    while folders:
        try:
            with os.scandir(folders.pop()) as listing:
                entries = list(listing)
        except OSError:  # a folder we may not read holds nothing of ours
            continue
        seen += len(entries)
        if seen > MOST_ENTRIES:
            raise UsageError(msg("{folder} holds more than {count} files and folders: name the folder of one game",
                                 folder=str(root), count=MOST_ENTRIES))
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                folders.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False) and Path(entry.name).suffix.lower() in (".pbem", ".eml"):
                found.append(Path(entry.path))
    return sorted(found)


def open_source(source: str | Path | None, db: Path | None = None, *,
                rounds: Collection[int] | None = None) -> Source:
    """A host's store (a path or URL; or a game's name in the default store), an archive or
    packet file, or a folder. `rounds`: the rounds the caller will read (a store then reads
    only their packets; files and folders are read whole)."""
    if db is not None:
        return _from_db(db, rounds=rounds)
    if source is None or str(source) == "":
        raise UsageError(t("name a game, a file or a folder (or pass --db PATH)"))
    path = Path(source)
    if path.is_dir():
        src = Source(str(path))
        for p in received_files(path):
            try:
                for kind, payload in _file_blocks(p):
                    src.add(kind, payload, str(p))
            except PbemError as exc:
                src.skipped.append(msg("{label}: {value}", label=str(p), value=exc))
        return src
    if path.is_file():
        if _is_db(path):
            return _from_db(path, rounds=rounds)
        src = Source(str(path))
        for kind, payload in _file_blocks(path):
            src.add(kind, payload, str(path))
        return src
    if "://" in str(source):
        return _from_db(str(source), rounds=rounds)
    from pbem.host.paths import sqlite_file, store_url

    url = store_url(game=str(source))
    if "/" not in str(source) and ((file := sqlite_file(url)) is None or file.is_file()):
        try:
            return _from_db(url, only=str(source), rounds=rounds)
        except PbemError:
            pass
    raise UsageError(t("no game, file or folder named {name}", name=repr(str(source))),
                     hint=sources_hint())


def sources_hint() -> str:
    """What replay and audit read, for the hint of a source that holds no game."""
    return t("pass a game name under saves/, a .db file, an archive or packet file, or a folder of received files")


def pick_game(src: Source, game: str | None = None) -> str:
    games = src.games()
    if game is not None:
        games = [g for g in games if g == game or g.rsplit("-", 1)[0] == game]
    if not games:
        raise NotReplayable(t("{source} holds no pbem game named {game}", source=src.label, game=repr(game)) if game
                            else t("{source} holds no pbem game", source=src.label),
                            hint=sources_hint())
    if len(games) > 1:
        raise UsageError(t("{source} holds several games: {games}", source=src.label, games=", ".join(games)),
                         hint=t("pick one with --game GAME"))
    return games[0]


def pick_round(src: Source, game: str, round_no: int | None, chain: list[int] | None = None) -> int:
    """The round asked for (default: the latest finished one), or say why it cannot be replayed.
    `chain`: the rounds a trustless game's chain ended (it has no archives); default: those archived."""
    archived = src.archived(game) if chain is None else chain
    hint = ended_hint() if chain is None else t("a round of a trustless game can be replayed once every seat has "
                                                "revealed its round key at the round's end")
    if round_no is None:
        if not archived:
            raise NotReplayable(t("no round of game {game} has ended yet in {source}: there is nothing to replay",
                                  game=game, source=src.label), hint=hint)
        return archived[-1]
    if round_no not in archived:
        seen = src.rounds.get(game, 0)
        if 1 <= round_no <= seen:
            why = t("round {round} of game {game} has not ended yet", round=round_no, game=game)
        elif round_no > seen:
            why = t("round {round} of game {game} has not been played yet", round=round_no, game=game)
        else:
            why = t("round {round} of game {game} does not exist", round=round_no, game=game)
        if chain is None:
            why = t("{why}: it has no archive yet", why=why)
        if archived:
            why = t("{why} (finished: {rounds})", why=why, rounds=", ".join(map(str, archived)))
        raise NotReplayable(why, hint=hint)
    return round_no
