"""Position documents (RULES.md §8): every physical card is accounted for exactly once."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from engine.catalog import nugget_ids
from engine.errors import BadPosition
from engine.position import dump, load

BASE = {"format": "pbem-position/1", "ruleset": "classic", "players": ["ann", "bob", "cat"], "board": [], "to_move": "ann"}
CASES = sorted((Path(__file__).parent / "positions").glob("*/*.json"))


def _dups(state) -> list[str]:
    return [c for c, k in Counter(state.all_cards()).items() if k > 1]


def test_bare_won_cards_are_not_also_in_the_default_pile() -> None:
    state = load({**BASE, "won": ["gold-3", "gold-1"]})
    assert state.won == ["gold-3.1", "gold-1.1"]
    assert _dups(state) == []
    assert sorted(state.nuggets + state.won) == sorted(nugget_ids())


def test_explicit_role_ids_are_reserved_before_bare_kinds() -> None:
    state = load({**BASE, "roles": {"ann": "saboteur.1", "bob": "digger"}, "aside": ["saboteur"]})
    assert state.roles["ann"] == "saboteur.1" and state.aside == ["saboteur.2"]
    assert _dups(state) == []
    state = load({**BASE, "roles": {"ann": "saboteur", "bob": "saboteur.1"}})
    assert state.roles == {"ann": "saboteur.2", "bob": "saboteur.1", "cat": None}


@pytest.mark.parametrize(
    "extra",
    [
        {"roles": {"ann": "saboteur.1", "bob": "saboteur.1"}},
        {"roles": {"ann": "digger.2"}, "aside": ["digger.2"]},
        {"hands": {"ann": ["cross.1"]}, "deck": ["cross.1"]},
        {"hands": {"ann": ["map.1"]}, "discard": ["map.1"]},
        {"board": [{"at": [1, 0], "card": "cross.1"}], "hands": {"bob": ["cross.1"]}},
        {"nuggets": ["gold-1.1"], "won": ["gold-1.1"]},
    ],
)
def test_a_card_in_two_places_is_refused(extra: dict) -> None:
    with pytest.raises(BadPosition, match="appears twice"):
        load({**BASE, **extra})


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_every_case_position_round_trips(path: Path) -> None:
    state = load(json.loads(path.read_text(encoding="utf-8"))["position"])
    assert _dups(state) == []
    doc = json.loads(json.dumps(dump(state)))
    assert dump(load(doc)) == doc


@pytest.mark.parametrize(
    "extra,words",
    [
        ({"hands": {"ann": ["gold-3"]}}, "hands: gold-3.1 cannot lie there"),
        ({"hands": {"ann": ["saboteur"]}}, "hands: saboteur.1 cannot lie there"),
        ({"hands": {"ann": ["goal-gold"]}}, "goal-gold.1"),
        ({"deck": ["digger"]}, "deck: digger.1 cannot lie there"),
        ({"nuggets": ["cross"]}, "nuggets: cross.1 cannot lie there"),
        ({"aside": ["map"]}, "aside: map.1 cannot lie there"),
        ({"in_front": {"bob": ["map"]}}, "in_front: map.1 cannot lie in front of a player"),
        ({"in_front": {"bob": ["fix-pick"]}}, "in_front: fix-pick.1 cannot lie in front of a player"),
        ({"in_front": {"bob": ["break-pick", "break-pick"]}}, "bob has more than one break-pick"),
    ],
)
def test_a_card_where_it_cannot_lie_is_refused(extra: dict, words: str) -> None:
    with pytest.raises(BadPosition) as err:
        load({**BASE, **extra})
    assert words in str(err.value)


def test_one_broken_tool_of_each_type_is_fine() -> None:
    state = load({**BASE, "in_front": {"bob": ["break-pick", "break-lamp", "break-cart"]}})
    assert state.blocked("bob") and not state.blocked("ann")
