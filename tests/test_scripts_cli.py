"""The scripts under scripts/ take arguments as pbem's commands do: `--help` prints how the script
is used and does nothing else (scripts/browser-check once installed Chromium and selenium first,
scripts/bench-club ran its whole benchmark), and a wrong argument is the usage and one `error:`
line, exit 2, before any work: never a traceback, at once or after minutes of play-outs.

Real processes through each wrapper, as a developer runs them. PBEM_ENGINE=pure: a wrapper would
otherwise build the compiled engine where an edit left it stale (a minute), which --help needs not.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(p.name for p in (ROOT / "scripts").iterdir()
                 if p.is_file() and not p.suffix and os.access(p, os.X_OK))


def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PBEM_ENGINE": "pure"}
    return subprocess.run([str(ROOT / "scripts" / args[0]), *args[1:]], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_every_wrapper_is_listed() -> None:
    assert {"bench", "bench-club", "bench-mental", "bots-arena", "browser-check", "demo", "test"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_prints_the_usage_and_does_nothing_else(script: str, tmp_path: Path) -> None:
    run = _run(script, "--help", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "usage" in run.stdout.lower(), run.stdout
    assert "Traceback" not in run.stderr, run.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written where it was run


# (script, arguments, what the error line names): each refused before any work.
WRONG = [
    ("bench", ["x"], "seconds"),
    ("bench", ["--before", "no-such-commit"], "no commit"),
    ("bench-club", ["--games", "0"], "--games"),
    ("bench-club", ["--store", "mysql"], "--store"),
    ("bench-mental", ["1", "2"], "each 3 to 12"),
    ("bench-club", ["--daemons", "1,x"], "--daemons"),
    ("bench-mental", ["1", "5", "chess"], "rulesets"),
    ("bench-engine", ["--against", "/nonexistent"], "no checkout"),
    ("bench-engine", ["--seconds", "-1"], "--seconds"),
    ("bots-arena", ["--games", "-1"], "--games"),
    ("bots-arena", ["--matchups", "9"], "--matchups"),
    ("bots-arena", ["--tables", "bogus"], "--tables"),
    ("bots-arena", ["--think", "-1"], "--think"),
    ("bots-screen", ["--playouts", "0"], "--playouts"),
    ("bots-screen", ["--against", "/nonexistent"], "no file"),
    ("browser-check", ["/nonexistent.html"], "not a file"),
    ("fit-outlook", ["--tables", "bogus"], "--tables"),
]


@pytest.mark.parametrize(("script", "args", "named"), WRONG, ids=[f"{s} {' '.join(a)}" for s, a, _ in WRONG])
def test_a_wrong_argument_is_one_error_line_before_any_work(script: str, args: list[str], named: str) -> None:
    run = _run(script, *args)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert "error:" in last and named in last, run.stderr
    assert run.stdout == ""  # no work began


def test_an_against_file_that_is_no_screen_output_is_refused_before_the_screen(tmp_path: Path) -> None:
    odd = tmp_path / "odd.json"
    odd.write_text('{"deals": 3}')
    run = _run("bots-screen", "--against", str(odd))
    assert run.returncode == 2 and "is not a --json output of this script" in run.stderr, run.stderr
