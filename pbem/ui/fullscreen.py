"""A full-screen terminal view like `less`: the alternate screen, keys read one at a time, the
picture redrawn in place, and the terminal given back exactly as it was on every way out (q,
Ctrl-C, SIGTERM or SIGHUP, an error).

`fit` lays out one picture: a pinned top (the replay's board) that stays in view and a part
under it that scrolls when it does not fit, its position said on the status line.
"""

from __future__ import annotations

import io
import os
import select
import signal
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Self

from pbem.ui.words import t

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType
    from typing import Any, Literal

    from rich.console import Console, RenderableType

    Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None  # what signal.getsignal gives
    ColorSystem = Literal["standard", "256", "truecolor", "windows"]

_COLOR_SYSTEMS: dict[str, ColorSystem] = {"standard": "standard", "256": "256", "truecolor": "truecolor",
                                          "windows": "windows"}

# Enter: alternate screen, cursor hidden, no auto-wrap (a line wider than the terminal is cut,
# never wrapped onto the next row, so the layout's row count is the screen's). Leave: the reverse.
ENTER = "\x1b[?1049h\x1b[?25l\x1b[?7l"
LEAVE = "\x1b[?7h\x1b[?25h\x1b[?1049l"


class Ended(Exception):
    """SIGTERM or SIGHUP arrived: unwind (so the terminal is restored), then exit."""


def render_lines(renderable: RenderableType, width: int, like: Console) -> list[str]:
    """The renderable as terminal lines (with `like`'s colours) at `width` columns."""
    from pbem.ui.terminal import console

    buf = io.StringIO()
    con = console(file=buf, width=width, force_terminal=like.color_system is not None, highlight=False,
                  color_system=_COLOR_SYSTEMS.get(like.color_system or ""), legacy_windows=False)
    con.print(renderable)
    lines = buf.getvalue().split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


@dataclass
class Picture:
    lines: list[str]  # the rows above the status line(s), exactly as many as asked for
    scroll: int  # the scrolling part's first line shown, clamped to what there is
    shown: int  # how many of its lines are shown
    total: int  # how many lines it has

    def position(self) -> str:
        """`lines 3-6 of 60` while the scrolling part does not fit, else ""."""
        if self.shown >= self.total:
            return ""
        return t("lines {first}-{last} of {total}", first=self.scroll + 1, last=self.scroll + self.shown,
                 total=self.total)


def fit(top: list[str], middle: list[str], rows: int, scroll: int, head: int = 0) -> Picture:
    """`rows` lines: `top` pinned while at least one line of `middle` fits under it, and as much of
    `middle` from line `scroll` on as fits; when the top does not fit, only its first `head` lines
    (a title saying where one is) stay pinned and the rest of it scrolls with `middle`."""
    if len(top) >= rows:
        head = max(min(head, rows - 1), 0)
        top, middle = top[:head], top[head:] + middle
    height = rows - len(top)
    scroll = min(max(scroll, 0), max(len(middle) - height, 0))
    shown = middle[scroll: scroll + height]
    return Picture(top + shown + [""] * (height - len(shown)), scroll, len(shown), len(middle))


class Terminal:
    """The terminal in full-screen mode while the `with` block runs; given back as it was after."""

    def __init__(self) -> None:
        import termios

        self.fd_in = sys.stdin.fileno()
        self.fd_out = sys.stdout.fileno()
        self.saved = termios.tcgetattr(self.fd_in)  # raises on a non-terminal: the caller falls back
        self._wake_r = self._wake_w = -1
        self._old: dict[int, Handler] = {}
        self._old_wakeup = -1

    def __enter__(self) -> Self:
        import tty

        self._old = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGWINCH, signal.SIGTERM, signal.SIGHUP)}
        try:
            # Ctrl-C interrupts even when the process was started with SIGINT ignored (a background
            # job of a script: Python then installs no handler), or the screen could not be left.
            signal.signal(signal.SIGINT, signal.default_int_handler)
            # A resize wakes the key wait through this pipe (the handler itself does nothing).
            self._wake_r, self._wake_w = os.pipe()
            os.set_blocking(self._wake_w, False)
            signal.signal(signal.SIGWINCH, lambda *_: None)
            self._old_wakeup = signal.set_wakeup_fd(self._wake_w)
            signal.signal(signal.SIGTERM, _end)
            signal.signal(signal.SIGHUP, _end)
            tty.setcbreak(self.fd_in)  # keys one at a time, no echo; Ctrl-C still interrupts
            self.write(ENTER)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        import termios

        try:
            self.write(LEAVE)
        finally:
            termios.tcsetattr(self.fd_in, termios.TCSADRAIN, self.saved)
            if self._wake_w >= 0:
                signal.set_wakeup_fd(self._old_wakeup)
                os.close(self._wake_r)
                os.close(self._wake_w)
                self._wake_r = self._wake_w = -1
            for sig, handler in self._old.items():
                signal.signal(sig, handler)

    def size(self) -> tuple[int, int]:
        """(rows, columns)."""
        size = os.get_terminal_size(self.fd_out)
        return size.lines or 24, size.columns or 80  # a terminal that never said its size

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        while data:
            data = data[os.write(self.fd_out, data):]

    def draw(self, lines: list[str]) -> None:
        """Overwrite the screen from the top left, each row cleared before it is written: a row
        cleared after its text (ESC [ K) lost its last letter when the text filled the width, as a
        terminal leaves its cursor on the last column then and clears from there."""
        from pbem.ui.terminal import styled  # drawn by a console that cleaned what they quote (moves, names)

        self.write("\x1b[H" + "\r\n".join("\x1b[2K" + styled(line) + "\x1b[0m" for line in lines) + "\x1b[J")

    def keys(self) -> str:
        """What was typed (decoded), or "" when the terminal was resized."""
        ready, _, _ = select.select([self.fd_in, self._wake_r], [], [])
        if self._wake_r in ready:
            os.read(self._wake_r, 512)
            if self.fd_in not in ready:
                return ""
        data = os.read(self.fd_in, 64)
        if not data:
            raise EOFError
        return data.decode("utf-8", errors="ignore")


def _end(signum: int, frame: object) -> None:
    raise Ended(signum)
