"""A seat declared gone that comes back (docs/trustless.md §11.2), through a real shared folder
and real processes: ann's bot joins and is killed, the blind host (`pbem host run`) declares her
gone under a short deadline (bob's and cat's bots play in threads of the test: BotHere), then a
new `pbem bot run --as ann` is started: it follows the chain, sends what she owes, is taken
back, and plays on; the game finishes, and `pbem audit --json` of the folder finds it clean and
says in which packet she came back."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest
from cli_games import BotHere, bots_here, start_bots, start_host
from folder_games import SEATS
from test_trustless_vanish_folder import _finish, _join_and_die, _packets, _timed_game

# a block made from a packet the table had moved past meanwhile (ann's new bot reading the chain,
# or a seat on a loaded machine declared late before its block came): refused, harmless
STALE = re.compile(r"rejected (\w+)-\S+: \1's .+ answers packet \d+, from before the .+ step")


@pytest.mark.slow
def test_a_seat_killed_then_started_again_comes_back_and_the_game_finishes(tmp_path: Path, here) -> None:
    db, folder, homes = _timed_game(here, tmp_path, SEATS)
    _join_and_die(tmp_path, folder, homes, "ann")  # she shuffles first, so the table needs her next
    host = start_host(db, folder, homes["referee"], tmp_path / "host.log", poll=0.2)
    bots: dict[str, subprocess.Popen | BotHere] = {**bots_here(folder, homes, tmp_path, seats=SEATS[1:])}
    started = time.monotonic()
    while not any(getattr(p.doc, "gone", None) for p in _packets(folder)):
        assert host.poll() is None and time.monotonic() - started < 120, (tmp_path / "host.log").read_text()[-2000:]
        time.sleep(0.1)
    bots |= start_bots(folder, homes, tmp_path, seats=["ann"], poll=1)  # ann's bot, started again
    _finish(tmp_path, host, bots, allowed=STALE)
    chain = _packets(folder)
    declared = [p.doc for p in chain if getattr(p.doc, "gone", None)]
    assert [d.gone.seats for d in declared][:1] == [["ann"]]
    audit = here("audit", folder, "--json", home=homes["bob"])  # in this process (tests/test_trustless_vanish_folder.py: as one)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    report = json.loads(audit.stdout)
    assert report["ok"] and report["step"] == "over" and report["packets"] == len(chain)
    assert [r["round"] for r in report["rounds"]] == [1, 2, 3]
    first = report["gone"][0]
    assert (first["seat"], first["packet"]) == ("ann", declared[0].seq) and first["back"], first
    back = first["back"][0]
    # the packet that relays her block after the declaration is the one the audit names
    hers = [p.doc.seq for p in chain if p.doc.seq > declared[0].seq
            and any(b.doc and b.doc.get("seat") == "ann" for b in p.doc.relayed or [])]
    assert hers and hers[0] == back
    assert any(b.doc and b.doc.get("seat") == "ann" and b.doc.get("step") == "move"  # she played on herself
               for p in chain if p.doc.seq > back for b in p.doc.relayed or [])
