"""The suite's own servers and processes leave nothing behind, a failed test included: /dev/shm
is RAM, and what stays there (or a process left polling) is lost to every run after it."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pg_server import PgServer
from processes import ROOT

pytestmark = pytest.mark.slow


def _shm_ids() -> set[int]:
    lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return {int(line.split()[1]) for line in lines}


def test_postgresql_stops_at_once_and_leaves_no_shared_memory():
    """A session still open (an engine's pool, as tests leave them) while the server stops."""
    import psycopg

    server = PgServer()
    url = server.new_database().replace("postgresql+psycopg", "postgresql")
    session = psycopg.connect(url, autocommit=True)
    try:
        assert session.execute("SHOW dynamic_shared_memory_type").fetchone() == ("mmap",)
        shmid = int((server.dir / "data" / "postmaster.pid").read_text().splitlines()[6].split()[1])
        assert shmid in _shm_ids()
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 5
        assert shmid not in _shm_ids()
        assert not server.dir.exists()
    finally:
        session.close()
        server.stop()


_LEFT_RUNNING = '''
import subprocess, sys
from pathlib import Path
from processes import start

def test_fails_with_a_process_running():
    proc = start([sys.executable, "-c", "import time; time.sleep(600)"])
    Path("pid").write_text(str(proc.pid))
    assert False, "a test that fails"
'''


def test_a_process_a_failed_test_started_ends_with_it(tmp_path: Path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_left.py").write_text(_LEFT_RUNNING)
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "conftest", "-n", "0"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)])})
    assert "1 failed" in run.stdout, run.stdout[-3000:] + run.stderr[-3000:]
    pid = int((tmp_path / "pid").read_text())
    try:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    finally:
        try:
            os.kill(pid, 9)  # only if it was left: the sleeper this test had started
        except ProcessLookupError:
            pass
