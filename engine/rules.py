"""Legal-move generation and move application: the heart of the engine.

`legal_moves(state)` lists every legal move of the player to move, one per distinct card
kind (the lowest copy held stands for its kind, RULES.md §9). `apply(state, move)` checks a
move, changes `state` in place and returns the events it caused. `check(state, move)` only
checks; it needs nothing but what the mover may know, so it also works on a view.
"""

from __future__ import annotations

from itertools import combinations

from .board import GOAL_CELLS
from .catalog import EXPANSION, FRONT_TYPES, card_kind, card_sort_key, kind_name
from .dealer import OPEN_DECK, Drawer
from .errors import IllegalMove
from .moves import GOAL_NAMES, Move, parse, resolve
from .payout import finish_round, steal, victims
from .state import OVER, PLAYING, THEFT, RoundState

Event = dict[str, object]



def legal_moves(state: RoundState) -> list[Move]:
    if state.phase == THEFT:
        return _steals(state)
    if state.phase != PLAYING:
        return []
    me = state.player
    hand = state.hands[me]
    if not hand:
        return []
    firsts: dict[str, str] = {}
    for cid in sorted(hand, key=card_sort_key):
        firsts.setdefault(kind_name(cid), cid)
    moves: list[Move] = []
    fronts = {p: state.front_types(p) for p in state.players}
    blocked = state.blocked(me)
    board = state.board
    for kind, cid in firsts.items():
        k = card_kind(cid)
        if k.category == "path":
            if not blocked:
                moves += [Move("play", cid, at=pos, rotated=rotated) for pos, rotated in board.placements(kind)]
        else:
            moves.extend(_action_moves(state, me, cid, k.action, fronts))
    moves.extend(_discards(state, me, hand))
    return moves


def _action_moves(state: RoundState, me: str, cid: str, action: str | None,
                  fronts: dict[str, set[str]]) -> list[Move]:
    players = state.players
    k = card_kind(cid)
    if action == "break":
        ftype = k.front_type
        return [Move("play", cid, target=p) for p in players if ftype not in fronts[p]]
    if action == "fix":
        return [
            Move("play", cid, target=p, tool=tool)
            for p in players
            for tool in k.tools
            if f"break-{tool}" in fronts[p]
        ]
    if action == "rockfall":
        return [Move("play", cid, at=pos) for pos in state.board.path_cells()]
    if action == "map":
        return [Move("play", cid, target=g) for g in GOAL_NAMES if state.board.is_hidden(g)]
    if action == "theft":
        return [] if "theft" in fronts[me] else [Move("play", cid)]
    if action == "hands-off":
        return [Move("play", cid, target=p) for p in players if "theft" in fronts[p]]
    if action == "trap":
        return [Move("play", cid, target=p) for p in players if p != me and "trap" not in fronts[p]]
    if action == "free":
        return [Move("play", cid, target=p) for p in players if "trap" in fronts[p]]
    if action in ("inspect", "swap-hand"):
        return [Move("play", cid, target=p) for p in players if p != me]
    if action == "swap-hat":
        return [Move("play", cid, target=p) for p in players] if state.aside else []
    return []


def _discards(state: RoundState, me: str, hand: list[str]) -> list[Move]:
    ordered = sorted(hand, key=card_sort_key)
    sizes = (1, 2, 3) if state.ruleset == EXPANSION else (1,)
    moves: list[Move] = []
    seen: set[tuple[str, ...]] = set()
    for n in sizes:
        for combo in combinations(ordered, n):
            kinds = tuple(kind_name(c) for c in combo)
            if kinds not in seen:
                seen.add(kinds)
                moves.append(Move("discard", cards=combo))
    if state.ruleset == EXPANSION and len(hand) >= 2:
        removable = sorted(state.front_types(me) & set(FRONT_TYPES), key=FRONT_TYPES.index)
        pairs = [m.cards for m in moves if len(m.cards) == 2]
        moves.extend(Move("discard", cards=pair, remove=t) for t in removable for pair in pairs)
    return moves


def _steals(state: RoundState) -> list[Move]:
    return [Move("steal", target=v) for v in victims(state, state.player)] + [Move("steal")]


# --- checking ---------------------------------------------------------------------------


def check(state: RoundState, move: Move | str) -> Move:
    """Return the resolved move if it is legal for the player to move, else raise IllegalMove."""
    text = move if isinstance(move, str) else str(move)
    if isinstance(move, str):
        move = parse(move)

    def bad(reason: str) -> IllegalMove:
        return IllegalMove(text, reason)

    if state.phase == OVER:
        raise bad("the round is over")
    me = state.player
    if state.phase == THEFT:
        if move.verb != "steal":
            raise bad(f"{me} must choose whom to steal from ('steal <player>' or 'steal nobody')")
        if move.target is not None and move.target not in victims(state, me):
            raise bad(f"{move.target} cannot be robbed (not a player with gold, or yourself)")
        return move
    if move.verb == "steal":
        raise bad("stealing happens only at the end of an expansion round")
    move = resolve(move, state.hands[me], text)
    if move.verb == "discard":
        return _check_discard(state, me, move, bad)
    assert move.card is not None
    k = card_kind(move.card)
    if k.category == "path":
        if move.at is None:
            raise bad("a path card is played 'at <x>,<y>'")
        if state.blocked(me):
            raise bad("you cannot place path cards while a broken tool or trap lies in front of you")
        why = state.board.placement_error(move.at, k.kind, move.rotated)
        if why:
            raise bad(why)
        return move
    return _check_action(state, me, move, k.action, bad)


def _check_discard(state, me, move, bad):
    n = len(move.cards)
    if move.remove:
        if state.ruleset != EXPANSION:
            raise bad("'discard 2 and remove' is a Saboteur 2 rule")
        if n != 2:
            raise bad("'discard 2 and remove' discards exactly 2 cards")
        if move.remove not in state.front_types(me):
            raise bad(f"there is no {move.remove} in front of you")
    elif state.ruleset != EXPANSION and n != 1:
        raise bad("a pass discards exactly 1 card")
    elif not 1 <= n <= 3:
        raise bad("a pass discards 1 to 3 cards")
    return move


def _check_action(state, me, move, action, bad):
    target = move.target
    players = state.players
    needs_player = action not in ("rockfall", "map", "theft")
    if needs_player:
        if target not in players:
            raise bad(f"unknown player {target!r}; players are {', '.join(players)}")
    k = card_kind(move.card)
    fronts = state.front_types(target) if target in players else set()
    if action == "break":
        if k.front_type in fronts:
            raise bad(f"{target} already has a {k.front_type}")
    elif action == "fix":
        if move.tool is None or move.tool not in k.tools:
            raise bad(f"{kind_name(move.card)} repairs {' or '.join(k.tools)}; name the tool")
        if f"break-{move.tool}" not in fronts:
            raise bad(f"{target} has no broken {move.tool}")
    elif action == "rockfall":
        if move.at is None or move.at not in state.board.path_cells():
            where = f"{move.at[0]},{move.at[1]}" if move.at else "nowhere"
            raise bad(f"rockfall needs a path card (not the start or a goal) at {where}")
    elif action == "map":
        if target not in GOAL_NAMES:
            raise bad("a map is played 'on top', 'on middle' or 'on bottom'")
        if not state.board.is_hidden(target):
            raise bad(f"the {target} goal is already face up")
    elif action == "theft":
        if target is not None or move.at is not None:
            raise bad("a theft is played in front of yourself: 'play theft'")
        if "theft" in state.front_types(me):
            raise bad("you already have a theft in front of you")
    elif action == "hands-off":
        if "theft" not in fronts:
            raise bad(f"{target} has no theft in front of them")
    elif action == "trap":
        if target == me:
            raise bad("a trap is played on another player")
        if "trap" in fronts:
            raise bad(f"{target} is already trapped")
    elif action == "free":
        if "trap" not in fronts:
            raise bad(f"{target} is not trapped")
    elif action in ("inspect", "swap-hand"):
        if target == me:
            raise bad(f"{kind_name(move.card)} is played on another player")
    elif action == "swap-hat":
        if not state.aside:
            raise bad("no dwarf cards are left aside")
    if action in ("break", "fix", "hands-off", "trap", "free", "inspect", "swap-hand", "swap-hat"):
        if move.at is not None:
            raise bad(f"{kind_name(move.card)} is played 'on <player>'")
    if action != "fix" and move.tool is not None:
        raise bad("only a repair card names a tool")
    return move


# --- applying ---------------------------------------------------------------------------


def apply(state: RoundState, move: Move | str, dealer: Drawer = OPEN_DECK) -> list[Event]:
    """Check `move`, apply it to `state` in place, and return the events, in order.

    Every card drawn comes from `dealer.draw` (engine/dealer.py).
    """
    move = check(state, move)
    me = state.player
    events: list[Event] = [{"event": "move", "player": me, "move": str(move)}]
    if state.phase == THEFT:
        events += steal(state, move.target)
        return events
    seat = state.to_move
    state.last_actor = seat
    hand = state.hands[me]
    draws = 1
    drawer = me
    if move.verb == "discard":
        for c in move.cards:
            hand.remove(c)
            state.discard.append(c)
        if move.remove:
            card = next(c for c in state.in_front[me] if card_kind(c).front_type == move.remove)
            state.in_front[me].remove(card)
            state.discard.append(card)
            state.passes = 0
            events.append({"event": "remove", "player": me, "card": card})
        else:
            draws = len(move.cards)
            if not state.deck:
                state.passes += 1
    else:
        assert move.card is not None
        hand.remove(move.card)
        state.passes = 0
        k = card_kind(move.card)
        if k.category == "path":
            assert move.at is not None
            state.board.place(move.at, move.card, move.rotated)
            events.append({"event": "place", "player": me, "card": move.card, "at": list(move.at), "rotated": move.rotated})
            revealed, gold = state.board.reveal_reached(move.at)
            for name in revealed:
                t = state.board.cells[GOAL_CELLS[name]]
                events.append({"event": "reveal", "goal": name, "card": t.card, "rotated": t.rotated})
            if gold:
                state.finder = me
                events.append({"event": "gold", "finder": me})
                events += finish_round(state)
                return events
        else:
            draws, drawer = _apply_action(state, me, move, k.action, events)
    for _ in range(draws):
        card = dealer.draw(state)
        if card is None:
            break
        state.hands[drawer].append(card)
        events.append({"event": "draw", "player": drawer, "card": card})
    if not any(state.hands.values()):
        events.append({"event": "hands-empty"})
        events += finish_round(state)
        return events
    events += _advance(state)
    return events


def _apply_action(state: RoundState, me: str, move: Move, action: str | None, events: list[Event]) -> tuple[int, str]:
    card = move.card
    assert card is not None
    target = move.target
    if action in ("break", "trap", "theft"):
        owner = me if action == "theft" else target
        assert owner is not None
        state.in_front[owner].append(card)
        if action == "theft":
            state.last_theft = me
        return 1, me
    state.discard.append(card)
    if action == "fix":
        _take_front(state, target, f"break-{move.tool}", events)
    elif action == "hands-off":
        _take_front(state, target, "theft", events)
    elif action == "free":
        _take_front(state, target, "trap", events)
    elif action == "rockfall":
        assert move.at is not None
        removed = state.board.remove(move.at)
        state.discard.append(removed)
        events.append({"event": "rockfall", "at": list(move.at), "card": removed})
    elif action == "map":
        goal = state.board.goal_card(target)
        state.knowledge[me].append(["map", target, goal])
        events.append({"event": "map", "player": me, "goal": target, "card": goal, "private": True})
    elif action == "inspect":
        role = state.role(target) or "none"
        state.knowledge[me].append(["inspect", target, role])
        events.append({"event": "inspect", "player": me, "target": target, "role": role, "private": True})
    elif action == "swap-hat":
        old = state.roles[target]
        if old:
            state.retired.append(old)
        new = state.aside.pop(0)
        state.roles[target] = new
        state.knowledge[target].append(["hat", card_kind(new).kind])
        events.append({"event": "swap-hat", "player": target, "role": card_kind(new).kind, "private": True})
    elif action == "swap-hand":
        state.hands[me], state.hands[target] = state.hands[target], state.hands[me]
        events.append({"event": "swap-hand", "player": me, "target": target})
        return 1, target
    return 1, me


def _take_front(state: RoundState, player: str | None, ftype: str, events: list[Event]) -> None:
    assert player is not None
    card = next(c for c in state.in_front[player] if card_kind(c).front_type == ftype)
    state.in_front[player].remove(card)
    state.discard.append(card)
    events.append({"event": "remove", "player": player, "card": card})


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

