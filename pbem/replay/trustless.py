"""The audit of a trustless game (docs/trustless.md): its chain followed again, from the
invitation, by someone who saw none of it and holds no key of the game.

Following the chain checks everything a seat checks: the host's signature on each packet and
its place in the chain, each relayed block's seat signature, every key proof, every shuffle
proof, every public token's proof, every card opened in play against the move that names it,
every move through the engine on the public position; and at each round's end the revealed
round keys, the whole round opened, every card opened during play checked against it, and
the round replayed on its cards for its payout. The first thing that fails is the fault: the
packet that holds it and why. Sealed tokens (a second map of a goal) only their reader can check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.catalog import card_kind
from engine.errors import EngineError
from engine.position import dump
from pbem.errors import BadPacket, PbemError, Text, msg
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Invitation, Packet, Signed, check_signature, parse, payload_hash
from pbem.replay.report import said_json
from pbem.replay.rounds import Replay, replayed
from pbem.replay.sources import NotReplayable, Source, audit_hint, pick_round
from pbem.seat.checked import checked_in, read_checked
from pbem.seat.trustless import Follower
from pbem.ui.words import t

Reader = tuple[Path, Identity]  # a seat's key home and its key


@dataclass(frozen=True)
class RoundSummary:
    round: int
    moves: int
    finder: str | None
    roles: dict[str, str]
    payout: dict[str, int]
    gold: dict[str, int]

    def line(self) -> str:
        found = f"gold found by {self.finder}" if self.finder else "no gold found"
        roles = ", ".join(f"{p} {r}" for p, r in self.roles.items())
        pay = ", ".join(f"{p} +{g}" for p, g in self.payout.items())
        return (f"round {self.round}: ok: {self.moves} moves, every shuffle, token, opened card and move checked, "
                f"the round replayed on its opened cards; {found}; roles {roles}; payout {pay}")

    def to_json(self) -> dict[str, Any]:
        return {"round": self.round, "ok": True, "moves": self.moves, "finder": self.finder, "roles": self.roles,
                "payout": self.payout, "gold": self.gold}


@dataclass(frozen=True)
class GoneSummary:
    """A seat the host declared gone (docs/trustless.md §11), as the audit followed it: the
    declaration checked against the due time the packet before signed, every stand-in share
    checked against the seat's commitments, its turns taken as face-down discards."""

    seat: str
    packet: int
    step: str
    due: str
    stand_ins: int  # the others' blocks that carried their stand-in shares for it
    discards: int  # its turns taken as face-down discards
    back: list[int] = field(default_factory=list)  # the packets in which it came back (answered again)

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "packet": self.packet, "step": self.step, "due": self.due,
                "stand_ins": self.stand_ins, "discards": self.discards, **({"back": self.back} if self.back else {})}


@dataclass
class ChainAudit:
    game: str
    packets: int = 0
    rounds: list[RoundSummary] = field(default_factory=list)
    step: str = "join"  # where the chain stops
    fault: Text | None = None
    # where an unfinished chain stops: the seats its last packet waits for, since the packet
    # that opened that step, and the host-signed time they were due by (with deadlines)
    waiting: list[str] = field(default_factory=list)
    since: int | None = None
    due: str | None = None
    talk: int = 0  # lines of table talk checked against the chain
    gone: list[GoneSummary] = field(default_factory=list)  # the seats declared gone, and who stood in
    failed: dict[str, Any] | None = None  # the join failed on a complaint (docs/trustless.md §11.1): who was at fault

    def to_json(self) -> dict[str, Any]:
        stall = {"waiting": {"step": self.step, "seats": self.waiting, "since": self.since,
                             **({"due": self.due} if self.due else {})}} if self.waiting else {}
        return {"game": self.game, "trustless": True, "ok": self.fault is None, "packets": self.packets,
                "step": self.step, "rounds": [r.to_json() for r in self.rounds],
                "fault": None if self.fault is None else said_json(self.fault), "talk": self.talk,
                **({"gone": [g.to_json() for g in self.gone]} if self.gone else {}),
                **({"failed": self.failed} if self.failed else {}), **stall}


def audit_chain(src: Source, game: str, anchor: Signed[Invitation] | None) -> ChainAudit:
    """Follow every packet of `game` in `src` from its invitation (the one trusted, if given)."""
    return follow_chain(src, game, anchor)[0]


def follow_chain(src: Source, game: str, anchor: Signed[Invitation] | None,
                 by_seat: Reader | None = None) -> tuple[ChainAudit, Follower | None]:
    """The audit of `game`'s chain in `src`, and the follower that went as far as it holds
    (None: the invitation itself is not to be trusted). `by_seat`: a seat's key home and key,
    for a replay by that seat: the packets its key checked before (pbem/seat/checked.py) are
    followed without checking their proofs again, as its `pbem turn` and `pbem show` do; every
    signature and link of the chain still is (`pbem audit` passes none: it checks every proof)."""
    out = ChainAudit(game)
    inv = _invitation(src, game, anchor, out)
    if inv is None:
        return out, None
    follower = Follower(inv)
    packets = sorted(src.packets.get(game, {}).items())
    upto = _checked_before(by_seat, inv, [src.blocks[next(iter(v))] for _, v in packets if len(v) == 1]) if by_seat else 0
    for seq, versions in packets:
        if len(versions) > 1:
            out.fault = msg("packet {seq}: {error}", seq=seq, error=msg("the host signed {n} different packets {seq} (a forked "
                                                                       "chain)", n=len(versions), seq=seq))
            break
        h = next(iter(versions))
        try:
            packet = src.blocks[h]
            check_signature(packet)
            assert payload_hash(packet.payload) == h
            follower.follow(packet, check=seq > upto)
        except (PbemError, EngineError) as exc:
            out.fault = msg("packet {seq}: {error}", seq=seq, error=exc if isinstance(exc, PbemError) else str(exc))
            break
        out.packets = seq
    if out.fault is None and src.talk.get(game):  # every line of table talk: its seat's signature, its packet
        from pbem.replay.talk import check_chain

        chain = {seq: next(iter(v)) for seq, v in src.packets.get(game, {}).items() if seq <= out.packets}
        out.talk, faults = check_chain(list(src.talk[game].values()), chain, inv.doc)
        out.fault = faults[0] if faults else None
    table = follower.table
    out.gone = _gone(follower, out.packets)
    out.step = table.step()
    if table.complaints.failed is not None:
        out.failed = table.complaints.failed.to_json()
    if out.fault is None and out.packets and out.step != "over":  # a stall is named, with its seats
        out.waiting, out.since, out.due = table.waiting().seats, table.opened_at, follower.due
    for end in table.ended:
        s = end.state
        out.rounds.append(RoundSummary(end.round_no, end.moves, s.finder,
                                       {p: card_kind(str(s.roles[p])).kind for p in s.players}, dict(s.payout),
                                       dict(s.gold)))
    return out, follower


def _invitation(src: Source, game: str, anchor: Signed[Invitation] | None, out: ChainAudit) -> Signed[Invitation] | None:
    """The invitation the chain of `game` is followed from: `anchor` if given, else the one
    `src` holds; None (the fault said in `out`) if it is not to be trusted."""
    found = src.invitations.get(game, {})
    if anchor is not None:
        inv = anchor
        if found and inv.hash not in found:
            out.fault = msg("the invitation among these files is not the one you trust")
            return None
    elif len(found) == 1:
        inv = parse("invitation", next(iter(found.values()))).expect(Invitation)
    else:
        raise NotReplayable(f"{src.label} holds {len(found)} invitations of game {game}",
                            hint="audit a folder or database with the game's invitation, or pass --invitation FILE")
    if inv.signer.encode() != inv.doc.host.key:
        out.fault = msg("the invitation is not signed by the host it names")
        return None
    return inv


def _gone(follower: Follower, packets: int) -> list[GoneSummary]:
    """Each seat declared gone in the chain `follower` followed (up to packet `packets`): when, how
    often the others stood in for it, and the packets it sent back before it was declared gone again."""
    vanished = follower.table.vanished
    out = []
    for seq, g in follower.declared:
        for seat in g.seats:
            stood = sum(1 for _, doc, _ in follower.log if any(x.dealer == seat for x in doc.stand_in or []))
            again = min((s for s, h in follower.declared if seat in h.seats and s > seq), default=packets + 1)
            out.append(GoneSummary(seat, seq, g.step, g.due, stood, vanished.discarded.get(seat, 0),
                                   [b for b in vanished.returned.get(seat, []) if seq < b < again]))
    return out


def _checked_before(by_seat: Reader, inv: Signed[Invitation], chain: list[Signed[Packet]]) -> int:
    """The packet of `chain` up to which the key of `by_seat` checked its proofs before (0: none)."""
    home, identity = by_seat
    name = inv.doc.seat_of_key(identity.public.encode())
    return 0 if name is None else checked_in(read_checked(home, identity, inv, name), chain, 0)


Followed = tuple[ChainAudit, Follower | None]  # what follow_chain says


def chain_round(src: Source, game: str, round_no: int | None, followed: Followed | None = None,
                by_seat: Reader | None = None) -> Replay:
    """A round of a trustless game for `pbem replay`: the chain followed (every signature, proof
    and move checked, as the audit does) to that round's end, where every seat's round key opened
    its deal; then replayed from that deal like any archived round. A round that ended before a
    fault in the chain is still shown; a later one is refused with the fault. `followed`: the
    chain of `src` followed so already (by `follow_chain`), not followed again; `by_seat`: the
    replaying seat's key home and key (follow_chain)."""
    rep, follower = followed or follow_chain(src, game, None, by_seat)
    ended = {end.round_no: end for end in follower.table.ended} if follower is not None else {}
    if rep.fault is not None and (round_no is None or round_no not in ended):
        raise BadPacket(t("the chain of game {game} fails at {fault}", game=game, fault=rep.fault), hint=audit_hint())
    assert follower is not None
    end = ended[pick_round(src, game, round_no, chain=sorted(ended))]
    moves = [(seat, text, None, None) for seat, text in end.played]
    return replayed(game, end.round_no, end.start, moves, dump(end.state), follower.inv, origin=src.label)
