"""End of a round: who won, who is paid, and the expansion's theft phase (RULES.md §5)."""

from __future__ import annotations

from collections.abc import Callable

from .catalog import CLASSIC, KINDS, TEAMS, Team, card_kind, ids_of, is_team
from .events import Event
from .state import OVER, THEFT, RoundState

EXPANSION_SHARE = {1: 5, 2: 4, 3: 3, 4: 2}
# card id -> its gold value, as a table's own look-up: a sort key that runs no Python code
_value: Callable[[str], int] = {cid: k.value for k in KINDS.values() for cid in ids_of(k.kind)}.__getitem__
ROLE_DISCOUNT = {"boss": 1, "profiteer": 2}


def finish_round(state: RoundState) -> list[Event]:
    """Pay out and move to the theft phase (expansion, if any thief) or to `over`."""
    events: list[Event] = [{"event": "round_over", "round": state.round_no, "gold_found": state.finder is not None}]
    n = len(state.players)
    actor = state.last_actor if state.last_actor is not None else state.to_move
    state.next_start = state.players[(actor + 1) % n]
    before = dict(state.gold)
    if state.ruleset == CLASSIC:
        events += _classic(state)
    else:
        events += _expansion(state)
    state.payout = {p: state.gold[p] - before.get(p, 0) for p in state.players}
    events.append({"event": "payout", "gold": dict(state.payout)})
    events.append({"event": "winners", "players": list(state.winners)})
    if state.ruleset != CLASSIC:
        events += _begin_thefts(state)
    # _begin_thefts closes the round itself when every thief is skipped (no possible victim).
    if state.phase not in (THEFT, OVER):
        events += _close(state)
    return events


def _close(state: RoundState) -> list[Event]:
    state.phase = OVER
    state.to_move = state.players.index(state.next_start) if state.next_start else 0
    return [{"event": "next_start", "player": state.next_start}]


def _roles_of(state: RoundState, role: str) -> list[str]:
    return [p for p in state.players if state.role(p) == role]


def ccw_from(state: RoundState, player: str) -> list[str]:
    """All players counter-clockwise (reverse seat order), starting with `player`."""
    n = len(state.players)
    i = state.players.index(player)
    return [state.players[(i - k) % n] for k in range(n)]


def _classic(state: RoundState) -> list[Event]:
    if state.finder is not None:
        diggers = _roles_of(state, "digger")
        state.winners = diggers
        if not diggers:
            return []
        order = [p for p in ccw_from(state, state.finder) if p in diggers]
        if "broken-tools-forfeit" in state.options:
            order = [p for p in order if not any(card_kind(c).action == "break" for c in state.in_front[p])]
        count = 9 if len(state.players) == 10 else len(state.players)
        drawn, state.nuggets = state.nuggets[:count], state.nuggets[count:]
        drawn.sort(key=_value, reverse=True)  # (stable: equal values keep their order, as with key=-value)
        events: list[Event] = []
        if not order:
            state.nuggets += drawn
            return events
        for i, card in enumerate(drawn):
            taker = order[i % len(order)]
            state.gold[taker] += card_kind(card).value
            state.won.append(card)
            events.append({"event": "nugget", "player": taker, "card": card})
        return events
    saboteurs = _roles_of(state, "saboteur")
    state.winners = saboteurs
    share = {0: 0, 1: 4, 2: 3, 3: 3}.get(len(saboteurs), 2)
    events = []
    for p in saboteurs:
        state.gold[p] += share
        taken = _take_value(state, share)
        events.append({"event": "nugget", "player": p, "cards": taken, "value": share})
    return events


def _take_value(state: RoundState, value: int) -> list[str]:
    """Remove nugget cards worth `value`, largest first (the saboteur is credited in full)."""
    taken: list[str] = []
    while value > 0 and state.nuggets:
        fitting = [c for c in state.nuggets if _value(c) <= value]
        pick = max(fitting, key=_value) if fitting else min(state.nuggets, key=_value)
        state.nuggets.remove(pick)
        state.won.append(pick)
        taken.append(pick)
        value -= card_kind(pick).value
    return taken


def trapped(state: RoundState, player: str) -> bool:
    return "trap" in state.front_types(player)


def winning_side(state: RoundState) -> tuple[set[Team], str | None]:
    """The teams that win, or the lone side ("boss" or "saboteur") when no team does."""
    if state.finder is None:
        return set(), "saboteur"
    can = {t: state.board.team_can_pass(t) for t in TEAMS}
    finder_role = state.role(state.finder)
    teams: set[Team]
    if is_team(finder_role):
        other: Team = "blue" if finder_role == "green" else "green"
        teams = {finder_role} if can[finder_role] else {other} if can[other] else set()
    else:
        teams = {t for t in TEAMS if can[t]}
    if teams:
        return teams, None
    return set(), "boss" if _roles_of(state, "boss") else "saboteur"


def _expansion(state: RoundState) -> list[Event]:
    teams, lone = winning_side(state)
    if teams:
        roles = set(teams) | {"boss", "profiteer"}
    elif lone == "boss":
        roles = {"boss"}
    else:
        roles = {"saboteur", "profiteer"}
    state.winners = [p for p in state.players if state.role(p) in roles and not trapped(state, p)]
    events: list[Event] = [{"event": "teams", "teams": sorted(teams), "lone": lone}]
    share = EXPANSION_SHARE.get(len(state.winners), 1)
    for p in state.winners:
        state.gold[p] += max(0, share - ROLE_DISCOUNT.get(state.role(p) or "", 0))
    geologists = _roles_of(state, "geologist")
    if geologists:
        each = state.board.crystals() // len(geologists)
        for p in geologists:
            if not trapped(state, p):
                state.gold[p] += each
        events.append({"event": "crystals", "count": state.board.crystals(), "each": each})
    return events


def _begin_thefts(state: RoundState) -> list[Event]:
    thieves = [p for p in state.players if "theft" in state.front_types(p) and not trapped(state, p)]
    if not thieves:
        return []
    state.gold_before_theft = dict(state.gold)
    n = len(state.players)
    start = state.players.index(state.last_theft) if state.last_theft in state.players else 0
    clockwise = [state.players[(start + k) % n] for k in range(n)]
    state.thieves = [p for p in clockwise if p in thieves]
    state.phase = THEFT
    events: list[Event] = [{"event": "thefts", "order": list(state.thieves)}]
    events += _next_thief(state)
    return events


def _next_thief(state: RoundState) -> list[Event]:
    """Seat the next thief who has a possible victim; close the round when none is left."""
    events: list[Event] = []
    while state.thieves:
        thief = state.thieves[0]
        if victims(state, thief):
            state.to_move = state.players.index(thief)
            return events
        state.thieves.pop(0)
        _discard_theft(state, thief)
        events.append({"event": "steal", "player": thief, "victim": None, "skipped": True})
    state.phase = OVER
    events += _close(state)
    return events


def victims(state: RoundState, thief: str) -> list[str]:
    """Whom `thief` may rob: another player who had gold when the thefts began and still has."""
    return [
        p
        for p in state.players
        if p != thief and state.gold_before_theft.get(p, 0) > 0 and state.gold.get(p, 0) > 0
    ]


def _discard_theft(state: RoundState, thief: str) -> None:
    card = next(c for c in state.in_front[thief] if card_kind(c).action == "theft")
    state.take_from_front(thief, card)
    state.discard.append(card)


def steal(state: RoundState, victim: str | None) -> list[Event]:
    thief = state.thieves.pop(0)
    _discard_theft(state, thief)
    if victim is not None:
        state.gold[victim] -= 1
        state.gold[thief] += 1
        state.payout[victim] = state.payout.get(victim, 0) - 1
        state.payout[thief] = state.payout.get(thief, 0) + 1
    events: list[Event] = [{"event": "steal", "player": thief, "victim": victim}]
    return events + _next_thief(state)
