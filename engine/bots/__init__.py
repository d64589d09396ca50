"""Bots choose a move from what one player may know (a view), never from the full state.

`make_bot(kind, seat, seed)` builds one: "random" (every legal move equally likely), "smart"
(role-aware, with a suspicion model fed by `observe`) or "search" (plays the smart bot's best
moves out in sampled worlds, `think` seconds a decision). See docs/bots.md.
"""

from __future__ import annotations

from collections.abc import Callable

from ..selfplay import Bot
from .random_bot import RandomBot
from .search import THINK, SearchBot
from .smart import SmartBot

KINDS = ("random", "smart", "search")


def make_bot(kind: str, seat: str, seed: int | str = 0, think: float = THINK,
             clock: Callable[[], float] | None = None, turns: int | None = None) -> Bot:
    """A bot of `kind` for the player `seat`; the same (kind, seat, seed) plays the same.
    `think`: the search bot's seconds a decision, counted as simulated turns; with `clock`
    (a time function) also measured by it (then the choice may depend on the machine's speed).
    `turns`: instead, exactly that many simulated turns every decision (none saved for later)."""
    if kind == "random":
        return RandomBot(f"{seed}/{seat}")
    if kind == "smart":
        return SmartBot(seat, seed)
    if kind == "search":
        return SearchBot(seat, seed, think, clock, turns=turns)
    raise ValueError(f"unknown bot kind {kind!r}; expected one of {', '.join(KINDS)}")


__all__ = ["KINDS", "THINK", "Bot", "RandomBot", "SearchBot", "SmartBot", "make_bot"]
