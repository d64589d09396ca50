"""Every SQLite file pbem keeps is used with one set-up (pbem/host/sqlite.py).

The host's store, a trustless game's file and a key home's mail memory, each made by the code
that makes it for real: each file is in WAL mode, and each connection the code works with has
the foreign keys on, `synchronous = FULL` and the same busy timeout. A file that is not pbem's
is refused and left in the journal mode it had.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from folder_games import make_homes

from pbem.errors import PbemError
from pbem.host import blind
from pbem.host import referee as H
from pbem.host.store import Store
from pbem.mail.memory import InboxMemory
from pbem.seat import keys

SEATS = ["ann", "bob", "cat"]


def _settings(con: Any) -> tuple[int, ...]:
    return tuple(int(con.execute(f"PRAGMA {name}").fetchone()[0]) for name in ("foreign_keys", "synchronous", "busy_timeout"))


def _journal(path: Path) -> str:
    con = sqlite3.connect(path)
    try:
        return str(con.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        con.close()


def test_the_store_the_blind_game_and_the_mail_memory_are_set_up_alike(tmp_path: Path) -> None:
    homes = make_homes(tmp_path, ["referee", *SEATS])
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    seats = [(s, ids[s].public) for s in SEATS]
    store_path, blind_path = tmp_path / "club.db", tmp_path / "trustless.db"
    H.create_game(store_path, "t", ids["referee"], "classic", seats, [])
    blind.create_game(blind_path, "b", ids["referee"], "classic", seats, [])
    seen: dict[str, tuple[int, ...]] = {}
    with Store(f"sqlite:///{store_path}") as store, store.engine.connect() as c:
        seen["store"] = _settings(c.connection.dbapi_connection)
    with blind.BlindHost(blind_path) as host, host.store.engine.connect() as c:
        seen["blind"] = _settings(c.connection.dbapi_connection)
    memory = InboxMemory.of_home(homes["ann"])
    try:
        memory.remember(["id:<1@x>"])
        seen["memory"] = _settings(memory.db)
    finally:
        memory.close()
    assert seen == {name: (1, 2, 60_000) for name in ("store", "blind", "memory")}
    memory_path = homes["ann"] / "mail" / "read.db"
    assert [_journal(p) for p in (store_path, blind_path, memory_path)] == ["wal"] * 3


def test_a_file_not_of_pbem_is_left_in_its_journal_mode(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE notes (x TEXT)")
    con.commit()
    con.close()
    with pytest.raises(PbemError):
        Store(f"sqlite:///{other}")
    assert _journal(other) == "delete"
