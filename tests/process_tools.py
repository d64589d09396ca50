"""Processes a test starts: free ports, waiting for and stopping them, a run's peak memory, and
reading a pseudo-terminal."""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from processes import cli_env

_PORTS_GIVEN: set[int] = set()


def free_port() -> int:
    """A TCP port on 127.0.0.1 free at the moment of asking, and never one this process gave
    before: the kernel may offer a port it just handed out again once its socket is closed, and
    two servers of one set-up (Dovecot's IMAP and LMTP listeners) then ask for the same port."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _PORTS_GIVEN:
            _PORTS_GIVEN.add(port)
            return port


def wait_all(procs, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            p.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:  # PYTHONFAULTHANDLER: SIGABRT dumps every thread's stack to its log
                if q.poll() is None:
                    q.send_signal(signal.SIGABRT)
            time.sleep(1)
            for q in procs:
                q.kill()
            raise AssertionError(f"the game did not finish in time: {[q.returncode for q in procs]}") from None


def stop_all(procs) -> None:
    """Kill those of `procs` (processes this test started) still running, and reap each."""
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


# Runs `python -m pbem ARGS` in the same process after setting its limits (not in a preexec_fn:
# the test process has threads, and a forked child may only exec). argv[1] "1": drop
# CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the bounding set when root, so that the exec'd
# pbem lacks them and a file of mode 000 is unreadable to it too.
_LIMITED = """
import os, resource, signal, sys
peak_file, unprivileged, args = sys.argv[1], sys.argv[2], sys.argv[3:]
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    if unprivileged == "1" and os.geteuid() == 0:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in (1, 2):
            if libc.prctl(24, cap, 0, 0, 0):  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")
    os.execv(sys.executable, [sys.executable, "-m", "pbem", *args])
_, status, usage = os.wait4(pid, 0)
with open(peak_file, "w") as f:
    f.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def run_peak(args: list[object], home: Path, cwd: Path, *, unprivileged: bool = False,
             timeout: float = 60) -> tuple[int, str, int]:
    """`pbem ARGS` as a process of its own: (exit code, its output, its peak memory in MiB).
    Its address space is capped at 3 GiB, so that a reader without a bound fails (MemoryError,
    exit 70) instead of taking the machine.

    The peak is measured by a small wrapper that forks pbem itself: Linux counts into a process's
    ru_maxrss the resident size of the memory it was forked from, so a child forked straight from
    a test worker that has grown to hundreds of MiB would report the worker's size, not pbem's."""
    stamp = time.monotonic_ns()
    out, peak_file = cwd / f"run-{stamp}.log", cwd / f"run-{stamp}.peak"
    with out.open("wb") as f:
        proc = subprocess.Popen([sys.executable, "-c", _LIMITED, str(peak_file), "1" if unprivileged else "0",
                                 *map(str, args)],
                                env=cli_env(home), cwd=cwd, stdout=f, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
        timer.start()
        try:
            proc.wait()
        finally:
            timer.cancel()
    peak = int(peak_file.read_text()) if peak_file.exists() else 0
    return proc.returncode, out.read_text(errors="replace"), peak // 1024


def read_until(fd: int, needle: str, timeout: float = 20.0) -> str:
    """What a pseudo-terminal `fd` printed, read until `needle` shows (AssertionError after `timeout`)."""
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            if needle.encode() in out:
                return out.decode("utf-8", "replace")
    raise AssertionError(f"never saw {needle!r}; got {out[-600:]!r}")
