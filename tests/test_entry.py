"""The `pbem` command's entry point (pbem/entry.py): a Ctrl-C while the CLI is still being
imported says `error: interrupted` and exits 130, like a Ctrl-C anywhere else, instead of
Python's KeyboardInterrupt traceback.

The interrupt lands inside the import: the real console script runs with `-X importtime`,
which writes a line as each module finishes importing, into a pipe of one page, so the child
cannot run more than a page of lines (~60 modules) ahead of the test reading them, however
loaded the machine. At the first of Typer's modules (pbem.cli imports Typer first, then ~110
more modules), the child is stopped, its pending lines are read to make sure pbem.cli has not
finished, SIGINT is sent and the child resumed.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pbem import entry
from pbem.errors import EXIT_CODES, EXIT_INTERRUPTED

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "pbem"  # the console script pip made from pyproject.toml


def test_the_entry_point_is_the_small_wrapper() -> None:
    assert "from pbem.entry import main" in SCRIPT.read_text(), f"{SCRIPT} does not start pbem.entry (reinstall .venv)"
    assert 'pbem = "pbem.entry:main"' in (ROOT / "pyproject.toml").read_text()
    assert entry.EXIT_INTERRUPTED == EXIT_INTERRUPTED == 130 and EXIT_INTERRUPTED in EXIT_CODES
    before = set(sys.modules)
    code = "import sys; before = set(sys.modules); import pbem.entry; print(sorted(set(sys.modules) - before))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "['pbem', 'pbem.entry']", run  # nothing else before the guard
    assert before  # (this process's own modules are not the child's)


def _finished(line: str, module: str) -> bool:
    """An `-X importtime` line saying `module` (or, for "typer.", one of its modules) has
    finished importing ("import time: 9 | 20 |   typer.colors")."""
    name = line.rsplit("|", 1)[-1].strip()
    return line.startswith("import time:") and (name.startswith(module) if module.endswith(".") else name == module)


def _lines(fd: int, timeout: float) -> list[str]:
    """The lines the child has written to `fd` by now, read unbuffered (a buffered reader would
    hold lines back from select and let the child run on unseen)."""
    data = b""
    while select.select([fd], [], [], timeout)[0]:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        data += chunk
        timeout = 0.05
    return data.decode(errors="replace").splitlines(keepends=True)


def _interrupt_during_import(lang: list[str]) -> tuple[int, str, bool]:
    """(exit code, stderr without the import-time lines, whether SIGINT came inside the import)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PBEM_LANG", None)
    proc = subprocess.Popen([sys.executable, "-X", "importtime", str(SCRIPT), *lang, "key", "list"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as a terminal starts it
    assert proc.stderr is not None
    fcntl.fcntl(proc.stderr.fileno(), fcntl.F_SETPIPE_SZ, 4096)  # the child blocks a page ahead of us
    try:
        deadline = time.monotonic() + 60
        fd, data = proc.stderr.fileno(), b""
        while not any(_finished(line, "typer.") for line in data.decode(errors="replace").splitlines()):
            assert time.monotonic() < deadline and proc.poll() is None, data[-2000:]
            if select.select([fd], [], [], 0.2)[0]:
                data += os.read(fd, 4096)  # one read, then look: the child is at most a page ahead
        os.kill(proc.pid, signal.SIGSTOP)
        time.sleep(0.05)
        seen = (data.decode(errors="replace") + "".join(_lines(fd, 0.1))).splitlines(keepends=True)
        inside = not any(_finished(line, "pbem.cli") for line in seen)
        os.kill(proc.pid, signal.SIGINT)
        os.kill(proc.pid, signal.SIGCONT)
        _, raw = proc.communicate(timeout=60)
        err = raw.decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    said = "".join(line for line in (seen + err.splitlines(keepends=True)) if not line.startswith("import time:"))
    return proc.returncode, said, inside


@pytest.mark.slow
@pytest.mark.parametrize("lang,line", [([], "error: interrupted"), (["--lang", "zh-Hans"], "错误：已中断")])
def test_ctrl_c_while_the_cli_is_imported(lang: list[str], line: str) -> None:
    for _ in range(5):  # the stop lands inside the import (checked); if it ever does not, try again
        code, said, inside = _interrupt_during_import(lang)
        assert "Traceback" not in said and "KeyboardInterrupt" not in said, said
        if inside:
            assert code == EXIT_INTERRUPTED and said.strip() == line, (code, said)
            return
    pytest.fail("the interrupt never came while pbem.cli was being imported")
