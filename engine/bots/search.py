"""A bot that thinks: it plays its best few moves out in sampled worlds and keeps the best.

For each decision, the smart bot (engine/bots/smart.py) ranks the legal moves and the first
`CANDIDATES` that do different things are weighed. The bot then samples whole states that
agree with its view and with what the table's moves suggest about who is a saboteur
(engine/bots/worlds.py), and in each world plays every candidate and then a turn of the whole
table (two for a saboteur: `HORIZON`; a digger's at 5 seats or fewer, once the deck is empty,
to the round's end: `ENDGAME`) with smart bots in every seat (each judging the play-out's
moves as it goes), and reads the seat's side's chances there (engine/bots/outlook.py; a round
that ended counts as won or lost). The smart bot's move is played unless another did better
(see `pick`). All candidates meet the same worlds and the same bots, so the comparison is
paired (common random numbers).

The budget is `think` seconds a decision, counted as simulated turns at `TURNS_PER_SECOND`
(the rate of the compiled engine on one core), so a seeded bot makes the same choices on any
machine; `clock` (a time function) adds a wall-clock limit where a person waits for the move.
`turns` instead gives every decision exactly that many simulated turns (nothing saved for
later): the budget of a seat the host plays for (pbem/protocol/timeout.py), which an audit
must be able to play again move for move.
It reads only a view (`choose`) and the public moves (`observe`), like every bot.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from ..board import Board
from ..catalog import CLASSIC, HIDDEN, card_kind, deck_ids
from ..moves import Move
from ..rules import apply_unchecked
from ..state import PLAYING, THEFT, RoundState
from ..views import view
from .goals import GoldBelief
from .maze import GOALS, distance, goal_weights
from .outlook import digger_chance
from .sides import side_of, side_won
from .smart import SmartBot
from .suspicion import Suspicion, prior
from .worlds import sample_world

THINK = 0.1  # seconds a decision, by default
# Simulated turns a second of thinking buys: the search's own rate on the compiled engine, one
# core (7,500-8,000 counted turns a CPU second at 5 classic seats, measured under a load of 10).
TURNS_PER_SECOND = 8000.0
CANDIDATES = 3  # how many of the smart bot's best moves are weighed
# How sure (in standard errors) a candidate must be to replace the smart bot's choice, by side:
# a digger's changes in a few worlds were as often worse as better (with 0: -2.5 points over 80
# classic 5-player deals, with 1: +1.3); a saboteur's looked better (0: +10, 1: +2.5), but on
# the arena's own seeds 0 gave +2.7 (docs/search-bot-trials.md): mostly noise.
EVIDENCE = {"digger": 1.0, "saboteur": 0.0}
# How far a play-out goes before the digger side's chances are read (engine/bots/outlook.py),
# in turns of the whole table (1: each other player answers the move once), by side: a
# saboteur's move shows its worth when the table has answered it twice (an attack's reply,
# a repair; docs/search-bot-trials.md), a digger's did as well after one.
HORIZON = {"digger": 1.0, "saboteur": 2.0}
# A digger's play-outs run to the round's end, not `HORIZON`, once the deck holds this many cards
# or fewer (-1: never), at tables of at most `ENDGAME_SEATS`: then few turns are left to play,
# and the outlook, fitted on whole rounds, reads a race of the last cards in hand poorly. At 5
# classic seats it won 4 deals of 450 and lost none; at 10 it won 2 of 300 and lost 6 (the
# play-outs to the end there are twice as long: half the worlds), so it stays off there.
ENDGAME = 0
ENDGAME_SEATS = 5
MIN_WORLDS = 2  # worlds sampled whatever the budget
# How sure the worlds are of each player's side: the suspicion model's chance p becomes
# 1 / (1 + exp(-(a * logit(p) + b))), by ruleset and table size (the nearest size measured). The
# model is far too unsure against smart bots, whose moves give them away: of the players it
# gives p = 0.2 none were saboteurs, of those at 0.5-0.9 all were. (a, b) fitted by logistic
# regression on the smart bots' own rounds (100 rounds a table, every observer, other player
# and turn a row); on 60 rounds held out, the log-loss per row went from 0.158 to 0.080 (classic
# 5), 0.283 to 0.145 (classic 10) and 0.279 to 0.225 (expansion 8).
BELIEF: dict[str, dict[int, tuple[float, float]]] = {
    "classic": {4: (4.10, 4.50), 5: (4.82, 2.93), 7: (5.65, 2.79), 10: (5.49, 2.94)},
    "expansion": {5: (1.91, 1.28), 8: (2.87, 2.59), 12: (3.17, 3.00)},
}
# A digger also weighs the smart bot's best attack on the player the worlds hold surest to be a
# saboteur, and its best repair of the player surest to be a digger, once that is this sure (the
# smart bot's own model rarely is, so it ranks them low): one of the few levers a digger has.
SHARP = 0.9
# A digger whose worlds hold one face-down goal at least this likely to hold the gold (the
# others' maps and what they did next, engine/bots/goals.py) also weighs the smart bot's best
# move as if it had seen that goal's card.
LEAN = 0.8
SURE = 100.0  # a move this far ahead of the next in the smart bot's eyes is played at once
_DECK_CARDS = frozenset(deck_ids("classic")) | frozenset(deck_ids("expansion"))


class SearchBot:
    """Searching bot. `choose(view)` picks a move; `observe(view, text, actor)` learns."""

    def __init__(self, seat: str, seed: int | str = 0, think: float = THINK,
                 clock: Callable[[], float] | None = None, *, candidates: int = CANDIDATES,
                 min_worlds: int = MIN_WORLDS, turns: int | None = None) -> None:
        self.seat = seat
        self.seed = seed
        self.smart = SmartBot(seat, seed)
        self.rng = random.Random(f"search/{seed}/{seat}")
        self.think = max(0.0, think)
        self.clock = clock
        self.candidates = max(1, candidates)
        self.min_worlds = max(1, min_worlds)
        self.turns = None if turns is None else max(0, turns)  # a fixed budget a decision, in simulated turns
        self.distinct = True  # candidates that do different things (candidates_of)
        self.evidence: float | None = None  # None: EVIDENCE for the side of the seat's role
        self._sus: Suspicion | None = None  # the smart bot's model this round (a new one: a new round)
        self._seen: set[str] = set()  # deck cards seen this round (played, in front, held)
        self._public: Suspicion | None = None  # how the table's moves look to anyone (no role of one's own)
        self._board: Board | None = None  # the maze before the move observed next
        self._bank = 0.0  # thinking time saved this round by quick decisions (seconds)
        self.primed = True  # the players of a sampled world start from the table's public suspicion
        self.horizon: float | None = None  # turns of the table played ahead (0: to the end); None: HORIZON by side
        self.calibrated = True  # the worlds' roles drawn with BELIEF's chances, not the model's own
        self.tools = True  # a digger also weighs attacking a sure saboteur, repairing a sure digger (SHARP)
        self.goals = True  # a digger's worlds place the gold as the others' maps and moves suggest
        self.lean = LEAN  # ... and it weighs the smart bot's move as if it knew a goal this likely
        self.endgame = ENDGAME  # a digger plays out to the round's end once the deck holds this many cards
        self._gold = GoldBelief()
        self.worlds = 0  # worlds played out so far (for the arena's and the tests' eyes)

    # --- what the seat has seen --------------------------------------------------------------

    def _round(self, v: RoundState) -> Suspicion:
        if self.smart.sus is not self._sus or self._public is None:
            self._sus = self.smart.sus
            self._seen = set()
            self._public = Suspicion("", v.players, v.ruleset)
            self._board = None
            self._bank = 0.0
            self._gold = GoldBelief()
        return self._public

    def _see(self, v: RoundState, hand: bool) -> None:
        seen = self._seen
        for tile in v.board.cells.values():
            if tile.card in _DECK_CARDS:
                seen.add(tile.card)
        for cards in v.in_front.values():
            seen.update(cards)
        if hand:
            seen.update(c for c in v.hands.get(self.seat, ()) if c != HIDDEN)

    def observe(self, view_after: RoundState, move_text: str, actor: str) -> None:
        self.smart.observe(view_after, move_text, actor)
        if view_after.phase != PLAYING:
            return
        public = self._round(view_after)
        played = public.observe(self._board, view_after.board, move_text, actor)  # the one parse of the text
        sus = self.smart.sus
        if played is not None and actor != self.seat and sus is not None:
            chance = belief(sus, view_after.ruleset, len(view_after.players))
            self._gold.observe(self._board, view_after.board, played, actor, lambda p: 1.0 - chance(p))
        self._board = view_after.board
        self._see(view_after, False)
        if played is not None and played.card in _DECK_CARDS:
            self._seen.add(str(played.card))

    # --- choosing ----------------------------------------------------------------------------

    def choose(self, view: RoundState) -> Move:
        if view.phase != PLAYING:
            return self.smart.choose(view)
        ranked = self.smart.ranked(view)
        self._round(view)
        self._board = view.board
        self._see(view, True)
        fixed = self.turns
        if fixed is None:
            self._bank += self.think
        if len(ranked) == 1 or ranked[0][0] - ranked[1][0] >= SURE or (self.think if fixed is None else fixed) <= 0:
            return self._played(ranked[0][1])
        budget = fixed if fixed is not None else self._bank * self.share(view) * TURNS_PER_SECOND
        cands = self.candidates_of(ranked)
        sus = self.smart.sus
        digger = side_of(view.role(self.seat)) == "digger"
        if self.tools and self.calibrated and sus is not None and sus.log and digger:
            cands += tool_moves(ranked, cands, belief(sus, view.ruleset, len(view.players)), self.seat)
        gold = self._gold.chances(view.board, view.knowledge.get(self.seat, [])) if self.goals and digger else None
        if gold is not None and sus is not None:
            cands += self._leaning(view, cands, gold, sus)
        results = self._weigh(view, cands, budget, gold)
        evidence = self.evidence if self.evidence is not None else EVIDENCE[side_of(view.role(self.seat))]
        return self._played(cands[self.pick(results, evidence)])

    def candidates_of(self, ranked: list[tuple[float, Move]]) -> list[Move]:
        """The moves weighed: the smart bot's best `candidates`, each doing something the ones
        before it do not (with `distinct`): a second copy of a card played where the first
        would go does the same, and which card is thrown away rarely decides a round."""
        if not self.distinct:
            return [m for _, m in ranked[: self.candidates]]
        out: list[Move] = []
        kinds: set[tuple[object, ...]] = set()
        for _, m in ranked:
            key = _effect(m)
            if key not in kinds:
                kinds.add(key)
                out.append(m)
                if len(out) == self.candidates:
                    break
        return out

    @staticmethod
    def pick(results: list[list[float]], evidence: float) -> int:
        """The candidate to play, from each one's results world by world: the smart bot's first
        unless another did better in the same worlds by more than `evidence` standard
        errors of the paired difference (few worlds are noisy: a bare majority is not enough)."""
        best, best_gain = 0, 0.0
        first = results[0]
        for i in range(1, len(results)):
            diffs = [a - b for a, b in zip(results[i], first)]
            gain = sum(diffs)
            if gain > best_gain and gain > evidence * sum(d * d for d in diffs) ** 0.5:
                best, best_gain = i, gain
        return best

    def _played(self, move: Move) -> Move:
        if move.verb == "discard":
            self._seen.update(move.cards)  # into the discard pile, face down: only this seat knows
        return move

    def share(self, v: RoundState) -> float:
        """How much of the saved time this decision spends: little while the maze is far from
        the goals (the round is still long and its end unclear), all of it once it is near."""
        near = distance(v.board, goal_weights(v.board, v.knowledge.get(self.seat, []))).min_goal()
        return 1.0 if near <= 3 else 0.5 if near <= 5 else 0.2

    def _leaning(self, view: RoundState, cands: list[Move], gold: dict[str, float], sus: Suspicion) -> list[Move]:
        """The smart bot's best move as if it had seen the card of the goal likeliest to hold
        the gold (if at least `lean` likely and no candidate does the same)."""
        goal = max(GOALS, key=lambda g: gold[g])
        if gold[goal] < self.lean:
            return []
        seen = view.copy()
        seen.knowledge[self.seat] = [*view.knowledge.get(self.seat, []), ["map", goal, "goal-gold"]]
        bot = SmartBot(self.seat, self.seed)
        bot.prime(seen, sus)
        move = bot.ranked(seen)[0][1]
        return [] if _effect(move) in {_effect(m) for m in cands} else [move]

    def _weigh(self, view: RoundState, cands: list[Move], budget: float,
               gold: dict[str, float] | None = None) -> list[list[float]]:
        """Each candidate's result in each sampled world: whether its side won (and a little
        of the gold it got). `budget`: simulated turns to spend (the world under way is
        finished)."""
        me = self.seat
        sus = self.smart.sus
        assert sus is not None
        base = prior(view.ruleset, len(view.players))
        mine = view.role(me)
        clock = self.clock
        stop = clock() + budget / TURNS_PER_SECOND if clock is not None else 0.0
        public = self._public
        visible = set(view.hands.get(me, ()))
        gone = [c for c in sorted(self._seen) if c not in visible]
        results: list[list[float]] = [[] for _ in cands]
        horizon = self.horizon if self.horizon is not None else HORIZON[side_of(mine)]
        ahead = round(horizon * len(view.players)) or None
        if len(view.deck) <= self.endgame and len(view.players) <= ENDGAME_SEATS and side_of(mine) == "digger":
            ahead = None
        used = 0
        worlds = 0
        # (Nothing observed, as in the takeover: every player is at the prior, which is right.)
        chance = belief(sus, view.ruleset, len(view.players)) if self.calibrated and sus.log else sus.p
        while worlds < self.min_worlds or (used < budget and (clock is None or clock() < stop)):
            world = sample_world(view, me, self.rng, saboteur_chance=chance, prior=base, gone=gone, log=sus.log,
                                 gold_chance=gold)
            seed = self.rng.getrandbits(32)
            for i, move in enumerate(cands):
                state = world.copy()
                apply_unchecked(state, move)
                bots = {p: self._player(p, seed, state, public) for p in state.players}
                used += 1 + play_out(state, bots, (view.board, str(move.public()), me), ahead)
                results[i].append(_value(state, mine, me))
            worlds += 1
        self.worlds += worlds
        if self.turns is None:
            self._bank = max(0.0, self._bank - used / TURNS_PER_SECOND)
        return results

    def _player(self, p: str, seed: int, world: RoundState, public: Suspicion | None) -> SmartBot:
        """The smart bot that plays `p` in a sampled world."""
        bot = SmartBot(p, seed)
        if self.primed and public is not None and world.phase == PLAYING:
            bot.prime(world, public.seen_by(p, world.role(p) == "saboteur"))  # (prime reads only p's part)
        return bot


def belief(sus: Suspicion, ruleset: str, players: int) -> Callable[[str], float]:
    """The chance that a player is a saboteur as the worlds draw it: `sus.p` made as sure as
    the smart bots' moves warrant (`BELIEF`); a role known for sure stays so."""
    fits = BELIEF["classic" if ruleset == CLASSIC else "expansion"]
    a, b = fits[min(fits, key=lambda n: (abs(n - players), n))]

    def chance(player: str) -> float:
        if player in sus.known:
            return sus.p(player)
        p = min(max(sus.p(player), 1e-9), 1 - 1e-9)
        z = max(-30.0, min(30.0, a * math.log(p / (1 - p)) + b))
        return 1 / (1 + math.exp(-z))

    return chance


def tool_moves(ranked: list[tuple[float, Move]], cands: list[Move], chance: Callable[[str], float],
               me: str) -> list[Move]:
    """A digger's further candidates: the smart bot's best attack on the other player likeliest
    to be a saboteur and its best repair of the player (itself too) likeliest to be a digger,
    each only if `chance` (a player's chance to be a saboteur) is at least `SHARP` sure of that
    player and no candidate already does the same."""
    out: list[Move] = []
    kinds = {_effect(m) for m in cands}
    for attack in (True, False):
        moves = [m for _, m in ranked if m.card is not None and m.target is not None
                 and card_kind(m.card).action in (("break", "trap") if attack else ("fix", "free"))
                 and (m.target != me or not attack)]
        if not moves:
            continue
        sure = {t: chance(t) if t != me else 0.0 for t in {str(m.target) for m in moves}}
        target = (max if attack else min)(sorted(sure), key=sure.__getitem__)
        if (sure[target] if attack else 1.0 - sure[target]) < SHARP:
            continue
        move = next(m for m in moves if m.target == target)
        if _effect(move) not in kinds:
            kinds.add(_effect(move))
            out.append(move)
    return out


def _value(state: RoundState, role: str | None, me: str) -> float:
    """What a play-out's end is worth to `me` (of `role`): whether its side won (and a little
    of the gold it got) once the round is over, else its side's chances there."""
    if state.phase == PLAYING:
        chance = digger_chance(state)
        return chance if side_of(role) == "digger" else 1.0 - chance
    return side_won(state, role) + 0.01 * state.payout.get(me, 0)


def play_out(state: RoundState, bots: dict[str, SmartBot], last: tuple[Board, str, str] | None,
             ahead: int | None = None) -> int:
    """Play `state` in place to its end (or `ahead` turns while it is being played), every bot
    judging every public move of the play-out as a watching player does at the table (`last`:
    the move just made, as (the maze before it, its public text, its actor)); the number of
    turns played."""
    turns = 0
    while state.phase == THEFT or (state.phase == PLAYING and (ahead is None or turns < ahead)):
        mover = state.player
        v = view(state, mover)
        if last is not None and state.phase == PLAYING:
            before, text, actor = last
            for b in bots.values():
                sus = b.sus
                if sus is not None:
                    sus.observe(before, v.board, text, actor)
        move = bots[mover].choose(v)
        last = (v.board, str(move.public()), mover)
        apply_unchecked(state, move)
        turns += 1
    return turns


def _effect(m: Move) -> tuple[object, ...]:
    """What a move does, as far as telling candidates apart goes: its card's kind (not which
    copy), where and on whom; every plain discard alike."""
    if m.verb == "discard":
        return ("discard", m.remove)
    return (m.verb, card_kind(m.card).kind if m.card is not None else None, m.at, m.rotated, m.target, m.tool)
