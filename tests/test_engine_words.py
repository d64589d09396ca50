"""The engine's refusals reach a player in their language: every reason template
in engine/ has its pattern in pbem/ui/engine_words.py, and real refusals come out translated."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from processes import pbem
from source_trees import nodes, sources

from pbem.ui import words
from pbem.ui.engine_words import REASONS, literal_parts, reason_words

ENGINE = Path(__file__).resolve().parents[1] / "engine"
RAISERS = {"bad", "IllegalMove", "InvalidMove"}  # bad(): moves.py's local maker
# functions that return a reason (None, or the move, when legal)
REFUSERS = {"refusal", "placement_error", "_verdict", "_check_discard", "_check_action"}


def _template(node: ast.expr) -> str | None:
    """A string literal or f-string as a template: each {expression} becomes {}."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)  # type: ignore[misc]
    return None


def engine_reasons() -> dict[str, str]:
    """template -> where, for every reason the engine gives a refused move."""
    found: dict[str, str] = {}
    for path in sources("engine"):
        for fn in nodes(path):
            if not isinstance(fn, (ast.FunctionDef, ast.Module)):
                continue
            for node in ast.walk(fn):
                given: list[ast.expr] = []
                if isinstance(node, ast.Call):
                    name = node.func.id if isinstance(node.func, ast.Name) else None
                    if name in RAISERS:
                        given = node.args[1:2] if name != "bad" else node.args[:1]
                elif isinstance(node, ast.Return) and node.value is not None and isinstance(fn, ast.FunctionDef) \
                        and fn.name in REFUSERS:
                    given = [node.value]
                for arg in given:
                    tpl = _template(arg)
                    if tpl is not None:
                        found.setdefault(tpl, f"{path.name}:{node.lineno}")
    return found


def test_every_engine_reason_has_a_translated_template() -> None:
    reasons = engine_reasons()
    assert len(reasons) > 40, reasons  # the scan finds the engine's refusals
    ours = {literal_parts(t) for t in REASONS}
    missing = {where: tpl for tpl, where in reasons.items() if literal_parts(tpl) not in ours}
    assert not missing, f"engine reasons with no template in pbem/ui/engine_words.py: {missing}"
    unused = [t for t in REASONS if literal_parts(t) not in {literal_parts(r) for r in reasons}]
    assert not unused, f"templates the engine no longer gives: {unused}"


def test_a_card_in_front_of_a_player_is_named_as_show_names_it() -> None:
    """The engine says the card's id ("bob already has a break-pick"); a player reads its name."""
    assert reason_words("bob already has a break-pick") == "bob already has a broken pick"
    with words.using("zh-Hans"):
        assert reason_words("bob already has a break-pick") == "bob 面前已经有「损坏的丁字镐」"
    with words.using("zh-Hant"):
        assert "break-pick" not in reason_words("bob already has a break-pick")


def test_a_break_on_a_broken_tool_is_refused_with_the_cards_name(tmp_path: Path) -> None:
    from on_disk import case_position_file

    path, _ = case_position_file(tmp_path, "classic", "break_targets")
    run = pbem("position", "apply", path, "play break-lamp on bob")
    assert run.returncode == 6 and "bob already has a broken lamp" in run.stderr, run.stderr
    run = pbem("--lang", "zh-Hans", "position", "apply", path, "play break-lamp on bob", env={"PBEM_LANG": ""})
    assert run.returncode == 6 and "bob 面前已经有「损坏的提灯」" in run.stderr, run.stderr


@pytest.mark.parametrize("reason, zh", [
    ("bob already has a broken-lamp", "bob 面前已经有「broken-lamp」"),
    ("unknown card 'straigth'; did you mean straight-ew?", "没有牌 'straigth'；你是指 straight-ew 吗？"),
    ("unknown card 'zzz'", "没有牌 'zzz'"),
    ("3,1 does not touch the maze", "3,1 不挨着迷宫"),
    ("the round is over", "这一轮已经结束"),
])
def test_a_reason_is_said_again_with_its_fields(reason: str, zh: str) -> None:
    with words.using("zh-Hans"):
        assert reason_words(reason) == zh
    assert reason_words(reason) == reason  # English is the engine's own words
    assert reason_words("a reason from a newer engine") == "a reason from a newer engine"


def test_real_refusals_come_out_in_chinese(tmp_path: Path) -> None:
    """`pbem position apply` (a real process) refusing moves in zh-Hans: the whole error line is
    Chinese but for the move and the card names the player typed."""

    from on_disk import case_position_file

    path, _ = case_position_file(tmp_path, "classic", "blocked_cannot_place_path")
    for text, code, zh in [("fly away", 2, "行动以 'play'、'discard' 或 'steal' 开头"),
                           ("play cross.99 at 0,0", 2, "没有这样的牌"),
                           ("play straigth at 1,0", 2, "没有牌 'straigth'")]:
        run = pbem("--lang", "zh-Hans", "position", "apply", path, text, env={"PBEM_LANG": ""})
        assert run.returncode == code, run.stderr
        first = run.stderr.splitlines()[0]
        assert first.startswith("错误：不是行动 "), first
        assert zh in first and not re.search(r"[a-z]{3,} [a-z]{3,} [a-z]{3,}", first.replace(repr(text), "")), first
