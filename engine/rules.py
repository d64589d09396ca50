"""Legal-move generation and move application: the heart of the engine.

`legal_moves(state)` lists every legal move of the player to move, one per distinct card
kind (the lowest copy held stands for its kind, RULES.md §9), and `legal_texts(state)` the
same in notation; `listed_moves(state)` gives the same moves made one at a time, as they are
asked for (engine/listed.py). `apply(state, move)` checks a
move, changes `state` in place and returns the events it caused; `apply_unchecked(state, move)`
does the same without the check, for a move the caller took from `legal_moves` itself (as
python-chess's `push` trusts what `push_san` parses and checks). `check(state, move)` only
checks, raising with the reason; `legal(state, move)` asks the same without a reason or a raise.
Both need nothing but what the mover may know, so they also work on a view.
"""

from __future__ import annotations

from itertools import combinations

from .actions import ActionRule, RuleContext, rule_of, take_front
from .board import GOAL_CELLS, shape_of
from .catalog import BLOCKERS, EXPANSION, FRONT_TYPES, HIDDEN, KINDS, card_kind, card_rank, ids_of, kind_name
from .dealer import OPEN_DECK, Drawer
from .errors import IllegalMove
from .events import Event
from .listed import AT, DISCARDED, LOOKED_UP, MADE, TURNED, Listed, Part, flat
from .moves import Move, parse, resolve
from .payout import finish_round, steal, victims
from .state import OVER, PLAYING, THEFT, RoundState


def legal_moves(state: RoundState) -> list[Move]:
    """Every legal move of the player to move (the same list on the state and on their view)."""
    return flat(_parts(state))


def legal_texts(state: RoundState) -> list[str]:
    """`legal_moves` in notation (`str(move)`, which `parse` and `check` read back), sorted: what
    a seat, a bot over a text protocol or `pbem position legal` is offered."""
    return sorted(map(str, legal_moves(state)))


def listed_moves(state: RoundState) -> Listed:
    """`legal_moves` as a `Listed`: the same moves in the same order, each made only when it is
    asked for (a random player counts them and takes one)."""
    return Listed(_parts(state))


def _parts(state: RoundState) -> list[Part]:
    if state.phase == THEFT:
        return [(MADE, _steals(state), None)]
    if state.phase != PLAYING:
        return []
    me = state.players[state.to_move]  # (state.player, without a property call: this runs every turn)
    hand = state.hands[me]
    if not hand:
        return []
    unread = hand.count(HIDDEN)  # a card its holder cannot read (a view): it may only be discarded
    ranked = sorted([c for c in hand if c != HIDDEN] if unread else hand, key=card_rank)
    firsts: list[str] = []
    parts: list[Part] = []
    table: RuleContext | None = None
    blocked = not BLOCKERS.isdisjoint(state.in_front.get(me, ()))  # (state.blocked(me), without the call)
    board = state.board
    fits = board._fits  # (Board.placements' memo for this version, read here without a call per card)
    last = None
    for cid in ranked:
        kind, rule, shape = _HOW[cid]
        if kind is last:  # the first copy of each kind stands for it (in id order, copies are together)
            continue
        last = kind
        firsts.append(cid)
        if rule is None:
            if not blocked:
                unturned, turned = fits.get(shape) or board.placed(shape)
                parts.append((AT, unturned, cid))
                if turned:
                    parts.append((TURNED, turned, cid))
        else:
            if table is None:
                table = RuleContext(state)
            parts.append(rule.part(table, cid, kind))
    if unread:  # face down, last: the unread cards stand for one kind of their own
        ranked += [HIDDEN] * unread
        firsts.append(HIDDEN)
    if state.ruleset != EXPANSION:
        parts.append((LOOKED_UP, firsts, _DISCARD_ONE))
    else:
        parts += _discards(state, me, ranked, firsts)
    return parts


# card id -> (its kind's name, its rule: None for a path card, a path card's shape: the key of
# its placements in Board.placements' memo), in one look-up per card and turn
_HOW: dict[str, tuple[str, ActionRule | None, int]] = {
    cid: (kind, rule_of(cid), -1) if k.action else (kind, None, shape_of(kind))
    for kind, k in KINDS.items() if k.category == "path" or k.action for cid in ids_of(kind)}
# card id -> the move discarding it alone (a classic pass), made once
_DISCARD_ONE: dict[str, Move] = {cid: Move("discard", cards=(cid,)) for kind in KINDS for cid in ids_of(kind)}
_DISCARD_ONE[HIDDEN] = Move("discard", cards=(HIDDEN,))


def _by_kind(ranked: list[str]) -> list[list[str]]:
    """A hand in id order, grouped by kind: the first of each group stands for its kind."""
    groups: list[list[str]] = []
    last = None
    for cid in ranked:
        kind = kind_name(cid) if cid != HIDDEN else HIDDEN
        if kind == last:
            groups[-1].append(cid)
        else:
            groups.append([cid])
            last = kind
    return groups


def _discards(state: RoundState, me: str, ranked: list[str], firsts: list[str]) -> list[Part]:
    """Saboteur 2: one discard per distinct choice of 1-3 kinds (the lowest copies), and each
    pair again with each type in front of the mover it may remove."""
    combos: list[tuple[str, ...]]
    if len(firsts) == len(ranked):  # no two copies of a kind: every choice of distinct cards, in order
        combos = list(zip(firsts))  # (the 1-tuples, without a Python step per card)
        combos += combinations(firsts, 2)
        combos += combinations(firsts, 3)
    else:
        combos = _combos(_by_kind(ranked), firsts)
    parts: list[Part] = [(DISCARDED, combos, None)]
    if state.in_front.get(me):  # (nothing in front of most players: nothing to sort)
        removable = sorted(state.front_types(me), key=FRONT_TYPES.index)
        pairs = [c for c in combos if len(c) == 2]
        parts += [(DISCARDED, pairs, t) for t in removable]
    return parts


def _combos(groups: list[list[str]], firsts: list[str]) -> list[tuple[str, ...]]:
    """Every multiset of 1-3 kinds the hand can give, as the lowest copies, in the order of
    `combinations(sorted hand)` with repeats of kinds left out (the order RandomBot draws from)."""
    out: list[tuple[str, ...]] = list(zip(firsts))
    for i, g in enumerate(groups):
        if len(g) > 1:
            out.append((g[0], g[1]))
        a = g[0]
        out += [(a, b) for b in firsts[i + 1:]]
    for i, g in enumerate(groups):
        a = g[0]
        if len(g) > 2:
            out.append((a, g[1], g[2]))
        if len(g) > 1:
            a2 = g[1]
            out += [(a, a2, b) for b in firsts[i + 1:]]
        for j in range(i + 1, len(groups)):
            h = groups[j]
            b = h[0]
            if len(h) > 1:
                out.append((a, b, h[1]))
            out += [(a, b, c) for c in firsts[j + 1:]]
    return out


def _steals(state: RoundState) -> list[Move]:
    return [Move("steal", target=v) for v in victims(state, state.player)] + [Move("steal")]


# --- checking ---------------------------------------------------------------------------


def check(state: RoundState, move: Move | str) -> Move:
    """Return the resolved move if it is legal for the player to move.

    Raises InvalidMove when the text does not parse, IllegalMove when the rules forbid it.
    """
    given = move
    if isinstance(move, str):
        move = parse(move, hand=state.hands.get(state.player) if state.phase == PLAYING else None)
    found = _verdict(state, move, given if isinstance(given, str) else None)
    if isinstance(found, str):
        raise IllegalMove(given if isinstance(given, str) else str(given), found)
    return found


def legal(state: RoundState, move: Move) -> Move | None:
    """`check` as a question: the resolved move if it is legal for the player to move, else None.

    For a caller that needs no reason, as python-chess asks `is_legal` beside `push`: nothing is
    raised for the rules' refusals (`check` builds and raises an IllegalMove for each, a few
    times the cost of the answer), so trying many moves costs little (tests/test_properties.py).
    """
    try:
        found = _verdict(state, move, None)
    except IllegalMove:  # a card the mover does not hold (resolve's only refusal): rare
        return None
    return None if isinstance(found, str) else found


def _verdict(state: RoundState, move: Move, text: str | None) -> Move | str:
    """The resolved move if it is legal, else why not (the text typed, if any, for resolve's refusals)."""
    if state.phase == OVER:
        return "the round is over"
    me = state.player
    if state.phase == THEFT:
        if move.verb != "steal":
            return f"{me} must choose whom to steal from ('steal <player>' or 'steal nobody')"
        if move.target is not None and move.target not in victims(state, me):
            return f"{move.target} cannot be robbed (not a player with gold, or yourself)"
        return move
    if move.verb == "steal":
        return "stealing happens only at the end of an expansion round"
    move = resolve(move, state.hands[me], text)
    if move.verb == "discard":
        return _check_discard(state, me, move)
    assert move.card is not None
    k = card_kind(move.card)
    if k.category == "path":
        if move.at is None:
            return "a path card is played 'at <x>,<y>'"
        if state.blocked(me):
            return "you cannot place path cards while a broken tool or trap lies in front of you"
        return state.board.placement_error(move.at, k.kind, move.rotated) or move
    return _check_action(state, move)


def _check_discard(state: RoundState, me: str, move: Move) -> Move | str:
    n = len(move.cards)
    if move.remove:
        if state.ruleset != EXPANSION:
            return "'discard 2 and remove' is a Saboteur 2 rule"
        if n != 2:
            return "'discard 2 and remove' discards exactly 2 cards"
        if move.remove not in state.front_types(me):
            return f"there is no {move.remove} in front of you"
    elif state.ruleset != EXPANSION and n != 1:
        return "a pass discards exactly 1 card"
    elif not 1 <= n <= 3:
        return "a pass discards 1 to 3 cards"
    return move


def _check_action(state: RoundState, move: Move) -> Move | str:
    """The checks of form that follow from what the card aims at, then the card's own rule."""
    assert move.card is not None
    k = card_kind(move.card)
    rule = rule_of(move.card)
    aims_player = rule.aim == "player"
    if aims_player and move.target not in state.players:
        return f"unknown player {move.target!r}; players are {', '.join(state.players)}"
    why = rule.refusal(RuleContext(state), k, move)
    if why:
        return why
    if aims_player and move.at is not None:
        return f"{k.kind} is played 'on <player>'"
    if k.action != "fix" and move.tool is not None:
        return "only a repair card names a tool"
    return move


# --- applying ---------------------------------------------------------------------------


def apply(state: RoundState, move: Move | str, dealer: Drawer = OPEN_DECK) -> list[Event]:
    """Check `move`, apply it to `state` in place, and return the events, in order.

    Every move from outside the engine (a player's file, notation, a position file's moves)
    comes here: an illegal one raises InvalidMove or IllegalMove and changes nothing. Every card
    drawn comes from `dealer.draw` (engine/dealer.py).
    """
    return apply_unchecked(state, check(state, move), dealer)


def apply_unchecked(state: RoundState, move: Move, dealer: Drawer = OPEN_DECK) -> list[Event]:
    """`apply` without the check: the caller vouches that `move` came from `legal_moves` or
    `listed_moves` of this very state (or of the mover's view of it, `views.view`), with nothing
    applied since. Self-play and the benchmarks, which list the moves and pick one, use it; a
    move from anywhere else goes through `apply` (tests/test_apply_checks.py keeps it so).
    """
    seat = state.to_move
    me = state.players[seat]
    events: list[Event] = [{"event": "move", "player": me, "move": str(move)}]
    if state.phase == THEFT:
        events += steal(state, move.target)
        return events
    verb, card, at, rotated, _, _, cards, remove = move  # (one unpacking: cheaper than the fields one by one)
    state.last_actor = seat
    hand = state.hands[me]
    draws = 1
    drawer = me
    if verb == "discard":
        for c in cards:
            hand.remove(c)
            state.discard.append(c)
        if remove:
            take_front(state, me, remove, events)
            state.passes = 0
        else:
            draws = len(cards)
            if not state.deck:
                state.passes += 1
    else:
        assert card is not None
        hand.remove(card)
        state.passes = 0
        rule = _HOW[card][1]  # (None for a path card)
        if rule is None:
            assert at is not None
            board = state.board
            board.place(at, card, rotated)
            events.append({"event": "place", "player": me, "card": card, "at": list(at), "rotated": rotated})
            revealed, gold = board.reveal_reached(at)
            for name in revealed:
                t = board.cells[GOAL_CELLS[name]]
                events.append({"event": "reveal", "goal": name, "card": t.card, "rotated": t.rotated})
            if gold:
                state.finder = me
                events.append({"event": "gold", "finder": me})
                events += finish_round(state)
                return events
        else:
            drawer = rule.effect(state, me, move, events)
    hands = state.hands
    deck = state.deck
    if draws == 1 and dealer is OPEN_DECK:  # (the commonest draw, OpenDeck.draw inline: the top card, if any)
        if deck:
            top = deck.pop(0)
            hands[drawer].append(top)
            events.append({"event": "draw", "player": drawer, "card": top})
    else:
        for _ in range(draws):
            drawn = (deck.pop(0) if deck else None) if dealer is OPEN_DECK else dealer.draw(state)
            if drawn is None:
                break
            hands[drawer].append(drawn)
            events.append({"event": "draw", "player": drawer, "card": drawn})
    # The commonest case first: the next player holds cards and the round goes on (with the
    # deck empty, while fewer passes than players were made in a row): _advance's first step.
    players = state.players
    nxt = seat + 1 if seat + 1 < len(players) else 0
    if hands[players[nxt]] and (state.deck or state.passes < len(players)):
        state.to_move = nxt
        return events
    if not any(hands.values()):
        events.append({"event": "hands-empty"})
        events += finish_round(state)
        return events
    events += _advance(state)
    return events


def _advance(state: RoundState) -> list[Event]:
    """Pass the turn clockwise, skipping empty hands, and end the round on passes."""
    events: list[Event] = []
    n = len(state.players)
    while True:
        if not state.deck and state.passes >= n:
            events.append({"event": "passes", "count": state.passes})
            events += finish_round(state)
            return events
        state.to_move = (state.to_move + 1) % n
        if state.hands[state.player]:
            return events
        if not state.deck:
            state.passes += 1
        events.append({"event": "skip", "player": state.player})

