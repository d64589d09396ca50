"""Alembic migrations of the host's store, run from code (no alembic.ini): `upgrade(conn)`.

Only a store behind `store.HEAD` imports this (and Alembic): the hot path never does.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection


def config(connection: Connection):  # -> alembic.config.Config
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent))
    cfg.attributes["connection"] = connection
    return cfg


def upgrade(connection: Connection, revision: str = "head") -> None:
    """Bring the store to `revision` inside the caller's transaction.

    A one-game file of schema 1 (before Alembic) is stamped 0001 first. The state is read
    again inside the transaction, so two processes creating one store at once do it once.
    """
    from alembic import command

    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(725101)"))  # one migrator at a time
    names = set(inspect(connection).get_table_names())
    cfg = config(connection)
    if "alembic_version" not in names and "games" in names:
        command.stamp(cfg, "0001")
    command.upgrade(cfg, revision)
