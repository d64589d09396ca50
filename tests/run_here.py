"""`pbem ARGS` run through the command line's own entry (`pbem.cli.main`) in this process."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest


def main_here(args: list[object], home: Path, capsys: pytest.CaptureFixture[str],
              monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """`pbem ARGS` through the command line's own entry (`pbem.cli.main`, which turns an error
    into its `error:` line and exit code) in this process: (exit code, stderr)."""
    run = pbem_here(args, home, capsys, monkeypatch)
    return run.returncode, run.stderr


def pbem_here(args: list[object], home: Path | None, capsys: pytest.CaptureFixture[str],
              monkeypatch: pytest.MonkeyPatch, cwd: Path | None = None, ok: bool = False) -> subprocess.CompletedProcess:
    """What processes.pbem gives (exit code, stdout, stderr), run through `pbem.cli.main` in this
    process: for the many cases of a command whose one real-process case a test runs too.
    `home` None: no PBEM_HOME, as a process started without it."""
    if home is None:
        monkeypatch.delenv("PBEM_HOME", raising=False)
    else:
        monkeypatch.setenv("PBEM_HOME", str(home))
    monkeypatch.setattr(sys, "argv", ["pbem", *map(str, args)])
    if cwd is not None:
        monkeypatch.chdir(cwd)
    capsys.readouterr()
    code = _main()
    out, err = capsys.readouterr()
    return _ran(args, code, out, err, ok)


def here_wide(*args: object, home: Path, cwd: Path | None = None, ok: bool = False,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The `here` fixture's run for a fixture wider than a test (a module's game made once),
    which has no capsys or monkeypatch: the environment, argv and folder are as they were after
    it, and its output is captured by standing in for sys.stdout and sys.stderr while it runs."""
    with pytest.MonkeyPatch.context() as mp:
        for key, value in {"PBEM_HOME": str(home), **(env or {})}.items():
            mp.setenv(key, value)
        mp.setattr(sys, "argv", ["pbem", *map(str, args)])
        if cwd is not None:
            mp.chdir(cwd)
        streams = [io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True) for _ in range(2)]
        mp.setattr(sys, "stdout", streams[0])
        mp.setattr(sys, "stderr", streams[1])
        code = _main()
        out, err = (s.buffer.getvalue().decode() for s in streams)  # type: ignore[attr-defined]
    return _ran(args, code, out, err, ok)


def _main() -> int:
    """`pbem.cli.main` as the entry point runs it: its exit code."""
    from pbem.cli import main

    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _ran(args: list[object], code: int, out: str, err: str, ok: bool) -> subprocess.CompletedProcess:
    if ok:
        assert code == 0, (code, err, out)
    return subprocess.CompletedProcess(["pbem", *map(str, args)], code, out, err)
