"""A trustless game's status and round results kept in the club's store (migration 0011), on
SQLite and PostgreSQL (tests/pg_server.py), through the real commands: a finished game is over
in its row, so `pbem host run --all` neither serves nor leases it; `pbem games` reads its row,
not its chain, and says since when a game that waits for its joins waits; `pbem club ratings`,
`standings` and `export` take its rounds from their public results; and a store of the schema
before (0010) holding it is upgraded to the same facts, followed from its chain. `pbem games`
(the one that upgrades the store) and `pbem host run` (the first) are real processes on
PostgreSQL, the club's store; on SQLite they, and on both the other runs of them, the club's
commands (run as processes in tests/test_club_ratings.py) and the last look run here, through
the command line's own entry in this process."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from blind_game import BlindGame
from processes import pbem
from sqlalchemy import create_engine, select, text
from test_club_ratings import expected, flat
from test_store import schema_diff

from engine.catalog import card_kind
from pbem.host import blind
from pbem.host.tables import HEAD, leases, trustless_games, trustless_packets, trustless_rounds

_NEW = ("ruleset", "options", "status", "round_no", "seq", "public")


def _back_to_10(url: str) -> None:
    """The store as the schema before left it: no status columns, no round results, no packet times."""
    engine = create_engine(url)
    with engine.begin() as c:
        c.execute(text("DROP TABLE trustless_rounds"))
        for column in _NEW:
            c.execute(text(f"ALTER TABLE trustless_games DROP COLUMN {column}"))
        c.execute(text("ALTER TABLE trustless_packets DROP COLUMN created_at"))
        c.execute(text("UPDATE alembic_version SET version_num = '0010'"))
    engine.dispose()


def _facts(url: str) -> tuple[list, list]:
    """The trustless games' facts and their rounds' results (not the times the upgrade guesses)."""
    engine = create_engine(url)
    with engine.connect() as c:
        rows = c.execute(select(trustless_games.c.name, *(trustless_games.c[k] for k in _NEW))
                         .order_by(trustless_games.c.name)).all()
        ended = c.execute(select(trustless_rounds.c.game_id, trustless_rounds.c.round_no, trustless_rounds.c.last_seq,
                                 trustless_rounds.c.result).order_by(trustless_rounds.c.round_no)).all()
    engine.dispose()
    return [tuple(r) for r in rows], [tuple(r) for r in ended]


@pytest.mark.slow  # a whole trustless game of three seats, in one process: about 4 s of CPU
def test_a_finished_trustless_game_is_over_in_the_store_rated_exported_and_upgraded(
        tmp_path: Path, store_url: str, here) -> None:
    process = pbem if store_url.startswith("postgresql") else here  # the commands as processes once
    g = BlindGame(tmp_path, store=store_url, name="duo").play(lambda table: False)
    home = g.homes["referee"]
    assert g.table.step() == "over" and len(g.table.ended) == 3
    wait = blind.create_game(store_url, "wait", g.ids["referee"], "classic",
                             [(s, g.ids[s].public) for s in g.seats_], [])
    here("folder", "init", "wait", tmp_path / "shared-wait", "--store", store_url, home=home, cwd=tmp_path, ok=True)

    # `pbem games`: the finished game over, since its last packet; the one waiting for its joins since it was made
    rows = {r["name"]: r for r in json.loads(here("games", "--json", "--store", store_url, home=home, cwd=tmp_path,
                                                  ok=True).stdout)["hosting"]}
    engine = create_engine(store_url)
    with engine.connect() as c:
        last = c.execute(select(trustless_packets.c.created_at).order_by(trustless_packets.c.seq.desc())).first()
    assert rows["duo"]["status"] == "over" and rows["duo"]["seq"] == g.seen and rows["duo"]["round"] == 3
    assert rows["duo"]["since"] == last.created_at is not None
    assert rows["wait"]["status"] == "joining" and rows["wait"]["since"] == wait.doc.created
    assert rows["wait"]["waiting"] == {"step": "join", "seats": list(g.seats_)}

    # `pbem host run --all`: the finished game is neither served nor leased; the waiting one is
    ran = process("host", "run", "--all", "--once", "--store", store_url, home=home, cwd=tmp_path, ok=True)
    said = ran.stdout + ran.stderr
    assert "holding 1 of 1 active games" in said and "is over after packet" not in said, said
    with engine.connect() as c:
        assert [r.game_id for r in c.execute(select(leases))] == [wait.game]
    if store_url.startswith("sqlite:///"):  # nor when its trustless game's own file is beside a store
        club = tmp_path / "club"
        club.mkdir()
        with sqlite3.connect(store_url.removeprefix("sqlite:///")) as src, sqlite3.connect(club / "duo.db") as dst:
            src.backup(dst)
            dst.execute("DELETE FROM trustless_games WHERE name = 'wait'")
        src.close()
        dst.close()
        ran = here("host", "run", "--all", "--once", "--store", club / "pbem.db", home=home, cwd=tmp_path, ok=True)
        said = ran.stdout + ran.stderr
        assert "duo" not in said, said
        with sqlite3.connect(club / "pbem.db") as c:
            assert c.execute("SELECT count(*) FROM leases").fetchone() == (0,)
        c.close()

    # `pbem club`: the rounds' public results, as every seat's table opened them at each round's end
    out = here("club", "export", "--store", store_url, home=home, cwd=tmp_path, ok=True)
    exported = json.loads(out.stdout)  # and a line on stderr: the chains that prove the rounds are not in it
    assert out.stderr.startswith("trustless games are exported without the chains") and "pbem audit" in out.stderr
    game = exported["games"][0]
    assert [x["name"] for x in exported["games"]] == ["duo"] and game["trustless"] and game["ruleset"] == "classic"
    assert game["seats"] == [{"name": p.name, "key": p.key} for p in g.inv.doc.seats]
    seen = g.seats["ann"].table.ended  # a seat's own following of the chain
    assert [(r["round"], r["roles"], r["winners"], r["gold"]) for r in game["rounds"]] == [
        (e.round_no, {p: card_kind(str(e.state.roles[p])).kind for p in sorted(g.seats_)}, list(e.state.winners),
         dict(e.state.gold)) for e in seen]
    with engine.connect() as c:
        hashes = dict(c.execute(select(trustless_packets.c.seq, trustless_packets.c.hash)).all())
    ends = [r["last_packet"]["seq"] for r in game["rounds"]]  # the packet that ended each round; the last, the game
    assert ends == sorted(ends) and ends[-1] == g.seen
    assert all(r["last_packet"]["hash"] == hashes[r["last_packet"]["seq"]] for r in game["rounds"])
    assert not any("secret" in r or "archive" in r for r in game["rounds"])
    rated = json.loads(here("club", "ratings", "--json", "--store", store_url, home=home, cwd=tmp_path,
                            ok=True).stdout)
    assert sorted(p["name"] for p in rated) == sorted(g.seats_) and all(p["rounds"] == 3 for p in rated)
    teaching = [r for r in game["rounds"] if r["winners"] and set(r["winners"]) != set(r["roles"])]
    if teaching:  # openskill's own ratings of the same rounds (a round all won or all lost teaches nothing)
        assert flat({p["key"]: (p["mu"], p["sigma"]) for p in rated}) == pytest.approx(flat(expected(exported)))
    for p in rated:
        assert p["rounds_won"] == sum(p["name"] in r["winners"] for r in game["rounds"])
        assert p["gold"] == game["rounds"][-1]["gold"][p["name"]]
    here("club", "season", "s1", "--game", "duo", "--store", store_url, home=home, cwd=tmp_path, ok=True)
    season = json.loads(here("club", "standings", "--season", "s1", "--json", "--store", store_url, home=home,
                             cwd=tmp_path, ok=True).stdout)
    assert season == rated

    # a store of the schema before, holding both games: upgraded by the first command, to the same facts
    before = _facts(store_url)
    assert before[0] and len(before[1]) == 3
    _back_to_10(store_url)
    again = {r["name"]: r for r in json.loads(process("games", "--json", "--store", store_url, home=home, cwd=tmp_path,
                                                   ok=True).stdout)["hosting"]}
    assert _facts(store_url) == before and schema_diff(store_url) == []
    with engine.connect() as c:
        assert c.execute(text("SELECT version_num FROM alembic_version")).scalar() == HEAD
    assert again["duo"]["status"] == "over" and again["duo"]["since"] is not None
    assert {k: v for k, v in again["wait"].items() if k != "transport"} == {
        k: v for k, v in rows["wait"].items() if k != "transport"}

    # `pbem games` reads the row, not the chain: a chain that no longer reads does not stop it
    with engine.begin() as c:
        c.execute(trustless_packets.update().where(trustless_packets.c.seq == 2).values(armored="not a packet"))
    listed = here("games", "--json", "--store", store_url, home=home, cwd=tmp_path, ok=True).stdout
    assert {r["name"]: (r["status"], r["seq"]) for r in json.loads(listed)["hosting"]}["duo"] == ("over", g.seen)
    engine.dispose()
