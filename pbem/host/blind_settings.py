"""A trustless game's settings in its own file (pbem.host.blind_file's blind_config): one row
per field of pbem.host.settings.Settings (its JSON), and a row "clock" for the step waiting.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
from sqlalchemy import Table, delete, insert, inspect, select
from sqlalchemy.engine import Connection

from pbem.host.settings import PacketClock, Settings, settings_of


def _rows(c: Connection, config: Table) -> dict[str, str]:
    if not inspect(c).has_table(config.name):
        return {}
    return {r.key: r.value for r in c.execute(select(config))}


def read(c: Connection, config: Table) -> Settings:
    rows = _rows(c, config)
    rows.pop("clock", None)
    return settings_of("{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in rows.items()) + "}")


def clock(c: Connection, config: Table) -> PacketClock:
    text = _rows(c, config).get("clock")
    return msgspec.json.decode(text, type=PacketClock) if text and text != "null" else PacketClock()


def store(c: Connection, config: Table, settings: Settings | None = None, clock: PacketClock | None = None) -> None:
    """Write `settings` (each field its row) and/or the step's `clock` (empty: no row)."""
    config.create(c, checkfirst=True)
    values: dict[str, Any] = {}
    if settings is not None:
        c.execute(delete(config).where(config.c.key != "clock"))
        values.update(msgspec.to_builtins(settings))
    if clock is not None:
        c.execute(delete(config).where(config.c.key == "clock"))
        if clock != PacketClock():
            values["clock"] = msgspec.to_builtins(clock)
    for key, value in values.items():
        c.execute(insert(config).values(key=key, value=json.dumps(value, sort_keys=True)))
