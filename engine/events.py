"""The events a move causes, as `rules.apply` returns them: plain JSON-ready dicts, typed.

Each event is a dict whose "event" key names its kind. They travel in packets and archives,
so their keys are a wire format: add keys, never rename them. The private parts (a draw's
card, what a map, an inspection or a new hat showed) are seen only by the seat they concern;
`views.events_for` is the one rule for who sees what, and the copies others get lack the
keys marked "private part" below.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict


class MoveEvent(TypedDict):
    event: Literal["move"]
    player: str
    move: str  # canonical notation; names a discard's cards, so only the mover sees it


class PlaceEvent(TypedDict):
    event: Literal["place"]
    player: str
    card: str
    at: list[int]
    rotated: bool


class RevealEvent(TypedDict):
    event: Literal["reveal"]
    goal: str
    card: str
    rotated: bool


class GoldEvent(TypedDict):
    event: Literal["gold"]
    finder: str


class RemoveEvent(TypedDict):
    """A card taken from in front of `player` (a repair, hands off, free, or discard-2-and-remove)."""

    event: Literal["remove"]
    player: str
    card: str


class DrawEvent(TypedDict):
    event: Literal["draw"]
    player: str
    card: NotRequired[str]  # private part


class HandsEmptyEvent(TypedDict):
    event: Literal["hands-empty"]


class PassesEvent(TypedDict):
    event: Literal["passes"]
    count: int


class SkipEvent(TypedDict):
    event: Literal["skip"]
    player: str


class RockfallEvent(TypedDict):
    event: Literal["rockfall"]
    at: list[int]
    card: str


class MapEvent(TypedDict):
    event: Literal["map"]
    player: str
    goal: str
    card: NotRequired[str]  # private part
    private: NotRequired[bool]  # private part


class InspectEvent(TypedDict):
    event: Literal["inspect"]
    player: str
    target: str
    role: NotRequired[str]  # private part
    private: NotRequired[bool]  # private part


class SwapHatEvent(TypedDict):
    event: Literal["swap-hat"]
    player: str
    role: NotRequired[str]  # private part
    private: NotRequired[bool]  # private part


class SwapHandEvent(TypedDict):
    event: Literal["swap-hand"]
    player: str
    target: str


class RoundOverEvent(TypedDict):
    event: Literal["round_over"]
    round: int
    gold_found: bool


class PayoutEvent(TypedDict):
    event: Literal["payout"]
    gold: dict[str, int]  # gold won this round, by player


class WinnersEvent(TypedDict):
    event: Literal["winners"]
    players: list[str]


class NextStartEvent(TypedDict):
    event: Literal["next_start"]
    player: str | None


class NuggetEvent(TypedDict):
    """Classic payout: a digger takes one `card`; a saboteur takes `cards` worth `value`."""

    event: Literal["nugget"]
    player: str
    card: NotRequired[str]
    cards: NotRequired[list[str]]
    value: NotRequired[int]


class TeamsEvent(TypedDict):
    event: Literal["teams"]
    teams: list[str]
    lone: str | None


class CrystalsEvent(TypedDict):
    event: Literal["crystals"]
    count: int
    each: int


class TheftsEvent(TypedDict):
    event: Literal["thefts"]
    order: list[str]


class StealEvent(TypedDict):
    event: Literal["steal"]
    player: str
    victim: str | None
    skipped: NotRequired[bool]  # the engine skipped a thief with no possible victim


Event = (
    MoveEvent | PlaceEvent | RevealEvent | GoldEvent | RemoveEvent | DrawEvent | HandsEmptyEvent | PassesEvent
    | SkipEvent | RockfallEvent | MapEvent | InspectEvent | SwapHatEvent | SwapHandEvent | RoundOverEvent | PayoutEvent
    | WinnersEvent | NextStartEvent | NuggetEvent | TeamsEvent | CrystalsEvent | TheftsEvent | StealEvent
)
