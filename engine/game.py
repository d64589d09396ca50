"""A game: three rounds, gold adding up, the next round's first player (RULES.md §3, §6)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .chance import Chance
from .dealer import SeededDealer
from .catalog import Ruleset
from .state import OVER, ROUNDS_PER_GAME, RoundState


@dataclass
class Game:
    ruleset: Ruleset
    players: tuple[str, ...]
    options: frozenset[str] = frozenset()
    rounds: list[RoundState] = field(default_factory=list)

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
        prev = self.rounds[-1] if self.rounds else None
        state = SeededDealer(chance).deal(
            self.ruleset,
            self.players,
            options=self.options,
            round_no=len(self.rounds) + 1,
            first_seat=self.players.index(prev.next_start) if prev and prev.next_start else 0,
            gold=prev.gold if prev else None,
            nuggets=prev.nuggets if prev else None,
        )
        self.rounds.append(state)
        return state

    @property
    def gold(self) -> dict[str, int]:
        return dict(self.current.gold) if self.rounds else {p: 0 for p in self.players}

    def winners(self) -> list[str]:
        """The players with the most gold (ties share first place)."""
        return standings_winners(self.gold)


def standings_winners(gold: dict[str, int]) -> list[str]:
    best = max(gold.values(), default=0)
    return [p for p, g in gold.items() if g == best]
