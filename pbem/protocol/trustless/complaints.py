"""A holder's complaint about a bad dealt share, and its dealer's answer (docs/trustless.md §11.1).

Each holder opens and checks its shares of every other seat's keys when the joins are out
(packet 1). One that finds its shares off the dealer's commitments (or a box that does not
open for it) complains in the open, a `complaint` block naming the dealer, at any time before
the round is dealt. The table then waits for the dealer's `answer`: the complainer's shares in
the open, which anyone checks against the commitments (`vss.judge`). Shares that match name
the complainer (its complaint was forged); shares that do not, or no answer before the host
declares the dealer late, name the dealer. Either way the join has failed: the game is over
with nothing dealt, and the chain and the audit say who was at fault (a game made again deals
new keys: the shares opened belong to this one only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from pbem.errors import BadPacket, Msg, listed, msg, step_word
from pbem.protocol.documents import Gone, Mental
from pbem.protocol.mental.group import Point
from pbem.protocol.mental.vss import BadShare, Dealing, decode_shares, judge
from pbem.protocol.trustless.keys import EPOCHS, unb64

BEFORE_THE_DEAL = ("shuffle", "deal", "answer")  # the steps at which a holder may still complain


class ComplaintTable(Protocol):
    """What the complaints read of the public table."""

    shares: dict[str, dict[int, Point]]
    dealings: dict[str, Dealing]

    @property
    def players(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class Failed:
    """The join failed: `fault` ("dealer" or "complainer") says which of the two was at fault."""

    dealer: str
    complainer: str
    fault: Literal["dealer", "complainer"]
    packet: int  # the answer's packet, or the declaration's

    @property
    def seat(self) -> str:
        return self.dealer if self.fault == "dealer" else self.complainer

    def to_json(self) -> dict[str, object]:
        return {"dealer": self.dealer, "complainer": self.complainer, "fault": self.seat, "packet": self.packet}


@dataclass
class Complaints:
    t: ComplaintTable
    filed: dict[str, str] = field(default_factory=dict)  # complainer -> the dealer it names
    failed: Failed | None = None

    def dealers(self) -> list[str]:
        """The dealers the table waits for an answer from, in seat order."""
        return [p for p in self.t.players if p in self.filed.values()]

    def complain(self, doc: Mental, base: str, gone: dict[str, int], seq: int) -> Msg:
        """A holder's complaint (any seat, out of turn, before the round is dealt; once each). A
        dealer the host declared gone cannot answer: it is named at once."""
        dealer = doc.against
        if base not in BEFORE_THE_DEAL or not self.t.dealings:
            raise BadPacket(msg("{seat} complains about a dealt share at the {step} step: a complaint comes before the "
                                "round is dealt, in a game with a threshold", seat=doc.seat, step=step_word(base)))
        if dealer not in self.t.players or dealer == doc.seat or doc.seat in self.filed:
            raise BadPacket(msg("{seat}'s complaint names {dealer}: it must name another seat, once",
                                seat=doc.seat, dealer=repr(str(dealer)[:40])))
        self.filed[doc.seat] = str(dealer)
        if dealer in gone:
            self.failed = Failed(str(dealer), doc.seat, "dealer", seq)
            return msg("{seat} complains that the key shares {dealer} dealt it are bad; {dealer} is gone and cannot "
                       "answer: the join failed, {dealer} was at fault", seat=doc.seat, dealer=dealer)
        return msg("{seat} complains that the key shares {dealer} dealt it are bad; waiting for {dealer}'s answer",
                   seat=doc.seat, dealer=dealer)

    def answer(self, doc: Mental, seq: int) -> Msg:
        """The dealer opens the complainer's shares: the table decides who was at fault."""
        complainer = doc.against
        if self.filed.get(str(complainer)) != doc.seat:
            raise BadPacket(msg("{seat} answers a complaint of {complainer}, which did not complain about it",
                                seat=doc.seat, complainer=repr(str(complainer)[:40])))
        what = msg("{seat}'s answer to {complainer}", seat=doc.seat, complainer=complainer)
        try:
            shares: list[int] | None = decode_shares(unb64(doc.shares, what), len(EPOCHS), what)
        except BadShare:
            shares = None  # shares that are no shares match nothing: the dealer is named
        keys = [self.t.shares[doc.seat][e] for e in EPOCHS]
        fault = judge(shares, keys, self.t.dealings[doc.seat], self.t.players.index(str(complainer)))
        self.failed = Failed(doc.seat, str(complainer), fault, seq)
        return msg("{seat} answered {complainer}'s complaint with its shares in the open; the join failed: {fault} was "
                   "at fault", seat=doc.seat, complainer=complainer, fault=self.failed.seat)

    def declare(self, gone: Gone, seq: int) -> Msg:
        """The host declares a dealer late with its answer: it is named at fault."""
        waited = self.dealers()
        if gone.step != "answer" or not gone.seats or any(p not in waited for p in gone.seats):
            raise BadPacket(msg("packet {seq} declares {seats} gone, but the table waits for {waited}", seq=seq,
                                seats=listed(gone.seats), waited=listed(waited)))
        dealer = gone.seats[0]
        complainer = next(c for c, d in self.filed.items() if d == dealer)
        self.failed = Failed(dealer, complainer, "dealer", seq)
        return msg("{dealer} did not answer {complainer}'s complaint in time; the join failed: {dealer} was at fault",
                   dealer=dealer, complainer=complainer)
