"""Self-play: bots play whole rounds and games through `legal_moves` and `apply_unchecked`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from .catalog import Ruleset
from .chance import SeededChance
from .game import Game
from .moves import Move
from .rules import apply_unchecked
from .state import PLAYING, THEFT, RoundState
from .views import view


class Bot(Protocol):
    """A player's policy: the move it plays from what its seat sees (a view, engine.views)."""

    def choose(self, view: RoundState) -> Move: ...


@dataclass
class GameRecord:
    """Enough to reproduce a game: per round, its seed and its moves in text."""

    seeds: list[str] = field(default_factory=list)
    moves: list[list[str]] = field(default_factory=list)


def round_seed(game_seed: str | int, round_no: int) -> str:
    return f"{game_seed}/round/{round_no}"


def play_round(state: RoundState, bots: dict[str, Bot], *, use_views: bool = True) -> list[str]:
    """Play `state` to its end in place; return the moves in canonical text."""
    moves: list[str] = []
    while state.phase in (PLAYING, THEFT):
        me = state.player
        move = bots[me].choose(view(state, me) if use_views else state)
        apply_unchecked(state, move)  # (a bot's move is one legal_moves listed on the mover's view)
        moves.append(str(move))
    return moves


def play_game(
    ruleset: Ruleset,
    players: tuple[str, ...],
    seed: str | int,
    bot_factory: Callable[[str], Bot],
    options: frozenset[str] = frozenset(),
    *,
    use_views: bool = True,
) -> tuple[Game, GameRecord]:
    game = Game(ruleset, players, options)
    record = GameRecord()
    bots = {p: bot_factory(p) for p in players}
    while not game.over:
        seed_text = round_seed(seed, len(game.rounds) + 1)
        state = game.start_round(SeededChance(seed_text))
        record.seeds.append(seed_text)
        record.moves.append(play_round(state, bots, use_views=use_views))
    return game, record
