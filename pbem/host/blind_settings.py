"""A trustless game's settings in the store: its row of trustless_games keeps the settings
(pbem.host.settings.Settings, as JSON) and the clock of the step waiting (a PacketClock).
"""

from __future__ import annotations

import msgspec
from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from pbem.host.settings import PacketClock, Settings, encode, settings_of
from pbem.host.tables import trustless_games


def read(c: Connection, game_id: str) -> Settings:
    return settings_of(c.execute(select(trustless_games.c.settings).where(trustless_games.c.id == game_id)).scalar_one())


def clock(c: Connection, game_id: str) -> PacketClock:
    text = c.execute(select(trustless_games.c.clock).where(trustless_games.c.id == game_id)).scalar_one()
    return msgspec.json.decode(text, type=PacketClock) if text and text != "null" else PacketClock()


def store(c: Connection, game_id: str, settings: Settings | None = None, clock: PacketClock | None = None) -> None:
    """Write `settings` and/or the step's `clock` (empty: none)."""
    values: dict[str, str | None] = {}
    if settings is not None:
        values["settings"] = encode(settings)
    if clock is not None:
        values["clock"] = msgspec.json.encode(clock).decode() if clock != PacketClock() else None
    if values:
        c.execute(update(trustless_games).where(trustless_games.c.id == game_id).values(**values))
