"""Weak passphrases are refused for new keys, PBEM_SCRYPT_N only lowers the
cost (with a loud warning), and a key file's KDF parameters are capped (real processes; the
further cases of a parametrized test through the command line's entry in this process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from processes import pbem

from pbem.errors import BadPacket
from pbem.protocol import crypto, keyfile
from pbem.seat import keys
from pbem.seat.home import key_path


def _key_new(home: Path, name: str, passphrase: str, scrypt_n: str | None = "1024") -> subprocess.CompletedProcess:
    return pbem("key", "new", name, home=home, env={"PBEM_PASSPHRASE": passphrase, "PBEM_SCRYPT_N": scrypt_n})


@pytest.mark.parametrize("weak", ["a", " ", "1234", "12345678901234", "aaaaaaaaaaaa", "abab abab", "short1"])
def test_trivially_weak_passphrases_are_refused_with_the_rule(tmp_path: Path, weak: str, here) -> None:
    run = _key_new(tmp_path, "ann", weak) if weak == "a" else \
        here("key", "new", "ann", home=tmp_path, env={"PBEM_PASSPHRASE": weak, "PBEM_SCRYPT_N": "1024"})
    assert run.returncode == 2, run.stderr
    first = run.stderr.splitlines()[0]
    assert first == f"error: the passphrase is too weak: use {keys.passphrase_rule()}"
    assert "at least 8 characters" in first and "Traceback" not in run.stderr
    assert not (tmp_path / "keys").exists() or list((tmp_path / "keys").iterdir()) == []


def test_a_reasonable_passphrase_with_cheap_test_scrypt_warns_loudly(tmp_path: Path) -> None:
    run = _key_new(tmp_path, "ann", "correct horse battery")
    assert run.returncode == 0, run.stderr
    assert "warning: PBEM_SCRYPT_N=1024 makes this key file 32 times cheaper" in run.stderr
    assert json.loads(key_path(tmp_path, "ann").read_text())["kdf"]["n"] == 1024


def test_scrypt_n_above_the_default_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    run = _key_new(tmp_path, "ann", "correct horse battery", scrypt_n=str(2**20))
    assert run.returncode == 2 and run.stderr.startswith("error: PBEM_SCRYPT_N=1048576 is above the default")
    assert not key_path(tmp_path, "ann").exists()


@pytest.mark.parametrize("n,r,p", [(2**20, 8, 16), (2**20, 8, 1), (2**17, 8, 2), (2**19, 4, 1), (2**15, 64, 1)])
def test_a_crafted_key_file_cannot_make_the_kdf_burn_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         n: int, r: int, p: int, here) -> None:
    monkeypatch.setenv(keys.ENV_SCRYPT_N, "1024")
    keys.create_identity(tmp_path, "ann", b"correct horse")
    path = key_path(tmp_path, "ann")
    doc = json.loads(path.read_text())
    doc["kdf"].update(n=n, r=r, p=p)  # the attack: n=2**20, r=8, p=16 would burn minutes of CPU
    path.write_text(json.dumps(doc))
    derived: list[int] = []
    real = keyfile.derive
    monkeypatch.setattr(keyfile, "derive", lambda *a: derived.append(1) or real(*a))
    with pytest.raises(BadPacket, match="unsupported scrypt parameters") as info:
        keys.load_identity(tmp_path, "ann", b"correct horse")
    assert derived == [] and "at most n*r*p" in str(info.value.hint or "")
    inv = tmp_path / "none.pbem"
    inv.write_text("")
    args = ("game", "new", "g", "--host", "ann", "--player", "a=ann", "--player", "b=ann", "--player", "c=ann")
    run = pbem(*args, home=tmp_path, cwd=tmp_path, env={"PBEM_PASSPHRASE": "correct horse"}, timeout=60) \
        if (n, r, p) == (2**20, 8, 16) else here(*args, home=tmp_path, cwd=tmp_path, env={"PBEM_PASSPHRASE": "correct horse"})
    assert run.returncode == 3 and "unsupported scrypt parameters" in run.stderr.splitlines()[0], run.stderr


def test_the_default_and_four_times_it_are_still_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    identity = crypto.Identity.generate("ann")
    blob = crypto.identity_to_bytes(identity, b"correct horse", scrypt_n=keyfile.SCRYPT_MIN_N)
    assert crypto.identity_from_bytes(blob, b"correct horse").public.encode() == identity.public.encode()
    assert keyfile.SCRYPT_MAX_WORK == 4 * keyfile.DEFAULT_SCRYPT_N * keyfile.SCRYPT_R * keyfile.SCRYPT_P
    keyfile.check_scrypt(keyfile.DEFAULT_SCRYPT_N * 4, 8, 1)  # the largest a file may ask for


def test_show_and_move_report_the_packet_before_the_key_though_the_unlock_starts_first(tmp_path: Path, here) -> None:
    """show and move begin unlocking the key before they read the packet (its scrypt overlaps
    the reading, pbem.seat.keys.unlocking), yet a bad packet is still the error they report,
    before a wrong passphrase or a missing key, as when they unlocked after reading. (Each command
    first as a process of its own, then through the command line's entry in this process.)"""
    assert _key_new(tmp_path, "ann", "correct horse battery").returncode == 0
    (tmp_path / "bad.pbem").write_text("not a packet\n")
    for name, passphrase in (("ann", "wrong horse battery"), ("ghost", "correct horse battery")):
        for args in (("show", "bad.pbem"), ("move", "bad.pbem", "discard 1")):
            run = (pbem if name == "ann" else here)(*args, "--as", name, home=tmp_path, cwd=tmp_path,
                                                     env={"PBEM_PASSPHRASE": passphrase})
            assert run.returncode != 0 and "bad.pbem" in run.stderr.splitlines()[0], run.stderr
            assert "passphrase" not in run.stderr and "ghost" not in run.stderr, run.stderr



def _a_move_to_apply(root: Path):
    """A dealt game of three in root/game.db (keys protected by table_games.PASS), the host's
    store closed, and a move file answering its packet: (the table, the move file)."""
    from table_games import make_table

    table = make_table(root, ["ann", "bob", "cat"])
    packet = table.latest()[1]
    move = table.move_file(packet.doc.to_move, "discard 1", packet)
    table.host.close()
    return table, move


def test_apply_reports_the_store_and_game_before_the_key_though_the_unlock_starts_first(tmp_path: Path, here) -> None:
    """apply begins unlocking the host's key, which the store's file names (pbem.host.paths.probe),
    before it opens the store (the scrypt overlaps importing and opening it), yet a missing store
    or game is still the error it reports before a wrong passphrase or a missing key, and the key's
    before a bad move file, as when it unlocked once the store was open. (The first case by a process
    of its own, the others through the command line's entry in this process.)"""
    from table_games import PASS

    table, move = _a_move_to_apply(tmp_path)
    (tmp_path / "bad.pbem").write_text("not a packet\n")
    home = table.homes["referee"]
    wrong = {"PBEM_PASSPHRASE": "wrong horse battery"}
    for args, env, said in ((("nosuch", "--db", "game.db", move), wrong, "nosuch"),
                            (("test", "--db", "missing.db", move), wrong, "missing.db"),
                            (("test", "--db", "game.db", move), wrong, "passphrase"),
                            (("test", "--db", "game.db", "bad.pbem"), wrong, "passphrase")):
        run = (pbem if args[0] == "nosuch" else here)("apply", *args, home=home, cwd=tmp_path, env=env)
        lines = run.stderr.strip().splitlines()
        assert run.returncode != 0 and said in lines[0] and "Traceback" not in run.stderr, run.stderr
    run = here("apply", "test", "--db", "game.db", "bad.pbem", home=home, cwd=tmp_path,
               env={"PBEM_PASSPHRASE": PASS.decode()})
    assert run.returncode != 0 and "bad.pbem" in run.stderr.splitlines()[0], run.stderr
    run = here("apply", "test", "--db", "game.db", move, home=tmp_path / "nobody", cwd=tmp_path,
               env={"PBEM_PASSPHRASE": PASS.decode()})
    assert run.returncode != 0 and "'referee'" in run.stderr.splitlines()[0], run.stderr
    ok = here("apply", "test", "--db", "game.db", move, home=home, cwd=tmp_path, env={"PBEM_PASSPHRASE": PASS.decode()})
    assert ok.returncode == 0 and "packet" in ok.stdout, ok.stderr


# apply's real main(), with pbem.seat.keys' thread noting whether the store's layer was loaded when it began
EARLY_PROBE = ("import sys\nimport pbem.cli\nfrom pbem.seat import keys\nbegun = []\nthread = keys._on_thread\n"
               "keys._on_thread = lambda work: (begun.append('sqlalchemy' in sys.modules), thread(work))[1]\n"
               "sys.argv = ['pbem', *sys.argv[1:]]\ntry:\n    pbem.cli.main()\nexcept SystemExit as exc:\n"
               "    assert not exc.code, exc.code\nprint('BEGUN', begun)")


def test_apply_begins_the_hosts_scrypt_before_it_imports_the_store(tmp_path: Path) -> None:
    from processes import cli_env
    from table_games import PASS

    table, move = _a_move_to_apply(tmp_path)
    run = subprocess.run([sys.executable, "-c", EARLY_PROBE, "apply", "test", "--db", "game.db", str(move)],
                         env=cli_env(table.homes["referee"], PBEM_PASSPHRASE=PASS.decode()), cwd=tmp_path,
                         capture_output=True, text=True, check=False)
    assert run.stdout.strip().splitlines()[-1] == "BEGUN [False]", run.stdout + run.stderr


def test_the_key_unlocked_is_the_one_the_store_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Should the store's file have named another key than the store does once open, the key
    begun is left, and the store's is unlocked."""
    from table_games import PASS

    from pbem.cli._common import open_unlocked_host
    from pbem.host import paths

    table, _ = _a_move_to_apply(tmp_path)
    db = tmp_path / "game.db"
    assert paths.probe(db, "test") == paths.probe(db, table.host.game_id()) == (False, "referee")
    assert paths.probe(db, "nosuch") == paths.probe(db) == (False, None)  # a status asks for no name
    (tmp_path / "bad.pbem").write_text("not a database\n")
    assert paths.probe(tmp_path / "bad.pbem", "test") == paths.probe(tmp_path / "none.db", "test") == (False, None)
    monkeypatch.setattr(paths, "probe", lambda path, game=None: (False, "ann"))  # not in the referee's home
    monkeypatch.setenv("PBEM_PASSPHRASE", PASS.decode())
    with open_unlocked_host("test", None, tmp_path / "game.db", table.homes["referee"], None) as host:
        assert host.identity is not None and host.identity.name == "referee"
