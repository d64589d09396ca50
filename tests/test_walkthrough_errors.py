"""What a newcomer types wrong on the way through the README and docs/, through the real CLI:
one error line, a hint that fits the command typed, the documented exit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem import errors
from tests import processes


def test_audit_of_a_file_without_a_game_hints_at_what_audit_reads(tmp_path: Path, here) -> None:
    """(`replay` through the command line's entry in this process: a test below runs it as a process.)"""
    notes = tmp_path / "contacts.txt"
    notes.write_text("ann pbem1abc\n")
    for command in ("audit", "replay"):
        run = (processes.pbem if command == "audit" else here)(command, notes, home=tmp_path / "home",
                                                              env={"PBEM_LANG": "en"})
        processes.one_error_line(run, errors.EXIT_USAGE, "holds no pbem game")
        hint = run.stderr.strip().splitlines()[-1]
        # the same hint as for a name that is nothing at all, and no word of another command
        assert hint == ("hint: pass a game name under saves/, a .db file, an archive or packet file, "
                        "or a folder of received files"), run.stderr


def test_show_and_move_of_a_game_folder_point_at_pbem_turn(tmp_path: Path, here) -> None:
    folder = tmp_path / "friday"
    folder.mkdir()
    (folder / "pbem-folder.json").write_text("{}")  # what `pbem folder init` lays out; never read here
    for args in (("show", folder), ("move", folder, "pass")):
        run = processes.pbem(*args, "--as", "ann", home=tmp_path / "home", env={"PBEM_LANG": "en"})
        processes.one_error_line(run, errors.EXIT_USAGE, "is a game folder")
        assert run.stderr.strip().splitlines()[-1] == f"hint: for a game folder: pbem turn {folder} --as NAME"
    plain = tmp_path / "plain"
    plain.mkdir()  # any other folder: the reader's own line, as before
    run = here("show", plain, "--as", "ann", home=tmp_path / "home", env={"PBEM_LANG": "en"})  # show again: in this process
    processes.one_error_line(run, 3, "is a folder")


@pytest.mark.slow  # a trustless table joined and its clock run past a deadline: a few seconds
def test_status_of_a_trustless_game_says_a_gone_seat_is_stood_in_for(tmp_path: Path) -> None:
    from tests.test_trustless_vanish import Table

    t = Table(tmp_path, silent={"ann"}).join()  # ann joins and never answers again
    t.run(until=3)
    assert t.host.status()["absent"] == ["ann"]
    run = processes.pbem("status", "t", cwd=tmp_path, home=tmp_path / "home", env={"PBEM_LANG": "en"}, ok=True)
    # a blind host holds no hand to play from: the others stand in, the table discards for her
    assert "gone (the other seats stand in for them; their turns are face-down discards): ann" in run.stdout
    assert "the host plays for" not in run.stdout


@pytest.mark.parametrize(("args", "said", "lang"), [
    (("turn", "nowhere", "--wait", "--timeout", "abc"), "error: invalid value for '--timeout': 'abc' is not a number", "en"),
    (("turn", "nowhere", "--wait", "--timeout", "-1"), "error: invalid value for '--timeout': -1.0 is outside x>=0.0", "en"),
    (("replay", "friday", "--round", "one"), "error: invalid value for '--round' / '-r': 'one' is not a whole number", "en"),
    (("turn", "nowhere", "--wait", "--timeout", "abc"), "错误：'--timeout' 的值不对：'abc' 不是数字", "zh-Hans"),
])
def test_a_number_that_is_not_one_is_said_in_words(tmp_path: Path, args: tuple[str, ...], said: str, lang: str,
                                                    here) -> None:
    """The first case of each command as a process of its own, `turn`'s further ones in this process."""
    first = args[0] == "replay" or (args[-1] == "abc" and lang == "en")
    run = (processes.pbem if first else here)(*args, home=tmp_path, env={"PBEM_LANG": lang})
    assert run.returncode == errors.EXIT_USAGE, run.stderr
    assert run.stderr.splitlines()[0] == said, run.stderr
    assert len(run.stderr.strip().splitlines()) == 2 and "Traceback" not in run.stderr
