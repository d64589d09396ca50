"""`pbem games` and `pbem status` tell the same facts of a game, from one source (the host's
status, pbem.host.games): the round, the packet, whose turn or which step from whom, each
seat's last activity; a trustless game's own file is listed; "games you host" are the games
your keys host, not whatever saves/ the current folder holds; and a player's list has the round,
packet and turn of every game it opened, whatever brought the packets (a folder, a file, mail).
Real processes on a trustless game played in one process (tests/blind_game.py) and on a
classic game played by bots (tests/table_games.py); each command as a process of its own at
least once (`status --json` and `games --json` of the host's key home), its further runs through the
command line's entry in this process (`here`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from blind_game import BlindGame, round_over
from processes import pbem
from table_games import PASS, make_table, play_until


@pytest.fixture(scope="module")
def game(tmp_path_factory) -> BlindGame:
    return BlindGame(tmp_path_factory.mktemp("games-status")).play(round_over(1))


def _host(game: BlindGame, *args: object, home: str = "referee", run=pbem) -> subprocess.CompletedProcess:
    """`pbem ARGS` in the game's folder (`run`: processes.pbem, or `here`)."""
    return run(*args, home=game.homes[home], cwd=game.root)


def test_games_and_status_tell_one_round_packet_and_step_of_a_trustless_game(game: BlindGame, here) -> None:
    table = game.table
    w = table.waiting()
    assert table.round_no == 2 and w.step in ("move", "tokens", "goal")  # round 1 is over, round 2 played
    status = json.loads(_host(game, "status", "--db", game.db, "--json").stdout)
    listed = _host(game, "games", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)["hosting"]
    assert [r["game"] for r in rows] == [game.inv.game]
    row = rows[0]
    assert (row["round"], row["seq"], row["to_move"]) == (status["round"], status["seq"], status["to_move"]) \
        == (2, game.seen, w.seats[0] if w.step == "move" else None)
    assert row["waiting"] == status["waiting"] == {"step": w.step, "seats": w.seats}
    # in words: the same round, packet and step in both
    said = _host(game, "games", run=here).stdout
    head = _host(game, "status", "--db", game.db, run=here).stdout.splitlines()
    assert f"round 2, packet {game.seen}" in said and f"round 2, packet {game.seen}" in head[0]
    waits = f"the table waits for the {w.step} step from "
    assert waits in said and head[1].startswith(waits), (said, head)
    # every seat sent blocks: each has a last activity, and the list says since when
    for line in head[2:]:
        assert "last activity -" not in line and "last activity just now" in line, line
    assert status["since"] and row["since"] == status["since"]
    # a trustless game's own file, named: listed (not "someone else's tables")
    own = _host(game, "games", "--db", game.db, "--json", run=here)
    assert own.returncode == 0, own.stderr
    assert [r["game"] for r in json.loads(own.stdout)["hosting"]] == [game.inv.game]


def test_games_you_host_are_those_your_keys_host(game: BlindGame, here) -> None:
    ann = _host(game, "games", home="ann", run=here)  # ann's key home, in the host's folder (saves/ beside)
    assert ann.returncode == 0 and "games you host" not in ann.stdout, ann.stdout
    assert json.loads(_host(game, "games", "--json", home="ann", run=here).stdout)["hosting"] == []
    assert "games you host" in _host(game, "games", run=here).stdout  # the referee's key hosts it


def test_a_trustless_seat_lists_the_round_packet_and_step_it_followed(game: BlindGame, here) -> None:
    turn = here("turn", game.folder, "--as", "cat", home=game.homes["cat"])
    assert turn.returncode == 0, turn.stderr
    mine = json.loads(here("games", "--json", home=game.homes["cat"]).stdout)["playing"]
    assert len(mine) == 1
    w = game.table.waiting()
    row = mine[0]
    assert (row["round"], row["seq"], row["phase"]) == (2, game.seen, "playing")
    assert row["to_move"] == (w.seats[0] if w.step == "move" else None)
    assert row["waiting"] == {"step": w.step, "seats": w.seats}


def test_a_game_played_file_by_file_lists_the_packet_opened(tmp_path: Path, here) -> None:
    table = make_table(tmp_path, ["ann", "bob", "cat"])
    before = here("games", home=table.homes["cat"])  # joined, no packet opened yet: no word of a folder
    assert "folder game" not in before.stdout and "no packet opened with this key home yet" in before.stdout
    play_until(table, lambda packet: packet.doc.seq >= 5 and packet.doc.to_move != "bob", seed=2)
    path, packet = table.latest()  # bob opened an older packet to move; this one he opens by hand
    shown = here("show", path, "--as", "bob", home=table.homes["bob"], env={"PBEM_PASSPHRASE": PASS.decode()})
    assert shown.returncode == 0, shown.stderr
    row = json.loads(here("games", "--json", home=table.homes["bob"]).stdout)["playing"][0]
    assert (row["round"], row["seq"], row["to_move"], row["phase"]) == (1, packet.doc.seq, packet.doc.to_move, "playing")
    listed = here("games", home=table.homes["bob"]).stdout
    assert f"round 1, packet {packet.doc.seq}" in listed, listed


@pytest.mark.slow
def test_a_finished_trustless_game_is_over_in_both(game: BlindGame, tmp_path: Path, here) -> None:
    done = game.copy(tmp_path / "copy").play(lambda table: False)  # on to the end of round 3
    assert done.table.step() == "over"
    said = [line for line in _host(done, "games", run=here).stdout.splitlines() if line.startswith("  t ")]
    assert len(said) == 1 and f"round 3, packet {done.seen}" in said[0] and "game over" in said[0], said
    assert "waits" not in said[0]
    head = _host(done, "status", "--db", done.db, run=here).stdout.splitlines()[0]
    assert head == f"game {done.inv.game} (classic): over, round 3, packet {done.seen}"
