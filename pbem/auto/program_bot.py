"""A bot anyone can write: one long-lived program, a JSON line in per decision, a move back.

`pbem bot run --command "PROGRAM ARGS"` starts PROGRAM once. For each decision of its seat,
pbem writes one line to its stdin: the seat's view as `pbem show --json` gives it (with
"legal", every legal move in notation) plus `"protocol": PROTOCOL`; the program answers with
one line, one of those moves. docs/bots.md describes it with an example.

pbem never waits on the program beyond the decision's time: its pipes are non-blocking, a
line it does not read stays queued here (and is dropped past `MAX_QUEUED` bytes), and an
answer that comes too late is skipped when it arrives (the program answers every line, in
order). Whatever goes wrong, `ask` says why and the built-in bot plays that decision.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import subprocess
import time
from typing import Any

from pbem.errors import UsageError
from pbem.ui.words import t

PROTOCOL = 1  # fields are only ever added within a protocol number; a change that breaks bots takes a new one
MAX_LINE = 64 * 1024  # the longest answer read
MAX_QUEUED = 1 << 20  # the most bytes kept for a program that does not read its input

SILENT, STOPPED, GARBAGE, ILLEGAL = "silent", "stopped", "garbage", "illegal"


class Program:
    """The running program and what is in flight between it and pbem."""

    def __init__(self, command: str) -> None:
        self.command = command  # as given, for the log
        try:
            argv = shlex.split(command)
        except ValueError as e:
            raise UsageError(t("cannot read the bot command {command}: {why}", command=repr(command), why=str(e))) from None
        if not argv:
            raise UsageError(t("the bot command is empty"), hint=t("pass --command \"PROGRAM ARGS\""))
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        except OSError as e:
            raise UsageError(t("cannot start the bot program {command}: {why}", command=repr(command),
                               why=e.strerror or str(e))) from None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self._queued = bytearray()  # written by pbem, not yet taken by the program
        self._read = bytearray()  # read from the program, not yet a whole line
        self._owed = 0  # lines asked for earlier that timed out: their late answers are skipped
        self.stopped = False
        self.asked = 0  # decisions sent

    def ask(self, doc: dict[str, Any], timeout: float) -> tuple[str | None, str | None]:
        """Send one decision and wait up to `timeout` seconds: (the answer, None) or (None, why)."""
        if self.stopped or self.proc.poll() is not None:
            self.stopped = True
            return None, STOPPED
        line = json.dumps({"protocol": PROTOCOL, **doc}, ensure_ascii=False, separators=(",", ":")) + "\n"
        if len(self._queued) + len(line) > MAX_QUEUED:
            self._queued.clear()  # it has not read for a long time: never hold more than this
            return None, SILENT
        self._queued += line.encode()
        self.asked += 1
        deadline = time.monotonic() + timeout
        while True:
            self._flush()
            while b"\n" in self._read:
                raw, _, rest = bytes(self._read).partition(b"\n")
                self._read = bytearray(rest)
                if self._owed:
                    self._owed -= 1  # the late answer to an earlier line
                    continue
                try:
                    return raw.decode("utf-8").strip(), None
                except UnicodeDecodeError:
                    return None, GARBAGE
            if len(self._read) > MAX_LINE:
                self._read.clear()
                self._owed += 1  # the rest of that line still comes
                return None, GARBAGE
            left = deadline - time.monotonic()
            if left <= 0:
                self._owed += 1
                return None, SILENT
            ready, writable, _ = select.select([self._out], [self._in] if self._queued else [], [], left)
            if ready:
                try:
                    chunk = os.read(self._out, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    self.stopped = True
                    return None, STOPPED
                self._read += chunk

    def _flush(self) -> None:
        if not self._queued:
            return
        try:
            n = os.write(self._in, self._queued)
        except BlockingIOError:
            return
        except (BrokenPipeError, OSError):
            self._queued.clear()
            self.stopped = True
            return
        del self._queued[:n]

    def close(self) -> None:
        """Stop the program (it may have stopped already)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                f.close()


def why_line(why: str, answer: str | None, seq: int, kind: str) -> str:
    """The log line when the program's answer is not played."""
    if why == SILENT:
        return t("packet {seq}: the bot program did not answer in time; the {kind} bot plays", seq=seq, kind=kind)
    if why == STOPPED:
        return t("packet {seq}: the bot program has stopped; the {kind} bot plays", seq=seq, kind=kind)
    if why == ILLEGAL:
        return t("packet {seq}: the bot program answered {answer}, not a legal move; the {kind} bot plays",
                 seq=seq, answer=repr((answer or "")[:80]), kind=kind)
    return t("packet {seq}: the bot program answered what is not a line of text; the {kind} bot plays",
             seq=seq, kind=kind)
