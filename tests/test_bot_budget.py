"""The search bot's budget a game sets (`--bot-turns`; docs/playing.md, "Deadlines and absent
players"): `game new` and `game config` take it, from 1 to MAX_TAKEOVER_TURNS simulated turns;
a game made without it has the default; every packet names its game's budget in its deadline;
the host plays a waiting packet's takeover within the budget that packet names, even after the
game's budget changed (what `pbem audit` recomputes); a trustless game, played for by no bot,
refuses it. Bad values: one `error:` line, exit 2, the store unchanged. Real keys, a real store
(a SQLite file), a real shared folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from folder_games import SEATS4, bots_end_the_round, clocked_game, make_homes
from msgspec.structs import replace
from on_disk import sqlite_dump
from processes import one_error_line, pbem
from run_here import main_here
from test_host_plays_for import _play_for

from engine.moves import public_text
from engine.rules import apply
from engine.views import view
from pbem.errors import Conflict
from pbem.folder.play import FolderSeat
from pbem.host import referee as H
from pbem.host.deadlines import Timing
from pbem.protocol.documents import read_blocks
from pbem.protocol.timeout import MAX_TAKEOVER_TURNS, TAKEOVER_TURNS, policy_move
from pbem.seat import keys


def _made(here, tmp_path: Path, *options: str) -> tuple[str, dict[str, Path]]:
    """A four-seat game made by `pbem game new` (in this process) with `options`: (store, homes)."""
    homes = make_homes(tmp_path, ["referee", *SEATS4])
    players = [a for s in SEATS4 for a in ("--player", f"{s}={keys.load_identity(homes[s], s, None).public.encode()}")]
    db = str(tmp_path / "g.db")
    here("game", "new", "t", "--host", "referee", *players, "--db", db, *options, home=homes["referee"], ok=True)
    return db, homes


@pytest.mark.parametrize(("options", "budget"), [([], TAKEOVER_TURNS), (["--bot-turns", "20"], 20)])
def test_the_first_packet_names_the_budget_game_new_set(tmp_path: Path, options: list[str], budget: int, here) -> None:
    """Without --bot-turns a game's takeover budget is the default; with it, that one: `game
    config` says it (in words and JSON) and the first dealt packet names it in its deadline."""
    db, homes = _made(here, tmp_path, "--deadline", "1h", "--on-timeout", "bot", *options)
    said = here("game", "config", "t", "--db", db, home=homes["referee"], ok=True).stdout
    assert f"on timeout: bot ({budget} simulated turns a move)" in said, said
    config = json.loads(here("game", "config", "t", "--db", db, "--json", home=homes["referee"], ok=True).stdout)
    assert config["bot_turns"] == budget and config["on_timeout"] == "bot"
    host = H.Host(db, keys.load_identity(homes["referee"], "referee", None))
    shared = tmp_path / "shared"
    from pbem.auto.host_runner import FolderHost

    fh = FolderHost(host, shared, lambda line: None)
    seats = {s: FolderSeat.open(shared, keys.load_identity(homes[s], s, None), homes[s]) for s in SEATS4}
    for s in seats.values():
        s.join()
    fh.step()
    first = host.status()["to_move"]
    deadline = seats[first].latest().packet.doc.deadline
    assert (deadline.seat, deadline.on_timeout, deadline.bot_turns) == (first, "bot", budget)
    host.close()


def test_game_config_changes_the_budget_and_refuses_a_bad_one(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch, here) -> None:
    db, homes = _made(here, tmp_path, "--deadline", "1h", "--on-timeout", "bot")
    changed = here("game", "config", "t", "--db", db, "--bot-turns", "250", home=homes["referee"], ok=True).stdout
    assert "on timeout: bot (250 simulated turns a move)" in changed, changed
    one = here("game", "config", "t", "--db", db, "--bot-turns", "1", "--json", home=homes["referee"], ok=True).stdout
    assert json.loads(one)["bot_turns"] == 1
    most = here("game", "config", "t", "--db", db, "--bot-turns", str(MAX_TAKEOVER_TURNS), "--json", home=homes["referee"], ok=True).stdout
    assert json.loads(most)["bot_turns"] == MAX_TAKEOVER_TURNS
    before = sqlite_dump(Path(db))
    # a real process for one of each kind of refusal, the rest through the same entry in this process
    one_error_line(pbem("game", "config", "t", "--db", db, "--bot-turns", "0", home=homes["referee"]), 2,
                   "bad --bot-turns 0")
    one_error_line(pbem("game", "config", "t", "--db", db, "--bot-turns", "many", home=homes["referee"]), 2,
                   "--bot-turns")
    for bad in ("-5", str(MAX_TAKEOVER_TURNS + 1), "10" * 20, "2.5", ""):
        code, err = main_here(["game", "config", "t", "--db", db, "--bot-turns", bad], homes["referee"], capsys,
                              monkeypatch)
        lines = err.strip().splitlines()
        assert code == 2 and lines[0].startswith("error: ") and "--bot-turns" in lines[0], (bad, err)
        assert all(line.startswith(("error: ", "hint: ")) for line in lines), err
    assert sqlite_dump(Path(db)) == before
    # game new refuses it as well, writing nothing; and it needs --deadline, as the others do
    players = [a for s in SEATS4 for a in ("--player", f"{s}={keys.load_identity(homes[s], s, None).public.encode()}")]
    other = tmp_path / "other.db"
    code, err = main_here(["game", "new", "u", "--host", "referee", *players, "--db", other, "--deadline", "1h",
                           "--bot-turns", "0"], homes["referee"], capsys, monkeypatch)
    assert (code, err.splitlines()[0]) == (2, "error: bad --bot-turns 0"), err
    code, err = main_here(["game", "new", "u", "--host", "referee", *players, "--db", other, "--bot-turns", "20"],
                          homes["referee"], capsys, monkeypatch)
    assert code == 2 and "--bot-turns" in err.splitlines()[0] and "need --deadline" in err, err
    assert not other.exists() and not (tmp_path / "u").exists()


def test_a_trustless_game_refuses_a_bot_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch, here) -> None:
    """No bot plays for a trustless game's seats (it refuses --on-timeout bot): a budget for one
    is refused by `game new` and `game config` alike, and nothing is written."""
    homes = make_homes(tmp_path, ["referee", *SEATS4])
    players = [a for s in SEATS4 for a in ("--player", f"{s}={keys.load_identity(homes[s], s, None).public.encode()}")]
    db = tmp_path / "t.db"
    new = ["game", "new", "t", "--host", "referee", *players, "--db", db, "--trustless", "--deadline", "1h"]
    code, err = main_here([*new, "--bot-turns", "20"], homes["referee"], capsys, monkeypatch)
    assert (code, err.splitlines()[0]) == (2, "error: --bot-turns does not apply to a trustless game: no bot plays "
                                              "for its seats"), err
    assert not db.exists()
    here(*new, home=homes["referee"], ok=True)
    before = sqlite_dump(db)
    code, err = main_here(["game", "config", "t", "--db", db, "--bot-turns", "20"], homes["referee"], capsys,
                          monkeypatch)
    assert code == 2 and err.startswith("error: --bot-turns does not apply to a trustless game"), err
    assert sqlite_dump(db) == before
    # what its rules say shows no budget (nor the other rules of seats its blind host does not
    # apply: absent players, away requests), in JSON as in words
    shown = json.loads(here("game", "config", "t", "--db", db, "--json", home=homes["referee"], ok=True).stdout)
    assert shown == {"deadline": 3600.0, "grace": 0.0, "days": None, "on_timeout": "wait", "reminders": ["50%", "2h"]}
    status = json.loads(here("status", "t", "--db", db, "--json", home=homes["referee"], ok=True).stdout)
    assert status["timing"] == shown
    words = here("game", "config", "t", "--db", db, home=homes["referee"], ok=True).stdout
    assert "bot" not in words and "absent" not in words and "away" not in words, words


def _a_packet_two_budgets_tell_apart(host, fh, seats, budget: int) -> tuple[str, int, str, int]:
    """The first packet from now where another budget's search-bot move differs from the one of
    `budget` (so the test can tell them apart), the seats playing `budget`'s move themselves until
    then: (seat, seq, `budget`'s move, the other budget)."""
    from pbem.seat import player

    game = host.game_id()
    for _ in range(12):
        seat = host.status()["to_move"]
        latest = seats[seat].latest()
        seen, seq = view(host.live_state(), seat), latest.doc.seq
        move = policy_move(seen, seat, "bot", game, seq, budget)
        for other in (1, 20, 300, 1000):
            if other != budget and policy_move(seen, seat, "bot", game, seq, other) != move:
                return seat, seq, move, other
        assert host.accept(player.make_move(latest, move)).kind == "applied"
        fh.step()
    raise AssertionError("twelve packets where every budget tried plays the same move")


@pytest.mark.parametrize("named", [20, None])
def test_the_host_plays_within_the_budget_its_packet_named(tmp_path: Path, named: int | None) -> None:
    """A budget changed by `game config` applies from the next packet: the takeover of the packet
    waiting now is played within the budget that packet names (`named`), as the audit recomputes
    it. A packet published without a deadline (`named` None) promised none: the rules giving one
    renew it (tests/test_deadline_promise.py), and the fresh packet names the new budget."""

    start = Timing(deadline=3600, on_timeout="bot", bot_turns=named) if named else Timing()
    clock, host, fh, seats, ids = clocked_game(tmp_path, start, str(tmp_path / "g.db"))
    seat, seq, audited, later = _a_packet_two_budgets_tell_apart(host, fh, seats, named or TAKEOVER_TURNS)
    deadline = seats[seat].latest().packet.doc.deadline
    assert (deadline.bot_turns if deadline else None) == named
    host.set_timing(replace(start, deadline=3600, on_timeout="bot", bot_turns=later))  # the clock restarts
    clock.advance(3601)
    seen = view(host.live_state(), seat)
    why = "timeout"
    if named is None:
        expected = host.live_state()
        fh.step()  # the renewed packet is out, its deadline has run out: the host plays for the seat
        renewed = read_blocks(host.packet(seq + 1) or "")[0].doc
        assert renewed.deadline is not None and (renewed.deadline.seat, renewed.deadline.bot_turns) == (seat, later)
        played = [m for m in seats[seat].latest().packet.doc.recent if m.seq == seq + 1]
        assert [(m.by, m.why) for m in played] == [("host", "timeout")], played
        # `recent` is public (a discard shows its count): the host's state says which card it was
        move = str(policy_move(seen, seat, "bot", host.game_id(), seq + 1, later))
        assert played[0].text == public_text(move)
        apply(expected, move)
        now = host.live_state()
        hands = {p: sorted(h) for p, h in now.hands.items()}  # the store keeps a hand in order
        assert {p: sorted(h) for p, h in expected.hands.items()} == hands
        same = now.copy()  # but for its board and hands, compared above
        same.board, same.hands = expected.board, expected.hands
        assert (now.board.cells, same) == (expected.board.cells, expected)
        host.close()
        return
    with pytest.raises(Conflict, match="only its timeout policy's move"):
        _play_for(host, seat, why, policy_move(seen, seat, "bot", host.game_id(), seq, later))
    assert _play_for(host, seat, why, audited).kind == "applied"
    fh.step()  # the next packet names the game's budget now
    after = host.status()["to_move"]
    assert seats[after].latest().packet.doc.deadline.bot_turns == later
    host.close()


@pytest.mark.slow  # a round played to its end by four bots, then `pbem audit`: ~4 s
def test_the_audit_faults_a_packet_naming_a_budget_no_game_may_set(tmp_path: Path) -> None:
    """A host that bypasses its library names a budget of 10**9 simulated turns in a packet
    (playing the bot again with it would keep every auditor busy for days) and plays a move
    for the silent seat: `pbem audit` faults that host move at once (exit 8) and plays no bot."""
    from test_host_plays_for import rogue_play

    from engine.rules import legal_moves

    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(deadline=3600, on_timeout="bot", bot_turns=20),
                                               str(tmp_path / "g.db"))
    with host._change() as change:  # the store edited: no `game config` takes it
        change.set_timing(replace(change.settings.rules(), bot_turns=10**9))
    first = host.status()["to_move"]
    sp = seats[first].latest()
    seats[first].move(sp, str(legal_moves(sp.view)[0]))
    fh.step()
    silent = host.status()["to_move"]
    assert seats[silent].latest().packet.doc.deadline.bot_turns == 10**9
    clock.advance(3601)
    rogue_play(host, silent, str(legal_moves(view(host.live_state(), silent))[0]))
    fh.step()
    bots_end_the_round(host, fh, seats)
    host.close()
    audit = pbem("audit", tmp_path / "shared", "--round", 1, home=seats[first].home, timeout=60)
    said = " ".join((audit.stdout + audit.stderr).split())
    assert audit.returncode == 8, said
    assert ("move 2: packet 2 names a bot budget of 1000000000 simulated turns, beyond the 1 to 100000 a game may "
            "set") in said, said
