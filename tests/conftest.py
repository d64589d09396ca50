import os

import pytest

pytest_plugins = ("mailservers",)  # the mail_servers fixture: real IMAP and SMTP on loopback

# Key files in tests use a cheap scrypt cost; real keys keep the default.
os.environ.setdefault("PBEM_SCRYPT_N", "1024")


@pytest.fixture(autouse=True)
def _english(monkeypatch: pytest.MonkeyPatch):
    """Every test starts in English, whatever PBEM_LANG the machine has."""
    from pbem.ui import words

    monkeypatch.delenv("PBEM_LANG", raising=False)
    words.set_language(None)
    yield
    words.set_language(None)
