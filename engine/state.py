"""The full state of one round, and the deal that creates it.

The state is plain data, mutated in place by `rules.apply` (like python-chess's `push`);
`copy()` gives an independent state. Hidden parts are masked by `views.view`. The cards in
front of the players change only through the state's own `put_in_front` and `take_from_front`,
which keep what was worked out from them (`FrontMemo`) true.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal, get_args

from .board import GOAL_CELLS, Board
from .catalog import (
    BLOCKERS,
    CLASSIC,
    EXPANSION,
    GOAL_KINDS,
    FrontType,
    Ruleset,
    Tool,
    card_kind,
    deck_ids,
    dwarf_ids,
    front_type_of,
    ids_of,
    nugget_ids,
)
from .chance import Chance
from .record import Record

Option = Literal["max-saboteurs", "broken-tools-forfeit"]
OPTIONS: tuple[Option, ...] = get_args(Option)
# playing: cards are played; theft: the expansion's thieves choose victims; over: the round is done.
Phase = Literal["playing", "theft", "over"]
PHASES: tuple[Phase, ...] = get_args(Phase)
PLAYING: Final = "playing"
THEFT: Final = "theft"
OVER: Final = "over"
ROUNDS_PER_GAME = 3
EXPANSION_REMOVED = 10

CLASSIC_SABOTEURS = {3: 1, 4: 1, 5: 2, 6: 2, 7: 3, 8: 3, 9: 3, 10: 4}
CLASSIC_DIGGERS = {3: 3, 4: 4, 5: 4, 6: 5, 7: 5, 8: 6, 9: 7, 10: 7}
PLAYER_RANGE: dict[Ruleset, tuple[int, int]] = {CLASSIC: (3, 10), EXPANSION: (2, 12)}


def hand_size(ruleset: Ruleset, players: int) -> int:
    if ruleset == EXPANSION:
        return 6
    return 6 if players <= 5 else 5 if players <= 7 else 4


# (target, tool): how an action card aimed at a player (or the mover: no target) is played
Aiming = tuple[str | None, Tool | None]


class FrontMemo:
    """What the legal-move generator worked out from the cards in front of the players, as
    they are in the state that owns it (engine/actions.py): the cards in front change on few
    turns, so it is kept across turns. A copy or a view of the state shares it (the same cards
    in front); a change of them through the state's methods gives the state a new one, so the
    old one stays true for the copies that still share it.
    """

    __slots__ = ("types", "aims")

    def __init__(self) -> None:
        # player -> the types in front of them (players with cards in front only, in seat order)
        self.types: dict[str | None, frozenset[FrontType | None]] | None = None
        # kind (with the mover, when that matters) -> the legal aims of a card of that kind
        self.aims: dict[str | tuple[str, str], Sequence[Aiming]] = {}


class RoundState(Record):
    FIELDS = ("ruleset", "players", "board", "options", "roles", "hands", "in_front", "deck", "discard", "removed",
              "nuggets", "gold", "aside", "retired", "won", "knowledge", "passes", "last_theft", "to_move",
              "round_no", "last_actor", "phase", "finder", "winners", "next_start", "thieves", "gold_before_theft",
              "payout")

    def __init__(
        self,
        ruleset: Ruleset,
        players: tuple[str, ...],
        board: Board,
        options: frozenset[str] | None = None,
        roles: dict[str, str | None] | None = None,
        hands: dict[str, list[str]] | None = None,
        in_front: dict[str, list[str]] | None = None,
        deck: list[str] | None = None,
        discard: list[str] | None = None,
        removed: list[str] | None = None,
        nuggets: list[str] | None = None,
        gold: dict[str, int] | None = None,
        aside: list[str] | None = None,
        retired: list[str] | None = None,
        won: list[str] | None = None,
        knowledge: dict[str, list[list[str]]] | None = None,
        passes: int = 0,
        last_theft: str | None = None,
        to_move: int = 0,
        round_no: int = 1,
        last_actor: int | None = None,
        phase: Phase = PLAYING,
        finder: str | None = None,
        winners: list[str] | None = None,
        next_start: str | None = None,
        thieves: list[str] | None = None,
        gold_before_theft: dict[str, int] | None = None,
        payout: dict[str, int] | None = None,
    ) -> None:
        """Every container left out (None) is a new empty one. (Each default is a constant, so the
        compiled class has a signature: tests/test_listed_moves.py reads it.)"""
        self.ruleset = ruleset
        self.players = players
        self.board = board
        self.options: frozenset[str] = frozenset() if options is None else options
        self.roles: dict[str, str | None] = {} if roles is None else roles  # player -> dwarf card id
        self.hands: dict[str, list[str]] = {} if hands is None else hands
        self.in_front: dict[str, list[str]] = {} if in_front is None else in_front
        self.deck: list[str] = [] if deck is None else deck  # top first
        self.discard: list[str] = [] if discard is None else discard
        self.removed: list[str] = [] if removed is None else removed  # expansion: out of this round, unseen
        self.nuggets: list[str] = [] if nuggets is None else nuggets  # classic nugget pile, top first
        self.gold: dict[str, int] = {} if gold is None else gold  # totals, earlier rounds included
        self.aside: list[str] = [] if aside is None else aside  # dwarf cards not dealt, top first
        self.retired: list[str] = [] if retired is None else retired  # dwarf cards given up by swap-hat
        self.won: list[str] = [] if won is None else won  # nugget cards taken by players this round
        self.knowledge: dict[str, list[list[str]]] = {} if knowledge is None else knowledge  # private facts
        self.passes = passes
        self.last_theft = last_theft
        self.to_move = to_move  # seat index
        self.round_no = round_no
        self.last_actor = last_actor  # seat of the last play or discard
        self.phase: Phase = phase
        self.finder = finder
        self.winners: list[str] = [] if winners is None else winners
        self.next_start = next_start
        self.thieves: list[str] = [] if thieves is None else thieves
        self.gold_before_theft: dict[str, int] = {} if gold_before_theft is None else gold_before_theft
        self.payout: dict[str, int] = {} if payout is None else payout  # gold won this round, thefts included
        # Not part of the position (not in FIELDS: not compared, shown or dumped): see FrontMemo.
        self.front_memo = FrontMemo()

    @property
    def player(self) -> str:
        """The player to move (the current thief during the theft phase)."""
        return self.players[self.to_move]

    @property
    def over(self) -> bool:
        return self.phase == OVER

    def role(self, player: str) -> str | None:
        """The role (dwarf kind) of `player`, or None when unknown or none."""
        cid = self.roles.get(player)
        return None if cid is None or cid == "?" else card_kind(cid).kind

    def front_types(self, player: str) -> set[FrontType]:
        """The types of the cards in front of `player` (a position's load makes sure each has one)."""
        return {t for c in self.in_front.get(player, ()) if (t := front_type_of(c))}

    def put_in_front(self, player: str, card: str) -> None:
        """Lay `card` in front of `player` (a broken tool, a trap, a theft)."""
        self.in_front[player].append(card)
        self.front_memo = FrontMemo()

    def take_from_front(self, player: str, card: str) -> None:
        """Take `card` away from in front of `player` (the caller puts it where it goes)."""
        self.in_front[player].remove(card)
        self.front_memo = FrontMemo()

    def blocked(self, player: str) -> bool:
        """Whether a broken tool or a trap in front of `player` forbids placing path cards."""
        return not BLOCKERS.isdisjoint(self.in_front.get(player, ()))

    def copy(self) -> RoundState:
        """An independent state: every list and dict copied (tests/test_listed_moves.py checks it)."""
        hands = self.hands
        return self.with_private(
            board=self.board.copy(),
            roles=dict(self.roles),
            hands=dict(zip(hands, map(list, hands.values()))),
            knowledge={p: list(map(list, facts)) for p, facts in self.knowledge.items()},
            deck=list(self.deck),
            discard=list(self.discard),
            removed=list(self.removed),
            nuggets=list(self.nuggets),
            aside=list(self.aside),
            retired=list(self.retired),
        )

    def with_private(self, *, board: Board, roles: dict[str, str | None], hands: dict[str, list[str]],
                     knowledge: dict[str, list[list[str]]], deck: list[str], discard: list[str],
                     removed: list[str], nuggets: list[str], aside: list[str], retired: list[str]) -> RoundState:
        """A new state with these parts (made by the caller and shared with nothing: copies, or
        views.view's masked ones) and its own copy of every other list and dict.

        Interpreted, the fields are set directly, not through __init__: views.view makes a state
        every turn. Compiled (mypyc), the native __init__ is the fast way, and there is no __dict__.
        """
        in_front = self.in_front
        if not _NATIVE:  # interpreted: the fields are the instance's dict, copied in one step
            other: RoundState = object.__new__(RoundState)
            other.__dict__ = fields = self.__dict__.copy()  # the plain values; every container is replaced
            fields.update(
                board=board, roles=roles, hands=hands, knowledge=knowledge, deck=deck, discard=discard,
                removed=removed, nuggets=nuggets, aside=aside, retired=retired,
                in_front=dict(zip(in_front, map(list, in_front.values()))),
                gold=dict(self.gold),
                won=list(self.won),
                winners=list(self.winners),
                thieves=list(self.thieves),
                gold_before_theft=dict(self.gold_before_theft),
                payout=dict(self.payout),
            )
            return other
        # compiled by mypyc: every field in order (tests/test_listed_moves.py checks that a copy has them all)
        other = RoundState(
            self.ruleset, self.players, board, self.options, roles, hands,
            dict(zip(in_front, map(list, in_front.values()))), deck, discard, removed, nuggets, dict(self.gold),
            aside, retired, list(self.won), knowledge, self.passes, self.last_theft, self.to_move, self.round_no,
            self.last_actor, self.phase, self.finder, list(self.winners), self.next_start, list(self.thieves),
            dict(self.gold_before_theft), dict(self.payout),
        )
        other.front_memo = self.front_memo
        return other

    def all_cards(self) -> list[str]:
        """Every card id the round accounts for (for conservation checks)."""
        out = list(self.deck) + self.discard + self.removed + self.nuggets + self.aside + self.retired + self.won
        for h in self.hands.values():
            out += h
        for c in self.in_front.values():
            out += c
        out += [r for r in self.roles.values() if r]
        out += [t.card for t in self.board.cells.values()]
        return out


# Whether RoundState is a class compiled by mypyc (docs/engine-speed.md "mypyc"), whose instances have no __dict__.
_NATIVE = RoundState.__new__ is not object.__new__


def dwarf_pool(ruleset: Ruleset, players: int, options: frozenset[str]) -> list[str]:
    """The dwarf cards shuffled for the deal (classic: the table of RULES.md §3)."""
    if ruleset == EXPANSION:
        return list(dwarf_ids(EXPANSION))
    saboteurs = CLASSIC_SABOTEURS[players]
    diggers = CLASSIC_DIGGERS[players] - (1 if "max-saboteurs" in options else 0)
    return ids_of("saboteur")[:saboteurs] + ids_of("digger")[:diggers]


def deal(
    ruleset: Ruleset,
    players: tuple[str, ...],
    chance: Chance,
    *,
    options: frozenset[str] = frozenset(),
    round_no: int = 1,
    first_seat: int = 0,
    gold: dict[str, int] | None = None,
    nuggets: list[str] | None = None,
) -> RoundState:
    """Deal a round. Draw order from `chance`: dwarves, goals, deck, nuggets.

    `gold` and `nuggets` carry over from earlier rounds (round 1: zeros and the full pile).
    """
    lo, hi = PLAYER_RANGE[ruleset]
    if not lo <= len(players) <= hi:
        raise ValueError(f"{ruleset} is for {lo}-{hi} players, not {len(players)}")
    dwarves = chance.shuffled(dwarf_pool(ruleset, len(players), options))
    goal_cards = chance.shuffled([ids_of(k)[0] for k in GOAL_KINDS])
    deck = chance.shuffled(deck_ids(ruleset))
    pile = chance.shuffled(nugget_ids() if nuggets is None else nuggets) if ruleset == CLASSIC else []
    removed: list[str] = []
    if ruleset == EXPANSION:
        removed, deck = deck[:EXPANSION_REMOVED], deck[EXPANSION_REMOVED:]
    size = hand_size(ruleset, len(players))
    hands = {}
    for p in players:
        hands[p], deck = deck[:size], deck[size:]
    return RoundState(
        ruleset=ruleset,
        players=tuple(players),
        board=Board.new(dict(zip(GOAL_CELLS, goal_cards))),
        options=frozenset(options),
        roles=dict(zip(players, dwarves)),
        hands=hands,
        in_front={p: [] for p in players},
        deck=deck,
        removed=removed,
        nuggets=pile,
        gold=dict(gold) if gold else {p: 0 for p in players},
        aside=dwarves[len(players) :],
        knowledge={p: [] for p in players},
        to_move=first_seat,
        round_no=round_no,
    )
