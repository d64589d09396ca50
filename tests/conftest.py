import functools
import os
import re
import signal
from pathlib import Path

import pytest

pytest_plugins = ("mailservers", "realmail")  # mail_servers (pymap, aiosmtpd), real_mail (Dovecot, Postfix)

# Key files in tests use a cheap scrypt cost; real keys keep the default.
os.environ.setdefault("PBEM_SCRYPT_N", "1024")

# A shell starts a background job (`scripts/test &`, nohup) with SIGINT ignored, and every process
# it starts inherits that: pbem would then ignore the Ctrl-C the terminal tests send, as it should
# under nohup, and hang. Python's own handler here is reset to the default in each child at exec.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


_SHARED = re.compile(r"""scope=["'](module|class|package)["']""")


@functools.cache
def _shares_fixtures(path: Path) -> bool:
    """Whether a test file makes a module- (or class-) scoped fixture: its tests share it."""
    return bool(_SHARED.search(path.read_text(encoding="utf-8")))


def _unit(config: pytest.Config, nodeid: str) -> str:
    """What runs on one process, in order: a file whose tests share a module fixture is one unit
    (the fixture is made once, and what its tests leave for each other is there); any other test
    is a unit of its own, free to run beside the rest of its file."""
    path = nodeid.split("::", 1)[0]
    return path if _shares_fixtures(config.rootpath / path) else nodeid


@pytest.hookimpl(optionalhook=True)  # a hook of xdist's: unknown with -p no:xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """scripts/test's `--dist loadfile`, by units (_unit) rather than by files: one slow file of
    whole games no longer holds one process while the other has run out of work. (xdist's own
    --dist loadgroup would do it with xdist_group marks, but with pytest 9 it no longer groups:
    the group it appends to a test's id is lost.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(config, nodeid)

    return UnitScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow units first (each unit keeps its order): on several processes (scripts/test) the whole
    games start early, each on whichever process is free, and the quick tests fill in around
    them, not after them. (scripts/test passes --no-loadscope-reorder: xdist would otherwise
    put the units with the most tests first, so the slow single tests came last.)

    First of all the longest whole games (`@pytest.mark.game`): in file order they started
    minutes in and were the run's last minute. They wait on their mail far more than they
    compute, so they run beside the rest, but never on every process at once: one process of
    the first ones xdist hands out gets a unit that computes."""
    slow = {_unit(config, item.nodeid) for item in items if item.get_closest_marker("slow")}
    games = {_unit(config, item.nodeid) for item in items if item.get_closest_marker("game")}
    order = list(dict.fromkeys(_unit(config, item.nodeid) for item in items))
    at_once = max(getattr(config, "workerinput", {}).get("workercount", 1) - 1, 1)
    first = [u for u in order if u in games]
    rest = [u for u in order if u not in games and u in slow] + [u for u in order if u not in slow]
    order = first[:at_once] + rest[:1] + first[at_once:] + rest[1:]
    rank = {u: i for i, u in enumerate(order)}
    items.sort(key=lambda item: rank[_unit(config, item.nodeid)])


@pytest.fixture(autouse=True)
def _english(monkeypatch: pytest.MonkeyPatch):
    """Every test starts in English, whatever PBEM_LANG the machine has."""
    from pbem.ui import words

    monkeypatch.delenv("PBEM_LANG", raising=False)
    words.set_language(None)
    yield
    words.set_language(None)


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
