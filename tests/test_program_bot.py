"""`pbem bot run --command`: an outside program plays a seat, and one that misbehaves cannot
stall it (real processes: the pbem command line and the bot program)."""

from __future__ import annotations

import re
import shlex
import shutil
import sqlite3
import sys
import time
from pathlib import Path

import pytest
from folder_games import folder_dealt
from processes import pbem

ROOT = Path(__file__).resolve().parent.parent


def docs_example() -> str:
    """The Python example of docs/bots.md's section on --command, as printed there."""
    text = (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
    section = text.split("## Your own bot", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.fixture(scope="module")
def dealt(tmp_path_factory):
    """A dealt game in a shared folder, made once; each case plays on a copy."""
    root = tmp_path_factory.mktemp("program-bot")
    _, _, _, mover, _ = folder_dealt(root)
    return root, mover.seat


def _run(dealt, tmp_path: Path, program: str, think: float) -> tuple[str, list[Path], float]:
    root, seat = dealt
    case = tmp_path / "case"
    shutil.copytree(root, case, symlinks=True)
    (case / "bot.py").write_text(program, encoding="utf-8")
    inbox = case / "shared" / "inbox"
    before = set(inbox.glob("*.pbem"))
    command = f"{shlex.quote(sys.executable)} bot.py"
    started = time.monotonic()
    run = pbem("bot", "run", "--as", seat, "--folder", case / "shared", "--command", command, "--think", think,
               "--once", home=case / f"home-{seat}", cwd=case, ok=True)
    return run.stdout + run.stderr, sorted(set(inbox.glob("*.pbem")) - before), time.monotonic() - started


def test_the_docs_example_plays_the_seat(dealt, tmp_path: Path) -> None:
    out, sent, _ = _run(dealt, tmp_path, docs_example(), 20)
    assert len(sent) == 1 and sent[0].name.startswith(f"{dealt[1]}-")
    assert "bot program" not in out, out  # its move was played, not the built-in bot's
    start = next(line for line in out.splitlines() if "playing seat" in line)
    assert "bot.py' (the smart bot when it does not answer)" in start, out  # the program plays, not the smart bot


@pytest.mark.parametrize("program,said", [
    ("import time\ntime.sleep(60)\n", "did not answer in time"),  # never reads, never answers
    ("import sys\nfor line in sys.stdin:\n    print('hello', flush=True)\n", "'hello', not a legal move"),
    ("import sys\nsys.stdout.buffer.write(b'\\xff\\xfe' * 50000)\nsys.stdout.flush()\nimport time\ntime.sleep(60)\n",
     "not a line of text"),
    ("pass\n", "has stopped"),
])
def test_a_misbehaving_program_never_stalls_the_seat(dealt, tmp_path: Path, program: str, said: str) -> None:
    out, sent, took = _run(dealt, tmp_path, program, 2)
    assert said in out, out
    assert "smart bot plays" in out
    assert len(sent) == 1  # the built-in bot moved instead
    assert took < 40


def test_a_command_that_cannot_start(tmp_path: Path, dealt) -> None:
    root, seat = dealt
    run = pbem("bot", "run", "--as", seat, "--folder", root / "shared", "--command", "no-such-program-here", "--once",
               home=root / f"home-{seat}", cwd=tmp_path)
    assert run.returncode == 2 and "error: cannot start the bot program" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.slow  # (three rounds, every packet signed and checked)
def test_the_docs_example_plays_a_whole_game_in_a_folder(tmp_path: Path) -> None:
    """The example program plays every decision of one seat of a whole game (three rounds),
    the host and the other seats' smart bots stepping in this process over the folder."""
    from folder_games import SEATS, new_game

    from pbem.auto.host_runner import FolderHost
    from pbem.auto.program_bot import Program
    from pbem.auto.seat_bot import FolderBot
    from pbem.host import referee as H
    from pbem.seat import keys

    db, homes = new_game(tmp_path)
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    (tmp_path / "bot.py").write_text(docs_example(), encoding="utf-8")
    host = H.Host(db, ids["referee"])
    hosting = FolderHost(host, tmp_path / "shared", lambda line: None)
    hosting.grace = 0.0
    said: dict[str, list[str]] = {s: [] for s in SEATS}
    program = Program(f"{shlex.quote(sys.executable)} {shlex.quote(str(tmp_path / 'bot.py'))}")
    bots = [FolderBot(tmp_path / "shared", ids[s], homes[s], "smart", s, said[s].append, think=20,
                      program=program if s == "ann" else None) for s in SEATS]
    try:
        for _ in range(3000):
            over = hosting.step()
            done = [b.step() for b in bots]
            if over and all(done):
                break
        else:
            raise AssertionError("the game did not end")
    finally:
        program.close()
        host.close()
    # every decision of ann's over three rounds went to the program: one question a move of hers
    # (how many depends on the deal: a 3-seat round can end in fifteen turns)
    with sqlite3.connect(db) as con:
        moves_of_ann = con.execute("SELECT COUNT(*) FROM moves WHERE seat = 'ann'").fetchone()[0]
    con.close()
    assert program.asked == moves_of_ann >= 3, (program.asked, moves_of_ann)
    assert not [line for line in said["ann"] if "bot program" in line], said["ann"]


def test_a_program_that_never_reads_never_blocks_a_write() -> None:
    """A line far longer than a pipe holds, to a program that never reads: `ask` returns after
    its timeout, and the next one too (the first line still queued)."""
    from pbem.auto.program_bot import SILENT, Program

    program = Program(f"{shlex.quote(sys.executable)} -c 'import time; time.sleep(60)'")
    try:
        started = time.monotonic()
        assert program.ask({"pad": "x" * 400_000}, 0.5) == (None, SILENT)
        assert program.ask({"legal": []}, 0.5) == (None, SILENT)
        assert time.monotonic() - started < 5
    finally:
        program.close()
