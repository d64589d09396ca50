"""scripts/test's scheduler (tests/scheduling.py) when a test process dies: a real pytest on two
real xdist processes runs a small suite in which two tests kill their own process at the same
moment, as the OOM killer does. Each is reported failed once; the run goes on to its end."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

_CONFTEST = '''
import time
from pathlib import Path

pytest_plugins = ("scheduling",)

def _worker(session):
    return getattr(session.config, "workerinput", {}).get("workerid")

def pytest_collection(session):
    if _worker(session) == "gw3":
        Path("gw3.collecting").touch()

def pytest_collection_modifyitems(session):
    # The two processes that replace the dead ones are up at once, and the first one's collection
    # comes in while the second is up but has not finished collecting.
    if _worker(session) == "gw2":
        for _ in range(400):
            if Path("gw3.collecting").exists():
                break
            time.sleep(0.05)
    if _worker(session) == "gw3":
        time.sleep(1)
'''

_DIE = '''
import os, signal, time
from pathlib import Path

def ran(name):
    with open("ran.log", "a") as log:
        log.write(name + "\\n")

def die_with(other, me):
    """Kill this process once the other test that dies has started (both die at once)."""
    Path(me).touch()
    for _ in range(200):
        if Path(other).exists():
            break
        time.sleep(0.05)
    os.kill(os.getpid(), signal.SIGKILL)
'''

_SHARED = _DIE + '''
import pytest

@pytest.fixture(scope="module")
def shared():
    return "made"

def test_first(shared):
    ran("first")

def test_dies(shared):
    ran("dies")
    die_with("b.started", "a.started")

def test_after(shared):
    ran("after")
'''

_ALONE = _DIE + '''
def test_dies_alone():
    ran("dies_alone")
    die_with("a.started", "b.started")
'''

_QUICK = '''
import pytest

@pytest.mark.parametrize("n", range(12))
def test_quick(n):
    with open("ran.log", "a") as log:
        log.write(f"quick{n}\\n")
'''


def test_dead_process_is_one_failure(tmp_path: Path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(_CONFTEST)
    (tmp_path / "test_a_shared.py").write_text(_SHARED)
    (tmp_path / "test_b_alone.py").write_text(_ALONE)
    (tmp_path / "test_c_quick.py").write_text(_QUICK)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-n", "2",
         "--dist", "loadfile", "--no-loadscope-reorder", "-rfE"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent)})
    out = run.stdout + run.stderr
    assert "INTERNALERROR" not in out, out[-6000:]
    assert run.returncode == 1, out[-6000:]
    assert "2 failed, 14 passed" in out, out[-6000:]
    assert "crashed while running 'test_a_shared.py::test_dies'" in out, out[-6000:]
    assert "crashed while running 'test_b_alone.py::test_dies_alone'" in out, out[-6000:]
    ran = (tmp_path / "ran.log").read_text().split()
    assert sorted(ran) == sorted(["first", "dies", "after", "dies_alone"] + [f"quick{n}" for n in range(12)])
