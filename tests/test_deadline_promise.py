"""A waiting packet's deadline is a promise (docs/protocol.md, "Deadlines"): a rule changed by
`pbem game config` while a packet waits (`--on-timeout`, a shorter `--deadline` or `--grace`)
applies from the next packet; the host plays for the silent seat with the policy that packet
names and not before the due time and grace it names, which is what `pbem audit` checks. Real
keys, a real store (SQLite and PostgreSQL), a real shared folder, `game config` through the
command line's own entry.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from folder_games import bots_end_the_round, clocked_game, paused_game
from processes import pbem
from run_here import main_here, pbem_here

from engine.views import view
from pbem.host.clock import parse_time, stamp
from pbem.host.deadlines import Timing
from pbem.protocol.documents import parse, read_blocks, unb64
from pbem.protocol.timeout import policy_move, renewed_from, renewed_to


def _host_moves(host) -> list[tuple[str, str]]:
    """The moves the host made in round 1's archive: (seat, text)."""
    archive = next(b for b in read_blocks(host.archives()[1]) if b.kind == "archive").doc
    return [(m.seat, m.text) for m in archive.moves if m.by == "host"]


def _host_plays_then_audit(tmp_path: Path, host, fh, seats, ids, silent: str, promised: str, audit_with) -> str:
    """The host plays `promised` for `silent` now, bots end the round, and the silent seat's
    `pbem audit` of it passes (run by `audit_with`: a process of its own, or `here`): its output."""
    assert "applied" in [o.kind for o in host.tick()]
    fh.step()
    bots_end_the_round(host, fh, seats)
    assert _host_moves(host)[0] == (silent, promised)
    host.close()
    audit = audit_with("audit", tmp_path / "shared", "--round", 1, home=seats[silent].home)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    return audit.stdout


def _audit_process(*args: object, home: Path):
    return pbem(*args, home=home, timeout=120)


_CHANGES = [(["--on-timeout", "bot"], 0), (["--on-timeout", "wait"], 3700), (["--deadline", "1m"], 3700),
            (["--grace", "1m"], 3700)]


# Each change on SQLite, and one on PostgreSQL: what is the store's in them (the rule written while
# a packet waits, the packet's clock read back at each tick) is the same code for all four, and
# each case plays a round to its end (about a second of CPU).
@pytest.mark.parametrize(("store_url", "change", "early"),
                         [*(("sqlite", change, early) for change, early in _CHANGES),
                          ("postgresql", ["--deadline", "1m"], 3700)], indirect=["store_url"])
def test_a_rule_changed_while_a_packet_waits_applies_from_the_next(tmp_path: Path, store_url: str, change: list[str],
                                                                   early: int, capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch, here) -> None:
    """Packet 1 names a 1 h deadline, 1 h of grace and the policy discard; its seat stays
    silent and the host runs `game config` with `change`. `early` seconds later (past the new
    rule's time, before the packet's) the host plays for nobody and sleeps until the packet's
    time; once the packet's deadline and grace
    have passed it plays the discard the packet named, and the round's audit passes. Before, the
    host played the new rule's move or time and the audit faulted its move (exit 8). The audit
    runs as a process of its own in one case, in this process (`here`) in the others."""
    now = stamp(datetime.now(UTC).replace(microsecond=0))  # `game config` counts on the real clock
    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(deadline=3600, grace=3600, on_timeout="discard"),
                                               store_url, start=now)
    silent = host.status()["to_move"]
    named = seats[silent].latest().packet.doc.deadline
    assert (named.on_timeout, named.bot_turns) == ("discard", None)
    promised = policy_move(view(host.live_state(), silent), silent, "discard", host.game_id(), 1)
    said = pbem_here(["game", "config", "t", "--store", store_url, *change], tmp_path / "home-referee", capsys,
                     monkeypatch)
    assert said.returncode == 0, said.stderr
    # it says so: the waiting packet keeps what it was published with
    assert "the packet waiting now (packet 1) keeps its deadline as published; these rules apply from the next " \
           "packet" in said.stdout, said.stdout
    if early:
        clock.advance(early)
        assert {o.kind for o in host.tick()} <= {"notice"} and host.status()["seq"] == 1  # not yet
        wakes = host.next_tick()  # `host run` sleeps until the packet's time (the clock restarted a moment later)
        assert wakes is not None and 0 <= (wakes - parse_time(named.grace_until)).total_seconds() < 60, wakes
    clock.advance(3 * 3600)  # the packet's own deadline and grace have passed
    real = change == ["--on-timeout", "bot"] and store_url.startswith("sqlite")
    audit = _host_plays_then_audit(tmp_path, host, fh, seats, ids, silent, promised, _audit_process if real else here)
    assert f"move 1: played by the host for {silent} (no move in time)" in audit


@pytest.mark.parametrize("how", ["resume", "config"])
def test_a_packet_naming_no_deadline_is_renewed_when_the_rules_give_one(tmp_path: Path, store_url: str, how: str,
                                                                        capsys: pytest.CaptureFixture[str],
                                                                        monkeypatch: pytest.MonkeyPatch, here) -> None:
    """A packet names no deadline: `resume`, published while the game was paused (`game pause`,
    a seat moves, `game resume`); `config`, the game had none (`game config --deadline 1h`).
    The host publishes a fresh packet of the same position naming the deadline the rules give
    now; the silent seat's deadline and grace pass, the host plays the discard that packet names,
    and `pbem audit` passes. Before, the waiting packet named no deadline for ever: the host
    never played for the silent seat."""
    from pbem.auto.seat_bot import FolderBot

    now = stamp(datetime.now(UTC).replace(microsecond=0))  # the commands count on the real clock
    rules = Timing(deadline=3600, grace=3600, on_timeout="discard") if how == "resume" else Timing()
    clock, host, fh, seats, ids = clocked_game(tmp_path, rules, store_url, start=now)
    home = tmp_path / "home-referee"
    if how == "resume":
        assert main_here(["game", "pause", "t", "--store", store_url], home, capsys, monkeypatch)[0] == 0
        first = host.status()["to_move"]
        FolderBot(fh.dir, ids[first], seats[first].home, "smart", 1, lambda line: None).step()
        fh.step()  # packet 2, published while paused, names no deadline
        change = ["game", "resume", "t"]
    else:
        change = ["game", "config", "t", "--deadline", "1h", "--grace", "1h", "--on-timeout", "discard"]
    silent, waiting = host.status()["to_move"], host.status()["seq"]
    assert seats[silent].latest().packet.doc.deadline is None
    said = pbem_here([*change, "--store", store_url], home, capsys, monkeypatch)
    assert said.returncode == 0, said.stderr
    # it says so: a fresh packet was published, naming the deadline the waiting one did not
    assert f"packet {waiting + 1} published: it names the deadline packet {waiting} did not" in said.stdout, said.stdout
    fh.step()
    assert host.status()["seq"] == waiting + 1  # the fresh packet, same position, same seat to move
    named = seats[silent].latest().packet.doc.deadline
    assert named is not None and (named.seat, named.on_timeout) == (silent, "discard"), named
    promised = policy_move(view(host.live_state(), silent), silent, "discard", host.game_id(), waiting + 1)
    clock.advance(3 * 3600 + 60)  # its deadline and grace have passed
    audit = _host_plays_then_audit(tmp_path, host, fh, seats, ids, silent, promised, here)  # (in this process)
    assert f"played by the host for {silent} (no move in time)" in audit


def test_a_move_made_for_the_packet_a_renewal_replaced_is_applied(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch, here) -> None:
    """A seat moves (`pbem turn FOLDER MOVE`) at a packet published while the game was paused,
    and the host runs `game resume` before it reads the move: the fresh packet of the same
    position that names the deadline (docs/protocol.md, "Move") leaves the move good. The host
    applies it as the seat's own, the seat's next `turn` shows it made, and `pbem audit` of the
    round passes (the move's envelope names the packet before the renewal). Before, the host
    refused it as stale and told the seat nothing: its turn came up again, and the host would
    have played for it at the deadline."""
    store, home, shared = f"sqlite:///{tmp_path / 'store.db'}", tmp_path / "home-referee", tmp_path / "shared"
    clock, host, fh, seats, ids = paused_game(tmp_path, store, home, capsys, monkeypatch)
    silent, waiting = host.status()["to_move"], host.status()["seq"]
    sent = here("turn", shared, "--as", silent, "discard 1", home=seats[silent].home)
    assert sent.returncode == 0 and f"move for packet {waiting} submitted" in sent.stdout, sent.stdout + sent.stderr
    said = here("game", "resume", "t", "--store", store, home=home)
    assert f"packet {waiting + 1} published: it names the deadline" in said.stdout, said.stdout + said.stderr
    fh.step()  # the move is read after the renewal
    assert (host.status()["seq"], host.status()["to_move"]) == (waiting + 2, seats[silent].latest().packet.doc.to_move)
    assert host.status()["to_move"] != silent
    after = here("turn", shared, "--as", silent, home=seats[silent].home)
    assert after.returncode == 0 and "your turn" not in after.stdout, after.stdout
    bots_end_the_round(host, fh, seats)
    archive = next(b for b in read_blocks(host.archives()[1]) if b.kind == "archive").doc
    made = [m for m in archive.moves if m.seat == silent][0]
    envelope = parse("move", unb64(made.envelope, "envelope")).doc
    assert (made.by, envelope.seq, archive.renewed) == (None, waiting, [waiting + 1])
    host.close()
    audit = here("audit", shared, "--round", 1, home=seats[silent].home)
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_the_host_and_the_audit_read_renewals_by_one_rule() -> None:
    """A move made for packet 4, renewed by 5 and 5 by 6, is applied at 6 (the host,
    timeout.renewed_to); at 6 the audit looks for a seat's move made for 6, 5 or 4
    (timeout.renewed_from); a packet no renewal follows answers only itself."""
    renewed = [5, 6, 9]
    assert [renewed_to(p, renewed) for p in (3, 4, 5, 6, 7, 8)] == [3, 6, 6, 6, 7, 9]
    assert renewed_from(6, renewed) == [6, 5, 4] and renewed_from(9, renewed) == [9, 8]
    assert renewed_from(7, renewed) == [7]
    for head in range(1, 11):
        if head + 1 not in renewed:  # a packet the host plays at: none renewed it later
            assert sorted(p for p in range(1, 11) if renewed_to(p, renewed) == head) == sorted(renewed_from(head, renewed))


def test_the_seats_audit_faults_a_host_move_over_its_move_for_the_renewed_packet(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, here) -> None:
    """As above, a seat moves at the packet a `game resume` then renews, but the host does not
    read the move and plays for the seat at the renewal once its deadline and grace pass: the
    seat's `pbem audit` (its key home keeps the move it made) faults that host move (exit 8), as
    it does one over a move for the very packet. Before, it passed: the seat's move was for the
    packet before."""
    store, home, shared = f"sqlite:///{tmp_path / 'store.db'}", tmp_path / "home-referee", tmp_path / "shared"
    clock, host, fh, seats, ids = paused_game(tmp_path, store, home, capsys, monkeypatch)
    silent, waiting = host.status()["to_move"], host.status()["seq"]
    here("turn", shared, "--as", silent, "discard 1", home=seats[silent].home, ok=True)
    for unread in (shared / "inbox").glob(f"{silent}-*.pbem"):
        unread.unlink()  # the host never reads it
    here("game", "resume", "t", "--store", store, home=home, ok=True)
    clock.advance(3 * 3600 + 60)
    assert "applied" in [o.kind for o in host.tick()]  # the host plays for the seat at the renewal
    assert _host_moves_now(host) == [(silent, waiting + 1)]
    fh.step()
    bots_end_the_round(host, fh, seats)
    host.close()
    audit = here("audit", shared, "--round", 1, "--as", silent, home=seats[silent].home)
    assert audit.returncode == 8, audit.stdout + audit.stderr
    assert f"the host played for {silent} at packet {waiting + 1}, which {silent} had answered" in audit.stdout, \
        audit.stdout


def test_turn_at_a_renewal_says_the_move_made_for_the_packet_before_counts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, here) -> None:
    """A seat moves (`pbem turn FOLDER MOVE`) at a packet published while the game was paused;
    its move is still on its way (a synced folder lags, a mail is slow) when the host runs `game
    resume`, which publishes a fresh packet of the same position that names the deadline. The
    seat's `pbem turn` (a process of its own) says that its move for the packet before still
    counts and the host applies it at the renewal, not "your turn"; `--json` says `answered`
    with the packet the move was made for (`answered_seq`), `pbem show` of the packet says as
    `turn` does, `pbem games` does not list it as the seat's turn, and a second, different move
    is refused (exit 5) while the first goes again, byte for byte: the host gets one move and
    applies it. Before, `turn` said "your turn" at the renewal (`show`: "your move", `games`:
    the seat's turn), and a second move went to the host beside the first (`move for packet
    3 submitted`, exit 0): whichever the host read first was applied, the other refused."""
    store, home, shared = f"sqlite:///{tmp_path / 'store.db'}", tmp_path / "home-referee", tmp_path / "shared"
    clock, host, fh, seats, ids = paused_game(tmp_path, store, home, capsys, monkeypatch)
    silent, waiting = host.status()["to_move"], host.status()["seq"]
    mine = seats[silent].home
    here("turn", shared, "--as", silent, "discard 1", home=mine, ok=True)
    inbox, away = shared / "inbox", tmp_path / "on-its-way"
    away.mkdir()
    sent = sorted(inbox.glob(f"{silent}-*.pbem"))
    assert len(sent) == 1
    first = sent[0].read_bytes()
    sent[0].rename(away / sent[0].name)  # not in the inbox when the host next looks
    here("game", "resume", "t", "--store", store, home=home, ok=True)
    fh.step()  # the renewal is published; the move is not there yet
    assert (host.status()["seq"], host.status()["to_move"]) == (waiting + 1, silent)
    said = pbem("turn", shared, "--as", silent, home=mine)
    assert said.returncode == 0, said.stdout + said.stderr
    assert "your turn" not in said.stdout, said.stdout
    words = next(line for line in said.stdout.splitlines() if line.startswith(f"your move for packet {waiting} "))
    assert words.endswith(f"still counts: packet {waiting + 1} renews that packet to name a deadline, and the host "
                          "applies your move at it; waiting for the host"), words
    assert "(“discard " in words, words
    doc = json.loads(here("turn", shared, "--as", silent, "--json", home=mine, ok=True).stdout)
    assert (doc["seq"], doc["my_turn"], doc["answered"], doc["answered_seq"]) == (waiting + 1, True, True, waiting)
    packet = next(path for seq, path in seats[silent].folder.packets_newest_first(silent) if seq == waiting + 1)
    shown = here("show", packet, "--as", silent, home=mine, ok=True)
    assert words in shown.stdout and "your move: pbem move" not in shown.stdout, shown.stdout
    listed = json.loads(here("games", "--json", home=mine, ok=True).stdout)["playing"]
    assert [(g["seq"], g["answered"], g["yours"]) for g in listed] == [(waiting + 1, True, False)], listed
    other = here("turn", shared, "--as", silent, "discard 2", home=mine)
    assert other.returncode == 5, other.stdout + other.stderr
    assert f"was not sent: your move for packet {waiting} counts at packet {waiting + 1}, which renews it" in \
        other.stderr, other.stderr
    assert [p.read_bytes() for p in inbox.glob(f"{silent}-*.pbem")] == [first]  # the first move, again
    for late in away.iterdir():
        late.rename(inbox / late.name)  # and the first copy arrives too: one move, the same file twice
    fh.step()
    assert host.status()["seq"] == waiting + 2 and host.status()["to_move"] != silent
    assert not list(inbox.glob("*.pbem")) and not list((inbox / "rejected").glob("*.pbem"))


def test_turn_at_a_renewal_the_seat_did_not_answer_says_your_turn(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, here) -> None:
    """The same renewal (`game resume` of a paused game) where the seat to move had made no move
    for the packet before: its `pbem turn` says "your turn", `--json` has no `answered_seq`, and
    the move it then makes is applied at the renewal."""
    store, home, shared = f"sqlite:///{tmp_path / 'store.db'}", tmp_path / "home-referee", tmp_path / "shared"
    clock, host, fh, seats, ids = paused_game(tmp_path, store, home, capsys, monkeypatch)
    silent, waiting = host.status()["to_move"], host.status()["seq"]
    mine = seats[silent].home
    here("game", "resume", "t", "--store", store, home=home, ok=True)
    fh.step()
    assert (host.status()["seq"], host.status()["to_move"]) == (waiting + 1, silent)
    said = here("turn", shared, "--as", silent, home=mine, ok=True)
    assert f'your turn: pbem turn {shared} --as {silent} "MOVE"' in said.stdout, said.stdout
    doc = json.loads(here("turn", shared, "--as", silent, "--json", home=mine, ok=True).stdout)
    assert (doc["seq"], doc["my_turn"], doc["answered"], doc["answered_seq"]) == (waiting + 1, True, False, None)
    moved = here("turn", shared, "--as", silent, "discard 1", home=mine, ok=True)
    assert f"move for packet {waiting + 1} submitted" in moved.stdout, moved.stdout
    fh.step()
    assert host.status()["seq"] == waiting + 2 and host.status()["to_move"] != silent


def test_a_folder_bot_at_a_renewal_sends_its_move_for_the_packet_before_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, here) -> None:
    """A bot (`pbem bot`'s FolderBot) moved at the packet a `game resume` then renews, its move
    not yet read: at the renewal it sends that same move again, byte for byte, not a second one,
    and the host applies it. Before, it chose and sent a new move for the renewal beside the
    first: two moves in the inbox, one refused."""
    from pbem.auto.seat_bot import FolderBot

    store, home, shared = f"sqlite:///{tmp_path / 'store.db'}", tmp_path / "home-referee", tmp_path / "shared"
    clock, host, fh, seats, ids = paused_game(tmp_path, store, home, capsys, monkeypatch)
    silent, waiting = host.status()["to_move"], host.status()["seq"]
    bot = FolderBot(fh.dir, ids[silent], seats[silent].home, "smart", 1, lambda line: None)
    bot.step()
    inbox, away = shared / "inbox", tmp_path / "on-its-way"
    away.mkdir()
    (sent,) = inbox.glob(f"{silent}-*.pbem")
    first = sent.read_bytes()
    sent.rename(away / sent.name)
    here("game", "resume", "t", "--store", store, home=home, ok=True)
    fh.step()
    assert (host.status()["seq"], host.status()["to_move"]) == (waiting + 1, silent)
    bot.step()
    assert [p.read_bytes() for p in inbox.glob(f"{silent}-*.pbem")] == [first]
    fh.step()
    assert host.status()["seq"] == waiting + 2 and host.status()["to_move"] != silent
    assert not list((inbox / "rejected").glob("*.pbem"))


def _host_moves_now(host) -> list[tuple[str, int]]:
    """The moves the host made so far in the round being played: (seat, the packet it answered)."""
    from sqlalchemy import select

    from pbem.host.tables import moves

    with host.store.read() as c:
        return [(r.seat, r.answered_seq) for r in c.execute(select(moves.c.seat, moves.c.answered_seq)
                                                              .where(moves.c.why.is_not(None)))]


# Both policies on SQLite, the one that plays on PostgreSQL too: the store's part (the memo as the
# older pbem wrote it, read back) is the same for both.
@pytest.mark.parametrize(("store_url", "policy"), [("sqlite", "discard"), ("sqlite", "wait"), ("postgresql", "discard")],
                         indirect=["store_url"])
def test_a_clock_kept_before_it_recorded_the_deadline_follows_the_rules(tmp_path: Path, store_url: str,
                                                                       policy: str) -> None:
    """A store of an older pbem kept the waiting packet's clock without the deadline the packet
    names (no `deadline`, no `named` in the game's memo): until a change reads the packet again,
    the host's next wake-up (`next_tick`, what `host run` sleeps until) follows the game's rules:
    the timeout move once the deadline and grace have passed under a policy that plays, nothing
    under `wait`. The host then plays (or not) by the packet it reads at that tick."""
    import json

    from sqlalchemy import select, update

    from pbem.host.tables import games

    clock, host, fh, seats, ids = clocked_game(tmp_path, Timing(deadline=3600, grace=1800, on_timeout=policy,
                                                                reminders=[]), store_url)
    due = parse_time(host.status()["deadline"]["due"])
    where = games.c.id == host.game_id()
    with host.store.write() as c:  # the memo as the older pbem wrote it
        memo = json.loads(c.execute(select(games.c.memo).where(where)).scalar())
        assert memo["clock"].pop("named") is True and memo["clock"].pop("deadline")["on_timeout"] == policy
        c.execute(update(games).where(where).values(memo=json.dumps(memo)))
    clock.set(due + timedelta(seconds=60))  # past the due time, within the grace
    assert host.next_tick() == (due + timedelta(seconds=1800) if policy == "discard" else None)
    clock.set(due + timedelta(seconds=1800))
    assert ("applied" in [o.kind for o in host.tick()]) == (policy == "discard")
