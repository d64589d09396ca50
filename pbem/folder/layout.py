"""Shared game folder: one directory per game, synced by Syncthing, Dropbox, NFS...

Layout::

    DIR/pbem-folder.json        game id, seats, version (written once by init)
    DIR/packets/<seat>/         host -> one seat:   000017-<hash>.pbem
    DIR/packets/table/          host -> everyone:   000017-<hash>.pbem
    DIR/inbox/                  players -> host:    <seat>-000017-<hash>.pbem
    DIR/inbox/done/             inbox files the host has processed
    DIR/archive/                round archives:     round-003-<hash>.pbem
    DIR/notices/                host -> everyone:   000017-late-<hash>.pbem (reminders, late...)
    DIR/talk/                   seat -> everyone:   000017-ann-<hash>.pbem (table talk, relayed by the host)

Every file is written once under a content-addressed name and never rewritten,
so sync tools have nothing to merge; the only move is ``mark_done``.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pbem.atomic import TMP_SUFFIX, content_hash, read_bounded, write_atomic, write_new
from pbem.errors import BadPacket, CannotRead, Conflict, UsageError
from pbem.names import TABLE, check_seat_name
from pbem.protocol.documents import load_json
from pbem.protocol.limits import KIB, MAX_FILE
from pbem.ui import failures
from pbem.ui.words import t

MANIFEST = "pbem-folder.json"
FORMAT = "pbem-folder"
VERSION = 1
EXT = ".pbem"
SEQ_WIDTH = 6

# Only names we wrote ourselves count as packets; anything else in packets/
# (including a sync-conflict copy, impossible for content-addressed names
# unless a file was damaged) is ignored.
_PACKET_RE = re.compile(rf"^(\d{{{SEQ_WIDTH},}})-([0-9a-f]{{12}}|[0-9a-f]{{64}})\.pbem$")
_TALK_RE = re.compile(rf"^(\d{{{SEQ_WIDTH},}})-[A-Za-z0-9_-]{{1,32}}-([0-9a-f]{{12}}|[0-9a-f]{{64}})\.pbem$")
_NOTICE_RE = re.compile(rf"^(\d{{{SEQ_WIDTH},}})-[a-z]{{1,16}}-([0-9a-f]{{12}}|[0-9a-f]{{64}})\.pbem$")
# Partial downloads of sync clients that are not hidden files.
_PARTIAL_SUFFIXES = (TMP_SUFFIX, ".part", ".partial", ".crdownload", ".download")
MAX_MANIFEST = 64 * KIB  # a manifest of 12 seats is ~300 bytes
# An inbox file keeps its name when set aside only if the name is short and plain: anyone who can
# write to the folder names inbox files, and the name goes on into a `.why` file and a log line.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+() -]{0,119}")


def _check_seat(seat: str) -> None:
    check_seat_name(seat)


def _check_seq(seq: int, what: str | None = None) -> None:
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
        raise UsageError(t("bad {what} {value}", what=what or t("packet sequence number"), value=repr(seq)))


def _is_candidate(p: Path) -> bool:
    name = p.name
    if name.startswith((".", "~")):
        return False
    if name.lower().endswith(_PARTIAL_SUFFIXES) or not name.lower().endswith(EXT):
        return False
    try:  # a link, a FIFO or a device named like a move is a candidate too: refused and set aside unread
        return not stat.S_ISDIR(os.lstat(p).st_mode)
    except OSError:
        return False


def _mtime(path: Path) -> float:
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return 0.0


class GameFolder:
    def __init__(self, dir: Path, game_id: str, seats: tuple[str, ...]) -> None:
        # Use GameFolder.init / GameFolder.open; this only binds attributes.
        self.dir = Path(dir)
        self.game_id = game_id
        self.seats = seats

    def __repr__(self) -> str:
        return f"GameFolder({str(self.dir)!r}, game_id={self.game_id!r}, seats={self.seats!r})"

    @classmethod
    def init(cls, dir: Path, game_id: str, seats: list[str] | tuple[str, ...]) -> GameFolder:
        """Create the layout; re-running it for the same game is a no-op."""
        dir = Path(dir)
        if not isinstance(game_id, str) or not game_id.strip():
            raise UsageError(t("game id must be a non-empty string"))
        seats = tuple(seats)
        if not seats:
            raise UsageError(t("a game needs at least one seat"))
        for s in seats:
            _check_seat(s)
        # Case-insensitive file systems (macOS, Windows) would merge the dirs.
        if len({s.lower() for s in seats}) != len(seats):
            raise UsageError(t("seat names must differ regardless of case: {seats}", seats=list(seats)))
        if (dir / MANIFEST).exists():
            existing = cls.open(dir)
            if existing.game_id != game_id or existing.seats != seats:
                raise Conflict(t("{dir} already holds game {game} with seats {seats}", dir=dir,
                                 game=repr(existing.game_id), seats=list(existing.seats)))
            return existing
        dir.mkdir(parents=True, exist_ok=True)
        folder = cls(dir, game_id, seats)
        for sub in [folder.done_dir, folder.archive_dir, folder._seat_dir(None), *map(folder._seat_dir, seats)]:
            folder._sub(sub)
        manifest = {"format": FORMAT, "version": VERSION, "game_id": game_id, "seats": list(seats)}
        # Written last: a folder with a manifest is a complete folder.
        write_atomic(dir / MANIFEST, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())
        return folder

    @classmethod
    def open(cls, dir: Path) -> GameFolder:
        dir = Path(dir)
        path = dir / MANIFEST
        try:
            raw = read_bounded(path, MAX_MANIFEST)
        except CannotRead as exc:
            if exc.missing:
                raise UsageError(t("{dir} is not a pbem game folder (no {manifest})", dir=dir,
                                   manifest=MANIFEST)) from None
            raise
        data: Any = load_json(raw, repr(str(path)))
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise BadPacket(t("{path} is not a pbem folder manifest", path=path))
        version = data.get("version")
        if not isinstance(version, int) or version < 1:
            raise BadPacket(t("{path} has a bad version {version}", path=path, version=repr(version)))
        if version > VERSION:
            raise UsageError(t("{dir} uses folder format v{version}; this pbem reads up to v{newest}", dir=dir,
                               version=version, newest=VERSION))
        game_id, seats = data.get("game_id"), data.get("seats")
        if not isinstance(game_id, str) or not game_id or not isinstance(seats, list) or not seats:
            raise BadPacket(t("{path} lacks a game id or seats", path=path))
        try:
            for s in seats:
                _check_seat(s)
        except UsageError as e:
            raise BadPacket(f"{path}: {failures.message(e)}") from None
        return cls(dir, game_id, tuple(seats))

    def _sub(self, sub: Path) -> Path:
        """`sub`, a folder inside the game folder, made if missing. Anyone who can write to the
        folder could replace one of its folders by a link to elsewhere (and pbem would write
        there) or by a file: each step below the game folder must be a folder, not a link."""
        here = self.dir
        for part in sub.relative_to(self.dir).parts:
            here = here / part
            try:
                mode = os.lstat(here).st_mode
            except FileNotFoundError:
                try:
                    os.mkdir(here)
                    continue
                except FileExistsError:  # made by another process meanwhile
                    mode = os.lstat(here).st_mode
            if not stat.S_ISDIR(mode):
                said = (t("{path} in the game folder is a link; pbem writes only into the folder itself", path=repr(str(here)))
                        if stat.S_ISLNK(mode) else
                        t("{path} in the game folder is not a folder; pbem writes only into its own folders",
                          path=repr(str(here))))
                raise BadPacket(said, hint=t("remove it; the next run makes the folder again"))
        return sub

    @property
    def inbox_dir(self) -> Path:
        return self.dir / "inbox"

    @property
    def done_dir(self) -> Path:
        return self.inbox_dir / "done"

    @property
    def archive_dir(self) -> Path:
        return self.dir / "archive"

    def _seat_dir(self, seat: str | None) -> Path:
        if seat is None:
            return self.dir / "packets" / TABLE
        if seat not in self.seats:
            raise UsageError(t("unknown seat {seat}; seats are {seats}", seat=repr(seat), seats=list(self.seats)))
        return self.dir / "packets" / seat

    # -- host -> players -------------------------------------------------

    def publish_packet(self, seq: int, data: bytes, seat: str | None = None) -> Path:
        """Publish to one seat's dir, or to packets/table/ when ``seat`` is None."""
        _check_seq(seq)
        return write_new(self._sub(self._seat_dir(seat)), f"{seq:0{SEQ_WIDTH}d}", EXT, data)

    def _packet_names(self, seat: str | None) -> list[tuple[int, str]]:
        """(seq, file name) of the packets in one seat's dir (or the table dir), in order. Names,
        not paths: a bot asks every poll, and making a Path for each of a game's ~200 packets
        cost more than the rest of its look."""
        try:
            names = os.listdir(self._seat_dir(seat))
        except FileNotFoundError:
            return []
        return sorted((int(m.group(1)), n) for n in names if (m := _PACKET_RE.match(n)))

    def packets(self, seat: str | None, after: int = 0) -> list[tuple[int, Path]]:
        """Packets in one seat's dir (or the table dir) numbered after `after`, ordered by sequence number."""
        d = self._seat_dir(seat)
        return [(seq, d / n) for seq, n in self._packet_names(seat) if seq > after]

    def packets_newest_first(self, seat: str | None) -> Iterator[tuple[int, Path]]:
        """Every packet file visible to ``seat`` (its own dir, then the table dir), newest first
        (each path made only when it is reached: a reader mostly stops at the first)."""
        dirs = [seat, None] if seat is not None else [None]
        found = sorted((-seq, rank, n) for rank, src in enumerate(dirs) for seq, n in self._packet_names(src))
        for seq, rank, n in found:
            yield -seq, self._seat_dir(dirs[rank]) / n

    def latest_packet(self, seat: str | None) -> tuple[int, bytes] | None:
        """Highest-numbered packet visible to ``seat``: its own dir or the table dir.

        On a tie the seat's own copy wins. Two different packets with the same
        number in one dir mean the host forked; picking one silently would hide
        that, so it is an error.
        """
        best: tuple[int, list[Path]] | None = None
        sources = [seat, None] if seat is not None else [None]
        for src in sources:
            listing = self._packet_names(src)
            if not listing:
                continue
            top = listing[-1][0]
            if best is None or top > best[0]:
                best = (top, [self._seat_dir(src) / n for s, n in listing if s == top])
        if best is None:
            return None
        seq, paths = best
        blobs = {read_bounded(p, MAX_FILE) for p in paths}
        if len(blobs) > 1:
            raise Conflict(t("{n} different packets numbered {seq} in {dir}", n=len(blobs), seq=seq,
                             dir=paths[0].parent))
        return seq, blobs.pop()

    # -- players -> host -------------------------------------------------

    def submit_move(self, seat: str, seq: int, data: bytes) -> Path:
        self._seat_dir(seat)  # validates the seat
        _check_seq(seq)
        return write_new(self._sub(self.inbox_dir), f"{seat}-{seq:0{SEQ_WIDTH}d}", EXT, data)

    def inbox(self) -> list[Path]:
        """Inbox files oldest first, sync-conflict copies included.

        Conflict copies (``x (conflicted copy ...).pbem``,
        ``x.sync-conflict-....pbem``) are ordinary candidates: the host
        authenticates contents, not names. Use ``inbox_unique`` to fold copies.
        """
        try:
            entries = list(os.scandir(self.inbox_dir))
        except FileNotFoundError:
            return []
        found: list[tuple[float, str, Path]] = []
        for e in entries:
            p = Path(e.path)
            if not _is_candidate(p):
                continue
            try:
                found.append((e.stat(follow_symlinks=False).st_mtime, e.name, p))
            except FileNotFoundError:
                continue  # moved to done/ by a concurrent host run
        return [p for _, _, p in sorted(found)]

    def inbox_unique(self) -> list[tuple[str, Path]]:
        """``(sha256 hex, path)`` for each distinct content, keeping the oldest copy."""
        seen: set[str] = set()
        out: list[tuple[str, Path]] = []
        for p in self.inbox():
            try:
                h = content_hash(read_bounded(p, MAX_FILE))
            except CannotRead:
                continue  # moved by another host, or nothing pbem would read
            if h not in seen:
                seen.add(h)
                out.append((h, p))
        return out

    def mark_done(self, path: Path, digest: str | None = None) -> Path:
        """Move a processed inbox file to inbox/done/; calling it again is harmless."""
        return self.move_aside(path, "done", digest)

    def move_aside(self, path: Path, sub: str, digest: str | None = None) -> Path:
        """Move an inbox file into inbox/<sub>/ (done/, rejected/) without reading it and without
        replacing another file; returns where it went. `digest` (its content hash, when the
        caller read it) names it on a clash; a name that is long or not plain is replaced.
        FileNotFoundError when it is gone and was not moved there."""
        path = Path(path)
        if path.parent.resolve() != self.inbox_dir.resolve():
            raise UsageError(t("{path} is not in {dir}", path=path, dir=self.inbox_dir))
        target_dir = self._sub(self.inbox_dir / sub)
        tag = (digest or os.urandom(8).hex())[:12]
        name = path.name if _PLAIN_NAME.fullmatch(path.name) else f"renamed-{tag}{EXT}"
        target = target_dir / name
        if not os.path.lexists(path):
            if os.path.lexists(target):
                return target  # moved already (by us, or another host)
            raise FileNotFoundError(path)
        if os.path.lexists(target):
            # a hand-named file ("move.pbem") may reuse a name already there: keep both
            stem, suffix = os.path.splitext(name)
            target = target_dir / f"{stem[:100]}-{tag}{suffix}"
        os.replace(path, target)  # renames the entry itself, never what a link points to
        return target

    # -- notices (reminders, late notices, away, pause...) -------------------

    @property
    def notices_dir(self) -> Path:
        return self.dir / "notices"

    def publish_notice(self, seq: int, kind: str, data: bytes) -> Path:
        _check_seq(seq)
        if not re.fullmatch(r"[a-z]{1,16}", kind):
            raise UsageError(t("bad notice kind {kind}", kind=repr(kind)))
        return write_new(self._sub(self.notices_dir), f"{seq:0{SEQ_WIDTH}d}-{kind}", EXT, data)

    def notices(self) -> list[tuple[int, Path]]:
        """Notice files, ordered by the packet they are about."""
        try:
            names = os.listdir(self.notices_dir)
        except FileNotFoundError:
            return []
        out = [(int(m.group(1)), self.notices_dir / n) for n in names if (m := _NOTICE_RE.match(n))]
        return sorted(out, key=lambda e: (e[0], _mtime(e[1]), e[1].name))

    # -- table talk: the seats' lines, relayed by the host ----------------

    @property
    def talk_dir(self) -> Path:
        return self.dir / "talk"

    def publish_talk(self, stem: str, data: bytes) -> Path:
        return write_new(self._sub(self.talk_dir), stem, EXT, data)

    def talk(self) -> list[Path]:
        """The relayed lines' files, by the packet they answer (their names say it)."""
        try:
            names = os.listdir(self.talk_dir)
        except FileNotFoundError:
            return []
        return [self.talk_dir / n for n in sorted(names) if _TALK_RE.match(n)]

    # -- archive ---------------------------------------------------------

    def publish_archive(self, round_no: int, data: bytes) -> Path:
        _check_seq(round_no, t("round number"))
        return write_new(self._sub(self.archive_dir), f"round-{round_no:03d}", EXT, data)
