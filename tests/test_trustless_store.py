"""Trustless games in the store (migration 0010): a blind host's file of the pbem before it
(tests/fixtures/trustless-v2, its write_db.py) opens as a store holding its one game, keeps every
setting, notice, line of talk and mark of its clock, and plays on; a store of schema 0009 takes
a trustless game after the upgrade, and the host's `pbem inbox` routes joins to it, on SQLite
and PostgreSQL."""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from folder_games import keys_here
from processes import new_keys, pbem
from sqlalchemy import create_engine, text
from test_protocol_vectors import _identity
from test_store import schema_diff

from pbem.errors import EXIT_USAGE, UsageError
from pbem.host import blind
from pbem.host.clock import FakeClock
from pbem.host.games import hosted_games
from pbem.host.referee import create_game
from pbem.host.store import Store
from pbem.host.tables import HEAD
from pbem.mail.player_mail import block_mail
from pbem.protocol.documents import read_blocks
from pbem.seat import keys, player
from pbem.seat.trustless import TrustlessSeat
from pbem.seat.trustless import join as player_join

FIXTURE = Path(__file__).parent / "fixtures" / "trustless-v2" / "game.db"
SEATS = ("ann", "bob", "cat")


def _tables(db: Path) -> set[str]:
    with sqlite3.connect(db) as c:
        return {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_a_blind_hosts_file_of_the_last_version_opens_as_a_store_and_plays_on(tmp_path: Path) -> None:
    saves = tmp_path / "saves"
    saves.mkdir()
    db = saves / "oldclub.db"
    shutil.copyfile(FIXTURE, db)
    assert "blind_game" in _tables(db) and "alembic_version" not in _tables(db)
    # the club's store beside it, with a classic game
    ids = {n: _identity(n) for n in ("referee", *SEATS)}
    create_game(saves / "pbem.db", "oak", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS], [])

    # `pbem status`, as a user types it, finds the file beside the store: opening it upgrades it
    status = json.loads(pbem("status", "oldclub", "--json", cwd=tmp_path, home=tmp_path / "home", ok=True).stdout)
    assert status["trustless"] and status["seq"] == 1
    assert status["waiting"] == {"step": "shuffle", "seats": ["ann"], "due": "2026-12-01T13:00:00+00:00"}
    assert status["timing"]["deadline"] == 3600 and status["timing"]["reminders"] == ["50%"]
    assert {s["name"]: (s["email"], s["last_activity"]) for s in status["seats"]} == {
        s: (f"{s}@example.org", "2026-12-01T12:00:00+00:00") for s in SEATS}
    tables = _tables(db)
    assert not {t for t in tables if t.startswith("blind_")} and "trustless_games" in tables
    assert schema_diff(f"sqlite:///{db}") == []  # the file is now a store of this schema
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT version_num FROM alembic_version").fetchone() == (HEAD,)

    # a trustless round has no archive: `pbem archive` says where its rounds are, in one line
    archive = pbem("archive", "oldclub", cwd=tmp_path, home=tmp_path / "home")
    assert archive.returncode == EXIT_USAGE and archive.stdout == "", archive
    assert archive.stderr.splitlines()[0].startswith("error: game oldclub-") and "audited and replayed" in archive.stderr

    # `pbem games` lists it beside the store's own games
    rows = {g["name"]: g for g in hosted_games(f"sqlite:///{saves / 'pbem.db'}", explicit=True)}
    assert sorted(rows) == ["oak", "oldclub"] and rows["oldclub"]["trustless"] and rows["oldclub"]["seq"] == 1
    assert rows["oldclub"]["transport"] == "folder"

    clock = FakeClock("2026-12-01T14:10:00+00:00")
    with blind.BlindHost(db, ids["referee"], clock) as host:
        assert [(n.kind, n.seat) for n in host.notices()] == [("reminder", "ann"), ("late", "ann")]
        assert [read_blocks(line.armored)[0].doc.text for line in host.talk()] == ["good luck all"]
        assert host.settings().transport is not None and host.delivered("folder") == -1
        assert host.tick() == []  # the clock's marks came along: nothing said twice
        # the game goes on: ann's shuffle is taken, the clock starts again for bob's
        inv = read_blocks(host.invitation())[0]
        ann = TrustlessSeat(inv, ids["ann"], "ann")
        for _, armored in host.packets():
            ann.follow(read_blocks(armored)[0])
        block = ann.owed()
        assert block is not None and block.doc.step == "shuffle"
        assert host.accept(read_blocks(block.armored())[0]).kind == "applied"
        after = host.status()
        assert after["seq"] == 2 and after["waiting"]["seats"] == ["bob"]
        assert after["waiting"]["due"] == "2026-12-01T15:10:00+00:00"


def _back_to_9(url: str) -> None:
    """The store as the last version left it: schema 0009, no trustless tables."""
    engine = create_engine(url)
    with engine.begin() as c:
        for t in ("trustless_rounds", "trustless_talk", "trustless_notices", "trustless_activity", "trustless_packets", "trustless_joins",
                  "trustless_games"):
            c.execute(text(f"DROP TABLE {t}"))
        c.execute(text("UPDATE alembic_version SET version_num = '0009'"))
    engine.dispose()


def test_a_store_of_schema_9_takes_a_trustless_game_after_its_upgrade(store_url: str) -> None:
    ids = {n: _identity(n) for n in ("referee", *SEATS)}
    seats = [(s, ids[s].public) for s in SEATS]
    create_game(store_url, "oak", ids["referee"], "classic", seats, [])
    _back_to_9(store_url)
    with Store(store_url) as st, st.read() as c:  # opening it upgrades it
        assert c.execute(text("SELECT version_num FROM alembic_version")).scalar() == HEAD
    assert schema_diff(store_url) == []
    blind.create_game(store_url, "duo", ids["referee"], "classic", seats, [])
    with pytest.raises(UsageError, match="already has a game called 'oak'"):  # one name per store, either kind
        blind.create_game(store_url, "oak", ids["referee"], "classic", seats, [])
    with Store(store_url) as st:
        assert st.locate("duo")[1] and not st.locate("oak")[1]
    rows = {g["name"]: g for g in hosted_games(store_url, explicit=True)}
    assert sorted(rows) == ["duo", "oak"] and rows["duo"]["trustless"] and not rows["oak"]["trustless"]
    assert rows["duo"]["waiting"] == {"step": "join", "seats": list(SEATS)}


def test_the_hosts_inbox_routes_joins_to_a_trustless_game_of_the_store(store_url: str, tmp_path: Path, here) -> None:
    """`pbem inbox --store URL` (a host reading mail by hand): each seat's join, mailed as an
    .eml file, goes to the trustless game in the store, which deals packet 1 when all are in. By
    real processes on PostgreSQL; on SQLite (the same code on a file) the keys made by the library
    and the commands through the command line's entry in this process."""
    homes = {n: tmp_path / f"home-{n}" for n in ("referee", *SEATS)}
    by_processes = store_url.startswith("postgresql")
    pubs = new_keys(homes) if by_processes else keys_here(homes)
    run = pbem if by_processes else here
    players = [a for s in SEATS for a in ("--player", f"{s}={pubs[s]}")]
    run("game", "new", "t", "--host", "referee", *players, "--trustless", "--store", store_url, home=homes["referee"],
        cwd=tmp_path, ok=True)
    with blind.BlindHost(store_url, game="t") as h:
        inv = read_blocks(h.invitation())[0]
    mails = tmp_path / "mail"
    mails.mkdir()
    for s in SEATS:
        joined = player.join(inv, keys.load_identity(homes[s], s, None), homes[s])
        mail = block_mail(joined, sender=f"{s}@example.org", to="host@example.org")
        (mails / f"join-{s}.eml").write_bytes(mail.as_bytes())
    said = run("inbox", mails, "--store", store_url, home=homes["referee"], cwd=tmp_path, ok=True).stdout
    assert "everyone is in: packet 1" in said, said
    with blind.BlindHost(store_url, game="t") as h:
        assert h.status()["seq"] == 1 and h.status()["waiting"]["step"] == "shuffle"


def test_two_hosts_taking_the_last_joins_at_once_deal_once(store_url: str) -> None:
    """Two blind hosts on one game of the store (each its own connections), each taking one of
    the last two joins at the same moment: the game's row lock makes one wait for the other, so
    the second sees both joins and deals packet 1, once (without it each would see the other's
    join missing, and nobody would deal)."""
    ids = {n: _identity(n) for n in ("referee", *SEATS)}
    inv = blind.create_game(store_url, "t", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS], [])
    joins = {s: read_blocks(player_join(inv, ids[s], s).armored())[0] for s in SEATS}
    with blind.BlindHost(store_url, ids["referee"], game="t") as first:
        first.accept(joins["ann"])
    hosts = [blind.BlindHost(store_url, ids["referee"], game="t") for _ in range(2)]
    start = threading.Barrier(2)

    def take(i: int) -> str:
        start.wait()
        return hosts[i].accept(joins[("bob", "cat")[i]]).kind

    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            kinds = sorted(pool.map(take, range(2)))
    finally:
        for h in hosts:
            h.close()
    assert kinds == ["dealt", "joined"]
    with blind.BlindHost(store_url, game="t") as h:
        assert [seq for seq, _ in h.packets()] == [1] and h.status()["waiting"]["step"] == "shuffle"
