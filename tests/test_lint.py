"""ruff, at the exact version pyproject's test extra pins, finds nothing in the tree under the
rules [tool.ruff.lint] selects (scripts/test runs this file with the rest of the suite)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          check=False)


def test_ruff_is_the_pinned_version() -> None:
    pinned = re.search(r'"ruff==([0-9.]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pinned, "pyproject's test extra pins no exact ruff version"
    run = _ruff("--version")
    assert run.returncode == 0 and run.stdout.split() == ["ruff", pinned.group(1)], run.stdout + run.stderr


def test_ruff_finds_nothing() -> None:
    run = _ruff("check", "--no-cache", "--output-format", "concise", ".")
    assert run.returncode == 0, run.stdout + run.stderr
