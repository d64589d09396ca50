"""Small things a newcomer met: --version, key show without a name. Each command's first run in a
file is a process of its own, its further runs go through the command line's entry in this process."""

from __future__ import annotations

import subprocess
from pathlib import Path

from processes import pbem

from pbem.seat import keys


def _pbem(*args: str, home: Path | None = None) -> subprocess.CompletedProcess:
    return pbem(*args, home=home, env={"PBEM_LANG": "en"})


def test_version() -> None:
    from importlib.metadata import version

    run = _pbem("--version")
    assert run.returncode == 0 and run.stdout == f"pbem {version('pbem')}\n"


def test_key_show_needs_no_name_with_one_identity(tmp_path: Path, here) -> None:
    ann = keys.create_identity(tmp_path, "ann", None)
    run = _pbem("key", "show", home=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == ann.public.encode()
    keys.create_identity(tmp_path, "bob", None)
    run = here("key", "show", home=tmp_path, env={"PBEM_LANG": "en"})
    assert run.returncode == 2 and "which identity?" in run.stderr and "ann, bob" in run.stderr
    assert here("key", "show", "bob", home=tmp_path, env={"PBEM_LANG": "en"}).returncode == 0


def test_game_smtp_shows_settings_in_words(tmp_path: Path, here) -> None:
    from table_games import make_table

    table = make_table(tmp_path, ["ann", "bob", "cat"])
    table.host.close()
    db = str(tmp_path / "game.db")
    assert "no SMTP settings" in _pbem("game", "smtp", "test", "--db", db).stdout
    set_ = here("game", "smtp", "test", "--db", db, "--server", "mail.example.org", "--from", "host@example.org",
                "--user", "host", home=None, env={"PBEM_LANG": "en"})
    assert set_.returncode == 0, set_.stderr
    shown = here("game", "smtp", "test", "--db", db, home=None, env={"PBEM_LANG": "en"})
    assert shown.returncode == 0 and shown.stdout == set_.stdout
    assert shown.stdout.startswith("SMTP: mail.example.org:587 (starttls), from host@example.org, login host; ")
    assert "{" not in shown.stdout  # not JSON


def test_an_older_packet_is_called_old_in_chinese_too(tmp_path: Path) -> None:
    """Show and move on an older packet than one seen say so, in the
    reader's language, and move refuses it (exit 5)."""
    from table_games import PASS, make_table

    from pbem.errors import EXIT_STALE
    from pbem.seat import player as P

    table = make_table(tmp_path, ["ann", "bob", "cat"])
    first_path, first = table.latest()
    mover = first.doc.to_move
    sp = P.open_packet(first, table.ids[mover], table.homes[mover])
    table.apply_file(table.move_file(mover, "discard " + sp.part.hand[0], first))
    second_path, _ = table.latest()
    pw = tmp_path / "pw"
    pw.write_bytes(PASS)
    me = ["--as", mover, "--passphrase-file", str(pw)]
    assert _pbem("show", str(second_path), *me, home=table.homes[mover]).returncode == 0
    old = _pbem("--lang", "zh-Hans", "show", str(first_path), *me, home=table.homes[mover])
    assert old.returncode == 0, old.stderr
    assert "牌包 1 是旧的：你已经看过牌包 2" in old.stdout and "轮到你" not in old.stdout
    move = _pbem("--lang", "zh-Hant", "move", str(first_path), "discard " + sp.part.hand[1], *me,
                 home=table.homes[mover])
    assert move.returncode == EXIT_STALE, move.stderr
    assert "牌包 1 是舊的" in move.stderr and "請改為查看最新的牌包（牌包 2 或更新的）" in move.stderr


def test_usage_errors_are_one_line_in_the_readers_language(tmp_path: Path, here) -> None:
    """Click's own usage errors come out as every other error: `error: ...` and `hint: ...`,
    exit 2, translated; a file given where the game's name goes says so."""
    wrong = _pbem("apply", "--db", str(tmp_path / "x.db"), "move.pbem")
    assert wrong.returncode == 2 and wrong.stdout == "", wrong
    assert wrong.stderr == ("error: missing argument 'FILES...'\n"
                            "hint: 'move.pbem' was taken for the game's name: the name comes first (pbem apply GAME ...)\n")
    assert not list(tmp_path.iterdir())  # nothing written
    typo = _pbem("gme")
    assert typo.returncode == 2 and typo.stderr.splitlines()[0] == "error: no such command 'gme'; did you mean 'game', 'games'?"
    zh = pbem("status", "--bogus", env={"PBEM_LANG": "zh-Hans"})
    assert zh.returncode == 2 and zh.stderr == "错误：没有选项 '--bogus'\n提示：'pbem status --help' 会说明它的用法\n", zh.stderr
    extra = here("--lang", "zh-Hant", "key", "show", "a", "b", home=None, env={"PBEM_LANG": "zh-Hans"})
    assert extra.returncode == 2 and extra.stderr.startswith("錯誤：多出了參數 b\n"), extra.stderr
    for run in (wrong, typo, zh, extra):
        assert "Usage:" not in run.stderr and "Try '" not in run.stderr and "Traceback" not in run.stderr
