"""A role-aware bot: it scores every legal move of a view and plays the best one.

It reads only a view (`engine.views.view(state, me)`): its own hand, role and private facts
(map and inspect results), the public maze, the cards lying in front of players and the
public gold. With `observe` it also learns from every public move (engine/bots/arena.py
calls it) and keeps a per-round suspicion model (engine/bots/suspicion.py). Ties are broken
by a seeded generator, so the bot is deterministic for a seed and a sequence of views.

Sides: classic diggers and the expansion's green and blue diggers, Boss and Profiteer want
the gold found; saboteurs do not; geologists want crystals on the board.
"""

from __future__ import annotations

import random

from ..board import Board
from ..catalog import CLASSIC, HIDDEN, TEAMS, card_kind
from ..moves import Move
from ..rules import legal_moves
from ..state import PLAYING, THEFT, RoundState
from .maze import (
    Distance,
    Placement,
    _distance,
    after_placing,
    distance,
    distance_without,
    goal_weights,
    placement,
    shut_out,
    team_values,
    weighted,
)
from .suspicion import Suspicion

SUBTLE = 0.1  # how much an expansion saboteur attacks while the gold is far
GEO_HASTE = 2.0  # how much a geologist dislikes bringing the gold closer (per unit)


class Context:
    """What one decision needs, computed once per turn."""

    def __init__(self, bot: SmartBot, v: RoundState) -> None:
        self.v = v
        self.me = bot.seat
        self.role = v.role(self.me) or "digger"
        self.saboteur = self.role == "saboteur"
        self.geologist = self.role == "geologist"
        self.team = self.role if self.role in TEAMS else None
        self.board: Board = v.board
        self.own_w = goal_weights(v.board, v.knowledge.get(self.me, []))
        self.pub_w = goal_weights(v.board)
        self.gold_known = max(self.own_w.values()) >= 1.0
        self.dist: Distance = distance(v.board, self.own_w)
        self.pub_dist: Distance = distance(v.board, self.pub_w) if self.pub_w != self.own_w else self.dist
        self.d0 = self.dist.value()
        self.pub_d0 = self.pub_dist.value()
        near = self.dist.min_goal()
        # How close the maze is to the gold: 0 (far) .. 1 (one card away).
        self.urgency = 1.0 if near <= 2 else 0.7 if near <= 3 else 0.4 if near <= 5 else 0.15
        assert bot.sus is not None, "choose() syncs the suspicion model first"
        self.sus: Suspicion = bot.sus
        self.slots = v.board.slots()
        self.expansion = v.ruleset != CLASSIC
        self._shut: frozenset[str] | None = None
        self._pass_d0: float | None = None
        self.junk: dict[str, float] = {}  # card -> how glad the role is to lose it (per turn)
        n = len(v.players)
        i = v.players.index(self.me)
        # Turns until each other player moves (1 = next).
        self.order = {v.players[(i + k) % n]: k for k in range(1, n)}

    @property
    def shut(self) -> frozenset[str]:
        """Teams a door of the other colour already shuts out of the gold (expansion only)."""
        if self._shut is None:
            self._shut = shut_out(self.board, self.own_w, self.d0) if self.expansion else frozenset()
        return self._shut

    @property
    def locked(self) -> bool:
        """No team can pass (only saboteurs ask): the Boss or the saboteurs win."""
        return self.saboteur and len(self.shut) == 2

    def pass_d0(self) -> float:
        """The distance of the part of the maze that some team can pass."""
        if self._pass_d0 is None:
            self._pass_d0 = min(team_values(self.board, self.own_w).values())
        return self._pass_d0

    def p(self, player: str) -> float:
        return self.sus.p(player)


class SmartBot:
    """Role-aware bot. `choose(view)` picks a move; `observe(view, text, actor)` learns."""

    def __init__(self, seat: str, seed: int | str = 0) -> None:
        self.seat = seat
        self.rng = random.Random(f"smart/{seed}/{seat}")
        self.sus: Suspicion | None = None
        self._round_key: tuple[int, tuple[str, ...], str] | None = None
        self._board: Board | None = None  # the latest public maze seen
        self._deck_seen = 1 << 30  # deck size at the latest view (detects a new deal)

    # --- round bookkeeping -----------------------------------------------------------------

    def _sync(self, v: RoundState) -> Suspicion:
        key = (v.round_no, v.players, v.ruleset)
        # The deck only shrinks during a round: a longer deck means a new deal.
        fresh = v.phase == PLAYING and len(v.deck) > self._deck_seen
        if self.sus is None or key != self._round_key or fresh:
            self.sus = Suspicion(self.seat, v.players, v.ruleset)
            self._round_key = key
            self._board = None
        if v.phase == PLAYING:
            self._deck_seen = len(v.deck)
        role = v.role(self.seat)
        if role is not None:  # a spectator's view (observe) does not show it
            self.sus.i_am_saboteur = role == "saboteur"
        self.sus.learn(v.knowledge.get(self.seat, []))
        return self.sus

    def prime(self, v: RoundState, sus: Suspicion) -> None:
        """Start the round of view `v` believing `sus` (a model made for this seat)."""
        self._sync(v)
        self.sus = sus

    def observe(self, view_after: RoundState, move_text: str, actor: str) -> None:
        """Learn from one public move. `view_after` is any view after the move (a spectator's
        is enough); `move_text` is its public text (a discard's cards may be '?')."""
        if view_after.phase != PLAYING:
            return  # the round is over: nothing left to learn for it
        sus = self._sync(view_after)
        sus.observe(self._board, view_after.board, move_text, actor)
        self._board = view_after.board

    # --- choosing --------------------------------------------------------------------------

    def choose(self, view: RoundState) -> Move:
        _require_view(view, self.seat)
        self._sync(view)
        if view.phase == THEFT:
            return self._steal(view)
        moves = legal_moves(view)
        if len(moves) == 1:
            return moves[0]
        best: Move | None = None
        best_u = float("-inf")
        for u, m in self.scored(view, moves):
            if u > best_u:
                best, best_u = m, u
        assert best is not None
        return best

    def ranked(self, view: RoundState) -> list[tuple[float, Move]]:
        """Every legal move of `view` (during play) with its utility, best first: what the
        bot would play, then the next best (engine/bots/search.py weighs the first few)."""
        _require_view(view, self.seat)
        self._sync(view)
        return sorted(self.scored(view, legal_moves(view)), key=lambda um: -um[0])

    def scored(self, view: RoundState, moves: list[Move]) -> list[tuple[float, Move]]:
        """Each of `moves` (legal on `view`, during play) with its utility for this bot, in
        order (ties broken by a seeded draw); `choose` plays the best."""
        ctx = Context(self, view)
        rnd = self.rng.random
        out = [(self._utility(ctx, m) + rnd() * 1e-3, m) for m in moves]
        self._board = view.board
        return out

    def _steal(self, v: RoundState) -> Move:
        """Steal from the richest possible victim (ties: the earliest seat)."""
        moves = legal_moves(v)
        targets = [m for m in moves if m.target is not None]
        if not targets:
            return moves[0]
        return max(targets, key=lambda m: (v.gold.get(str(m.target), 0), -v.players.index(str(m.target))))

    # --- scoring ---------------------------------------------------------------------------

    def _utility(self, c: Context, m: Move) -> float:
        if m.verb == "discard":
            return self._discard(c, m)
        assert m.card is not None
        k = card_kind(m.card)
        if k.category == "path":
            return self._place(c, m, k.kind)
        a = k.action
        t = m.target
        if a == "break":
            return self._attack(c, t, strength=1.0)
        if a == "trap":
            return self._attack(c, t, strength=1.4)
        if a == "fix":
            return self._repair(c, t, f"break-{m.tool}")
        if a == "free":
            return self._repair(c, t, "trap")
        if a == "rockfall":
            return self._rockfall(c, m)
        if a == "map":
            return self._map(c, t)
        if a == "theft":
            return 4.0
        if a == "hands-off":
            return -10.0 if t == c.me else 2.5
        if a == "inspect":
            assert t is not None
            if t in c.sus.known:
                return -5.0
            p = c.p(t)
            return 1.0 + 4.0 * (1 - abs(2 * p - 1))
        if a == "swap-hat":
            assert t is not None
            if t == c.me:
                return -8.0
            p = c.p(t)
            return 8.0 * (p - 0.6) if not c.saboteur else 5.0 * (0.4 - p)
        if a == "swap-hand":
            return -6.0
        return -5.0

    # Path cards ---------------------------------------------------------------------------

    def _place(self, c: Context, m: Move, kind: str) -> float:
        assert m.at is not None
        slot = c.slots[m.at]
        pl = placement(c.board, c.dist, m.at, kind, m.rotated, slot.connect)
        after = weighted(pl.after, c.own_w)
        gain = c.d0 - after
        k = card_kind(m.card or "")
        if c.saboteur:
            if c.locked:
                return self._place_locked(c, m, pl, gain)
            u = 0.0
            for g in pl.reaches:
                u -= 1000.0 * c.own_w[g]  # never open the gold
            pub_after = weighted(pl.after, c.pub_w) if c.pub_w != c.own_w else after
            pub_gain = c.pub_d0 - pub_after
            if gain < 0:
                u += -gain * 8.0 * (0.5 + c.urgency)  # real damage, worth more near the goals
            else:
                u -= gain * 10.0
            if gain <= 0 and pub_gain > 0:
                u += 2.0 * pub_gain  # a wrong turn that looks like progress
            if pub_gain < 0:
                u -= 3.0 * (1 - c.urgency)  # visible damage gives us away early
            if pl.dead_end:
                u -= 2.0 * (1 - c.urgency)
            if pl.door and pl.on_route and not pl.dead_end:
                u += self._door_lock(c, m)
            return u - 1.0
        if c.geologist:
            # Paid per crystal in the maze at the end: a longer round lays more of them, so
            # a geologist lays crystals and otherwise does not hurry (never visibly hurting).
            u = 8.0 * k.crystals - (GEO_HASTE * gain if gain > 0 else 3.0 * -gain)
            for g in pl.reaches:
                u -= 20.0 * c.own_w[g]
            return u - (3.0 if pl.dead_end and not k.crystals else 0.0) - 0.5
        # Digger side.
        weight = 6.0 if c.role == "profiteer" else 10.0
        u = weight * gain
        for g in pl.reaches:
            u += (1000.0 if c.own_w[g] >= 1.0 else 60.0 * c.own_w[g])
        if pl.dead_end:
            u -= 4.0
        u += 0.2 * pl.opens
        if pl.door and c.team:
            if pl.door == c.team:
                u += 3.0 if gain >= 0 else 0.0
            else:
                u -= 8.0
        if k.crystals and c.v.ruleset != CLASSIC:
            u += 0.1 * k.crystals
        return u - 0.5

    def _door_lock(self, c: Context, m: Move) -> float:
        """What a door on the route is worth to a saboteur: shutting both teams out of the
        gold wins the round unless a Boss plays (RULES.md §5.2); one team is half of it."""
        assert m.at is not None and m.card is not None
        b = after_placing(c.board, m.at, m.card, m.rotated)
        d_all = _distance(b, c.own_w, b.reach()).value()
        shut = shut_out(b, c.own_w, d_all)
        if len(shut) == 2:
            return 40.0  # and it still looks like progress
        if len(shut) > len(c.shut):
            return 5.0
        return 1.0

    def _place_locked(self, c: Context, m: Move, pl: Placement, gain: float) -> float:
        """A saboteur once no team can pass: let the gold be found through the doors (the
        saboteurs win unless a Boss plays), but never open a way around them."""
        assert m.at is not None and m.card is not None
        b = after_placing(c.board, m.at, m.card, m.rotated)
        passable = False
        pass_after = float("inf")
        for team in ("green", "blue"):
            r = b.team_reach(team)
            passable = passable or m.at in r
            pass_after = min(pass_after, _distance(b, c.own_w, r).value())
        u = 0.0
        for g in pl.reaches:
            u += (-1000.0 if passable else 30.0) * c.own_w[g]
        u += 10.0 * min(0.0, pass_after - c.pass_d0())  # the passable maze got closer
        if not passable:
            u += 4.0 * gain  # progress beyond the doors
        if pl.dead_end and not passable:
            u -= 2.0
        return u - 0.5

    # Actions -------------------------------------------------------------------------------

    def _attack(self, c: Context, t: str | None, strength: float) -> float:
        if t is None or t == c.me:
            return -100.0
        p = c.p(t)
        blocked = c.v.blocked(t)
        factor = 0.3 if blocked else 1.0
        if c.saboteur:
            early = SUBTLE if c.expansion else 0.4  # expansion: few early attacks (suspicion)
            u = 7.0 * (1 - p) * (early + c.urgency) * strength * factor
            # Near the gold, the players who move before our next turn matter most.
            n = max(1, len(c.order))
            u *= 1.0 + 0.6 * c.urgency * (1.0 - (c.order.get(t, n) - 1) / n)
            if c.locked:
                u *= 0.3  # the gold may be found now: only slow down a way around the doors
            return u - 0.5
        if c.geologist:
            return 4.0 * (p - 0.5) * strength * factor
        return 10.0 * (p - 0.45) * strength * factor

    def _repair(self, c: Context, t: str | None, ftype: str) -> float:
        if t is None:
            return -100.0
        fronts = c.v.front_types(t)
        blocking = [f for f in fronts if f.startswith("break-") or f == "trap"]
        unblocks = blocking == [ftype]
        if t == c.me:
            base = 9.0 if unblocks else 4.0
            if ftype == "trap":
                base += 3.0  # a trapped player is paid nothing
            if c.saboteur:
                base *= 0.5 + 0.5 * c.urgency
            return base
        p = c.p(t)
        u = 6.0 * p - 3.5 if c.saboteur else 7.0 * (1 - p) - 3.5
        if u <= 0:
            return 2.0 * u - 1.0  # helping the other side: worse than a pass
        return u if unblocks else 0.5 * u

    def _rockfall(self, c: Context, m: Move) -> float:
        assert m.at is not None
        d1 = distance_without(c.board, m.at, c.own_w).value()
        delta = d1 - c.d0  # > 0: the maze got farther from the gold
        if c.saboteur:
            if c.shut:
                tile = c.board.cells.get(m.at)
                if tile is not None and tile.face.door:
                    return -30.0  # never lift a door that shuts a team out
            if c.locked:
                return -5.0
            u = 10.0 * delta * (0.5 + c.urgency)
            return u - 3.0 * (1 - c.urgency) - (1.0 if delta <= 0 else 0.0)
        if c.geologist:
            return -3.0
        return -10.0 * delta - (1.0 if delta < 0 else 4.0)

    def _map(self, c: Context, goal: str | None) -> float:
        if c.gold_known or goal is None:
            return -5.0
        w = c.own_w.get(goal, 0.0)
        if w <= 0:
            return -5.0
        # Look at the goal the maze heads for first (then the nearest one).
        d = c.dist.best[goal][0]
        base = 6.0 if not c.saboteur else 5.0 if not c.expansion else 5.0 * (1.2 - c.urgency)
        return base + 0.01 * (20 - min(d, 20)) + (0.02 if goal == "middle" else 0.0)

    # Discards ------------------------------------------------------------------------------

    def _discard(self, c: Context, m: Move) -> float:
        if m.remove:
            if m.remove == "theft":
                return -20.0
            fronts = c.v.front_types(c.me)
            blocking = [f for f in fronts if f.startswith("break-") or f == "trap"]
            unblocks = blocking == [m.remove]
            base = (6.0 if unblocks else 2.0) + (3.0 if m.remove == "trap" else 0.0)
            return base - 3.0 + sum(self._junk(c, x) for x in m.cards) - 0.5 * len(m.cards)
        return -3.0 + sum(self._junk(c, x) - (0.5 if i else 0.0) for i, x in enumerate(m.cards))

    def _junk(self, c: Context, cid: str) -> float:
        """How glad this role is to get rid of a card (0: keep it)."""
        u = c.junk.get(cid)
        if u is None:
            u = c.junk[cid] = self._junk_of(c, cid)
        return u

    def _junk_of(self, c: Context, cid: str) -> float:
        if cid == HIDDEN:
            return 3.0  # a card this seat cannot read: it can never play it
        k = card_kind(cid)
        if k.category == "path":
            segs = k.segments
            dead = all(bin(s).count("1") == 1 for s in segs) or not any(bin(s).count("1") > 1 for s in segs)
            if c.geologist:
                return 0.0 if k.crystals else 1.5
            if c.saboteur:
                if k.door:
                    return 0.0  # kept for shutting the teams out
                return 0.0 if dead else 0.5 + 0.5 * max(bin(s).count("1") for s in segs)
            if dead:
                return 3.0
            if k.door and c.team and k.door != c.team:
                return 3.0
            return 0.3 if k.ladder else 0.0
        a = k.action
        if a == "map":
            return 3.0 if c.gold_known else 0.0
        if a == "break":
            return 0.5 if not c.saboteur else 0.0
        if a == "fix":
            return 0.6 if c.saboteur else 0.2
        if a == "rockfall":
            return 0.8 if not c.saboteur else 0.0
        if a in ("swap-hand", "swap-hat"):
            return 2.0
        if a == "inspect":
            return 1.0
        if a in ("hands-off", "free"):
            return 0.5
        return 0.3


def _require_view(v: RoundState, me: str) -> None:
    """Refuse a full state: during play, everything of the others must read '?'."""
    if v.phase != PLAYING:
        return  # after the round every view is the full state (engine/views.py)
    if any(c != HIDDEN for p, h in v.hands.items() if p != me for c in h) or any(c != HIDDEN for c in v.deck):
        raise ValueError(f"SmartBot for {me} was given the full state; pass views.view(state, {me!r})")
