"""`pbem position legal` / `apply` on expansion positions, through the installed command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from on_disk import case_position_file
from processes import pbem


def _run(*args: str) -> subprocess.CompletedProcess:
    return pbem("position", *args, installed=True, timeout=60)


def _position_file(tmp_path: Path, case: str) -> tuple[dict, Path]:
    path, doc = case_position_file(tmp_path, "expansion", case)
    return doc, path


def test_legal_lists_discard_and_remove(tmp_path: Path) -> None:
    case, path = _position_file(tmp_path, "discard_two_remove_front_card")
    out = _run("legal", str(path))
    assert out.returncode == 0, out.stderr
    assert sorted(out.stdout.splitlines()) == sorted(case["legal"])
    assert out.stdout.splitlines() == sorted(out.stdout.splitlines())
    as_json = _run("legal", str(path), "--json")
    assert sorted(json.loads(as_json.stdout)) == sorted(case["legal"])


def test_apply_worked_example_with_theft(tmp_path: Path) -> None:
    _, path = _position_file(tmp_path, "worked_example_5_2")
    out = _run("apply", str(path), "play cross at 7,0", "--events")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["phase"] == "theft" and result["to_move"] == "gus" and result["thieves"] == ["gus"]
    assert result["gold"] == {"ann": 3, "bob": 0, "cat": 0, "dan": 2, "eve": 1, "fay": 0, "gus": 0}
    events = [json.loads(line) for line in out.stderr.splitlines()]
    assert {"event": "winners", "players": ["ann", "dan", "eve"]} in events
    # the theft phase continues from the printed position
    after = tmp_path / "after.json"
    after.write_text(out.stdout, encoding="utf-8")
    legal = _run("legal", str(after))
    assert legal.stdout.splitlines() == ["steal ann", "steal dan", "steal eve", "steal nobody"]
    done = _run("apply", str(after), "steal eve", "--events")
    assert done.returncode == 0, done.stderr
    final = json.loads(done.stdout)
    assert final["phase"] == "over" and final["gold"]["eve"] == 0 and final["gold"]["gus"] == 1
    assert [json.loads(x)["event"] for x in done.stderr.splitlines()] == ["move", "steal", "next_start"]


def test_apply_refuses_an_illegal_expansion_move(tmp_path: Path) -> None:
    _, path = _position_file(tmp_path, "trap_another_player_not_twice")
    out = _run("apply", str(path), "play trap on ann")
    assert out.returncode != 0
    assert "another player" in out.stderr
