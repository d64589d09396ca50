"""A game: three rounds, gold adding up, the next round's first player (RULES.md §3, §6)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from .catalog import Ruleset
from .chance import Chance
from .dealer import SeededDealer
from .record import Frozen, Record
from .state import OVER, ROUNDS_PER_GAME, RoundState


class Game(Record):
    FIELDS = ("ruleset", "players", "options", "rounds")

    def __init__(self, ruleset: Ruleset, players: tuple[str, ...], options: frozenset[str] = frozenset(),
                 rounds: list[RoundState] | None = None) -> None:
        self.ruleset = ruleset
        self.players = players
        self.options = options
        self.rounds: list[RoundState] = [] if rounds is None else rounds

    @property
    def current(self) -> RoundState:
        return self.rounds[-1]

    @property
    def over(self) -> bool:
        return len(self.rounds) == ROUNDS_PER_GAME and self.current.phase == OVER

    def start_round(self, chance: Chance) -> RoundState:
        """Deal the next round; gold and the nugget pile carry over from the last one."""
        if self.rounds and self.current.phase != OVER:
            raise ValueError("the current round is not over")
        if len(self.rounds) >= ROUNDS_PER_GAME:
            raise ValueError("the game is over")
        carried = carry_after(self.players, self.rounds[-1] if self.rounds else None)
        state = SeededDealer(chance).deal(
            self.ruleset,
            self.players,
            options=self.options,
            round_no=len(self.rounds) + 1,
            first_seat=carried.first_seat,
            gold=carried.gold,
            nuggets=carried.nuggets,
        )
        self.rounds.append(state)
        return state

    @property
    def gold(self) -> dict[str, int]:
        return dict(self.current.gold) if self.rounds else {p: 0 for p in self.players}

    def winners(self) -> list[str]:
        """The players with the most gold (ties share first place)."""
        return standings_winners(self.gold)


class Carry(Frozen):
    """What a round hands the next (RULES.md §3, §6): the seat of the player who starts it,
    the gold so far, the nugget pile left. Round 1 starts from nothing: the first seat, no
    gold, a fresh pile (None)."""

    FIELDS = ("first_seat", "gold", "nuggets")

    def __init__(self, first_seat: int = 0, gold: dict[str, int] | None = None,
                 nuggets: list[str] | None = None) -> None:
        self.first_seat: Final = first_seat
        self.gold: Final = gold
        self.nuggets: Final = nuggets


def carry(players: Sequence[str], next_start: object = None, gold: dict[str, int] | None = None,
          nuggets: list[str] | None = None) -> Carry:
    """The next round's start from what the last one ended with, as its state or an archive
    says it: the player it names starts (the first seat when it names nobody at the table,
    as an archive read from outside may)."""
    return Carry(players.index(next_start) if next_start in players else 0, gold, nuggets)


def carry_after(players: Sequence[str], ended: RoundState | None) -> Carry:
    """The start of the round after `ended` (None: of round 1)."""
    return Carry() if ended is None else carry(players, ended.next_start, ended.gold, ended.nuggets)


def standings_winners(gold: dict[str, int]) -> list[str]:
    best = max(gold.values(), default=0)
    return [p for p, g in gold.items() if g == best]
