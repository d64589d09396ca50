import os
import signal
from pathlib import Path

import pytest

# mail_servers (pymap, aiosmtpd), real_mail (Dovecot, Postfix); how scripts/test spreads the tests
pytest_plugins = ("mailservers", "realmail", "scheduling")

# Key files in tests use a cheap scrypt cost; real keys keep the default.
os.environ.setdefault("PBEM_SCRYPT_N", "1024")

# A shell starts a background job (`scripts/test &`, nohup) with SIGINT ignored, and every process
# it starts inherits that: pbem would then ignore the Ctrl-C the terminal tests send, as it should
# under nohup, and hang. Python's own handler here is reset to the default in each child at exec.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _english(monkeypatch: pytest.MonkeyPatch):
    """Every test starts in English, whatever PBEM_LANG the machine has."""
    from pbem.ui import words

    monkeypatch.delenv("PBEM_LANG", raising=False)
    words.set_language(None)
    yield
    words.set_language(None)


@pytest.fixture(autouse=True)
def _reap():
    """No process a test started (processes.start) outlives it, whether it failed or not: a host
    or bot left polling took a core from every test after it. (Set up after the fixtures of wider
    scope: what those start lives on.) And none started otherwise runs on once it and its
    fixtures have ended (but the servers of wider fixtures, processes.server): the test errs."""
    import processes

    since, before = processes.started(), processes.running()
    yield
    processes.reap(since)
    left = {pid: command for pid, command in processes.running().items() if pid not in before}
    assert not left, f"processes this test started still run after it: {left}"


@pytest.fixture
def here(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """`pbem ARGS` as processes.pbem runs it (exit code, stdout, stderr), but through the command
    line's own entry in this process (run_here.pbem_here): for the further runs of a command
    a test also runs as a process of its own. `env`: variables set (None: removed) for that run
    only, as for a process; `home` None: no PBEM_HOME."""
    from run_here import pbem_here

    def run(*args: object, home: Path | None, cwd: Path | None = None, ok: bool = False,
            env: dict[str, str | None] | None = None):
        with pytest.MonkeyPatch.context() as mp:
            for key, value in (env or {}).items():
                if value is None:
                    mp.delenv(key, raising=False)
                else:
                    mp.setenv(key, value)
            return pbem_here(list(args), home, capsys, monkeypatch, cwd, ok)
    return run


@pytest.fixture(scope="session")
def pg_server():
    """One real PostgreSQL server for the whole run, started on first use."""
    from pg_server import PgServer

    server = PgServer()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """An empty host store of each kind: a SQLite file, and a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return request.getfixturevalue("pg_server").new_database()


def _engine_compiled() -> bool:
    from importlib.machinery import EXTENSION_SUFFIXES

    import engine.rules

    return (engine.rules.__file__ or "").endswith(tuple(EXTENSION_SUFFIXES))


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """A test marked `pure_engine` reaches into the engine's workings (it patches a function the
    engine calls, or copies a bot with copy.deepcopy), which the engine compiled by mypyc does not
    allow (its calls are bound when compiled; its objects have no __dict__): where the compiled
    engine runs, the test runs in a pytest of its own on the pure engine (PBEM_ENGINE=pure)."""
    if pyfuncitem.get_closest_marker("pure_engine") is None or not _engine_compiled():
        return None
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", pyfuncitem.nodeid],
                         cwd=pyfuncitem.config.rootpath, env=dict(os.environ, PBEM_ENGINE="pure"),
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"on the pure engine (PBEM_ENGINE=pure):\n{run.stdout[-6000:]}{run.stderr[-2000:]}"
    return True
