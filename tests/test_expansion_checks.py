"""Regression tests for engine bugs found while checking the expansion against RULES.md."""

from __future__ import annotations

import pytest

from engine.errors import IllegalMove
from engine.moves import Move
from engine.position import load
from engine.rules import apply


@pytest.mark.parametrize(
    "cards, remove, reason",
    [
        (("cross.1", "free.1", "map.1", "rockfall.1"), None, "1 to 3 cards"),
        ((), None, "1 to 3 cards"),
        (("free.1", "map.1", "rockfall.1"), "trap", "exactly 2 cards"),
        (("map.1",), "trap", "exactly 2 cards"),
    ],
)
def test_discard_limits_hold_for_move_objects(cards, remove, reason) -> None:
    """Bots hand `Move` objects to `apply`, bypassing the parser: the rules check the counts too."""
    doc = {
        "format": "pbem-position/1", "ruleset": "expansion", "players": ["ann", "bob"], "board": [], "to_move": "ann",
        "hands": {"ann": ["map", "rockfall", "free", "cross"], "bob": ["map"]}, "in_front": {"ann": ["trap"]}, "deck": ["inspect"],
    }
    state = load(doc)
    with pytest.raises(IllegalMove, match=reason):
        apply(state, Move("discard", cards=cards, remove=remove))


def test_round_closes_once_when_every_thief_is_skipped() -> None:
    """§9 expansion 5: a thief with no victim is skipped; the round then ends with one next_start."""
    doc = {
        "format": "pbem-position/1", "ruleset": "expansion", "players": ["ann", "bob", "cat"], "board": [],
        "roles": {"ann": "saboteur", "bob": "green", "cat": "blue"}, "to_move": "cat", "passes_in_a_row": 2,
        "hands": {"ann": ["map"], "bob": ["map"], "cat": ["map"]}, "in_front": {"ann": ["theft"]}, "last_theft": "ann",
    }
    state = load(doc)
    kinds = [e["event"] for e in apply(state, "discard map")]
    assert kinds.count("next_start") == 1
    assert kinds[-2:] == ["steal", "next_start"]
    assert state.phase == "over" and state.player == "ann"
