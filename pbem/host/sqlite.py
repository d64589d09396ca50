"""How pbem uses a SQLite file of its own: the host's store, a blind host's game file, a key
home's mail memory. One set-up for all three, so none of them is the one that loses a commit.

- a busy timeout of `BUSY_SECONDS`: a second process (two hosts, a host and `pbem games`)
  waits for the lock rather than failing at once;
- pbem says BEGIN itself (the driver's own transactions off): `BEGIN IMMEDIATE`, so a
  writer holds the lock from its first read, or plain `BEGIN` for a connection run with the
  execution option `pbem_read`;
- foreign keys enforced; `synchronous = FULL`, so a commit survives a power cut in WAL mode;
- WAL (readers never wait for the writer), set by `use_wal` once the file is known to be
  pbem's: the mode is written into the file, and a file that is not pbem's is left as it was.

SQLAlchemy is imported only by `engine`, so the mail memory (plain sqlite3) does not load it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

BUSY_SECONDS = 60


def set_up(con: sqlite3.Connection) -> None:
    """The settings of every connection to a pbem SQLite file (a sqlite3 connection)."""
    con.isolation_level = None
    con.execute("PRAGMA foreign_keys = ON")
    con.execute("PRAGMA synchronous = FULL")


def connect(path: Path) -> sqlite3.Connection:
    """A plain connection to pbem's own file at `path` (made if missing), set up, in WAL mode."""
    con = sqlite3.connect(path, timeout=BUSY_SECONDS)
    set_up(con)
    con.execute("PRAGMA journal_mode = WAL")
    return con


def watcher(path: str) -> sqlite3.Connection:
    """A connection to pbem's file at `path` that only reads `PRAGMA data_version` (Store.version):
    it begins no transaction and changes nothing, so it needs none of set_up's settings."""
    return sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)


def engine(url: str) -> Engine:
    """An SQLAlchemy engine on the SQLite file of `url` whose every connection is set up."""
    from sqlalchemy import create_engine, event

    made = create_engine(url, connect_args={"timeout": BUSY_SECONDS})

    @event.listens_for(made, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        set_up(dbapi_conn)

    @event.listens_for(made, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN" if conn.get_execution_options().get("pbem_read") else "BEGIN IMMEDIATE")

    return made


def use_wal(made: Engine) -> None:
    """Put the file of `made` in WAL mode (once it is known to be pbem's)."""
    raw = made.raw_connection()
    try:
        raw.cursor().execute("PRAGMA journal_mode = WAL")
    finally:
        raw.close()
