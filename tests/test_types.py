"""mypy runs inside scripts/test: default checks on pbem/, strict ones on engine/ (as scripts/typecheck runs them).

pbem's run also checks what the declared host interface must accept and refuse (tests/host_conformance.py
and a half host written for the test): one mypy process for the three, each test reading its own
files' lines from the output (a cold mypy run of pbem costs about as much as the three did apart)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFORMANCE = "tests/host_conformance.py"
# A host that answers queries only: mypy must refuse it where pbem.host.interface.GameHost is expected.
HALF = ("from pbem.host.interface import GameHost\n"
        "class Half:  # a host that answers queries only\n"
        "    def game_id(self) -> str:\n        return 'g'\n"
        "def f(h: Half) -> GameHost:\n    return h\n")
HALF_NAME = "pbem_half_host.py"


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


@dataclass
class Checked:
    """One mypy run over pbem/, the conformance file and the half host: its output lines by file
    (by the file's name: mypy may name a file it remembers from an earlier run by that run's path)."""

    run: subprocess.CompletedProcess[str]

    def lines(self, name: str) -> list[str]:
        return [line for line in self.run.stdout.splitlines() if Path(line.partition(":")[0]).name == name]

    def others(self) -> list[str]:
        """Lines about any file but the conformance file and the half host (the summary line aside)."""
        return [line for line in self.run.stdout.splitlines() if not line.startswith(("Found ", "Success: "))
                and Path(line.partition(":")[0]).name not in (Path(CONFORMANCE).name, HALF_NAME)]

    def report(self) -> str:
        return self.run.stdout[-4000:] + self.run.stderr[-2000:]


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> Checked:
    half = tmp_path_factory.mktemp("mypy") / HALF_NAME
    half.write_text(HALF)
    return Checked(_mypy("pbem", CONFORMANCE, str(half)))


@pytest.mark.slow
def test_mypy_passes_on_pbem(checked: Checked) -> None:
    """mypy exits 0 or 1 (1: the half host's refusal, tested below) and says nothing of pbem's files."""
    assert checked.run.returncode in (0, 1) and not checked.others(), checked.report()
    assert "source files" in checked.run.stdout.rstrip().rpartition("\n")[2], checked.report()  # it ran to the end


@pytest.mark.slow
def test_both_hosts_are_accepted_where_the_interface_is_expected(checked: Checked) -> None:
    """mypy checks structurally: tests/host_conformance.py passes the referee and the blind host
    as GameHost; a class that lacks one of its members is refused (the check can fail)."""
    assert checked.run.returncode in (0, 1) and not checked.lines(Path(CONFORMANCE).name), checked.report()
    refused = checked.lines(HALF_NAME)
    assert checked.run.returncode == 1 and any('expected "GameHost"' in line for line in refused), checked.report()


@pytest.mark.slow
def test_mypy_strict_passes_on_engine() -> None:
    run = _mypy("--strict", "engine")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
