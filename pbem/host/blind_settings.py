"""A trustless game's settings in the store: its row of trustless_games keeps the settings
(pbem.host.settings.Settings, as JSON) and the clock of the step waiting (a PacketClock); the
blind host reads and changes them one transaction at a time, kept at the store's version.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import msgspec
from sqlalchemy import bindparam, select, update
from sqlalchemy.engine import Connection

from pbem.host.memo import KeptAt
from pbem.host.settings import PacketClock, Settings, encode, settings_of
from pbem.host.store import Store
from pbem.host.tables import trustless_games

# Built once: building a statement costs more than running it.
_READ = select(trustless_games.c.settings, trustless_games.c.clock).where(trustless_games.c.id == bindparam("b_game"))


Stored = tuple[str | None, str | None]  # the settings and the clock as the row holds them


def read(c: Connection, game_id: str) -> Stored:
    """The settings and the clock of the step waiting, in one statement, as stored."""
    row = c.execute(_READ, {"b_game": game_id}).one()
    return row.settings, row.clock


def decoded(stored: Stored) -> tuple[Settings, PacketClock]:
    """The settings and the clock, decoded (new objects each time: a caller may change them)."""
    settings, clock = stored
    return settings_of(settings), (msgspec.json.decode(clock, type=PacketClock) if clock and clock != "null"
                                   else PacketClock())


def store(c: Connection, game_id: str, settings: Settings | None = None, clock: PacketClock | None = None) -> None:
    """Write `settings` and/or the step's `clock` (empty: none)."""
    values: dict[str, str | None] = {}
    if settings is not None:
        values["settings"] = encode(settings)
    if clock is not None:
        values["clock"] = msgspec.json.encode(clock).decode() if clock != PacketClock() else None
    if values:
        c.execute(update(trustless_games).where(trustless_games.c.id == game_id).values(**values))


class SettingsAtVersion:
    """The blind host's transactions on `store`, and its game's settings and clock as read at
    the store's version (pbem.host.memo: the one rule): no commit since, by any process (`pbem
    game config`, another host), so nothing changed them; after one they are read again."""

    def __init__(self, store: Store, game_id: str) -> None:
        self.store, self.game_id = store, game_id
        self._kept: KeptAt[Stored] | None = None
        self._version: int | None = None  # the store's version the read or change under way sees
        self._writing = False  # the change under way wrote settings or the clock: nothing it reads is kept

    def get(self, c: Connection) -> tuple[Settings, PacketClock]:
        """The settings and the clock of the step waiting, read in `c` (a `read` or a
        `transaction`), or as read before at the same version."""
        kept = self._kept.at(self._version) if self._kept is not None else None
        if kept is None:
            kept = read(c, self.game_id)
            if not self._writing:  # what a change wrote is kept only once it commits (read again then)
                self._kept = KeptAt(self._version, kept)
        return decoded(kept)

    def put(self, c: Connection, settings: Settings | None = None, clock: PacketClock | None = None) -> None:
        self._kept, self._writing = None, True
        store(c, self.game_id, settings, clock)

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One change: the game's row locked (SQLite: the whole store already is, BEGIN IMMEDIATE),
        then the store's version read (no other process commits until this change ends)."""
        try:
            with self.store.write() as c:
                lock = select(trustless_games.c.id).where(trustless_games.c.id == self.game_id)
                c.execute(lock if self.store.sqlite else lock.with_for_update()).one()
                self._version, self._writing = self.store.version(), False
                yield c
        finally:
            self._version, self._writing = None, False

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read: the store's version taken before its snapshot, so what it reads is as of
        that version or newer (kept at it, it is read again at the next commit)."""
        self._version = self.store.version()
        try:
            with self.store.read() as c:
                yield c
        finally:
            self._version = None
