"""Which cards a trustless game shuffles: every stack of every round, fixed before play starts.

Classic: per round the dwarf cards, the three goal cards and the deck; once per game the
nugget pile (RULES.md §3: the nugget cards left after a round carry over, and the top of a
uniformly shuffled pile is as random as a fresh shuffle of what is left). Expansion: per round
the dwarf cards, the goals and the deck (the first 10 cards of its deck are the removed ones).
Each card is encoded as a point nobody knows the discrete log of; every stack starts as the
public, trivial encryptions of its cards in catalogue order.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from engine.catalog import CLASSIC, GOAL_KINDS, Ruleset, deck_ids, ids_of, nugget_ids
from engine.state import ROUNDS_PER_GAME, dwarf_pool
from pbem.protocol.mental.elgamal import Ciphertext, trivial
from pbem.protocol.mental.group import Point, hash_to_point


@dataclass(frozen=True)
class Stack:
    name: str  # deck, dwarves, goals, nuggets
    round_no: int  # 0 for a stack that lasts the whole game
    cards: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"{self.name}@{self.round_no}"


def game_stacks(ruleset: Ruleset, players: int, options: frozenset[str] = frozenset()) -> list[Stack]:
    goals = tuple(ids_of(k)[0] for k in GOAL_KINDS)
    stacks = []
    for k in range(1, ROUNDS_PER_GAME + 1):
        stacks.append(Stack("dwarves", k, tuple(dwarf_pool(ruleset, players, options))))
        stacks.append(Stack("goals", k, goals))
        stacks.append(Stack("deck", k, tuple(deck_ids(ruleset))))
    if ruleset == CLASSIC:
        stacks.append(Stack("nuggets", 0, tuple(nugget_ids())))
    return stacks


@lru_cache(maxsize=512)
def card_point(card: str) -> Point:
    return hash_to_point("card", card.encode())


def card_of(point: Point, stack: Stack) -> str | None:
    """The card a decrypted point stands for, among the stack's cards (None: not one of them)."""
    for card in stack.cards:
        if card_point(card) == point:
            return card
    return None


def initial(stack: Stack) -> list[Ciphertext]:
    return [trivial(card_point(c)) for c in stack.cards]
