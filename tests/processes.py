"""The real `pbem` command as a separate process, the one way tests start it.

`pbem(...)` runs a command and waits; `start(...)` starts one that keeps running (a host, a bot)
and ends with the test that started it (`PBEM` and `cli_env(...)` are what it runs). `running()`
lists the processes of this one still running but the servers fixtures keep (`server(...)`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PBEM = [sys.executable, "-m", "pbem"]  # this checkout's CLI, as `python -m pbem` (through pbem.entry, as the console script)
INSTALLED = [str(Path(sys.executable).with_name("pbem"))]  # the console script pyproject.toml installs


def cli_env(home: Path | None = None, **extra: str | None) -> dict[str, str]:
    """The tests' environment for a `pbem` process: cheap test key files (PBEM_SCRYPT_N), this
    checkout first on the path, faulthandler on (a SIGABRT dumps every thread's stack), PBEM_HOME
    set to `home` when given, and `extra` on top (None removes a variable)."""
    env = {**os.environ, "PBEM_SCRYPT_N": "1024", "PYTHONPATH": str(ROOT), "PYTHONFAULTHANDLER": "1"}
    if home is not None:
        env["PBEM_HOME"] = str(home)
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def pbem(*args: object, home: Path | None = None, cwd: Path | None = None, ok: bool = False,
         env: dict[str, str | None] | None = None, input: str | None = None, stdin: int | None = None,
         text: bool = True, installed: bool = False, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `pbem ARGS` (each argument str()-ed) to its end, stdout and stderr captured.

    home: PBEM_HOME; env: variables on top of cli_env (None removes one); input: text on stdin
    (stdin: subprocess.DEVNULL and the like instead); text=False: bytes out; installed: the
    installed console script rather than `python -m pbem`; ok=True asserts exit code 0."""
    run = subprocess.run([*(INSTALLED if installed else PBEM), *map(str, args)], env=cli_env(home, **(env or {})),
                         cwd=cwd, capture_output=True, text=text, input=input, stdin=stdin, timeout=timeout,
                         check=False)
    if ok:
        assert run.returncode == 0, (run.returncode, run.stderr, run.stdout)
    return run


def one_error_line(run: subprocess.CompletedProcess, code: int, words: str) -> None:
    """Bad input as the brief wants it said: exit `code`, an 'error: ...' line quoting `words`,
    at most 'hint: ...' lines after it, never a traceback."""
    assert run.returncode == code, (run.returncode, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert lines[0].startswith("error: ") and words in lines[0], run.stderr
    assert all(line.startswith(("error: ", "hint: ")) for line in lines), run.stderr
    assert "Traceback" not in run.stderr


def new_keys(homes: dict[str, Path], **extra: str | None) -> dict[str, str]:
    """`pbem key new NAME --no-passphrase` for each NAME in its home (`homes`: name -> home), all
    at once; returns each name's public key, the first line the command prints."""
    procs = {n: subprocess.Popen([*PBEM, "key", "new", n, "--no-passphrase"], env=cli_env(h, **extra),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n, h in homes.items()}
    pubs = {}
    for n, p in procs.items():
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, (n, err)
        pubs[n] = out.splitlines()[0]
    return pubs


_STARTED: list[subprocess.Popen] = []  # by start(), in this test process


def start(args: list[Any], **popen: Any) -> subprocess.Popen:
    """subprocess.Popen(args, **popen) for a process that would run until stopped: one the test
    has not ended when it ends, failed or not, the `_reap` fixture (tests/conftest.py) ends."""
    proc = subprocess.Popen(args, **popen)
    _STARTED.append(proc)
    return proc


def started() -> int:
    """How many processes start() has begun so far (the mark `reap` ends them from)."""
    return len(_STARTED)


def reap(since: int) -> list[subprocess.Popen]:
    """End the processes start() began since `since` that still run (SIGTERM, SIGKILL after 10 s);
    those it had to end."""
    running = [p for p in _STARTED[since:] if p.poll() is None]
    for p in running:
        p.send_signal(signal.SIGTERM)
    for p in running:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    del _STARTED[since:]
    return running


_SERVERS: set[int] = set()  # the pids of server(): PostgreSQL, pymap, Dovecot, Postfix


def server(proc: subprocess.Popen) -> subprocess.Popen:
    """`proc`, a server a fixture starts and stops (it may serve many tests): running() leaves it out."""
    _SERVERS.add(proc.pid)
    return proc


def running() -> dict[int, str]:
    """The processes this one started that still run (not ended, not a zombie waiting to be
    reaped), but the servers (server()): pid -> command line. Empty where /proc does not list a
    process's children (not Linux)."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return {}
    pids: set[int] = set()
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children", "rb") as f:
                pids.update(map(int, f.read().split()))
        except OSError:
            continue  # a thread that ended meanwhile
    found = {}
    for pid in pids - _SERVERS:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue  # ended and reaped meanwhile
        if state not in (b"Z", b"X"):
            found[pid] = command
    return found
