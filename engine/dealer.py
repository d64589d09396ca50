"""Where a round's chance enters: the deal, then every draw. One small interface.

The host's `SeededDealer` holds the whole shuffled deck in the state and gives the top card
on each draw. The trustless mode (players shuffling jointly with cryptography) plugs in a
`Drawer` of its own (pbem/protocol/trustless/play.py's `SlotDrawer`), whose deck is encrypted
and whose `draw` reveals a card to its drawer only; the rules never touch the deck except
through `draw`.
"""

from __future__ import annotations

from typing import Protocol

from .catalog import Ruleset
from .chance import Chance
from .state import RoundState, deal


class Drawer(Protocol):
    def draw(self, state: RoundState) -> str | None:
        """Take the top card of the deck (None when it is empty)."""
        ...


class OpenDeck:
    """Draws from the deck the state holds, top first (RULES.md §9 maze 6)."""

    def draw(self, state: RoundState) -> str | None:
        return state.deck.pop(0) if state.deck else None


class SeededDealer(OpenDeck):
    """Deals with a seeded `Chance` (engine/chance.py) and draws from the open deck."""

    def __init__(self, chance: Chance) -> None:
        self.chance = chance

    def deal(self, ruleset: Ruleset, players: tuple[str, ...], *, options: frozenset[str] = frozenset(),
             round_no: int = 1, first_seat: int = 0, gold: dict[str, int] | None = None,
             nuggets: list[str] | None = None) -> RoundState:
        return deal(ruleset, players, self.chance, options=options, round_no=round_no, first_seat=first_seat,
                    gold=gold, nuggets=nuggets)


OPEN_DECK = OpenDeck()
