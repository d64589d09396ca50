"""A four-seat trustless game through a real shared folder, real processes (`pbem host run`, the
blind host; `pbem bot run` for the seat that vanishes), where one seat's bot is killed right after
it joined: under a short deadline the blind host declares the seat gone, the three others stand
in for it and the game finishes by itself, then `pbem audit` of the folder follows all of it and
finds it clean (docs/trustless.md §11). The seats that stay are bots in threads of the test
(BotHere: `pbem bot run`'s loop; tests/test_trustless_folder.py runs them as processes)."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

import pytest
from cli_games import BotHere, bots_here, cli_game, start_bots, start_host
from folder_games import SEATS, SEATS4
from process_tools import wait_all
from processes import pbem

from pbem.folder.layout import GameFolder
from pbem.protocol.documents import Invitation, Packet, read_blocks


def _packets(folder: Path) -> list:
    inv = read_blocks((folder / "invitation.pbem").read_text())[0].expect(Invitation)
    return [read_blocks(p.read_text())[0].expect(Packet) for _, p in GameFolder.open(folder).packets(None)
            if read_blocks(p.read_text())[0].game == inv.game]


def _timed_game(here, tmp_path: Path, seats: list[str] = SEATS4, deadline: str = "4s") -> tuple[Path, Path, dict[str, Path]]:
    """The game, made by the commands of docs/playing.md run in this process (the set-up is not
    these tests' point; tests/test_trustless_folder.py makes one by real processes), with a short
    deadline: a seat still waited for past it and the grace is declared gone (a seat that answers
    is never late but on a very slow machine: the tests where a seat may be late before the
    killed one give more time). The game is served and played by real processes."""

    db, folder, homes = cli_game(tmp_path, seats, trustless=True, here=here)
    here("game", "config", "t", "--db", db, "--deadline", deadline, "--grace", "1s", "--on-timeout", "discard",
         "--remind", "50%", home=homes["referee"], ok=True)
    return db, folder, homes


def _finish(tmp_path: Path, host: subprocess.Popen, bots: Mapping[str, subprocess.Popen | BotHere],
            allowed: re.Pattern[str] | None = None) -> str:
    """Wait for the game to end; no block refused (but lines that match `allowed`)."""
    try:
        wait_all([*bots.values(), host], timeout=600)
    finally:
        for p in [host, *bots.values()]:
            if p.poll() is None:
                p.kill()
                p.wait()
    host_log = (tmp_path / "host.log").read_text()
    assert " is over after packet " in host_log, host_log[-3000:]
    refused = [x for x in host_log.splitlines() if "rejected" in x and not (allowed and allowed.search(x))]
    assert not refused, refused
    return host_log


def _join_and_die(tmp_path: Path, folder: Path, homes: dict[str, Path], seat: str) -> None:
    """`seat`'s bot joins alone and is killed at once."""
    started = time.monotonic()
    bot = start_bots(folder, homes, tmp_path, seats=[seat], poll=1)[seat]
    log = tmp_path / f"bot-{seat}.log"
    while "joined with key shares" not in (log.read_text() if log.exists() else ""):
        assert bot.poll() is None and time.monotonic() - started < 120, log.read_text()
        time.sleep(0.05)
    bot.kill()
    bot.wait()


@pytest.mark.slow
def test_a_seat_killed_right_after_joining_the_game_finishes_by_itself_and_audits(tmp_path: Path, here) -> None:
    db, folder, homes = _timed_game(here, tmp_path)
    started = time.monotonic()
    _join_and_die(tmp_path, folder, homes, "ann")  # she shuffles first, so the table needs her next
    host = start_host(db, folder, homes["referee"], tmp_path / "host.log", poll=0.2)
    bots = bots_here(folder, homes, tmp_path, seats=SEATS4[1:])
    _finish(tmp_path, host, bots)
    took = time.monotonic() - started
    chain = _packets(folder)
    declared = [p.doc for p in chain if getattr(p.doc, "gone", None)]
    assert [(d.gone.seats, d.gone.step) for d in declared] == [(["ann"], "shuffle")]
    audit = pbem("audit", folder, "--json", home=homes["bob"], timeout=300)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    report = json.loads(audit.stdout)
    assert report["ok"] and report["anchored"] and report["step"] == "over" and report["packets"] == len(chain)
    assert [r["round"] for r in report["rounds"]] == [1, 2, 3]
    gone = report["gone"]
    assert [(g["seat"], g["packet"], g["step"]) for g in gone] == [("ann", declared[0].seq, "shuffle")]
    assert gone[0]["stand_ins"] >= 3 * 3 and gone[0]["discards"] >= 3  # each round: deal, reveal; ann's turns
    stand_in_steps = [b for p in chain for b in (p.doc.relayed or []) if b.doc and b.doc.get("step") == "stand-in"]
    words = here("audit", folder, home=homes["cat"])  # the same audit in words, in this process
    assert words.returncode == 0 and "ann declared gone at packet 2" in words.stdout, words.stdout + words.stderr
    riding = [b.doc["stand_in"] for p in chain for b in (p.doc.relayed or []) if b.doc and b.doc.get("stand_in")]
    size = sum(len(json.dumps(x)) for x in riding)
    print(f"vanished seat game: {len(chain)} packets, {took:.1f} s; {len(stand_in_steps)} stand-in blocks; "
          f"{len(riding)} blocks carried stand-in shares, {size} bytes of them")


@pytest.mark.slow
def test_a_seat_killed_mid_round_the_others_finish_the_game(tmp_path: Path, here) -> None:
    """cat's bot plays round 1 for a while and is killed: the table stands in for what it owes
    (the tokens of cards the others drew, goals, its round keys) and discards for it."""
    db, folder, homes = _timed_game(here, tmp_path, deadline="10s")
    started = time.monotonic()
    host = start_host(db, folder, homes["referee"], tmp_path / "host.log", poll=0.2)
    bots: dict[str, subprocess.Popen | BotHere] = {**start_bots(folder, homes, tmp_path, seats=["cat"], poll=1),
                                                    **bots_here(folder, homes, tmp_path, seats=["ann", "bob", "dan"])}
    gf = GameFolder.open(folder)
    while len(gf.packets(None)) < 20:  # 1 joins, 4 shuffles, 4 deals, then ten moves or so
        assert bots["cat"].poll() is None and time.monotonic() - started < 300
        time.sleep(0.05)
    bots["cat"].kill()
    bots["cat"].wait()
    killed = len(gf.packets(None))
    del bots["cat"]
    _finish(tmp_path, host, bots)
    took = time.monotonic() - started
    chain = _packets(folder)
    declared = [p.doc for p in chain if getattr(p.doc, "gone", None)]
    assert [d.gone.seats for d in declared] == [["cat"]] and declared[0].seq > killed - 2
    audit = here("audit", folder, "--json", home=homes["dan"])  # in this process: the test above runs it as one
    assert audit.returncode == 0, audit.stdout + audit.stderr
    report = json.loads(audit.stdout)
    assert report["ok"] and report["step"] == "over" and [r["round"] for r in report["rounds"]] == [1, 2, 3]
    assert [g["seat"] for g in report["gone"]] == ["cat"] and report["gone"][0]["discards"] >= 3
    print(f"seat killed mid-round: {len(chain)} packets, {took:.1f} s; declared at packet {declared[0].seq} "
          f"({declared[0].gone.step} step)")


@pytest.mark.slow
def test_a_person_stands_in_with_pbem_turn(tmp_path: Path, here) -> None:
    """ann is a person at a three-seat table whose cat joined and vanished: the deal block her
    `pbem turn` sends carries her stand-in shares of cat's deal tokens, her hand opens, and she
    plays her first move."""
    from pbem.folder.trustless import folder_seat
    from pbem.seat import keys

    db, folder, homes = _timed_game(here, tmp_path, SEATS, deadline="10s")
    # cat joins and says nothing more: its join made in this process (the tests above kill a
    # real bot process right after it joined; here the vanishing is the set-up, not the point)
    folder_seat(folder, keys.load_identity(homes["cat"], "cat", None), homes["cat"]).join()
    host = start_host(db, folder, homes["referee"], tmp_path / "host.log", poll=0.2)
    bots = bots_here(folder, homes, tmp_path, seats=["bob"])
    started = time.monotonic()
    try:  # one `pbem turn --wait` sends what the table asks of her on the way (her shuffle, her deal)
        run = pbem("turn", folder, "--as", "ann", "--wait", "--timeout", "300", "--json", home=homes["ann"], timeout=330)
        assert run.returncode == 0, run.stderr + (tmp_path / "host.log").read_text()[-2000:]
        shown = json.loads(run.stdout)
        assert shown["your_turn"] and len(shown["hand"]) == 6 and None not in shown["hand"], shown
        assert shown["role"]  # cat's part of her role and hand came from the others
        played = here("turn", folder, "--as", "ann", "discard 1", home=homes["ann"])  # her next turn: in this process
        assert played.returncode == 0, played.stderr
        chain: list = []
        while not any(b.doc.get("step") == "move" and b.doc.get("seat") == "ann" for p in chain
                      for b in p.doc.relayed or []):
            assert time.monotonic() - started < 300
            time.sleep(0.2)
            chain = _packets(folder)
    finally:
        for p in [host, *bots.values()]:
            p.kill()
            p.wait()
    relayed = [b.doc for p in chain for b in p.doc.relayed or [] if b.doc]
    dealt = {d["seat"]: d for d in relayed if d.get("step") == "deal"}  # her deal block, from `pbem turn`,
    assert [x["for"] for x in dealt["ann"]["stand_in"]] == ["cat"]  # carries her part of cat's deal tokens
    assert [x["for"] for x in dealt["bob"]["stand_in"]] == ["cat"]
    assert [(d.gone.seats, d.gone.step) for d in (p.doc for p in chain) if getattr(d, "gone", None)] == [
        (["cat"], "shuffle")]
    assert "rejected" not in (tmp_path / "host.log").read_text()
