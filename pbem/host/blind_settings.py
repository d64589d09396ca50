"""A trustless game's settings in the store: its row of trustless_games keeps the settings
(pbem.host.settings.Settings, as JSON) and the clock of the step waiting (a PacketClock).
"""

from __future__ import annotations

import msgspec
from sqlalchemy import bindparam, select, update
from sqlalchemy.engine import Connection

from pbem.host.settings import PacketClock, Settings, encode, settings_of
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
