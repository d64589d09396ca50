"""The host's store: many games behind one URL, Alembic migrations, bad stores refused.

Runs on SQLite and on a real PostgreSQL server (the `store_url` fixture, tests/conftest.py).
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from processes import pbem
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine
from sqlalchemy.pool import Pool

from pbem.errors import BadPacket, StoreError, UsageError
from pbem.host import referee as H
from pbem.host.store import Store
from pbem.host.tables import HEAD, metadata
from pbem.protocol.documents import check_signature, read_blocks
from pbem.seat import keys
from pbem.seat import player as P
from pbem.ui.words import notice_text, render

FIXTURE = Path(__file__).parent / "fixtures" / "v1"
PASS = b"correct horse"


def schema_diff(url: str) -> list:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    engine = create_engine(url)
    with engine.connect() as c:
        diff = compare_metadata(MigrationContext.configure(c), metadata)
    engine.dispose()
    return diff


def migrated_from_nothing(url: str) -> None:
    """Every migration run by Alembic on the empty store at `url`, the first to the last."""
    from alembic import command

    from pbem.host.migrations import config

    engine = create_engine(url)
    with engine.begin() as c:
        command.upgrade(config(c), "head")
    engine.dispose()


def shape(url: str) -> dict:
    """Each table of the store at `url`: its columns (type, null or not, default), primary key,
    foreign keys, indexes and unique constraints, and the rows of the schema's marks."""
    from sqlalchemy import inspect

    engine = create_engine(url)
    out: dict = {}
    with engine.connect() as c:
        i = inspect(c)
        for t in i.get_table_names():
            marks = sorted(map(tuple, c.execute(text(f'SELECT * FROM "{t}"')).all())) if t in ("meta", "alembic_version") else None
            out[t] = (sorted((col["name"], str(col["type"]), col["nullable"], str(col.get("default"))) for col in i.get_columns(t)),
                      sorted(i.get_pk_constraint(t)["constrained_columns"]),
                      sorted((fk["constrained_columns"], fk["referred_table"], fk["referred_columns"]) for fk in i.get_foreign_keys(t)),
                      sorted((ix["name"], ix["column_names"], bool(ix["unique"])) for ix in i.get_indexes(t)),
                      sorted(u["column_names"] for u in i.get_unique_constraints(t)), marks)
    engine.dispose()
    return out


def test_migrations_from_an_empty_store_give_the_models(store_url: str) -> None:
    migrated_from_nothing(store_url)
    assert schema_diff(store_url) == []
    with Store(store_url) as st, st.read() as c:
        assert c.execute(text("SELECT version_num FROM alembic_version")).scalar() == HEAD
        assert c.execute(text("SELECT value FROM meta WHERE key = 'schema'")).scalar() == "2"


def test_a_new_store_is_made_at_head_at_once_as_the_migrations_leave_it(store_url: str, request: pytest.FixtureRequest,
                                                                         tmp_path: Path) -> None:
    """A new store (every first `pbem game new`) is made as the tables are now, stamped HEAD: one
    CREATE TABLE each, no table altered or copied as the migrations do one after the other; and
    it is the store the migrations from nothing leave, to every column, default, key and index."""
    said: list[str] = []

    def record(conn: object, cursor: object, statement: str, *rest: object) -> None:
        said.append(" ".join(statement.split()))

    event.listen(Engine, "before_cursor_execute", record)
    try:
        Store(store_url, create=True).close()
    finally:
        event.remove(Engine, "before_cursor_execute", record)
    made = [s.split()[2].strip('"') for s in said if s.startswith("CREATE TABLE")]
    assert sorted(made) == sorted([*metadata.tables, "alembic_version"])
    assert not [s for s in said if s.startswith(("ALTER", "DROP", "UPDATE")) or "_alembic_tmp_" in s]
    other = (f"sqlite:///{tmp_path / 'migrated.db'}" if store_url.startswith("sqlite")
             else request.getfixturevalue("pg_server").new_database())
    migrated_from_nothing(other)
    assert shape(store_url) == shape(other)


def test_head_is_the_newest_migration() -> None:
    """HEAD, the revision a new store is stamped with, is the newest migration's; KNOWN holds them all."""
    from alembic.script import ScriptDirectory

    from pbem.host import migrations
    from pbem.host.tables import KNOWN

    scripts = ScriptDirectory(str(Path(migrations.__file__).parent))
    assert scripts.get_current_head() == HEAD
    assert sorted(s.revision for s in scripts.walk_revisions()) == list(KNOWN)


def test_opening_a_store_of_this_schema_asks_only_its_revision(store_url: str) -> None:
    """Opening a store (every host command does) reads its revision, in a read transaction,
    and lists no tables when that answers (the database's catalog is read only otherwise)."""
    Store(store_url, create=True).close()
    said: list[str] = []

    def record(conn: object, cursor: object, statement: str, *rest: object) -> None:
        said.append(statement)

    event.listen(Engine, "before_cursor_execute", record)
    try:
        Store(store_url).close()
    finally:
        event.remove(Engine, "before_cursor_execute", record)
    assert [s for s in said if s != "BEGIN"] == ["SELECT version_num FROM alembic_version"]


def test_opening_a_games_host_looks_the_game_up_once(store_url: str, tmp_path: Path) -> None:
    """Opening the host of a game by its name (every host command does: pbem.host.games.open_game)
    looks the game up in the store once, for either kind of game: the host takes the game as
    the store found it."""
    from pbem.host import blind
    from pbem.host.games import open_game

    ids = _keys(tmp_path, ["host", "a", "b", "c"])
    seats = [(n, ids[n].public) for n in "abc"]
    H.create_game(store_url, "oak", ids["host"], "classic", seats, [])
    blind.create_game(store_url, "duo", ids["host"], "classic", seats, [])
    said: list[str] = []

    def record(conn: object, cursor: object, statement: str, *rest: object) -> None:
        said.append(statement)

    for name, kind in (("oak", "Host"), ("duo", "BlindHost")):
        said.clear()
        event.listen(Engine, "before_cursor_execute", record)
        try:
            with open_game(store_url, name) as host:
                assert type(host).__name__ == kind and host.status()["name"] == name
        finally:
            event.remove(Engine, "before_cursor_execute", record)
        # Store.locate's one statement: both kinds' games, by name or id
        assert len([s for s in said if "trustless_games" in s and "UNION ALL" in s]) == 1, said


@pytest.mark.slow  # a PostgreSQL server of its own, restarted: 3-6 s
def test_a_store_goes_on_when_its_server_restarts() -> None:
    """A PostgreSQL store open in a long-running process (a daemon) whose server restarts: its
    pooled connections were ended by the server, and the next read takes a new one rather than
    failing (pbem.host.server: the ended session is seen on its socket, with no round trip)."""
    from pg_server import PgServer

    server = PgServer()
    try:
        url = server.new_database()
        with Store(url, create=True) as store:
            with store.write() as c, store.read() as c2:  # two connections pooled
                assert c.execute(text("SELECT 1")).scalar() == c2.execute(text("SELECT 2")).scalar() - 1
            server.restart()
            assert store.game_list() == []
            with store.write() as c:
                c.execute(text("INSERT INTO meta (key, value) VALUES ('k', 'v')"))
            server.restart(down=0.5)
            with store.read() as c, store.read() as c2:
                assert c.execute(text("SELECT value FROM meta WHERE key = 'k'")).scalar() == "v"
                assert c2.execute(text("SELECT count(*) FROM games")).scalar() == 0
    finally:
        server.stop()


def test_a_host_reads_its_game_on_one_connection(tmp_path: Path) -> None:
    """Opening a game and asking its status (`pbem status`) connects to the store once: each
    connection is set up (pragmas) and, the last one, checkpoints the store's log as it closes."""
    ids = _keys(tmp_path, ["host", "a", "b", "c"])
    H.create_game(tmp_path / "s.db", "g", ids["host"], "classic", [(n, ids[n].public) for n in "abc"], [])
    connected: list[object] = []

    def record(*args: object) -> None:
        connected.append(args)

    event.listen(Pool, "connect", record)
    try:
        with H.Host(tmp_path / "s.db", game="g") as host:
            host.status()
    finally:
        event.remove(Pool, "connect", record)
    assert len(connected) == 1


def v1_copy(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "v1")
    return tmp_path / "v1"


def test_a_one_game_file_of_schema_1_is_migrated_and_plays_on(tmp_path: Path) -> None:
    root = v1_copy(tmp_path)
    db = root / "game.db"
    with sqlite3.connect(db) as c:
        old_packets = c.execute("SELECT seq, hash, armored FROM packets ORDER BY seq").fetchall()
        inv_hash = c.execute("SELECT invitation_hash FROM games").fetchone()[0]
    referee = keys.load_identity(root / "home-referee", "referee", PASS)
    with H.Host(db, referee) as host:  # opening it migrates it, in one transaction
        assert host.packets() == [(s, a) for s, _, a in old_packets]  # nothing lost, nothing changed
        assert host.delivered("mail") == 3  # the old "mailed" mark
        seq, status = host.head()
        packet = read_blocks(host.packet(seq))[0]
        seat = packet.doc.to_move
        me = keys.load_identity(root / f"home-{seat}", seat, PASS)
        sp = P.open_packet(packet, me, root / f"home-{seat}")
        from engine.rules import legal_moves

        move = P.make_move(sp, str(legal_moves(sp.view)[0]))
        assert host.accept(read_blocks(move.armored())[0]).kind == "applied"
        assert host.head() == (seq + 1, "playing")
    assert schema_diff(f"sqlite:///{db}") == []
    with sqlite3.connect(db) as c:
        prevs = dict(c.execute("SELECT seq, prev FROM packets").fetchall())
    hashes = {s: h for s, h, _ in old_packets}
    assert prevs[1] == inv_hash and all(prevs[s] == hashes[s - 1] for s in hashes if s > 1)
    assert all(read_blocks(a)[0].doc.prev == prevs[s] for s, _, a in old_packets)


def test_a_one_game_file_with_deadlines_is_migrated_and_its_clock_runs_on(tmp_path: Path) -> None:
    """A file made by the last one-game version (the deadlines work: a notices table made
    outside any migration, notices mailed up to the second) keeps its notices, its mail marks
    and its clock; only what was not mailed yet is mailed; the game plays on."""
    from engine.rules import legal_moves
    from pbem.host.clock import FakeClock
    from pbem.host.publish import publish_pending
    from pbem.mail.courier import Courier
    from pbem.mail.incoming import MailScanner, message_blocks
    from pbem.mail.publisher import MailPublisher

    root = tmp_path / "v1d"
    shutil.copytree(Path(__file__).parent / "fixtures" / "v1-deadlines", root)
    db = root / "game.db"
    with sqlite3.connect(db) as c:
        old = c.execute("SELECT id, seq, kind, seat, armored FROM notices ORDER BY id").fetchall()
    assert [n[2] for n in old] == ["reminder", "late", "paused"]
    referee = keys.load_identity(root / "home-referee", "referee", PASS)
    clock = FakeClock("2026-12-01T14:00:00+00:00")
    with H.Host(db, referee, clock) as host:
        assert [(n.id, n.seq, n.kind, n.seat, n.armored) for n in host.notices()] == old
        assert host.delivered("mail") == 4 and host.delivered("mail notices") == 2
        st = host.status()
        assert st["paused"] and st["deadline"] == {"seat": "ann", "due": "2026-12-01T13:02:00+00:00"}
        mail = MailPublisher(host, Courier(to_dir=tmp_path / "mail"))
        sent = [where for _, where in publish_pending(host, mail)]
        # only what was not mailed: the pause, whose notice that version wrote with "seat": null
        # (signed as such); it reads as a notice for no seat and is mailed to every seat
        assert len(sent) == 1 and sent[0].startswith("mailed paused notice (packet 4) to "), sent
        assert all(f"{s}@example.org" in sent[0] for s in ("ann", "bob", "cat", "ref")), sent  # ref: the host's copy
        assert host.delivered("mail notices") == 3
        paused = read_blocks(old[-1][4])[0]
        assert paused.doc.notice == "paused" and paused.doc.seat is None
        check_signature(paused)  # the bytes that version signed, unchanged
        # each seat's mail holds it, and a seat's reader takes it as the host's notice
        read = [message_blocks(m)[0] for _, m in MailScanner([tmp_path / "mail"]).new_messages()]
        got = [b for blocks in read for b in blocks if b.kind == "notice"]
        assert len(got) == 4 and {b.hash for b in got} == {paused.hash}
        host.resume()  # paused at 13:04 when 2 minutes late: 13:02 + 56 minutes
        assert host.status()["deadline"]["due"] == "2026-12-01T13:58:00+00:00"
        assert [n.kind for n in host.notices(old[-1][0])] == ["resumed", "due"]
        packet = read_blocks(host.packet(4) or "")[0]
        sp = P.open_packet(packet, keys.load_identity(root / "home-ann", "ann", PASS), root / "home-ann")
        move = P.make_move(sp, str(legal_moves(sp.view)[0]))
        assert host.accept(read_blocks(move.armored())[0]).kind == "applied"
        assert host.standings()["ann"].missed == 0  # a move forgives the missed deadline
        nxt = read_blocks(host.packet(5) or "")[0].doc
        assert nxt.deadline is not None and nxt.deadline.due == "2026-12-01T15:00:00+00:00"
        clock.advance(1800)
        assert [o.kind for o in host.tick()] == ["notice"]  # half-way: one reminder, made once
        assert host.tick() == []
    assert schema_diff(f"sqlite:///{db}") == []


def test_a_notice_of_the_first_deadlines_version_reads_and_other_nulls_do_not() -> None:
    """That version wrote "seat": null in a notice for no seat (its pause): read as a notice for
    no seat, its signature over those very bytes checked; a null in any other optional field,
    or in another kind of document, is still not canonical."""
    from pbem.protocol.crypto import canonical_json
    from pbem.protocol.documents import load_json, parse

    fixture = Path(__file__).parent / "fixtures" / "v1-deadlines"
    with sqlite3.connect(fixture / "game.db") as c:
        armored = c.execute("SELECT armored FROM notices WHERE kind = 'paused'").fetchone()[0]
    paused = read_blocks(armored)[0]
    assert b'"seat":null' in paused.payload and paused.doc.seat is None
    assert "paused" in notice_text(paused.doc, datetime(2026, 12, 1, 14, 0, tzinfo=UTC))
    referee = keys.load_identity(fixture / "home-referee", "referee", PASS)
    doc = load_json(paused.payload[64:], "notice")
    for field in ("due", "until", "missed", "policy", "fingerprint"):
        body = canonical_json({**doc, field: None})
        with pytest.raises(BadPacket, match="not in canonical form"):
            parse("notice", referee.sign(body) + body)
    join = {"format": "pbem-join/1", "game": doc["game"], "signer": doc["signer"], "seat": "ann",
            "invitation": "x", "contribution": "y", "mental": None}
    body = canonical_json(join)
    with pytest.raises(BadPacket, match="not in canonical form"):
        parse("join", referee.sign(body) + body)


def test_the_old_version_refuses_a_migrated_store(tmp_path: Path) -> None:
    """meta.schema is 2 after the migration: a one-game version would refuse it, not misread it."""
    root = v1_copy(tmp_path)
    Store(f"sqlite:///{root / 'game.db'}").close()
    with sqlite3.connect(root / "game.db") as c:
        assert c.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == ("2",)


def _refused_untouched(tmp_path: Path, change: str, error: str) -> None:
    """A new store changed by the SQL `change` is refused with a StoreError saying `error`, its file unchanged."""
    db = tmp_path / "s.db"
    Store(f"sqlite:///{db}", create=True).close()
    with sqlite3.connect(db) as c:
        c.execute(change)
    before = db.read_bytes()
    with pytest.raises(StoreError, match=error):
        Store(f"sqlite:///{db}")
    assert db.read_bytes() == before


def test_a_store_of_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    _refused_untouched(tmp_path, "UPDATE alembic_version SET version_num = '0999'", "newer than this pbem")


def test_a_revision_that_cannot_be_read_says_why_not_that_it_is_newer(tmp_path: Path) -> None:
    """The one query that opens a store fails here for another reason than a missing table
    (alembic_version without its column): the store's own error is told (a StoreError quoting it), not 'schema None,
    newer than this pbem', and nothing is changed."""
    _refused_untouched(tmp_path, "ALTER TABLE alembic_version RENAME COLUMN version_num TO other",
                       "no such column: version_num")


def test_not_a_pbem_store(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE photos (id INTEGER)")
    before = other.read_bytes()
    with pytest.raises(StoreError, match="is not a pbem store"):
        Store(f"sqlite:///{other}")
    assert other.read_bytes() == before
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreError, match="not a pbem store"):
        Store(f"sqlite:///{junk}")
    with pytest.raises(StoreError, match="no store at"):
        Store(f"sqlite:///{tmp_path / 'missing.db'}")
    assert not (tmp_path / "missing.db").exists()


def _keys(root: Path, names: list[str]):
    return {n: keys.create_identity(root / f"home-{n}", n, None) for n in names}


def test_many_games_in_one_store_by_name(store_url: str, tmp_path: Path) -> None:
    ids = _keys(tmp_path, ["referee", "ann", "bob", "cat"])
    seats = [(s, ids[s].public) for s in ("ann", "bob", "cat")]
    invs = {name: H.create_game(store_url, name, ids["referee"], "classic", seats, []) for name in ("one", "two", "three")}
    with pytest.raises(UsageError, match="already has a game called 'two'"):
        H.create_game(store_url, "two", ids["referee"], "classic", seats, [])
    with Store(store_url) as st:
        assert sorted(st.game_ids()) == sorted(inv.game for inv in invs.values())
        with pytest.raises(UsageError, match="no game 'four'"):
            H.Host(st, game="four")
        with pytest.raises(UsageError, match="several games"):
            H.Host(st)
        hosts = {name: H.Host(st, ids["referee"], game=name) for name in invs}
        for name, inv in invs.items():  # a join for one game is refused by another
            join = read_blocks(P.join(read_blocks(inv.armored())[0], ids["ann"], tmp_path / "home-ann").armored())[0]
            other = hosts["one" if name != "one" else "two"]
            with pytest.raises(Exception, match="is for game"):
                other.accept(join)
            assert hosts[name].accept(join).kind == "joined"
        assert all(h.status()["seats"][0]["joined"] for h in hosts.values())


def test_bad_stores_on_the_command_line(tmp_path: Path) -> None:
    """One line, the store error's exit code, nothing written."""
    def run(*args: str) -> subprocess.CompletedProcess:
        return pbem(*args, cwd=tmp_path)

    other = tmp_path / "photos.db"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE photos (id INTEGER)")
    cases = [
        (["status", "friday", "--store", str(other)], "is not a pbem store"),
        (["status", "friday", "--store", "postgresql+psycopg://nobody:secret@127.0.0.1:9/none"], "cannot reach store"),
        (["status", "friday", "--store", str(tmp_path / "missing.db")], "no store at"),
    ]
    for args, words in cases:
        r = run(*args)
        assert r.returncode == 9, r.stderr
        lines = r.stderr.strip().splitlines()
        assert lines[0].startswith("error: ") and words in lines[0] and "Traceback" not in r.stderr, r.stderr
        assert "secret" not in r.stderr  # a URL's password is never printed
    assert not (tmp_path / "missing.db").exists() and not (tmp_path / "saves").exists()


@pytest.mark.slow  # a round played to its end: 4-7 s
def test_a_club_store_of_schema_3_is_migrated_and_its_round_ends_with_the_moves_the_host_made(tmp_path: Path) -> None:
    """A store the club code made before moves.why (tests/fixtures/v3-club: round 1 in play,
    moves 5 and 10 made by the host for a silent seat): opening it fills moves.why from the
    stored envelopes; the host's next move is listed as its own; the round played to its
    end by a fresh Host (which reads the round from the store) archives them as the host's,
    and the audit of that round passes but for the time of the host's two old moves."""
    from engine.bots import RandomBot
    from pbem.host.clock import FakeClock
    from pbem.replay.audit import audit_source
    from pbem.replay.sources import open_source, pick_game

    root = tmp_path / "v3"
    shutil.copytree(Path(__file__).parent / "fixtures" / "v3-club", root)
    db = root / "club.db"
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT version_num FROM alembic_version").fetchone() == ("0003",)
    ids = {n: keys.load_identity(root / f"home-{n}", n, PASS) for n in ("referee", "ann", "bob", "cat")}
    clock = FakeClock("2026-12-01T14:10:02+00:00")
    with H.Host(db, ids["referee"], clock) as host:
        with sqlite3.connect(db) as c:
            made = c.execute("SELECT n, why FROM moves ORDER BY n").fetchall()
        assert made == [(n, "timeout" if n in (5, 10) else None) for n in range(1, 13)]
        clock.advance(3601)
        assert [o.kind for o in host.tick()][-1] == "applied"  # move 13, the host's again (after its notices)
        bots = {s: RandomBot(s) for s in ("ann", "bob", "cat")}
        listed: dict[int, str | None] = {}
        while not host.archives():
            seq, _ = host.head()
            packet = read_blocks(host.packet(seq) or "")[0]
            listed.update({m.n: m.why for m in packet.doc.recent if m.round == 1})
            seat = packet.doc.to_move
            sp = P.open_packet(packet, ids[seat], root / f"home-{seat}", remember=False)
            host.accept(read_blocks(P.make_move(sp, str(bots[seat].choose(sp.view))).armored())[0])
        assert listed[13] == "timeout" and listed[12] is None and listed[14] is None
        archive = read_blocks(host.archives()[1])[0].doc
    assert [(m.n, m.by, m.why) for m in archive.moves if m.by] == [(n, "host", "timeout") for n in (5, 10, 13)]
    src = open_source(None, db)
    [report] = audit_source(src, pick_game(src, None), [1])
    # moves 5 and 10 were signed before a host's move carried the time it was made: they
    # cannot be checked against their packets' deadlines, and the audit says so (move 13 can)
    assert [(f.move, f.check) for f in report.faults] == [(5, "timeout"), (10, "timeout")], report.faults
    assert all("does not say when it was made" in render(f.message) for f in report.faults)
    assert report.counts["timeout"] == 1
    assert schema_diff(f"sqlite:///{db}") == []
