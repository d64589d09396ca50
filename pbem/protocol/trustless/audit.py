"""Opening a finished round for its audit: every seat's revealed key for the round's epoch.

When round k ends each seat publishes its epoch-k secret share (checked against the share in
its join). Anyone holding the joins, the shuffle messages and those reveals can then open
every slot of round k, recompute the engine's deal, and check every card opened during play
against it; the existing audit replays the moves from there.
"""

from __future__ import annotations

from engine.state import RoundState
from pbem.errors import BadPacket, listed, msg
from pbem.protocol.mental.elgamal import decrypt
from pbem.protocol.mental.group import Point
from pbem.protocol.mental.proofs import BadProof
from pbem.protocol.trustless.keys import check_revealed
from pbem.protocol.trustless.setup import Stacks
from pbem.protocol.trustless.stacks import card_of
from pbem.protocol.trustless.table import TrustlessGame, deal_in_order
from pbem.protocol.trustless.tokens import Slot


def open_round(game: TrustlessGame, round_no: int, shares: dict[str, dict[int, Point]], stacks: Stacks,
               revealed: dict[str, str]) -> dict[str, list[str]]:
    """Every stack of round `round_no`, opened with every seat's revealed key: {label: cards}."""
    missing = [p for p in game.players if p not in revealed]
    if missing:
        raise BadPacket(msg("round {round} cannot be opened: {seats} did not reveal its key", round=round_no,
                          seats=listed(missing)),
                        hint=msg("a seat that never reveals stalls the audit; the audit names it"))
    secret = sum(check_revealed(p, round_no, shares[p][round_no], revealed[p]) for p in game.players)
    orders = {}
    for s in game.stacks:
        if s.round_no != round_no:
            continue
        cards = []
        for i, ct in enumerate(stacks[s.label]):
            card = card_of(decrypt(ct, secret), s)
            if card is None:
                raise BadProof(msg("slot {slot} opens to no card of its stack", slot=f"{s.label} #{i}"))
            cards.append(card)
        if sorted(cards) != sorted(s.cards):
            raise BadProof(msg("stack {stack} does not open to its cards, each once", stack=s.label))
        orders[s.label] = cards
    return orders


def round_start(game: TrustlessGame, round_no: int, orders: dict[str, list[str]], *, first_seat: int = 0,
                gold: dict[str, int] | None = None, nuggets: list[str] | None = None) -> RoundState:
    return deal_in_order(game, round_no, orders, first_seat=first_seat, gold=gold, nuggets=nuggets)


def check_openings(orders: dict[str, list[str]], opened: dict[Slot, str]) -> None:
    """Every card opened during the round must be the card the audit finds in its slot."""
    for (label, i), card in sorted(opened.items()):
        if label in orders and orders[label][i] != card:
            raise BadProof(msg("slot {slot} was opened as {card} during play but holds {other}", slot=f"{label} #{i}",
                                  card=card, other=orders[label][i]))
