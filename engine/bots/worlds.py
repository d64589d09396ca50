"""Whole states that agree with what one seat knows: the worlds a search bot plays out.

`sample_world(view, me, rng, ...)` fills every hidden part of a player's view (the other
players' roles and hands, the deck, the face-down discards, the cards put out of the round,
the goals' cards) with cards the seat has not seen, so that `views.view(world, me)` is the
view again (tests/test_search_bot.py checks it). What narrows the choice:

- the seat's own hand, role and private facts (a map shows a goal's card, an inspection a role);
- the cards it saw leave play (`gone`: played action cards, cards it discarded itself, tiles a
  rockfall took): they lie in the discard pile, not in anyone's hand;
- how saboteur-like each other player acted (`saboteur_chance`, the suspicion model): a
  player's dwarf card is drawn with the odds that chance gives over the prior share.

The randomness is the caller's `random.Random`, so a seeded bot samples the same worlds.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

from ..board import GOAL_CELLS, Tile, face
from ..catalog import CLASSIC, GOAL_KINDS, HIDDEN, card_kind, deck_ids, ids_of, is_card_id, kind_name, nugget_ids
from ..state import RoundState, dwarf_pool

Chance = Callable[[str], float]  # player -> the chance that they are a saboteur


def unseen_deck_cards(v: RoundState, me: str) -> list[str]:
    """The tunnel and action cards `me` cannot see anywhere in its view, in catalog order."""
    visible = set(v.hands.get(me, ()))
    for tile in v.board.cells.values():
        visible.add(tile.card)
    for cards in v.in_front.values():
        visible.update(cards)
    return [c for c in deck_ids(v.ruleset) if c not in visible]


def sample_world(
    v: RoundState,
    me: str,
    rng: random.Random,
    *,
    saboteur_chance: Chance | None = None,
    prior: float = 0.5,
    gone: Iterable[str] = (),
    log: Iterable[tuple[str, str]] = (),
    gold_chance: dict[str, float] | None = None,
) -> RoundState:
    """A full state that `me`'s view `v` (during play) could have come from.

    `saboteur_chance` and `prior` weigh the roles (none: every deal of the unseen dwarf cards is
    as likely); `gone` names cards `me` knows are in the discard pile; `log` is the round's public
    moves as (actor, text), from which the others' private facts are made up (a player who
    played a map knows that goal's card in this world).
    """
    w = v.copy()
    _deal_roles(w, v, me, rng, saboteur_chance, prior)
    _deal_goals(w, v, me, rng, gold_chance)
    _deal_cards(w, v, me, rng, gone)
    _make_up_facts(w, me, log)
    return w


def _deal_roles(w: RoundState, v: RoundState, me: str, rng: random.Random, chance: Chance | None,
                prior: float) -> None:
    pool = dwarf_pool(v.ruleset, len(v.players), v.options)
    mine = v.roles.get(me)
    if mine in pool:
        pool.remove(mine)
    known: dict[str, str] = {}
    for fact in v.knowledge.get(me, []):
        if len(fact) == 3 and fact[0] == "inspect":
            known[fact[1]] = fact[2]
    others = [p for p in v.players if p != me and v.roles.get(p) in (None, HIDDEN)]
    rng.shuffle(others)
    others.sort(key=lambda p: p not in known)  # the players whose role is known take their card first
    lo, hi = max(prior, 1e-3), max(1 - prior, 1e-3)
    for p in others:
        if not pool:
            break
        kind = known.get(p)
        fits = [c for c in pool if kind_name(c) == kind] if kind is not None else []
        if fits:
            card = rng.choice(fits)
        else:
            ps = min(max(chance(p), 1e-4), 1 - 1e-4) if chance is not None else prior
            weights = [ps / lo if kind_name(c) == "saboteur" else (1 - ps) / hi for c in pool]
            card = rng.choices(pool, weights)[0]
        pool.remove(card)
        w.roles[p] = card
    rng.shuffle(pool)
    w.aside = pool[: len(v.aside)]
    w.retired = pool[len(v.aside) : len(v.aside) + len(v.retired)]


def _deal_goals(w: RoundState, v: RoundState, me: str, rng: random.Random,
                gold_chance: dict[str, float] | None = None) -> None:
    cells = w.board.cells
    hidden = [g for g, pos in GOAL_CELLS.items() if cells[pos].card == HIDDEN]
    if not hidden:
        return
    shown = {kind_name(cells[pos].card) for pos in GOAL_CELLS.values() if cells[pos].card != HIDDEN}
    fixed: dict[str, str] = {}
    for fact in v.knowledge.get(me, []):
        if len(fact) == 3 and fact[0] == "map" and fact[1] in hidden and is_card_id(fact[2]):
            fixed[fact[1]] = fact[2]
    kinds = [k for k in GOAL_KINDS if k not in shown and k not in {kind_name(c) for c in fixed.values()}]
    rng.shuffle(kinds)
    free = [g for g in hidden if g not in fixed]
    if gold_chance is not None and "goal-gold" in kinds and len(free) == len(kinds) > 1:
        weights = [gold_chance.get(g, 0.0) for g in free]
        if sum(weights) > 0.0:
            gold = rng.choices(free, weights)[0]
            kinds.remove("goal-gold")
            kinds.insert(len(kinds) - free.index(gold), "goal-gold")  # (popped from the end, in order)
    for g in hidden:
        card = fixed.get(g) or ids_of(kinds.pop())[0]
        # A face-down goal is a wall whatever its card: the maze's caches stay true.
        cells[GOAL_CELLS[g]] = Tile(card, False, face(card_kind(card).kind, False), hidden=True)


def _deal_cards(w: RoundState, v: RoundState, me: str, rng: random.Random, gone: Iterable[str]) -> None:
    unseen = unseen_deck_cards(v, me)
    left = set(unseen)
    out = [c for c in dict.fromkeys(gone) if c in left][: len(v.discard)]
    slots = sum(len(h) for p, h in v.hands.items() if p != me) + len(v.deck) + len(v.discard) + len(v.removed)
    out = out[: max(0, len(out) - max(0, slots - len(unseen)))]  # (never more than the slots)
    taken = set(out)
    pool = [c for c in unseen if c not in taken]
    rng.shuffle(pool)
    pool += [HIDDEN] * max(0, slots - len(out) - len(pool))  # (only for a view that lost count)
    for p, h in v.hands.items():
        if p != me:
            w.hands[p] = [pool.pop() for _ in h]
    w.deck = [pool.pop() for _ in v.deck]
    discard = out + [pool.pop() for _ in range(len(v.discard) - len(out))]
    rng.shuffle(discard)
    w.discard = discard
    w.removed = [pool.pop() for _ in v.removed]
    if v.ruleset == CLASSIC and v.nuggets:
        won = set(v.won)
        nuggets = [c for c in nugget_ids() if c not in won]
        rng.shuffle(nuggets)
        w.nuggets = (nuggets * (1 + len(v.nuggets) // max(1, len(nuggets))))[: len(v.nuggets)]


def _make_up_facts(w: RoundState, me: str, log: Iterable[tuple[str, str]]) -> None:
    """The others' private facts in this world, from the public moves that gave them some."""
    for actor, text in log:
        if actor == me or actor not in w.knowledge:
            continue
        words = text.split()
        if len(words) != 4 or words[0] != "play" or words[2] != "on" or not is_card_id(words[1]):
            continue
        action = card_kind(words[1]).action
        target = words[3]
        if action == "map" and target in GOAL_CELLS:
            w.knowledge[actor].append(["map", target, w.board.goal_card(target)])
        elif action == "inspect" and target in w.roles:
            w.knowledge[actor].append(["inspect", target, w.role(target) or "none"])
