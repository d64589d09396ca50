from __future__ import annotations

import json
from pathlib import Path

import pytest
from processes import one_error_line

from pbem.errors import KeyNotFound, UsageError, WrongPassphrase
from pbem.protocol.crypto import PublicKey
from pbem.seat import keys
from pbem.seat.home import ENV_HOME, key_path


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(keys.ENV_SCRYPT_N, "1024")
    monkeypatch.delenv(keys.ENV_PASSPHRASE, raising=False)
    # Never touch the real ~/.config even if a test forgets --home.
    monkeypatch.setenv(ENV_HOME, str(tmp_path / "default-home"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def pwfile(tmp_path: Path) -> Path:
    f = tmp_path / "pw.txt"
    f.write_text("correct horse\n")
    return f


@pytest.fixture
def run(here, tmp_path: Path):
    """`pbem key ARGS` through the command line's own entry, in this process (PBEM_HOME: the
    default home `_env` names)."""
    return lambda *args: here("key", *args, home=tmp_path / "default-home")


def test_new_with_passphrase_file(home: Path, pwfile: Path, run) -> None:
    r = run("new", "alice", "--home", home, "--passphrase-file", pwfile)
    assert r.returncode == 0, r.stderr
    line, fp = r.stdout.splitlines()[:2]
    pub = PublicKey.decode(line)
    assert fp == f"fingerprint: {pub.fingerprint()}"
    assert "NOT protected" not in r.stderr  # (the cheap test scrypt cost does warn)
    assert keys.is_protected(home, "alice")
    identity = keys.load_identity(home, "alice", b"correct horse")
    assert identity.public == pub


def test_new_without_passphrase_warns(home: Path, run) -> None:
    r = run("new", "bob", "--home", home, "--no-passphrase")
    assert r.returncode == 0, r.stderr
    assert "NOT protected" in r.stderr and "NOT protected" not in r.stdout
    assert r.stdout.startswith("pbem1")
    assert not keys.is_protected(home, "bob")


def test_new_with_env_passphrase_and_default_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, run) -> None:
    monkeypatch.setenv(keys.ENV_PASSPHRASE, "from env")
    r = run("new", "carol")
    assert r.returncode == 0, r.stderr
    keys.load_identity(tmp_path / "default-home", "carol", b"from env")


def test_new_needs_a_passphrase_source(home: Path, run) -> None:
    r = run("new", "dave", "--home", home)
    one_error_line(r, UsageError.exit_code, "")
    assert UsageError.exit_code == 2
    hint = r.stderr.partition("\nhint: ")[2]
    assert "--no-passphrase" in hint or "--passphrase-file" in hint, r.stderr
    assert not key_path(home, "dave").exists()


def test_new_refuses_overwrite_bad_name_and_contradiction(home: Path, pwfile: Path, run) -> None:
    assert run("new", "erin", "--home", home, "--no-passphrase").returncode == 0
    before = key_path(home, "erin").read_bytes()
    one_error_line(run("new", "erin", "--home", home, "--no-passphrase"), UsageError.exit_code, "'erin'")
    assert key_path(home, "erin").read_bytes() == before
    one_error_line(run("new", "Bad Name", "--home", home, "--no-passphrase"), UsageError.exit_code, "'Bad Name'")
    one_error_line(run("new", "frank", "--home", home, "--no-passphrase", "--passphrase-file", pwfile),
                   UsageError.exit_code, "")


def test_show(home: Path, pwfile: Path, run) -> None:
    created = run("new", "alice", "--home", home, "--passphrase-file", pwfile).stdout
    r = run("show", "alice", "--home", home)
    assert r.returncode == 0 and r.stdout == created
    r = run("show", "alice", "--home", home, "--json")
    doc = json.loads(r.stdout)
    assert doc["name"] == "alice" and doc["protected"] is True
    assert PublicKey.decode(doc["public"]).fingerprint() == doc["fingerprint"]
    one_error_line(run("show", "nobody", "--home", home), KeyNotFound.exit_code, "'nobody'")


def test_list(home: Path, pwfile: Path, run) -> None:
    r = run("list", "--home", home)
    assert r.returncode == 0 and r.stdout == "" and "no identities" in r.stderr
    assert json.loads(run("list", "--home", home, "--json").stdout) == []
    run("new", "zoe", "--home", home, "--no-passphrase")
    run("new", "amy", "--home", home, "--passphrase-file", pwfile)
    r = run("list", "--home", home)
    lines = r.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["amy", "zoe"]
    assert lines[0].endswith(" protected") and lines[1].endswith("UNPROTECTED")
    rows = json.loads(run("list", "--home", home, "--json").stdout)
    assert [(row["name"], row["protected"]) for row in rows] == [("amy", True), ("zoe", False)]
    assert rows[0]["fingerprint"] == keys.load_public(home, "amy").fingerprint()


def test_errors_are_pbem_errors_for_the_main_cli(home: Path, pwfile: Path, run) -> None:
    run("new", "alice", "--home", home, "--passphrase-file", pwfile)
    with pytest.raises(WrongPassphrase):
        keys.load_identity(home, "alice", b"wrong")
    for args in (("show", "ghost", "--home", home), ("new", "x" * 40, "--home", home, "--no-passphrase")):
        r = run(*args)
        assert r.returncode in (2, 4), r.stderr
        one_error_line(r, r.returncode, "")


def test_unlocking_runs_the_scrypt_on_a_thread_and_raises_at_the_call(home: Path, pwfile: Path,
                                                                     monkeypatch: pytest.MonkeyPatch, run) -> None:
    import threading

    from pbem.protocol import keyfile

    run("new", "alice", "--home", home, "--passphrase-file", pwfile)
    derived_on: list[str] = []
    derive = keyfile.derive

    def watched(*args: object) -> bytes:
        derived_on.append(threading.current_thread().name)
        return derive(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(keyfile, "derive", watched)
    # the passphrase at hand (a file, or the environment): derived on a thread of its own
    assert keys.unlocking(home, lambda: "alice", pwfile)().public == keys.load_public(home, "alice")
    monkeypatch.setenv(keys.ENV_PASSPHRASE, "correct horse")
    assert keys.unlocking(home, lambda: "alice")().name == "alice"
    assert derived_on and all(name == "pbem-unlock" for name in derived_on)
    # whatever it would raise, only the call raises: a command reports its errors in its own order
    monkeypatch.setenv(keys.ENV_PASSPHRASE, "wrong horse")
    wrong = keys.unlocking(home, lambda: "alice")
    with pytest.raises(WrongPassphrase):
        wrong()
    ghost = keys.unlocking(home, lambda: "ghost")
    with pytest.raises(KeyNotFound):
        ghost()
    # nothing at hand: nothing is done (nor asked) before the call, which then says so
    monkeypatch.delenv(keys.ENV_PASSPHRASE)
    derived_on.clear()
    later = keys.unlocking(home, lambda: "alice")
    assert derived_on == []
    with pytest.raises(UsageError):
        later()
