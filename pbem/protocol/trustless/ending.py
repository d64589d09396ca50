"""The end of a trustless round on the public table: the round opened with every seat's
revealed key, replayed on its cards and paid, then the expansion's thefts on it (RULES.md §5.2).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.catalog import HIDDEN
from engine.moves import Move
from engine.rules import apply
from engine.state import RoundState
from pbem.errors import Msg, listed, msg
from pbem.protocol.mental.group import Point
from pbem.protocol.trustless import audit
from pbem.protocol.trustless.round import PublicRound
from pbem.protocol.trustless.setup import Stacks
from pbem.protocol.trustless.table import TrustlessGame
from pbem.protocol.trustless.tokens import Slot

NOBODY = str(Move("steal"))  # a thief's choice to rob nobody


@dataclass(frozen=True)
class RoundEnd:
    """A finished round, replayed on its opened deal: what the payout and the audit need."""

    round_no: int
    state: RoundState  # the whole round, every card open
    orders: dict[str, list[str]]  # each stack of the round as it lay
    start: RoundState  # the deal, every card open
    played: tuple[tuple[str, str], ...]  # every move as (seat, text), face-down discards by their cards, steals last

    @property
    def moves(self) -> int:
        """How many moves the round had: its thieves' steals too, as its replay shows them."""
        return len(self.played)

    @property
    def gold(self) -> dict[str, int]:
        return dict(self.state.gold)


def open_round(game: TrustlessGame, r: PublicRound, shares: dict[str, dict[int, Point]], stacks: Stacks,
               revealed: dict[str, str], opened: dict[Slot, str]) -> dict[str, list[str]]:
    """Round `r`'s stacks opened with every seat's revealed key, each card opened in play checked
    against them."""
    k = r.round_no
    orders = audit.open_round(game, k, shares, stacks, revealed)
    audit.check_openings(orders, {s: c for s, c in opened.items() if s[0].endswith(f"@{k}")})
    return orders


def replay(r: PublicRound, orders: dict[str, list[str]], prev: RoundEnd | None, opened: dict[Slot, str],
           pile: list[Slot]) -> tuple[RoundEnd, list[Slot]]:
    """Round `r` replayed on its opened stacks after round `prev`, and the classic nugget pile
    left after its payout (`pile`, top first, the slots of cards opened or not)."""
    nuggets = [opened.get(s, HIDDEN) for s in pile] if pile else None
    start, played, true = r.replay(orders, gold=prev.gold if prev else None, nuggets=nuggets)
    if pile:
        by_card = {opened[s]: s for s in pile if s in opened}
        unknown = iter(s for s in pile if s not in opened)
        pile = [by_card[c] if c != HIDDEN else next(unknown) for c in true.nuggets]
    return RoundEnd(r.round_no, true, orders, start, tuple(played)), pile


def rob(end: RoundEnd, seat: str, text: str) -> RoundEnd:
    """`seat` steals (`text`, checked by the engine) on the opened round `end`."""
    state = end.state.copy()
    apply(state, text)
    return RoundEnd(end.round_no, state, end.orders, end.start, (*end.played, (seat, text)))


def over_line(players: tuple[str, ...], end: RoundEnd) -> Msg:
    """Round `end` is over, thefts included: who found the gold, and everyone's gold."""
    k, true = end.round_no, end.state
    gold = listed([f"{p} {true.gold[p]}" for p in players], how="list")
    if true.finder:
        return msg("round {round} is over: gold found by {finder}; gold {gold}", round=k, finder=true.finder, gold=gold)
    return msg("round {round} is over: no gold found; gold {gold}", round=k, gold=gold)
