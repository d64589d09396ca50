"""Bots against bots: rounds with public observation, and side win rates (no I/O here).

`play_round_observed` is `selfplay.play_round` plus the `observe` hook: after every move,
each bot that has `observe(view_after, move_text, actor)` is shown the spectator's view
(equal to `views.view(state, None)`: only public information; `spectator_of` builds it from
the next mover's view, so each move costs one copy of the state) and the move's public text
(`Move.public()`: a discard's cards are face down, "discard 2 cards"). A `before` callback
sees the whole state before each move (what scripts/fit_outlook.py learns from).

`run_games` plays seeded three-round games in which each seat's bot is chosen per round by
the role it was dealt (for example smart diggers against random saboteurs) and counts which
side won each round.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..catalog import HIDDEN, Ruleset
from ..chance import SeededChance
from ..game import Game
from ..rules import apply_unchecked
from ..selfplay import Bot, round_seed
from ..state import PLAYING, THEFT, RoundState
from ..views import view
from . import THINK, make_bot
from .sides import SABOTEUR_SIDE, digger_side_won, saboteur_side_won, side_of, side_won


def play_round_observed(state: RoundState, bots: dict[str, Bot],
                        before: Callable[[RoundState], object] | None = None) -> list[str]:
    """Play `state` to its end in place, every bot choosing from its own view and observing
    every public move (`before(state)`, if given, is called before each move, on the state
    itself: it must not change it); return the moves in canonical text."""
    moves: list[str] = []
    observers = []
    seen: set[int] = set()
    for b in bots.values():
        if hasattr(b, "observe") and id(b) not in seen:
            seen.add(id(b))
            observers.append(b)
    mine: RoundState | None = None  # the next mover's view, when already built
    while state.phase in (PLAYING, THEFT):
        if before is not None:
            before(state)
        me = state.player
        move = bots[me].choose(mine if mine is not None else view(state, me))
        mine = None
        apply_unchecked(state, move)  # (a bot's move is one legal_moves listed on the mover's view)
        moves.append(str(move))
        if observers and state.phase == PLAYING:
            # One copy of the state per move: the next mover's view, and the spectator's
            # view made from it by masking that player's hand, role and private facts.
            mine = view(state, state.player)
            public = spectator_of(mine)
            text = str(move.public())
            for b in observers:
                b.observe(public, text, me)
    return moves


def spectator_of(v: RoundState) -> RoundState:
    """The spectator's view (`views.view(state, None)`) from any player's view during play,
    without copying the state again: the maze and the public piles are shared (nobody may
    change a view), the player's hand, role and private facts are masked."""
    assert v.phase == PLAYING
    return v.with_private(  # (not copy.copy: a state compiled by mypyc cannot be copied so)
        board=v.board, roles={p: None for p in v.roles}, hands={p: [HIDDEN] * len(h) for p, h in v.hands.items()},
        knowledge={p: [] for p in v.knowledge}, deck=v.deck, discard=v.discard, removed=v.removed, nuggets=v.nuggets,
        aside=v.aside, retired=v.retired,
    )


@dataclass(frozen=True)
class Matchup:
    """Which bot kind plays each side: `diggers` for every role but saboteur."""

    name: str
    diggers: str
    saboteurs: str


# The tables the arena and the screen measure by default: name -> ruleset and players.
TABLES: dict[str, tuple[Ruleset, int]] = {
    "classic5": ("classic", 5),
    "classic10": ("classic", 10),
    "expansion8": ("expansion", 8),
    "expansion12": ("expansion", 12),
}

MATCHUPS = (
    Matchup("random vs random", "random", "random"),
    Matchup("smart diggers vs random saboteurs", "smart", "random"),
    Matchup("random diggers vs smart saboteurs", "random", "smart"),
    Matchup("smart vs smart", "smart", "smart"),
    Matchup("search vs search", "search", "search"),  # (slow: not among the arena's defaults)
)


@dataclass
class Tally:
    rounds: int = 0
    digger_wins: int = 0
    saboteur_wins: int = 0
    turns: int = 0
    gold_by_role: dict[str, int] = field(default_factory=dict)
    rounds_by_role: dict[str, int] = field(default_factory=dict)

    def add(self, other: Tally) -> None:
        self.rounds += other.rounds
        self.digger_wins += other.digger_wins
        self.saboteur_wins += other.saboteur_wins
        self.turns += other.turns
        for r, g in other.gold_by_role.items():
            self.gold_by_role[r] = self.gold_by_role.get(r, 0) + g
        for r, n in other.rounds_by_role.items():
            self.rounds_by_role[r] = self.rounds_by_role.get(r, 0) + n

    @property
    def digger_rate(self) -> float:
        return self.digger_wins / self.rounds if self.rounds else 0.0

    @property
    def saboteur_rate(self) -> float:
        return self.saboteur_wins / self.rounds if self.rounds else 0.0


def side_kind(matchup: Matchup, role: str | None) -> str:
    return matchup.saboteurs if role in SABOTEUR_SIDE else matchup.diggers


def play_game_by_role(
    ruleset: Ruleset,
    players: tuple[str, ...],
    seed: str | int,
    matchup: Matchup,
    options: frozenset[str] = frozenset(),
    think: float = THINK,
    turns: int | None = None,
) -> tuple[Game, Tally]:
    """One seeded three-round game; each round the bots are chosen by the dealt roles
    (`think`, `turns`: a search bot's budget, engine/bots/__init__.make_bot)."""
    game = Game(ruleset, players, options)
    tally = Tally()
    while not game.over:
        rno = len(game.rounds) + 1
        state = game.start_round(SeededChance(round_seed(seed, rno)))
        dealt = {p: state.role(p) for p in players}
        bots = {p: make_bot(side_kind(matchup, dealt[p]), p, f"{seed}/{rno}", think, turns=turns) for p in players}
        tally.turns += len(play_round_observed(state, bots))
        tally.rounds += 1
        won = digger_side_won(state)
        tally.digger_wins += won
        tally.saboteur_wins += (not won) and saboteur_side_won(state)
        for p in players:
            role = dealt[p] or "none"
            tally.gold_by_role[role] = tally.gold_by_role.get(role, 0) + state.payout.get(p, 0)
            tally.rounds_by_role[role] = tally.rounds_by_role.get(role, 0) + 1
    return game, tally


def run_games(
    ruleset: Ruleset,
    players: int,
    games: int,
    matchup: Matchup,
    *,
    seed: str = "arena",
    first: int = 0,
    options: frozenset[str] = frozenset(),
    think: float = THINK,
    turns: int | None = None,
) -> Tally:
    """Games `first` .. `first + games - 1` of a seeded series; the totals."""
    names = tuple(f"p{i}" for i in range(1, players + 1))
    total = Tally()
    for g in range(first, first + games):
        _, t = play_game_by_role(ruleset, names, f"{seed}/{ruleset}/{players}/{g}", matchup, options, think, turns)
        total.add(t)
    return total


@dataclass(frozen=True)
class Duel:
    """One seat against the rest: `tested` plays a seat dealt a role of side `seat_role`,
    `baseline` plays every other seat; the same deals are played again with `baseline` in
    that seat too, so the two results of a deal differ only by the bot in the seat."""

    tested: str
    baseline: str
    seat_role: str  # "digger" or "saboteur" (the side, engine/bots/sides.py)
    think: float = THINK
    turns: int | None = None  # the search bot's simulated turns a decision (instead of `think`)


def duel_round(ruleset: Ruleset, players: tuple[str, ...], seed: str, duel: Duel,
               options: frozenset[str] = frozenset()) -> tuple[bool, bool] | None:
    """Both plays of one seeded deal: whether the seat's side won with `tested` in it, and with
    `baseline` in it. None when no seat was dealt a role of that side."""
    dealt = Game(ruleset, players, options).start_round(SeededChance(seed))
    seats = [p for p in players if side_of(dealt.role(p)) == duel.seat_role]
    if not seats:
        return None
    seat = seats[SeededChance(f"{seed}/seat").below(len(seats))]
    role = dealt.role(seat)
    out = []
    for kind in (duel.tested, duel.baseline):
        state = Game(ruleset, players, options).start_round(SeededChance(seed))
        bots = {p: make_bot(kind if p == seat else duel.baseline, p, seed, duel.think, turns=duel.turns) for p in players}
        play_round_observed(state, bots)
        out.append(side_won(state, role))
    return out[0], out[1]


def run_duel(ruleset: Ruleset, players: int, rounds: int, duel: Duel, *, seed: str = "arena", first: int = 0,
             options: frozenset[str] = frozenset()) -> list[tuple[bool, bool]]:
    """Deals `first` .. `first + rounds - 1` of a seeded series: each one's pair of results."""
    names = tuple(f"p{i}" for i in range(1, players + 1))
    out = []
    for g in range(first, first + rounds):
        pair = duel_round(ruleset, names, f"{seed}/{ruleset}/{players}/{duel.seat_role}/{g}", duel, options)
        if pair is not None:
            out.append(pair)
    return out


@dataclass(frozen=True)
class Margin:
    """How much more often the seat's side won with the tested bot than with the baseline,
    over paired deals, with the 95% interval of that difference (normal approximation)."""

    rounds: int
    tested: float
    baseline: float
    diff: float
    low: float
    high: float


def margin(pairs: list[tuple[bool, bool]]) -> Margin:
    n = len(pairs)
    if not n:
        return Margin(0, 0.0, 0.0, 0.0, 0.0, 0.0)
    diffs = [int(a) - int(b) for a, b in pairs]
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / max(1, n - 1)
    half = 1.96 * (var / n) ** 0.5
    return Margin(n, sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n, mean, mean - half, mean + half)
