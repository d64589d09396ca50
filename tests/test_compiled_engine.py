"""The engine compiled by mypyc (scripts/compiled_engine.py, docs/engine-speed.md "mypyc") plays the same
moves as its sources, and runs wherever it was expected.

"Expected" means scripts/_venv.sh built it, or tried to and failed, on this machine for this
command: it then sets PBEM_ENGINE=compiled (scripts/test, and so CI). A plain pytest expects
nothing (an edited engine/ runs as it is until the next scripts/test builds it again), and
PBEM_ENGINE=pure asks for the pure engine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

import engine.rules

ROOT = Path(__file__).resolve().parents[1]
COMPILED = (engine.rules.__file__ or "").endswith(tuple(EXTENSION_SUFFIXES))


def _why() -> str:
    select = sys.modules.get("_pbem_engine_select")
    if select is None:
        return "this venv has no _pbem_engine_select (scripts/compiled_engine.py installs it)"
    return f"the selection said: {select.CompiledEngine.chosen or 'nothing (no build in ' + select.BUILD + ')'}"


def test_the_compiled_engine_runs_where_it_was_expected() -> None:
    if os.environ.get("PBEM_ENGINE") != "compiled":
        pytest.skip(f"PBEM_ENGINE is not 'compiled' (scripts/test sets it where it builds the engine); {_why()}")
    assert COMPILED, f"the compiled engine was expected (PBEM_ENGINE=compiled), the pure one ran: {_why()}"


@pytest.mark.skipif(not COMPILED, reason="the compiled engine does not run here")
def test_the_compiled_and_the_pure_engine_play_the_same_turns() -> None:
    # scripts/bench_engine.py's trace: every turn's legal moves, events, open cells and reach, of
    # seeded random rounds of every table, bots on the state and on views
    out = {}
    for mode in ("compiled", "pure"):
        run = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_engine.py"), "--trace", "4"], cwd=ROOT,
                             env=dict(os.environ, PBEM_ENGINE=mode), capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        out[mode] = run.stdout.split(": ", 1)[1].strip()
    assert out["compiled"].endswith(", compiled engine)") and out["pure"].endswith(", pure engine)"), out
    assert out["compiled"].split(",")[0] == out["pure"].split(",")[0], out
