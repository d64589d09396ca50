"""Trustless games in a club's store, SQLite and PostgreSQL (tests/pg_server.py): a trustless
game made with the club's --store is kept in the store (no file of its own), and `pbem host run
--all --store URL` serves it with the store's classic games in one pass; `pbem games` lists
both. Real processes, a real PostgreSQL server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_club import SEATS, club, run

from pbem.folder.layout import GameFolder
from pbem.folder.play import FolderSeat
from pbem.protocol.documents import RelayPacket, read_blocks
from pbem.seat import keys


@pytest.mark.slow
def test_host_run_all_serves_a_trustless_game_of_each_kind_of_store(tmp_path: Path, store_url: str) -> None:
    homes = club(tmp_path, ["oak"], store=store_url)
    players = [a for s in SEATS for a in ("--player", f"{s}={keys.load_public(homes[s], s).encode()}")]
    run(tmp_path, homes["referee"], "game", "new", "duo", "--host", "referee", *players, "--trustless",
        "--store", store_url)
    assert not (tmp_path / "duo.db").exists() and not (tmp_path / "saves" / "duo.db").exists()
    run(tmp_path, homes["referee"], "folder", "init", "duo", tmp_path / "shared" / "duo", "--store", store_url)
    ids = {s: keys.load_identity(homes[s], s, None) for s in SEATS}
    for g in ("oak", "duo"):
        for s in SEATS:
            FolderSeat.open(tmp_path / "shared" / g, ids[s], homes[s]).join()
    out = run(tmp_path, homes["referee"], "host", "run", "--all", "--once", "--store", store_url).stdout
    for g in ("oak", "duo"):
        assert [seq for seq, _ in GameFolder.open(tmp_path / "shared" / g).packets(None)] == [1], out
    duo = read_blocks(GameFolder.open(tmp_path / "shared" / "duo").packets(None)[0][1].read_text())[0].doc
    assert isinstance(duo, RelayPacket) and duo.waiting is not None and duo.waiting.step == "shuffle"
    listed = {g["name"]: g for g in json.loads(run(tmp_path, homes["referee"], "games", "--json", "--store",
                                                   store_url).stdout)["hosting"]}
    assert sorted(listed) == ["duo", "oak"], listed
    assert listed["duo"]["trustless"] and listed["duo"]["seq"] == 1 and not listed["oak"].get("trustless")
