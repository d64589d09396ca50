"""Each action card's rule, in one place: whom it aims at, when it is refused, what it does.

An `ActionRule` lists the moves a card could be played as (`candidates`; for a card aimed at
a player or the mover, its `aims`: (target, tool) pairs), says why one of them is refused
(`refusal`, None when legal) and carries it out (`effect`). `check` asks `refusal`; the
legal-move generator asks `part`, the aims without a refusal (`legal_aims`, where each rule
states refusal's tests again without a call per aim: the property tests check that the two
agree). Those aims are kept across turns for every copy of a kind while the cards in front
of the players are the same (in the state's FrontMemo). `aim` says what the card is played on; the
checks of form that follow from it (an unknown player, a cell where a player belongs) are in
`rules.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import ClassVar, Literal

from .board import GOAL_CELLS, path_cell
from .catalog import (
    BROKEN,
    HIDDEN,
    KINDS,
    Action,
    CardKind,
    FrontType,
    broken,
    card_kind,
    front_type_of,
    ids_of,
    kind_name,
)
from .events import Event
from .listed import AIMED, AT, MADE, Part
from .moves import GOAL_NAMES, Move
from .state import Aiming, RoundState

_GOAL_TILES = itemgetter(*GOAL_CELLS.values())  # a maze's cells -> the tiles at the goals, top first
_new = tuple.__new__  # a Move from its fields in order: faster than Move(...) for the many candidates

# player: 'on <player>'; goal: 'on top|middle|bottom'; cell: 'at <x>,<y>'; self: in front of the mover.
Aim = Literal["player", "goal", "cell", "self"]


class RuleContext:
    """What a rule looks at: the state, the mover, and the types in front of each player."""

    __slots__ = ("state", "me", "_front")

    def __init__(self, state: RoundState) -> None:
        self.state = state
        self.me = state.players[state.to_move]  # (state.player, without a property call)
        self._front: dict[str | None, frozenset[FrontType | None]] | None = None

    @property
    def front(self) -> dict[str | None, frozenset[FrontType | None]]:
        """Player -> the types in front of them, made when first asked (maps and rockfalls do not ask).

        Only players with cards in front are listed, in seat order: ask .get(name, NOTHING) for a name
        that may not be a player. (Every card in front of a player has a type: a position's load makes sure of it.)
        """
        front = self._front
        if front is None:
            state = self.state
            memo = state.front_memo  # (the cards in front change on few turns: the same dict comes back)
            front = memo.types
            if front is None:
                in_front = state.in_front
                front = memo.types = {p: frozenset(map(front_type_of, cards))
                                      for p in state.players if (cards := in_front.get(p))}
            self._front = front
        return front


NOTHING: frozenset[FrontType | None] = frozenset()


def _aimed(card: str, aim: Aiming) -> Move:
    """The move playing `card` with `aim`."""
    return _new(Move, ("play", card, None, False, aim[0], aim[1], (), None))
_NO_MOVES: Part = (MADE, (), None)


class ActionRule:
    aim: ClassVar[Aim] = "player"
    # Whether the legal moves of a card depend on who plays it, besides the players and the
    # cards in front of them (on which those of every rule that keeps its parts depend: `part`).
    mover_matters: ClassVar[bool] = False

    def __init__(self) -> None:
        # card -> (players, its candidates among them): the same few are asked for turn after turn
        self._known: dict[str, tuple[tuple[str, ...], tuple[Move, ...]]] = {}
        # kind -> (players, the aims of `aims`), made once per table
        self._aims_of: dict[str, tuple[tuple[str, ...], tuple[Aiming, ...]]] = {}

    def candidates(self, t: RuleContext, card: str) -> Sequence[Move]:
        """Every well-aimed way to play `card`; the legal ones are those without a refusal."""
        if self.aim == "cell":  # the cells change with the maze
            return [_new(Move, ("play", card, pos, False, None, None, (), None)) for pos in t.state.board.path_cells()]
        players = t.state.players
        known = self._known.get(card)
        if known is None or known[0] != players:  # (the same tuple, usually: no string is compared)
            known = self._known[card] = (players, tuple(self._candidates(players, card)))
        return known[1]

    def _candidates(self, players: tuple[str, ...], card: str) -> list[Move]:
        if self.aim == "goal":
            return [Move("play", card, target=g) for g in GOAL_NAMES]
        return [_aimed(card, a) for a in self.aims(players, kind_name(card))]

    def aims(self, players: tuple[str, ...], kind: str) -> tuple[Aiming, ...]:
        """Every well-aimed (target, tool) of a card of `kind` aimed at a player or the mover (do not change it)."""
        known = self._aims_of.get(kind)
        if known is None or known[0] != players:
            known = self._aims_of[kind] = (players, tuple(self._aims(players, kind)))
        return known[1]

    def _aims(self, players: tuple[str, ...], kind: str) -> list[Aiming]:
        if self.aim == "self":
            return [(None, None)]
        return [(p, None) for p in players]

    def legal(self, t: RuleContext, card: str) -> Sequence[Move]:
        """The candidates without a refusal: what the legal-move generator lists for `card` (do not change it)."""
        if self.aim in ("player", "self"):
            return [_aimed(card, a) for a in self.legal_aims(t, kind_name(card))]
        k = card_kind(card)
        refusal = self.refusal
        return [m for m in self.candidates(t, card) if refusal(t, k, m) is None]

    def legal_aims(self, t: RuleContext, kind: str) -> Sequence[Aiming]:
        """The aims of a card of `kind` that its rule does not refuse, as `legal` lists them (do not
        change it). Each rule that keeps its part states refusal's tests again here, without a call
        per aim; tests/test_properties.py and tests/test_expansion_properties.py check that check()
        accepts exactly what is listed."""
        card, k = ids_of(kind)[0], KINDS[kind]  # (a rule's refusal does not depend on the copy)
        return [a for a in self.aims(t.state.players, kind) if self.refusal(t, k, _aimed(card, a)) is None]

    def part(self, t: RuleContext, card: str, kind: str) -> Part:
        """`legal` as a part of the legal-move list (engine/listed.py): its moves' aims (target,
        tool), each made into a move of `card` (of `kind`) when it is asked for.

        A rule that keeps this `part` refuses a move for the players, the mover (when
        `mover_matters`) and the cards in front of each player only, never for the copy of the
        card played; so the aims found for one copy are kept for every copy of its kind while
        those stay the same (the state's FrontMemo, which its cards in front own). A rule that
        looks at anything else (the maze, the dwarf cards aside) overrides `part`.
        """
        kept = t.state.front_memo.aims  # (for the players too: a state's players never change)
        key = (kind, t.me) if self.mover_matters else kind
        aims = kept.get(key)
        if aims is None:
            aims = kept[key] = self.legal_aims(t, kind)
        return (AIMED, aims, card)

    def refusal(self, t: RuleContext, k: CardKind, move: Move) -> str | None:
        """Why `move` breaks this card's rule, or None. The target is a player when aim is "player"."""
        return None

    def effect(self, state: RoundState, me: str, move: Move, events: list[Event]) -> str:
        """Carry out the move (the card has left the hand); return who draws the replacement."""
        state.discard.append(_card(move))
        return me


def _card(move: Move) -> str:
    assert move.card is not None
    return move.card


def _target(move: Move) -> str:
    assert move.target is not None
    return move.target


def take_front(state: RoundState, player: str, ftype: FrontType, events: list[Event]) -> None:
    """Move the card of type `ftype` from in front of `player` to the discard pile."""
    card = next(c for c in state.in_front[player] if card_kind(c).front_type == ftype)
    state.take_from_front(player, card)
    state.discard.append(card)
    events.append({"event": "remove", "player": player, "card": card})


class Break(ActionRule):
    def refusal(self, t: RuleContext, k: CardKind, move: Move) -> str | None:
        broke = front_type_of(_card(move))
        if broke in t.front.get(move.target, NOTHING):
            return f"{move.target} already has a {broke}"
        return None

    def legal_aims(self, t: RuleContext, kind: str) -> Sequence[Aiming]:
        aims = self.aims(t.state.players, kind)
        front = t.front
        if front:  # (nothing in front of anyone: nobody has it broken yet)
            broke = KINDS[kind].front_type
            hit = [p for p, types in front.items() if broke in types]  # the few players it is broken for
            if hit:
                return [a for a in aims if a[0] not in hit]
        return aims

    def effect(self, state: RoundState, me: str, move: Move, events: list[Event]) -> str:
        state.put_in_front(_target(move), _card(move))
        return me


class Fix(ActionRule):
    def __init__(self) -> None:
        super().__init__()
        # kind -> (players, player -> (the broken type it repairs, the aim) for each of its tools)
        self._by_player: dict[str, tuple[tuple[str, ...], dict[str | None, tuple[tuple[FrontType, Aiming], ...]]]] = {}

    def _aims(self, players: tuple[str, ...], kind: str) -> list[Aiming]:
        return [(p, tool) for p in players for tool in KINDS[kind].tools]

    def refusal(self, t: RuleContext, k: CardKind, move: Move) -> str | None:
        tool = move.tool
        if tool is None or tool not in k.tools:
            return f"{k.kind} repairs {' or '.join(k.tools)}; name the tool"
        if BROKEN[tool] not in t.front.get(move.target, NOTHING):
            return f"{move.target} has no broken {move.tool}"
        return None

    def legal_aims(self, t: RuleContext, kind: str) -> Sequence[Aiming]:
        # by player, each aim with the broken type it repairs; only the players with something in
        # front looked at (RuleContext.front lists them in seat order)
        front = t.front
        if not front:  # nothing in front of anyone: nothing to repair
            return ()
        players = t.state.players
        known = self._by_player.get(kind)
        if known is None or known[0] != players:
            tools = KINDS[kind].tools
            known = self._by_player[kind] = (players, {p: tuple((BROKEN[tool], (p, tool)) for tool in tools)
                                                       for p in players})
        by_player = known[1]
        return [a for p, types in front.items() for need, a in by_player[p] if need in types]

    def effect(self, state: RoundState, me: str, move: Move, events: list[Event]) -> str:
        state.discard.append(_card(move))
        assert move.tool is not None
        take_front(state, _target(move), broken(move.tool), events)
        return me


class Rockfall(ActionRule):
    aim = "cell"

    def legal(self, t: RuleContext, card: str) -> Sequence[Move]:
        return self.candidates(t, card)  # every candidate is at a path card, which is all refusal asks

    def part(self, t: RuleContext, card: str, kind: str) -> Part:
        return (AT, t.state.board.path_cells(), card)  # the candidates, each made when asked for

    def refusal(self, t: RuleContext, k: CardKind, move: Move) -> str | None:
        if move.at is None or not path_cell(t.state.board, move.at):
            where = f"{move.at[0]},{move.at[1]}" if move.at else "nowhere"
            return f"rockfall needs a path card (not the start or a goal) at {where}"
        return None

    def effect(self, state: RoundState, me: str, move: Move, events: list[Event]) -> str:
        state.discard.append(_card(move))
        assert move.at is not None
        removed = state.board.remove(move.at)
        state.discard.append(removed)
        events.append({"event": "rockfall", "at": list(move.at), "card": removed})
        return me


class Map(ActionRule):
    aim = "goal"

    def part(self, t: RuleContext, card: str, kind: str) -> Part:
        return (MADE, self.legal(t, card), None)  # made anew: the goals it may aim at change with the maze

    def legal(self, t: RuleContext, card: str) -> Sequence[Move]:
        # refusal's test without a call per candidate (the candidates name goals), as in Break.legal_aims
        top, middle, bottom = _GOAL_TILES(t.state.board.cells)
        if top.hidden and middle.hidden and bottom.hidden:  # (all still face down, as on most turns)
            return self.candidates(t, card)
        cells = t.state.board.cells
        hidden = [name for name, pos in GOAL_CELLS.items() if cells[pos].hidden]
        return [m for m in self.candidates(t, card) if m.target in hidden]

    def refusal(self, t: RuleContext, k: CardKind, move: Move) -> str | None:
        if move.target not in GOAL_NAMES:
            return "a map is played 'on top', 'on middle' or 'on bottom'"
        if not t.state.board.is_hidden(move.target):
            return f"the {move.target} goal is already face up"
        return None

    def effect(self, state: RoundState, me: str, move: Move, events: list[Event]) -> str:
        state.discard.append(_card(move))
        goal, card = _target(move), state.board.goal_card(_target(move))
        state.knowledge[me].append(["map", goal, card])
        events.append({"event": "map", "player": me, "goal": goal, "card": card, "private": True})
        return me


class Theft(ActionRule):
    aim = "self"
    mover_matters = True

    def legal_aims(self, t: RuleContext, kind: str) -> Sequence[Aiming]:
        return () if "theft" in t.front.get(t.me, NOTHING) else self.aims(t.state.players, kind)

    def refusal(self, t: RuleContext, k: CardKind, move: Move) -> str | None:
        if move.target is not None or move.at is not None:
            return "a theft is played in front of yourself: 'play theft'"
        if "theft" in t.front.get(t.me, NOTHING):
            return "you already have a theft in front of you"
        return None

    def effect(self, state: RoundState, me: str, move: Move, events: list[Event]) -> str:
        state.put_in_front(me, _card(move))
        state.last_theft = me
        return me


class HandsOff(ActionRule):
    def legal_aims(self, t: RuleContext, kind: str) -> Sequence[Aiming]:
        front = t.front
        return [a for a in self.aims(t.state.players, kind) if "theft" in front.get(a[0], NOTHING)] if front else ()

    def refusal(self, t: RuleContext, k: CardKind, move: Move) -> str | None:
        if "theft" not in t.front.get(move.target, NOTHING):
            return f"{move.target} has no theft in front of them"
        return None

    def effect(self, state: RoundState, me: str, move: Move, events: list[Event]) -> str:
        state.discard.append(_card(move))
        take_front(state, _target(move), "theft", events)
        return me


class Trap(ActionRule):
    mover_matters = True

    def legal_aims(self, t: RuleContext, kind: str) -> Sequence[Aiming]:
        me, front = t.me, t.front
        return [a for a in self.aims(t.state.players, kind) if a[0] != me and "trap" not in front.get(a[0], NOTHING)]

    def refusal(self, t: RuleContext, k: CardKind, move: Move) -> str | None:
        if move.target == t.me:
            return "a trap is played on another player"
        if "trap" in t.front.get(move.target, NOTHING):
            return f"{move.target} is already trapped"
        return None

    def effect(self, state: RoundState, me: str, move: Move, events: list[Event]) -> str:
        state.put_in_front(_target(move), _card(move))
        return me


class Free(ActionRule):
    def legal_aims(self, t: RuleContext, kind: str) -> Sequence[Aiming]:
        front = t.front
        return [a for a in self.aims(t.state.players, kind) if "trap" in front.get(a[0], NOTHING)] if front else ()

    def refusal(self, t: RuleContext, k: CardKind, move: Move) -> str | None:
        if "trap" not in t.front.get(move.target, NOTHING):
            return f"{move.target} is not trapped"
        return None

    def effect(self, state: RoundState, me: str, move: Move, events: list[Event]) -> str:
        state.discard.append(_card(move))
        take_front(state, _target(move), "trap", events)
        return me


class OnAnother(ActionRule):
    """Inspect and swap hands: any other player."""

    mover_matters = True

    def legal_aims(self, t: RuleContext, kind: str) -> Sequence[Aiming]:
        me = t.me
        return [a for a in self.aims(t.state.players, kind) if a[0] != me]

    def refusal(self, t: RuleContext, k: CardKind, move: Move) -> str | None:
        if move.target == t.me:
            return f"{k.kind} is played on another player"
        return None


class Inspect(OnAnother):
    def effect(self, state: RoundState, me: str, move: Move, events: list[Event]) -> str:
        state.discard.append(_card(move))
        target = _target(move)
        role = state.role(target) or "none"
        state.knowledge[me].append(["inspect", target, role])
        events.append({"event": "inspect", "player": me, "target": target, "role": role, "private": True})
        return me


class SwapHand(OnAnother):
    def effect(self, state: RoundState, me: str, move: Move, events: list[Event]) -> str:
        state.discard.append(_card(move))
        target = _target(move)
        state.hands[me], state.hands[target] = state.hands[target], state.hands[me]
        events.append({"event": "swap-hand", "player": me, "target": target})
        return target  # the mover's old hand, now the target's, is short of the card played


class SwapHat(ActionRule):
    def part(self, t: RuleContext, card: str, kind: str) -> Part:
        # every candidate while dwarf cards are left aside, none after (refusal's only test)
        return (AIMED, self.aims(t.state.players, kind), card) if t.state.aside else _NO_MOVES

    def refusal(self, t: RuleContext, k: CardKind, move: Move) -> str | None:
        if not t.state.aside:
            return "no dwarf cards are left aside"
        return None

    def effect(self, state: RoundState, me: str, move: Move, events: list[Event]) -> str:
        state.discard.append(_card(move))
        target = _target(move)
        old = state.roles[target]
        if old:
            state.retired.append(old)
        new = state.aside.pop(0)
        state.roles[target] = new
        role = state.role(target) or HIDDEN  # a view's aside is hidden: the new hat is its wearer's to read
        state.knowledge[target].append(["hat", role])
        events.append({"event": "swap-hat", "player": target, "role": role, "private": True})
        return me


RULES: dict[Action, ActionRule] = {
    "break": Break(),
    "fix": Fix(),
    "rockfall": Rockfall(),
    "map": Map(),
    "theft": Theft(),
    "hands-off": HandsOff(),
    "trap": Trap(),
    "free": Free(),
    "inspect": Inspect(),
    "swap-hand": SwapHand(),
    "swap-hat": SwapHat(),
}


_RULE_OF: dict[str, ActionRule] = {cid: RULES[k.action] for k in KINDS.values() if k.action for cid in ids_of(k.kind)}
rule_of: Callable[[str], ActionRule] = _RULE_OF.__getitem__
"""The rule of an action card, by id (KeyError for any other card)."""
