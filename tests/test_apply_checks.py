"""`apply` checks every move, even one that legal_moves has just listed; `apply_unchecked`, for a
move the caller took from legal_moves of that very state, is called only where moves are listed
and one is picked (self-play, the arena, the benchmark), never on a move from outside."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.chance import SeededChance
from engine.digest import digest
from engine.errors import IllegalMove
from engine.moves import Move
from engine.rules import apply, legal_moves, listed_moves
from engine.state import RoundState, deal
from engine.views import view

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = ("ann", "bob", "cid")
BREAK = Move("play", "break-pick.1", target="bob")


def _ann_holds_a_break() -> RoundState:
    state = deal("classic", PLAYERS, SeededChance("apply-checks"))
    state.hands["ann"][0] = "break-pick.1"  # (by hand, before anything is listed)
    return state


def test_an_illegal_move_is_refused_right_after_a_listing() -> None:
    state = _ann_holds_a_break()
    listed = legal_moves(state)
    assert BREAK in listed
    before = digest(state)
    not_held = next(c for c in state.hands["bob"] if c not in state.hands["ann"])
    for illegal in (Move("discard", cards=(not_held,)), f"discard {not_held}",
                    Move("play", "break-pick.1", target="nobody")):
        with pytest.raises(IllegalMove):
            apply(state, illegal)
    assert digest(state) == before  # nothing changed


@pytest.mark.parametrize("where", ["state", "view", "lazily"])
def test_a_listed_move_made_illegal_since_is_refused(where: str) -> None:
    """A move listed a moment ago (the very object), then bob gets a broken pick without any move
    applied: breaking his pick is now illegal, and apply says so and changes nothing."""
    state = _ann_holds_a_break()
    listing = {"state": legal_moves, "lazily": listed_moves}.get(where)
    moves = listing(state) if listing else legal_moves(view(state, "ann"))
    move = next(m for m in moves if m == BREAK)
    state.put_in_front("bob", "break-pick.2")
    before = digest(state)
    with pytest.raises(IllegalMove, match="already has a break-pick"):
        apply(state, move)
    assert digest(state) == before and state.in_front["bob"] == ["break-pick.2"]


def _python_files(*tops: str) -> list[Path]:
    return sorted(p for top in tops for p in (ROOT / top).rglob("*.py") if ".venv" not in p.parts)


def test_apply_unchecked_is_called_only_where_moves_are_listed() -> None:
    callers = {str(p.relative_to(ROOT)) for p in _python_files("engine", "pbem", "scripts")
               if "apply_unchecked" in p.read_text(encoding="utf-8")}
    # the search bot plays out its own legal candidates in worlds that agree with its view, and
    # the screening plays out the moves two bots chose from the true state
    assert callers == {"engine/rules.py", "engine/selfplay.py", "engine/bots/arena.py", "engine/bots/search.py",
                       "scripts/bench_engine.py", "scripts/bots_screen.py"}
    assert not any(c.startswith("pbem/") for c in callers)  # every move pbem handles comes from outside


# a write to a player's cards in front: `x.in_front[...] = `, `.append(...)`, `.remove(...)`, ...
_WRITE = re.compile(r"in_front\[[^\]]*\]\s*(=[^=]|\.(append|remove|insert|pop|clear|extend|sort)\b)"
                    r"|\.in_front\s*=[^=]")


def test_only_the_state_changes_the_cards_in_front() -> None:
    """So what the state worked out from them (FrontMemo) is renewed with every change."""
    writers = {str(p.relative_to(ROOT)) for p in _python_files("engine", "pbem", "scripts")
               if _WRITE.search(p.read_text(encoding="utf-8"))}
    assert writers == {"engine/state.py"}
