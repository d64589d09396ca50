"""RULES.md §4.3: what inspect and swap-hat reveal, and to whom (engine.views.view)."""

from __future__ import annotations

from engine.position import load
from engine.rules import apply, legal_moves
from engine.views import view


def _position(**extra):
    doc = {
        "format": "pbem-position/1",
        "ruleset": "expansion",
        "players": ["ann", "bob", "cat"],
        "roles": {"ann": "green", "bob": "saboteur", "cat": "blue"},
        "board": [],
        "hands": {"ann": ["inspect", "swap-hat"], "bob": ["map"], "cat": ["map"]},
        "aside": ["geologist.1", "boss.1"],
        "deck": ["cross", "cross", "cross"],
        "to_move": "ann",
    }
    doc.update(extra)
    return load(doc)


def test_inspect_is_private() -> None:
    state = _position()
    apply(state, "play inspect on bob")
    assert state.knowledge["ann"] == [["inspect", "bob", "saboteur"]]
    assert view(state, "ann").knowledge["ann"] == [["inspect", "bob", "saboteur"]]
    for other in ("bob", "cat", None):
        v = view(state, other)
        assert v.knowledge.get("ann", []) == []
        assert all(v.roles[p] is None for p in ("ann", "bob", "cat") if p != other)


def test_swap_hat_result_only_for_that_player() -> None:
    state = _position()
    old = state.roles["bob"]
    apply(state, "play swap-hat on bob")
    assert state.roles["bob"] == "geologist.1" and state.retired == [old] and state.aside == ["boss.1"]
    mine = view(state, "bob")
    assert mine.roles["bob"] == "geologist.1"
    assert mine.knowledge["bob"] == [["hat", "geologist"]]
    for other in ("ann", "cat", None):
        v = view(state, other)
        assert v.roles["bob"] is None
        assert v.knowledge.get("bob", []) == []
        assert v.retired == ["?"] and v.aside == ["?"]
    # the player who played it learns nothing either; legal moves still work on the view
    assert legal_moves(view(state, "bob"))


def test_swap_hat_on_self_views() -> None:
    state = _position()
    apply(state, "play swap-hat on ann")
    assert view(state, "ann").roles["ann"] == "geologist.1"
    assert view(state, "bob").roles["ann"] is None
