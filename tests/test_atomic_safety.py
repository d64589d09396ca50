"""Atomic writes never replace what is not a regular file, and the temp files
of a killed writer are removed by the next write (real processes, real kill -9)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

from processes import one_error_line, pbem
from table_games import make_table

from pbem.atomic import TMP_SUFFIX, write_atomic


def test_output_to_a_device_node_or_fifo_is_refused_and_left_alone(tmp_path: Path, here) -> None:
    """(`packet` by processes of its own at a device and a FIFO, where a regression could hang;
    its further runs through the command line's entry in this process.)"""
    table = make_table(tmp_path, ["ann", "bob", "cat"])
    table.host.close()
    db = tmp_path / "game.db"
    before = os.stat("/dev/null")
    run = pbem("packet", "test", "--db", str(db), "-o", "/dev/null", cwd=tmp_path)
    one_error_line(run, 2, "not a regular file")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev and after.st_ino == before.st_ino
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    one_error_line(pbem("packet", "test", "--db", str(db), "-o", str(fifo), cwd=tmp_path), 2, "not a regular file")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    (tmp_path / "adir").mkdir()
    one_error_line(here("packet", "test", "--db", str(db), "-o", str(tmp_path / "adir"), home=None, cwd=tmp_path), 2,
                   "a folder")
    target = tmp_path / "real.txt"
    target.write_text("private")
    link = tmp_path / "link.pbem"
    link.symlink_to(target)
    one_error_line(here("packet", "test", "--db", str(db), "-o", str(link), home=None, cwd=tmp_path), 2, "a link")
    assert link.is_symlink() and target.read_text() == "private"
    ok = here("packet", "test", "--db", str(db), "-o", str(tmp_path / "packet.pbem"), home=None, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "BEGIN PBEM PACKET" in (tmp_path / "packet.pbem").read_text()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(TMP_SUFFIX)] == []


STALLED_WRITER = """
import os, sys, time
from pathlib import Path
import pbem.atomic as atomic
real_replace = os.replace
def stall(src, dst):
    print("written", flush=True)
    time.sleep(600)
os.replace = stall
atomic.write_atomic(Path(sys.argv[1]), b"half-way" * 1000)
"""


def test_temp_files_left_by_a_killed_writer_are_removed_by_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "seen.json"
    target.write_bytes(b"old")
    writer = subprocess.Popen([sys.executable, "-c", STALLED_WRITER, str(target)], stdout=subprocess.PIPE, text=True)
    live: subprocess.Popen | None = None
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "written"
        # A second writer that is still running: its temp file must survive the clean-up.
        live = subprocess.Popen([sys.executable, "-c", STALLED_WRITER, str(tmp_path / "other.json")],
                                stdout=subprocess.PIPE, text=True)
        assert live.stdout is not None and live.stdout.readline().strip() == "written"
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        temps = sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(TMP_SUFFIX))
        assert len(temps) == 2 and any(n.startswith(".seen.json.") for n in temps)
        assert target.read_bytes() == b"old"
        # Another stray temp file in the older form, older than an hour, goes too.
        ancient = tmp_path / f".packet.pbem.{'ab' * 8}{TMP_SUFFIX}"
        ancient.write_bytes(b"x")
        os.utime(ancient, (time.time() - 7200, time.time() - 7200))
        write_atomic(tmp_path / "next.json", b"new")
        left = sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(TMP_SUFFIX))
        assert left == [n for n in temps if n.startswith(".other.json.")], left
        assert target.read_bytes() == b"old" and (tmp_path / "next.json").read_bytes() == b"new"
    finally:
        for proc in (writer, live):
            if proc is not None and proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
