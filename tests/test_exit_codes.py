"""One table of exit codes: pbem.errors.EXIT_CODES, the table in docs/protocol.md, and what
the commands really exit with."""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
from pathlib import Path

import processes
from table_games import PASS, make_table

import pbem
from pbem import errors

ROOT = Path(__file__).resolve().parents[1]


def _doc_table(path: Path) -> dict[int, str]:
    return {int(m[1]): m[2] for m in re.finditer(r"^\| (\d+) \|[^|]*\| ([^|]+) \|$", path.read_text(), re.M)}


def test_docs_table_is_the_code_table() -> None:
    assert set(_doc_table(ROOT / "docs" / "protocol.md")) == set(errors.EXIT_CODES)
    for other in (ROOT / "docs").glob("*.md"):
        if other.name != "protocol.md":
            assert not _doc_table(other), f"{other.name} has a second table of exit codes; point to protocol.md"


def test_every_error_class_exits_with_a_documented_code() -> None:
    for mod in pkgutil.walk_packages(pbem.__path__, "pbem."):
        if not mod.name.endswith("__main__"):
            importlib.import_module(mod.name)
    seen = set()
    stack = [errors.PbemError]
    while stack:
        cls = stack.pop()
        seen.add(cls)
        stack += cls.__subclasses__()
    for cls in seen:
        assert cls.exit_code in errors.EXIT_CODES, cls
    assert {errors.EXIT_ILLEGAL, errors.EXIT_BAD_POSITION, errors.EXIT_INTERNAL} <= set(errors.EXIT_CODES)


def _pbem(*args: str, home: Path) -> subprocess.CompletedProcess:
    pw = home / "pass.txt"
    pw.write_bytes(PASS)
    return processes.pbem(*args, "--passphrase-file", pw, home=home, env={"PBEM_LANG": "en"})


def test_a_move_out_of_turn_is_stale_not_usage(tmp_path: Path) -> None:
    table = make_table(tmp_path, ["ann", "bob", "cat"])
    path, packet = table.latest()
    waiting = next(s for s in table.seats if s != packet.doc.to_move)
    run = _pbem("move", str(path), "pass", "--as", waiting, home=table.homes[waiting])
    assert run.returncode == errors.EXIT_STALE, run.stderr
    assert run.stderr.startswith(f"error: it is {packet.doc.to_move}'s turn, not yours ({waiting})")
    assert "Traceback" not in run.stderr


def test_position_legal_on_a_packet_exits_bad_position(tmp_path: Path) -> None:
    table = make_table(tmp_path, ["ann", "bob", "cat"])
    path, _ = table.latest()
    run = processes.pbem("position", "legal", path)
    assert run.returncode == errors.EXIT_BAD_POSITION == 7, run.stderr
    assert run.stderr.count("\n") <= 2 and run.stderr.startswith("error: ")


def test_ctrl_c_is_one_line_and_exit_130(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) in a long-running command: `error: interrupted`, exit 130, no traceback
    (Typer turns KeyboardInterrupt into a silent Exit(130); the CLI says it)."""
    import signal
    import time

    table = make_table(tmp_path, ["ann", "bob", "cat"])
    db, folder = tmp_path / "game.db", tmp_path / "folder"
    init = processes.pbem("folder", "init", "test", folder, "--db", db, home=table.homes["referee"])
    assert init.returncode == 0, init.stderr
    pw = tmp_path / "pass.txt"
    pw.write_bytes(PASS)
    env = processes.cli_env(table.homes["referee"], PBEM_LANG="en")
    proc = processes.start([*processes.PBEM, "host", "run", "test", "--db", str(db), "--folder",
                            str(folder), "--poll", "0.1", "--passphrase-file", str(pw)], env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as a shell starts it
    try:
        assert proc.stdout is not None and proc.stdout.readline(), "the host said nothing"  # it is serving
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == errors.EXIT_INTERRUPTED, err
    assert err.strip().splitlines()[-1] == "error: interrupted" and "Traceback" not in err, err
