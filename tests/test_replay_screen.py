"""`pbem replay` on a terminal is full screen like `less`. A real `pbem replay` runs on a
real pseudo-terminal of 80 x 24; its bytes go through a VT emulator (pyte) to see what a person
would see; keys are typed into the terminal; after q, Ctrl-C or SIGTERM the terminal is as it was."""

from __future__ import annotations

import copy
import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import time
from pathlib import Path

import pyte
import pytest
from processes import INSTALLED, cli_env
from table_games import make_table, play_until

from pbem.replay.load import load_replay
from pbem.ui.fullscreen import fit
from pbem.ui.render import FULL, maze_area

PBEM = INSTALLED[0]
ENV = cli_env(TERM="xterm-256color", COLUMNS="", LINES="")
ALT = 1049 << 5  # pyte's key for a private mode


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    table = make_table(tmp_path_factory.mktemp("screen"), ["ann", "bob", "cat", "dan"])
    play_until(table, lambda packet: packet.doc.round > 1, seed=11)
    return table.root / "game.db"


class Screen(pyte.Screen):
    """pyte's screen plus the alternate screen (mode 1049), which pyte leaves out: entering saves
    the main screen and clears; leaving brings the main screen back as it was."""

    def __init__(self, columns: int, lines: int) -> None:
        super().__init__(columns, lines)
        self.saved: tuple | None = None

    def set_mode(self, *modes: int, **kwargs) -> None:
        if kwargs.get("private") and 1049 in modes:
            self.saved = (copy.deepcopy(self.buffer), copy.copy(self.cursor))
            self.erase_in_display(2)
        super().set_mode(*modes, **kwargs)

    def erase_in_line(self, how: int = 0, private: bool = False) -> None:
        """As xterm does: a character written into the last column leaves the cursor on that column
        (the next one overwrites it, or wraps), so ESC [ K there erases it. pyte moves past it."""
        if how == 0 and self.cursor.x >= self.columns:
            self.cursor.x = self.columns - 1
        super().erase_in_line(how, private)

    def reset_mode(self, *modes: int, **kwargs) -> None:
        super().reset_mode(*modes, **kwargs)
        if kwargs.get("private") and 1049 in modes and self.saved is not None:
            self.buffer, self.cursor = self.saved
            self.saved = None
            self.dirty.update(range(self.lines))


class Pty:
    """A real `pbem replay` on a pseudo-terminal that is its controlling terminal."""

    def __init__(self, *args: str, rows: int = 24, columns: int = 80, sigint=signal.SIG_DFL) -> None:
        self.master, self.slave = os.openpty()
        self.resize(rows, columns)
        self.before = termios.tcgetattr(self.slave)
        self.screen = Screen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.stream.feed(b"$ pbem replay\r\n")  # what the terminal showed before
        self.raw = b""
        self.pid = os.fork()
        if self.pid == 0:  # the child: a new session whose terminal is the pty, then pbem
            try:
                os.setsid()
                signal.signal(signal.SIGINT, sigint)  # as a shell gives it: default, or ignored in a background job
                fcntl.ioctl(self.slave, termios.TIOCSCTTY, 0)
                for fd in (0, 1, 2):
                    os.dup2(self.slave, fd)
                os.execve(PBEM, [PBEM, "replay", *args], ENV)
            finally:
                os._exit(127)

    def resize(self, rows: int, columns: int) -> None:
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))

    def text(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def read(self, until, timeout: float = 60) -> list[str]:
        """Feed the emulator until `until(rows)` holds for the rows of the screen, looked at only
        when the program has written nothing for a moment (so never half a redraw)."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            assert left > 0, "the screen never showed it; it shows:\n" + "\n".join(self.text())
            if select.select([self.master], [], [], min(left, 0.3))[0]:
                data = os.read(self.master, 65536)
                self.raw += data
                self.stream.feed(data)
            elif until(self.text()):
                return self.text()

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def wait(self, timeout: float = 60) -> int:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            while select.select([self.master], [], [], 0.05)[0]:  # drain what it wrote last
                data = os.read(self.master, 65536)
                self.raw += data
                self.stream.feed(data)
            if pid:
                return os.waitstatus_to_exitcode(status)
        with open(f"/proc/{self.pid}/status") as proc:  # what it was doing and which signals it ignored
            state = " ".join(line.strip() for line in proc if line.startswith(("State", "SigBlk", "SigIgn")))
        os.kill(self.pid, signal.SIGKILL)
        raise AssertionError(f"pbem replay did not exit ({state})")

    def close(self) -> None:
        os.close(self.master)
        os.close(self.slave)

    def quit(self) -> None:
        """Press q: the replay ends with exit 0 and leaves the terminal as it was."""
        self.type("q")
        assert self.wait() == 0
        self.restored()

    def restored(self) -> None:
        """The terminal is as it was before: modes, main screen, cursor shown, lines wrapping."""
        assert termios.tcgetattr(self.slave) == self.before
        assert self.screen.saved is None and ALT not in self.screen.mode
        assert self.text()[0] == "$ pbem replay"
        assert not self.screen.cursor.hidden and pyte.modes.DECAWM in self.screen.mode
        assert self.raw.rindex(b"\x1b[?1049l") > self.raw.rindex(b"\x1b[?1049h")


def _status(rows: list[str]) -> str:
    return next(r for r in reversed(rows) if r)


def _board_in_view(rows: list[str], height: int, db: Path, step: int, who: str = "all") -> None:
    """The whole maze of that step on screen: every column label and row label of its cards (never
    fewer than the start's and goals', x 0..8 and y -2..2), the start; the title on the first row
    and the keys on the last."""
    assert len(rows) == height
    assert rows[0].startswith("replay: game test-"), rows[0]
    assert "q quit" in rows[-1], rows[-1]
    at = next(i for i, r in enumerate(rows) if re.fullmatch(r"\s*(-?\d+\s+){8,}-?\d+", r))
    xs = [int(x) for x in rows[at].split()]
    maze = rows[at + 1:]
    maze = maze[: next((i for i, r in enumerate(maze) if re.search(r"[a-z]{2}", r)), len(maze))]  # to the words
    ys: list[int] = []
    for r in maze:  # the row labels, counting up, each before its row's cells: not the numbers over a hand's
        # drawing under the maze (numbered from 1 again, or from one past the last row: "3  4  6" under row 2)
        if ((m := re.match(r"\s*(-?\d+) ", r)) and (not ys or int(m.group(1)) == ys[-1] + 1)
                and re.search(r"[^\d\s]", r[m.end():])):
            ys.append(int(m.group(1)))
    (x0, y0), (x1, y1) = maze_area(load_replay(str(db), round_no=1).view(step, who).board)
    assert (xs, ys) == (list(range(x0, x1 + 1)), list(range(y0, y1 + 1))), "\n".join(rows)
    assert any(re.search(r"S[│─┼ ]", r) for r in maze), "no start"


def _maze_lines(db: Path, step: int, columns: int, who: str = "all") -> int:
    """How many rows the maze of that step takes at its densest (its x labels, 2 lines a row and one,
    the compact maze's note when the full one is wider than the terminal)."""
    board = load_replay(str(db), round_no=1).view(step, who).board
    (x0, y0), (x1, y1) = maze_area(board)
    return 1 + 2 * (y1 - y0 + 1) + 1 + (FULL.width(x1 - x0 + 1) > columns)


def test_a_title_stays_pinned_when_the_top_is_taller_than_the_screen() -> None:
    top = ["title", *(f"maze {i}" for i in range(30))]
    middle = [f"hand {i}" for i in range(5)]
    fitting = fit(top[:8], middle, 10, 0, head=1)  # the top fits: all of it pinned, the hands scroll
    assert fitting.lines == [*top[:8], "hand 0", "hand 1"] and fitting.position() == "lines 1-2 of 5"
    tall = fit(top, middle, 10, 3, head=1)
    assert tall.lines == ["title", *(f"maze {i}" for i in range(3, 12))]
    assert (tall.scroll, tall.shown, tall.total) == (3, 9, 35)
    end = fit(top, middle, 10, 1000, head=1)  # clamped to the last line, the title still first
    assert end.lines == ["title", *top[-4:], *middle]
    assert fit(top, middle, 1, 0, head=1).lines == ["title"]  # one row: the title is all there is room for


@pytest.mark.slow
def test_the_replay_is_full_screen_and_gives_the_terminal_back(db: Path) -> None:
    term = Pty(str(db), "--round", "1")
    try:
        rows = term.read(lambda rows: "q quit" in rows[-1])
        _board_in_view(rows, 24, db, 0)
        assert "the deal (0 of " in rows[0] and re.search(r"lines 1-\d+ of \d+", rows[-1])
        total = int(re.search(r"of (\d+)", rows[0]).group(1))

        term.type("nn")
        rows = term.read(lambda rows: f"move 2 of {total}" in rows[0])
        assert rows[1].startswith("2. "), rows[1]
        _board_in_view(rows, 24, db, 2)

        # the players and hands scroll under the pinned board; the status says where
        first = re.search(r"lines (\d+)-(\d+) of (\d+)", rows[-1]).groups()
        middle = rows[-1 - (int(first[1]) - int(first[0]) + 1): -1]
        term.type("\x1b[B\x1b[B")
        rows = term.read(lambda rows: f"lines {int(first[0]) + 2}-" in rows[-1])
        assert rows[-1 - len(middle): -3] == middle[2:]  # moved up by two lines
        _board_in_view(rows, 24, db, 2)
        term.type("\x1b[6~")  # PgDn, then far past the end: clamped to the last line
        rows = term.read(lambda rows: f"lines {int(first[0]) + 2}-" not in rows[-1])
        term.type("\x1b[B" * 200)
        rows = term.read(lambda rows: f"-{first[2]} of {first[2]}" in rows[-1])

        term.type("G")  # the title stays on the first row even when the last maze is taller than the screen
        rows = term.read(lambda rows: f"move {total} of {total}" in rows[0])
        if _maze_lines(db, total, 80) + 2 < 24 - 1:  # title, the move said; the status row
            _board_in_view(rows, 24, db, total)
        else:  # the deal was random: this maze cannot fit 24 rows; under the title it scrolls to its top
            term.type("\x1b[A" * 200)
            rows = term.read(lambda rows: rows[1].startswith(f"{total}. "))
            assert f"move {total} of {total}" in rows[0] and re.search(r"lines 1-\d+ of \d+", rows[-1])
        term.type("g5\r")
        rows = term.read(lambda rows: f"move 5 of {total}" in rows[0])
        term.type("v")
        rows = term.read(lambda rows: "as ann saw it then" in rows[0])
        _board_in_view(rows, 24, db, 5, "ann")

        term.resize(30, 100)  # SIGWINCH: drawn again at the new size with no key pressed
        term.screen.resize(30, 100)
        rows = term.read(lambda rows: len(rows) == 30 and "q quit" in rows[-1] and rows[0].startswith("replay"))
        _board_in_view(rows, 30, db, 5, "ann")

        term.quit()
    finally:
        term.close()


@pytest.mark.slow
def test_at_60_columns_no_letter_is_lost_and_every_key_is_said(db: Path) -> None:
    """A 60-column terminal: a line that fills the width kept all its letters ("the full maz" was
    left when each row was cleared after its text), and the keys' help, cut with "…" on its one
    row, takes two rows; the board still fits under the title."""
    term = Pty(str(db), "--round", "1", rows=24, columns=60)
    try:
        rows = term.read(lambda rows: "q quit" in rows[-1])
        said = " ".join(" ".join(rows).split())
        assert "compact maze: the terminal is 60 columns wide, the full maze needs 67" in said, "\n".join(rows)
        assert max(len(r) for r in rows) == 60  # a row as wide as the terminal is on screen whole
        keys = " ".join(rows[-2:])
        for key in ("←/→ move", "↑/↓ scroll", "g N go to", "v perspective", "q quit"):
            assert key in keys, rows[-2:]
        assert "…" not in keys and re.match(r"lines 1-\d+ of \d+  ", rows[-2]), rows[-2:]
        _board_in_view(rows, 24, db, 0)
        term.quit()
    finally:
        term.close()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ctrl-c", "ctrl-c started ignoring SIGINT", "sigterm"])
def test_an_interrupted_replay_restores_the_terminal(db: Path, how: str) -> None:
    term = Pty(str(db), "--round", "1", sigint=signal.SIG_IGN if "ignoring" in how else signal.SIG_DFL)
    try:
        term.read(lambda rows: "q quit" in rows[-1])
        if how.startswith("ctrl-c"):
            term.type("\x03")  # the terminal's own interrupt character: SIGINT to the process group
            assert term.wait() == 130  # as any command interrupted (Typer's Exit(130))
        else:
            os.kill(term.pid, signal.SIGTERM)
            assert term.wait() == 128 + signal.SIGTERM
        assert b"Traceback" not in term.raw
        term.restored()
    finally:
        term.close()


@pytest.mark.slow
def test_without_a_terminal_the_replay_prints_every_move(db: Path) -> None:
    proc = subprocess.run([PBEM, "replay", str(db), "--round", "1"], env=ENV, capture_output=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert b"\x1b[" not in proc.stdout  # no screen modes, no colours: today's printout
    end = proc.stdout.rstrip().splitlines()[-3:]  # the round's end, who found the gold (or not), every role
    assert b"\n1. ann: " in proc.stdout and end[0].startswith(b"the round is over") and end[2].startswith(b"roles: ")
