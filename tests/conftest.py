import os

import pytest

pytest_plugins = ("mailservers",)  # the mail_servers fixture: real IMAP and SMTP on loopback

# Key files in tests use a cheap scrypt cost; real keys keep the default.
os.environ.setdefault("PBEM_SCRYPT_N", "1024")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files holding slow tests first (each file keeps its order): on 2 processes (scripts/test)
    the whole games start early and the quick tests fill in around them, not after them."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


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
