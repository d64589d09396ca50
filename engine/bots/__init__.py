"""Bots choose a move from what one player may know (a view), never from the full state.

`make_bot(kind, seat, seed)` builds one: "random" (every legal move equally likely) or
"smart" (role-aware, with a suspicion model fed by `observe`). See docs/bots.md.
"""

from __future__ import annotations

from typing import Protocol

from ..moves import Move
from ..state import RoundState
from .random_bot import RandomBot
from .smart import SmartBot

KINDS = ("random", "smart")


class Bot(Protocol):
    def choose(self, view: RoundState) -> Move: ...


def make_bot(kind: str, seat: str, seed: int | str = 0) -> Bot:
    """A bot of `kind` for the player `seat`; the same (kind, seat, seed) plays the same."""
    if kind == "random":
        return RandomBot(f"{seed}/{seat}")
    if kind == "smart":
        return SmartBot(seat, seed)
    raise ValueError(f"unknown bot kind {kind!r}; expected one of {', '.join(KINDS)}")


__all__ = ["KINDS", "Bot", "RandomBot", "SmartBot", "make_bot"]
