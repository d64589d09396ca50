"""mypy runs inside scripts/test: default checks on pbem/, strict ones on engine/ (as scripts/typecheck runs them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_mypy_passes_on_pbem() -> None:
    run = _mypy("pbem")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


@pytest.mark.slow
def test_mypy_strict_passes_on_engine() -> None:
    run = _mypy("--strict", "engine")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
