"""Alembic migrations of the host's store, run from code (no alembic.ini): `upgrade(conn)`.

Only a store behind `tables.HEAD` imports this: the hot path never does. A new store is made
at HEAD at once, without Alembic (see `upgrade`); an older one is migrated by Alembic.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Column, MetaData, PrimaryKeyConstraint, String, Table, inspect, text
from sqlalchemy.engine import Connection

from pbem.host.tables import HEAD, SCHEMA_VERSION, meta, metadata


def config(connection: Connection):  # -> alembic.config.Config
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent))
    cfg.attributes["connection"] = connection
    return cfg


def upgrade(connection: Connection, revision: str = "head") -> None:
    """Bring the store to `revision` inside the caller's transaction.

    A store without a table is made at HEAD at once, as Alembic's cookbook builds an up-to-date
    database: the tables as pbem.host.tables declares them, stamped HEAD (tests/test_store.py
    checks that the migrations from nothing leave the same tables, columns, defaults, keys and
    indexes). Otherwise Alembic runs the migrations it lacks; a one-game file of schema 1 (before
    Alembic) is stamped 0001 first. The state is read again inside the transaction, so two
    processes creating one store at once do it once.
    """
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(725101)"))  # one migrator at a time
    names = set(inspect(connection).get_table_names())
    if not names and revision == "head":
        _create(connection)
        return
    from alembic import command

    cfg = config(connection)
    if "alembic_version" not in names and "games" in names:
        command.stamp(cfg, "0001")
    command.upgrade(cfg, revision)


def _create(connection: Connection) -> None:
    """A new store's tables at HEAD, and its marks: the revision and meta.schema."""
    metadata.create_all(connection)
    # Alembic's own table of the revision, as Alembic makes it (alembic.runtime.migration)
    version = Table("alembic_version", MetaData(), Column("version_num", String(32), nullable=False),
                    PrimaryKeyConstraint("version_num", name="alembic_version_pkc"))
    version.create(connection)
    connection.execute(version.insert().values(version_num=HEAD))
    connection.execute(meta.insert().values(key="schema", value=str(SCHEMA_VERSION)))
