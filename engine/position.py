"""Position documents (RULES.md §8): a full moment of a round as JSON-ready data.

`load` accepts hand-written documents: keys may be left out, and cards may be written as
bare kinds (the lowest copy not used elsewhere is taken). `dump` writes every key, with
card ids, so `load(dump(s))` reproduces `s` exactly.
"""

from __future__ import annotations

from typing import Any

from .board import GOAL_AT, GOAL_CELLS, START, Board
from .catalog import (
    CLASSIC,
    EXPANSION,
    GOAL_KINDS,
    KINDS,
    Ruleset,
    card_kind,
    card_sort_key,
    ids_of,
    is_card_id,
    is_ruleset,
    nugget_ids,
)
from .errors import BadPosition
from .moves import RESERVED_NAMES
from .state import OPTIONS, PHASES, PLAYER_RANGE, PLAYING, THEFT, RoundState

FORMAT = "pbem-position/1"
DEFAULT_GOALS = {"top": "goal-stone-nw", "middle": "goal-gold", "bottom": "goal-stone-ne"}


class _Ids:
    """Hands out card ids: explicit ids are reserved first, then bare kinds take free copies."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.used: set[str] = set()
        self._collect(doc)

    def _collect(self, node: Any) -> None:
        if isinstance(node, str) and is_card_id(node):
            if node in self.used and not node.startswith(("start.", "goal-")):
                raise BadPosition(f"card {node} appears twice")
            self.used.add(node)
        elif isinstance(node, list):
            for item in node:
                self._collect(item)
        elif isinstance(node, dict):
            for key, value in node.items():
                if key not in ("goals", "knowledge", "format"):
                    self._collect(value)

    def card(self, word: Any) -> str:
        if not isinstance(word, str):
            raise BadPosition(f"expected a card, got {word!r}")
        if is_card_id(word):
            return word
        if word not in KINDS:
            raise BadPosition(f"unknown card {word!r}")
        for cid in ids_of(word):
            if cid not in self.used:
                self.used.add(cid)
                return cid
        raise BadPosition(f"no copy of {word!r} is left (the game has {KINDS[word].count})")


def load(doc: object) -> RoundState:
    """Build a state from a position document (any JSON value: compiled by mypyc, a parameter of
    type dict would refuse another with a TypeError). Raises BadPosition naming what is wrong."""
    try:
        return _load(doc)
    except BadPosition:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise BadPosition(f"malformed position: {exc!r}") from None


def _load(doc: object) -> RoundState:
    """Read a document in the order its card ids are handed out (explicit ids first, then bare
    kinds in document order: board, hands, in front, aside, retired, won, roles, piles)."""
    if not isinstance(doc, dict):
        raise BadPosition("a position is a JSON object")
    ruleset, players, options = _header(doc)
    read = _Reader(doc, players)
    board = _board(doc, read.ids)
    hands = read.per_player("hands")
    in_front = read.per_player("in_front")
    aside, retired = read.cards("aside"), read.cards("retired")
    won = read.cards("won")  # before the default nugget pile is made of the cards nobody else holds
    roles = _roles(doc, read)
    deck, discard, removed = read.cards("deck"), read.cards("discard"), read.cards("removed")
    state = RoundState(
        ruleset=ruleset,
        players=players,
        board=board,
        options=options,
        roles=roles,
        hands=hands,
        in_front=in_front,
        deck=deck,
        discard=discard,
        removed=removed,
        nuggets=_nuggets(doc, ruleset, read),
        gold={p: int(doc.get("gold", {}).get(p, 0)) for p in players},
        aside=aside,
        retired=retired,
        won=won,
        knowledge={p: [list(f) for f in doc.get("knowledge", {}).get(p, [])] for p in players},
        passes=int(doc.get("passes_in_a_row", 0)),
        to_move=players.index(read.player(doc["to_move"], "to_move")),
        round_no=int(doc.get("round", 1)),
    )
    _turn_and_round_end(doc, read, state)
    _check_cards(state)
    _check_zones(state)
    return state


def _header(doc: dict[str, Any]) -> tuple[Ruleset, tuple[str, ...], frozenset[str]]:
    """The format, the ruleset, the players and the options, checked."""
    if doc.get("format") != FORMAT:
        raise BadPosition(f"format must be {FORMAT!r}, got {doc.get('format')!r}")
    for key in ("ruleset", "players", "board", "to_move"):
        if key not in doc:
            raise BadPosition(f"missing required key {key!r}")
    ruleset = doc["ruleset"]
    if not is_ruleset(ruleset):
        raise BadPosition(f"unknown ruleset {ruleset!r}")
    players = tuple(doc["players"])
    if len(set(players)) != len(players) or not all(isinstance(p, str) and p for p in players):
        raise BadPosition("players must be distinct names")
    if RESERVED_NAMES & set(players):
        raise BadPosition(f"these words cannot be player names: {', '.join(sorted(RESERVED_NAMES))}")
    lo, hi = PLAYER_RANGE[ruleset]
    if not lo <= len(players) <= hi:
        raise BadPosition(f"{ruleset} is for {lo}-{hi} players, not {len(players)}")
    options = frozenset(doc.get("options", []))
    if options - set(OPTIONS):
        raise BadPosition(f"unknown option(s): {', '.join(sorted(options - set(OPTIONS)))}")
    return ruleset, players, options


class _Reader:
    """The document's players and card ids: checks names, turns card words into ids."""

    def __init__(self, doc: dict[str, Any], players: tuple[str, ...]) -> None:
        self.doc = doc
        self.players = players
        self.ids = _Ids(doc)

    def player(self, name: Any, what: str) -> str:
        if name not in self.players:
            raise BadPosition(f"{what}: {name!r} is not a player")
        return str(name)

    def cards(self, key: str) -> list[str]:
        return [self.ids.card(c) for c in self.doc.get(key, [])]

    def per_player(self, key: str) -> dict[str, list[str]]:
        given = self.doc.get(key, {})
        for name in given:
            self.player(name, key)
        return {p: [self.ids.card(c) for c in given.get(p, [])] for p in self.players}


def _board(doc: dict[str, Any], ids: _Ids) -> Board:
    """The three goals (face down unless revealed) and the placed path cards."""
    goals_doc = {**DEFAULT_GOALS, **doc.get("goals", {})}
    goals = {}
    for name in GOAL_CELLS:
        word = goals_doc[name]
        kind = word.rpartition(".")[0] if is_card_id(word) else word
        if kind not in GOAL_KINDS:
            raise BadPosition(f"goal {name}: {word!r} is not a goal card")
        goals[name] = ids_of(kind)[0]
    if sorted(goals.values()) != sorted(ids_of(k)[0] for k in GOAL_KINDS):
        raise BadPosition("the three goals must be the gold and the two stones")
    board = Board.new(goals)
    rotated_goals = set(doc.get("rotated_goals", []))
    for name in doc.get("revealed", []):
        if name not in GOAL_CELLS:
            raise BadPosition(f"revealed: {name!r} is not top, middle or bottom")
        board.reveal(name, name in rotated_goals)
    for entry in doc["board"]:
        x, y = entry["at"]
        pos = (int(x), int(y))
        if pos == START or pos in GOAL_AT:
            raise BadPosition(f"board: {x},{y} holds the start or a goal")
        if pos in board.cells:
            raise BadPosition(f"board: two cards at {x},{y}")
        card = ids.card(entry["card"])
        k = card_kind(card)
        if k.category != "path":
            raise BadPosition(f"board: {card} is not a path card")
        board.place(pos, card, bool(entry.get("rotated", False)) and not k.symmetric)
    return board


def _roles(doc: dict[str, Any], read: _Reader) -> dict[str, str | None]:
    """Player -> dwarf card id. `roles` are kinds (RULES.md §8); `role_cards` (written by dump)
    keeps the exact ids, so a state survives dump and load unchanged (swap-hat retires that card)."""
    roles: dict[str, str | None] = {p: None for p in read.players}
    role_cards = doc.get("role_cards", {})
    for name, role in doc.get("roles", {}).items():
        read.player(name, "roles")
        if role is None:
            continue
        kind = role.rpartition(".")[0] if is_card_id(role) else role
        if kind not in KINDS or KINDS[kind].category != "dwarf":
            raise BadPosition(f"roles: {role!r} is not a role")
        exact = role_cards.get(name)
        if exact is not None:
            if not is_card_id(exact) or exact.rpartition(".")[0] != kind:
                raise BadPosition(f"role_cards: {exact!r} is not a {kind} card")
            roles[name] = exact
        else:
            roles[name] = role if is_card_id(role) else read.ids.card(kind)
    return roles


def _nuggets(doc: dict[str, Any], ruleset: Ruleset, read: _Reader) -> list[str]:
    """The classic nugget pile: as given, else every nugget no one has taken."""
    if "nuggets" in doc:
        return read.cards("nuggets")
    return [c for c in nugget_ids() if c not in read.ids.used] if ruleset == CLASSIC else []


def _turn_and_round_end(doc: dict[str, Any], read: _Reader, state: RoundState) -> None:
    """Who played last, the last thief, the phase, and how a finished round ended."""
    if doc.get("last_actor") is not None:
        state.last_actor = read.players.index(read.player(doc["last_actor"], "last_actor"))
    state.last_theft = doc.get("last_theft")
    if state.last_theft is not None:
        read.player(state.last_theft, "last_theft")
    phase = doc.get("phase", PLAYING)
    if phase not in PHASES:
        raise BadPosition(f"phase must be playing, theft or over, not {phase!r}")
    state.phase = phase
    state.finder = doc.get("finder")
    state.winners = list(doc.get("winners", []))
    state.next_start = doc.get("next_start")
    state.thieves = list(doc.get("thieves", []))
    state.gold_before_theft = dict(doc.get("gold_before_theft", {}))
    state.payout = dict(doc.get("payout", {}))


def _check_cards(state: RoundState) -> None:
    """Each card appears once, and a classic round holds no Saboteur 2 card."""
    seen: set[str] = set()
    for c in state.all_cards():
        if c in seen:
            raise BadPosition(f"card {c} appears twice")
        seen.add(c)
        if c.startswith(("start.", "goal-")):
            continue
        if KINDS[c.rpartition(".")[0]].ruleset == EXPANSION and state.ruleset == CLASSIC:
            raise BadPosition(f"{c} is a Saboteur 2 card, not part of the classic game")


_ZONES = {  # where a card may lie, by category
    "hands": ("path", "action"),
    "deck": ("path", "action"),
    "discard": ("path", "action"),
    "removed": ("path", "action"),
    "nuggets": ("gold",),
    "won": ("gold",),
    "aside": ("dwarf",),
    "retired": ("dwarf",),
}


def _check_zones(state: RoundState) -> None:
    """Each card lies where it can (RULES.md §2-§4): no nugget in a hand, two broken picks in front of nobody."""
    cards = {name: getattr(state, name) for name in _ZONES if name != "hands"}
    cards["hands"] = [c for h in state.hands.values() for c in h]
    for name, allowed in _ZONES.items():
        for c in cards[name]:
            if card_kind(c).category not in allowed:
                raise BadPosition(f"{name}: {c} cannot lie there")
    for p, front in state.in_front.items():
        types = [card_kind(c).front_type for c in front]
        for c, t in zip(front, types):
            if t is None:
                raise BadPosition(f"in_front: {c} cannot lie in front of a player")
            if types.count(t) > 1:
                raise BadPosition(f"in_front: {p} has more than one {t}")


def dump(state: RoundState) -> dict[str, Any]:
    """The full position document of `state` (every key, card ids)."""
    board = state.board
    doc: dict[str, Any] = {
        "format": FORMAT,
        "ruleset": state.ruleset,
        "options": sorted(state.options),
        "players": list(state.players),
        "roles": {p: (card_kind(r).kind if r and r != "?" else None) for p, r in state.roles.items()},
        "role_cards": {p: (r if r and r != "?" else None) for p, r in state.roles.items()},
        "goals": {name: _goal_word(board.goal_card(name)) for name in GOAL_CELLS},
        "revealed": [g for g in GOAL_CELLS if not board.is_hidden(g)],
        "rotated_goals": [g for g in GOAL_CELLS if board.cells[GOAL_CELLS[g]].rotated],
        "board": [
            {"at": [x, y], "card": board.cells[(x, y)].card, "rotated": board.cells[(x, y)].rotated}
            for (x, y) in board.path_cells()
        ],
        "hands": {p: sorted(h, key=_sort) for p, h in state.hands.items()},
        "in_front": {p: list(c) for p, c in state.in_front.items()},
        "deck": list(state.deck),
        "discard": list(state.discard),
        "removed": list(state.removed),
        "nuggets": list(state.nuggets),
        "gold": dict(state.gold),
        "aside": list(state.aside),
        "retired": list(state.retired),
        "won": list(state.won),
        "knowledge": {p: [list(f) for f in fs] for p, fs in state.knowledge.items() if fs},
        "passes_in_a_row": state.passes,
        "last_theft": state.last_theft,
        "last_actor": state.players[state.last_actor] if state.last_actor is not None else None,
        "to_move": state.player,
        "round": state.round_no,
        "phase": state.phase,
    }
    if state.phase != PLAYING:
        doc.update(
            round_over=True,
            finder=state.finder,
            winners=list(state.winners),
            next_start=state.next_start,
            payout=dict(state.payout),
        )
    if state.phase == THEFT:
        doc.update(thieves=list(state.thieves), gold_before_theft=dict(state.gold_before_theft))
    return doc


def _goal_word(card: str) -> str:
    return card.rpartition(".")[0] if card != "?" else "?"


def _sort(card: str) -> tuple[str, int]:
    return card_sort_key(card) if card != "?" else ("", 0)
