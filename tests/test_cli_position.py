"""`pbem position legal` and `pbem position apply`, end to end: each command's first cases by the
installed console script in a process of its own, its many cases of bad input through the command
line's own entry in this process (`here`), but for a FIFO (a regression would hang the test's own
process, not one it can time out) and bytes on stdin."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from on_disk import case_position_file
from processes import PBEM, cli_env, pbem


def _pbem(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return pbem(*args, input=stdin, installed=True, timeout=60)


def _position(tmp_path: Path, case: str) -> tuple[Path, dict]:
    return case_position_file(tmp_path, "classic", case)


def test_legal_prints_every_move_sorted(tmp_path: Path) -> None:
    path, case = _position(tmp_path, "rotation_listing")
    out = _pbem("position", "legal", str(path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == sorted(case["legal"])
    assert out.stderr == ""


def test_legal_json(tmp_path: Path) -> None:
    path, case = _position(tmp_path, "fix_targets")
    out = _pbem("position", "legal", str(path), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == sorted(case["legal"])


def test_legal_reads_stdin(tmp_path: Path) -> None:
    path, case = _position(tmp_path, "map_targets")
    out = _pbem("position", "legal", "-", stdin=path.read_text(encoding="utf-8"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == sorted(case["legal"])


def test_apply_prints_the_resulting_position_and_events(tmp_path: Path) -> None:
    path, _ = _position(tmp_path, "payout_diggers_3_players")
    out = _pbem("position", "apply", str(path), "play tee-new at 7,0", "--events")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["format"] == "pbem-position/1"
    assert result["phase"] == "over" and result["finder"] == "ann"
    assert result["gold"] == {"ann": 4, "bob": 0, "cat": 2}
    events = [json.loads(line) for line in out.stderr.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[:2] == ["move", "place"]
    assert "gold" in kinds and "payout" in kinds and kinds[-1] == "next_start"
    assert [e["player"] for e in events if e["event"] == "nugget"] == ["ann", "cat", "ann"]


def test_apply_several_moves_without_events(tmp_path: Path) -> None:
    path, _ = _position(tmp_path, "pass_counts_only_with_empty_deck")
    out = _pbem("position", "apply", str(path), "discard map.1", "DISCARD MAP.2")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    result = json.loads(out.stdout)
    assert result["passes_in_a_row"] == 1 and result["to_move"] == "cat"


def _one_error_line(out: subprocess.CompletedProcess[str]) -> None:
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, out.stderr
    assert out.stdout == ""


@pytest.mark.parametrize(
    "text,words",
    [
        ("{not json", "not JSON"),
        ("[]", "JSON object"),
        ('{"format": "pbem-position/1", "ruleset": "classic", "players": ["ann", "bob", "cat"]}', "missing required key"),
        ('{"format": "pbem-position/2", "ruleset": "classic", "players": [], "board": [], "to_move": "x"}', "format"),
        ('{"format": "pbem-position/1", "ruleset": "classic", "players": ["ann", "bob", "cat"], "board": [],'
         ' "to_move": "dan"}', "not a player"),
        ('{"format": "pbem-position/1", "ruleset": "classic", "players": ["ann", "bob", "cat"],'
         ' "board": [{"at": [1, 0], "card": "nonsense"}], "to_move": "ann"}', "unknown card"),
        ('{"format": "pbem-position/1", "ruleset": "classic", "players": ["ann", "bob", "cat"],'
         ' "board": [{"at": "x"}], "to_move": "ann"}', "malformed position"),
    ],
)
@pytest.mark.parametrize("command", ["legal", "apply"])
def test_malformed_position_gives_one_error_line(tmp_path: Path, text: str, words: str, command: str, here) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    args = ["position", command, str(path)] + (["discard map"] if command == "apply" else [])
    out = here(*args, home=None)
    _one_error_line(out)
    assert words in out.stderr


def test_missing_file_gives_one_error_line(tmp_path: Path, here) -> None:
    out = here("position", "legal", str(tmp_path / "nowhere.json"), home=None)
    _one_error_line(out)
    assert "cannot read" in out.stderr


@pytest.mark.parametrize("poison,words", [(b"\xff\xfe{}", "not UTF-8"), (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
                                          ("fifo", "special file"), ("link", "is a link")])
@pytest.mark.parametrize("command", ["legal", "apply"])
def test_a_position_file_that_is_no_text_gives_one_error_line(tmp_path: Path, poison, words: str, command: str,
                                                              here) -> None:
    """Not UTF-8, nested past the recursion limit (both exit 70 before), a FIFO (it hung), a link (it was
    followed, to /dev/zero as well): exit 7."""
    path = tmp_path / "bad.json"
    if poison == "fifo":
        os.mkfifo(path)
    elif poison == "link":
        (tmp_path / "real.json").write_text("{}")
        path.symlink_to(tmp_path / "real.json")
    else:
        path.write_bytes(poison)
    args = ("position", command, str(path), *(["discard map.1"] if command == "apply" else []))
    out = _pbem(*args) if poison == "fifo" else here(*args, home=None)
    _one_error_line(out)
    assert out.returncode == 7 and words in out.stderr, out.stderr
    if isinstance(poison, bytes):  # and the same bytes on stdin
        run = subprocess.run([*PBEM, "position", command, "-", *(["discard map.1"] if command == "apply" else [])],
                             input=poison, capture_output=True, env=cli_env(), timeout=60, check=False)
        assert run.returncode == 7 and b"Traceback" not in run.stderr, run.stderr


def test_illegal_move_gives_one_error_line(tmp_path: Path, here) -> None:
    path, _ = _position(tmp_path, "blocked_by_lamp")
    out = here("position", "apply", str(path), "play cross at 1,0", home=None)
    _one_error_line(out)
    assert "'play cross at 1,0'" in out.stderr and "broken tool" in out.stderr
    out = here("position", "apply", str(path), "dance", home=None)
    _one_error_line(out)
    assert "'dance'" in out.stderr
