"""What one player may know: the full state with everything else masked, and the events.

A view is a `RoundState` in which hidden cards are the placeholder "?", so the same code
(legal moves, rendering, position dumps) works on it. Once the round is over, every view is
the full state: replays open all cards only then.

`events_for(events, seat)` is the one rule for what a seat learns of a move's events: the
host's packets, the replay and the words all use it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from .board import GOAL_CELLS, Tile, face
from .catalog import GOAL_KINDS, HIDDEN
from .events import Event
from .position import load
from .state import PLAYING, RoundState

_HIDDEN_GOAL = face("goal-gold", False)
_MASKED_GOAL = Tile(HIDDEN, False, _HIDDEN_GOAL, hidden=True)  # one for all views: tiles are replaced, never changed


def view(state: RoundState, player: str | None) -> RoundState:
    """The state as `player` sees it (None: a spectator who holds no cards)."""
    state.board.warm()  # computed once here, shared by the copy (masking keeps it valid)
    if state.phase != PLAYING:
        v = state.copy()
    else:
        board = state.board.copy()
        cells = board.cells
        for pos in GOAL_CELLS.values():  # masking keeps the board's caches valid
            tile = cells.get(pos)
            if tile is not None and tile.hidden:
                cells[pos] = _MASKED_GOAL
        roles: dict[str, str | None] = dict.fromkeys(state.roles)  # (every role masked, then the viewer's own put back)
        knowledge: dict[str, list[list[str]]] = {p: [] for p in state.knowledge}
        if player in roles:
            roles[player] = state.roles[player]
        if player in knowledge:
            knowledge[player] = list(map(list, state.knowledge[player]))
        v = state.with_private(
            board=board,
            roles=roles,
            hands={p: (list(h) if p == player else [HIDDEN] * len(h)) for p, h in state.hands.items()},
            knowledge=knowledge,
            deck=[HIDDEN] * len(state.deck),
            discard=[HIDDEN] * len(state.discard),
            removed=[HIDDEN] * len(state.removed),
            nuggets=[HIDDEN] * len(state.nuggets),
            aside=[HIDDEN] * len(state.aside),
            retired=[HIDDEN] * len(state.retired),
        )
    return v


# What everyone learns of a private event (a draw; what a map, an inspection, a new hat showed).
PUBLIC_KEYS = frozenset({"event", "player", "goal", "target"})


def is_private(event: Event) -> bool:
    """Whether part of `event` is for the seat it concerns (its "player") alone."""
    return event["event"] == "draw" or bool(event.get("private"))


def concerns(event: Event, seat: str | None) -> bool:
    return seat is not None and event.get("player") == seat


def public_part(event: Event) -> Event:
    """`event` as every seat may see it."""
    if not is_private(event):
        return event
    return cast(Event, {k: v for k, v in event.items() if k in PUBLIC_KEYS})


def events_for(events: Iterable[Event], seat: str | None) -> list[Event]:
    """What `seat` learns of a move's events (None: what every seat learns), in order.

    The "move" event is left out (it names a discard's cards): the move is shown to others
    as `Move.public()`. A private event is whole for the seat it concerns, else its public part.
    """
    return [e if concerns(e, seat) else public_part(e) for e in events if e["event"] != "move"]


def secret_events(events: Iterable[Event], seat: str) -> list[Event]:
    """The private events `seat` alone sees whole: what `events_for` adds to the public events."""
    return [e for e in events if is_private(e) and concerns(e, seat)]


def mask(cards: list[str]) -> list[str]:
    return [HIDDEN] * len(cards)


def load_view(doc: dict[str, Any]) -> RoundState:
    """Rebuild a view from its position document (as `dump(view(...))` writes it).

    Hidden cards ("?") are kept as placeholders, so legality can be checked from a view
    alone, e.g. on a player's machine that never sees the other hands.
    """
    hidden_counts: dict[str, int] = {}
    clean = dict(doc)
    for key in ("deck", "discard", "removed", "nuggets", "aside", "retired", "won"):
        items = list(doc.get(key, []))
        hidden_counts[key] = items.count(HIDDEN)
        clean[key] = [c for c in items if c != HIDDEN]
    hand_hidden = {p: list(h).count(HIDDEN) for p, h in doc.get("hands", {}).items()}
    clean["hands"] = {p: [c for c in h if c != HIDDEN] for p, h in doc.get("hands", {}).items()}
    goals = dict(doc.get("goals", {}))
    hidden_goals = [g for g, k in goals.items() if k == HIDDEN]
    spare = [k for k in GOAL_KINDS if k not in goals.values()]
    for g, k in zip(hidden_goals, spare):
        goals[g] = k
    clean["goals"] = goals
    state = load(clean)
    for key, n in hidden_counts.items():
        getattr(state, key).extend([HIDDEN] * n)
    for p, n in hand_hidden.items():
        state.hands[p].extend([HIDDEN] * n)
    for g in hidden_goals:
        state.board.cells[GOAL_CELLS[g]] = Tile(HIDDEN, False, _HIDDEN_GOAL, hidden=True)
    state.board.changed()
    return state
