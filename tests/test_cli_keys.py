from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from pbem.cli import keys as cli_keys
from pbem.errors import KeyNotFound, PbemError, UsageError, WrongPassphrase
from pbem.protocol.crypto import PublicKey
from pbem.seat import keys
from pbem.seat.home import ENV_HOME, key_path

root = typer.Typer()
root.add_typer(cli_keys.app, name="key")


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


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(root, ["key", *map(str, args)])


def raised(result: Result) -> BaseException | None:
    exc = result.exception
    return None if isinstance(exc, SystemExit) else exc


def test_new_with_passphrase_file(home: Path, pwfile: Path) -> None:
    r = run("new", "alice", "--home", home, "--passphrase-file", pwfile)
    assert r.exit_code == 0, r.output
    line, fp = r.stdout.splitlines()[:2]
    pub = PublicKey.decode(line)
    assert fp == f"fingerprint: {pub.fingerprint()}"
    assert "NOT protected" not in r.stderr  # (the cheap test scrypt cost does warn)
    assert keys.is_protected(home, "alice")
    identity = keys.load_identity(home, "alice", b"correct horse")
    assert identity.public == pub


def test_new_without_passphrase_warns(home: Path) -> None:
    r = run("new", "bob", "--home", home, "--no-passphrase")
    assert r.exit_code == 0, r.output
    assert "NOT protected" in r.stderr and "NOT protected" not in r.stdout
    assert r.stdout.startswith("pbem1")
    assert not keys.is_protected(home, "bob")


def test_new_with_env_passphrase_and_default_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(keys.ENV_PASSPHRASE, "from env")
    r = run("new", "carol")
    assert r.exit_code == 0, r.output
    keys.load_identity(tmp_path / "default-home", "carol", b"from env")


def test_new_needs_a_passphrase_source(home: Path) -> None:
    r = run("new", "dave", "--home", home)
    exc = raised(r)
    assert isinstance(exc, UsageError) and exc.exit_code == 2
    assert "--no-passphrase" in str(exc.hint or "") or "--passphrase-file" in str(exc.hint or "")
    assert not key_path(home, "dave").exists()


def test_new_refuses_overwrite_bad_name_and_contradiction(home: Path, pwfile: Path) -> None:
    assert run("new", "erin", "--home", home, "--no-passphrase").exit_code == 0
    before = key_path(home, "erin").read_bytes()
    exc = raised(run("new", "erin", "--home", home, "--no-passphrase"))
    assert isinstance(exc, UsageError) and "'erin'" in str(exc)
    assert key_path(home, "erin").read_bytes() == before
    exc = raised(run("new", "Bad Name", "--home", home, "--no-passphrase"))
    assert isinstance(exc, UsageError) and "'Bad Name'" in str(exc)
    exc = raised(run("new", "frank", "--home", home, "--no-passphrase", "--passphrase-file", pwfile))
    assert isinstance(exc, UsageError)


def test_show(home: Path, pwfile: Path) -> None:
    created = run("new", "alice", "--home", home, "--passphrase-file", pwfile).stdout
    r = run("show", "alice", "--home", home)
    assert r.exit_code == 0 and r.stdout == created
    r = run("show", "alice", "--home", home, "--json")
    doc = json.loads(r.stdout)
    assert doc["name"] == "alice" and doc["protected"] is True
    assert PublicKey.decode(doc["public"]).fingerprint() == doc["fingerprint"]
    exc = raised(run("show", "nobody", "--home", home))
    assert isinstance(exc, KeyNotFound) and "'nobody'" in str(exc)


def test_list(home: Path, pwfile: Path) -> None:
    r = run("list", "--home", home)
    assert r.exit_code == 0 and r.stdout == "" and "no identities" in r.stderr
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


def test_errors_are_pbem_errors_for_the_main_cli(home: Path, pwfile: Path) -> None:
    run("new", "alice", "--home", home, "--passphrase-file", pwfile)
    with pytest.raises(WrongPassphrase):
        keys.load_identity(home, "alice", b"wrong")
    for args in (("show", "ghost", "--home", home), ("new", "x" * 40, "--home", home, "--no-passphrase")):
        exc = raised(run(*args))
        assert isinstance(exc, PbemError) and exc.exit_code in (2, 4)


def test_unlocking_runs_the_scrypt_on_a_thread_and_raises_at_the_call(home: Path, pwfile: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
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
