"""The seats of a trustless game that vanished (docs/trustless.md §11), as the public table keeps them.

A seat the host declares gone sends nothing more: any K of the others stand in for it with
their shares of its round keys. At a parallel step (deal, goal, reveal) each holder sends its
part of what the gone seats owe there, and once K holders gave theirs the parts are combined
into the gone seats' tokens and keys (`complete`). During a round the tokens a gone seat owes
the mover are gathered slot by slot, riding on any block (`take_shares`). A token a gone seat
owes a later reader sealed is met by shares sealed to that reader (`sealed`): once K - 1 others
gave theirs the reader reads the card with its own share, and when it plays it, its opening
makes the token public (`unseal`). The table owns one
`Vanished` and asks it; this module reads the table only through `VanishedTable`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import msgspec

from engine.state import ROUNDS_PER_GAME
from pbem.errors import BadPacket, listed, msg, step_word
from pbem.protocol.documents import Gone, Mental, Unsealed, Waiting
from pbem.protocol.mental.elgamal import Ciphertext
from pbem.protocol.mental.group import Point
from pbem.protocol.mental.vss import Dealing, SealedShare, combine
from pbem.protocol.trustless import standin as SI
from pbem.protocol.trustless.round import PublicRound
from pbem.protocol.trustless.table import TrustlessGame
from pbem.protocol.trustless.tokens import ALL, Slot

PARALLEL = ("deal", "goal", "reveal", "tokens")  # steps whose seats answer the same packet


class VanishedTable(Protocol):
    """What the vanished seats' bookkeeping reads of the public table."""

    game: TrustlessGame
    round: PublicRound | None
    pub: dict[Slot, dict[str, Point]]
    shares: dict[str, dict[int, Point]]
    dealings: dict[str, Dealing]

    @property
    def players(self) -> tuple[str, ...]: ...
    @property
    def round_no(self) -> int: ...
    def step(self) -> str: ...
    def base_step(self) -> str: ...
    def owing(self, step: str) -> list[str]: ...
    def cts(self) -> dict[Slot, Ciphertext]: ...
    def deal_slots(self, round_no: int, seat: str) -> list[Slot]: ...
    def goal_slots(self, seat: str) -> list[Slot]: ...
    def nugget_slots(self, seat: str | None = None) -> list[Slot]: ...


@dataclass
class Vanished:
    t: VanishedTable
    gone: dict[str, int] = field(default_factory=dict)  # seats the host declared gone, and the packet
    stand: dict[str, dict[str, SI.CheckedShares]] = field(default_factory=dict)  # holder -> its checked parts, this step
    debt_shares: dict[str, dict[Slot, dict[str, Point]]] = field(default_factory=dict)  # gone -> slot -> holder
    stood_in: dict[str, dict[Slot, Point]] = field(default_factory=dict)  # the tokens the last stand-in completed
    discarded: dict[str, int] = field(default_factory=dict)  # the face-down discards taken for each gone seat
    returned: dict[str, list[int]] = field(default_factory=dict)  # a gone seat that came back: the packets
    # gone -> (slot, reader) -> holder -> its share sealed to the reader (kept for the round: the
    # reader opens them, and makes them public when it plays the card)
    sealed: dict[str, dict[tuple[Slot, str], dict[str, SealedShare]]] = field(default_factory=dict)
    # (dealer, holder) -> the holder's public images of the dealer's keys, with the key shares and
    # dealing they came from: each stand-in share is checked against one, slot after slot
    _images: dict[tuple[str, str], tuple[dict[int, Point], Dealing, dict[int, Point]]] = field(
        default_factory=dict, repr=False, compare=False)

    def declare(self, gone: Gone, seq: int, w: Waiting) -> None:
        """Packet `seq` declares `gone.seats` gone while the table waits for `w`: each was waited
        for (the host's clock, past the due time and grace, is checked by the follower); enough
        seats stay to stand in."""
        t, step, waited = self.t, w.step, w.seats
        if not t.game.threshold:
            raise BadPacket(msg("packet {seq} declares a seat gone, but game {game} has no threshold", seq=seq,
                                game=t.game.id))
        if step in ("join", "over") or gone.step != step:
            raise BadPacket(msg("packet {seq} declares seats gone at the {step} step, but the table is at the {wanted} "
                                "step", seq=seq, step=step_word(gone.step), wanted=step_word(step)))
        if not gone.seats or any(p not in waited for p in gone.seats) or len(set(gone.seats)) != len(gone.seats):
            raise BadPacket(msg("packet {seq} declares {seats} gone, but the table waits for {waited}", seq=seq,
                                seats=listed(gone.seats), waited=listed(waited)))
        left = [p for p in t.players if p not in self.gone and p not in gone.seats]
        if len(left) < t.game.threshold:
            raise BadPacket(msg("packet {seq} declares {seats} gone, leaving {left} seats: {k} are needed to stand in",
                                seq=seq, seats=listed(gone.seats), left=len(left), k=t.game.threshold))
        for p in gone.seats:
            self.gone[p] = seq
            self.stand.pop(p, None)
            if t.round is not None:
                t.round.ledger.forget(p)

    def back(self, seat: str, seq: int) -> None:
        """Gone `seat` answers again (in packet `seq`): it does its own part from now on. Its
        face-down discards stay made; the others owe it again the tokens for what it holds; what
        a quorum gave for it stays given, and parts of its debts not complete yet are dropped."""
        del self.gone[seat]
        self.returned.setdefault(seat, []).append(seq)
        self.stand = {}  # parts for this step's gone seats: they are asked again
        self.debt_shares.pop(seat, None)
        if self.t.round is not None:
            self.t.round.ledger.back(seat)

    def since_back(self, doc: Mental) -> Mental:
        """`doc` without its parts for seats that came back after the packet it answers: made
        while they were gone, they are passed over (each pays its own debts again), as a share
        of a token another quorum completed meanwhile is; the block itself is taken."""
        late = {v for v, seqs in self.returned.items() if v not in self.gone and seqs[-1] > doc.seq}
        if not doc.stand_in or not late.intersection(x.dealer for x in doc.stand_in):
            return doc
        kept = [x for x in doc.stand_in if x.dealer not in late]
        return msgspec.structs.replace(doc, stand_in=kept if kept or doc.step == "stand-in" else None)

    def new_round(self, r: PublicRound) -> None:
        """A round is dealt: no share of the last round's debts carries over, and a gone seat owes nothing in it."""
        self.debt_shares = {}
        self.sealed = {}
        for p in self.gone:
            r.ledger.forget(p)

    # --- a gone seat's debts during a round: shares gathered slot by slot, on any block ----------

    def debts_of(self, v: str, reader: str | None = None) -> list[Slot]:
        """The public tokens gone seat `v` owes now (those whose first reader is `reader`)."""
        r = self.t.round
        if r is None:
            return []
        return [s for to, s, sealed in r.ledger.owed.get(v, []) if not sealed and reader in (None, to)]

    def sealed_of(self, v: str, reader: str) -> list[Slot]:
        """The tokens gone seat `v` owes `reader` sealed (it is their later reader)."""
        r = self.t.round
        if r is None:
            return []
        return list(dict.fromkeys(s for to, s, sealed in r.ledger.owed.get(v, []) if sealed and to == reader))

    def debt_missing(self, v: str, holder: str) -> list[Slot]:
        """The slots of `v`'s debts `holder` has not given its stand-in share for yet."""
        return [s for s in dict.fromkeys(self.debts_of(v)) if holder not in self.debt_shares.get(v, {}).get(s, {})]

    def sealed_missing(self, v: str, holder: str) -> dict[str, list[Slot]]:
        """`v`'s sealed debts to readers other than `holder` it has not given its sealed share for yet."""
        out: dict[str, list[Slot]] = {}
        for reader in self.t.players:
            if reader not in (holder, v):
                got = self.sealed.get(v, {})
                slots = [s for s in self.sealed_of(v, reader) if holder not in got.get((s, reader), {})]
                if slots:
                    out[reader] = slots
        return out

    def missing(self, v: str, holder: str, reader: str) -> bool:
        """Whether `holder` still owes its share of a token `v` owes `reader`."""
        return bool(set(self.debt_missing(v, holder)) & set(self.debts_of(v, reader))
                    or self.sealed_missing(v, holder).get(reader))

    def covered(self, v: str, reader: str) -> bool:
        """Whether K - 1 seats other than `reader` gave their shares of each token `v` owes it
        (public, or sealed to it)."""
        given, k = self.debt_shares.get(v, {}), self.t.game.threshold
        return all(len([h for h in given.get(s, {}) if h != reader]) >= k - 1 for s in self.debts_of(v, reader)) and all(
            len(self.sealed.get(v, {}).get((s, reader), {})) >= k - 1 for s in self.sealed_of(v, reader))

    def take_shares(self, doc: Mental, check: bool) -> None:
        """A holder's shares of gone seats' public debts, riding on its block: checked (proofs:
        if `check`), kept by slot, and each token with K shares combined and paid (as if the gone seat had sent it)."""
        t = self.t
        got = SI.read_shares(t.game.id, doc.seat, doc.stand_in or [], self.gone, self.debts_of,
                             lambda v, s: v in t.pub.get(s, {}), lambda v: self.images(v, doc.seat), t.cts(),
                             self.epoch_of, check=check)
        for v, points in got.items():
            for s, point in points.items():
                self.debt_shares.setdefault(v, {}).setdefault(s, {})[doc.seat] = point
        boxes = SI.read_sealed(t.game.id, doc.seat, doc.stand_in or [], self.gone, t.players, self.sealed_of,
                               lambda v, to, s: (s, to) in self.sealed.get(v, {}), lambda v: self.images(v, doc.seat),
                               lambda p: t.shares[p], t.cts(), self.epoch_of, check=check)
        r, k = t.round, t.game.threshold
        for (v, to), got_boxes in boxes.items():
            for s, box in got_boxes.items():
                self.sealed.setdefault(v, {}).setdefault((s, to), {})[doc.seat] = box
            met = [s for s in self.sealed_of(v, to) if len(self.sealed[v].get((s, to), {})) >= k - 1]
            if met:
                assert r is not None
                r.ledger.paid(v, to, met)  # the reader opens them with its own share
        for v in self.gone:
            for s in dict.fromkeys(self.debts_of(v)):
                given = self.debt_shares.get(v, {}).get(s, {})
                if len(given) >= k:
                    assert r is not None
                    quorum = sorted(given, key=t.players.index)[:k]
                    point = combine({t.players.index(h): given[h] for h in quorum}, k)
                    t.pub.setdefault(s, {})[v] = point
                    self.stood_in.setdefault(v, {})[s] = point
                    r.ledger.paid(v, ALL, [s])
                    del self.debt_shares[v][s]

    def unseal(self, mover: str, slot: Slot, given: list[Unsealed], check: bool) -> None:
        """A played card's opening makes public the token of each gone seat that reached its
        player as sealed shares: its own share and its token on K - 1 of those boxes, checked
        (proofs: if `check`)."""
        t = self.t
        for u in given:
            v = u.dealer
            boxes = self.sealed.get(v, {}).get((slot, mover), {})
            if v not in t.players or v in t.pub.get(slot, {}) or not boxes or [x.dealer for x in given].count(v) > 1:
                raise BadPacket(msg("{seat}'s opening of slot {slot} hands on a token the table does not need",
                                    seat=mover, slot=f"{slot[0]} #{slot[1]}"))
            e = self.epoch_of(slot[0])
            point = SI.read_unsealed(t.game.id, mover, slot, u, boxes, self.images(v, mover)[e], t.shares[mover][e],
                                     t.cts()[slot], t.players.index, t.game.threshold, check=check)
            t.pub.setdefault(slot, {})[v] = point

    # --- a gone seat's part of a parallel step: K holders' parts, combined ------------------------

    def needs(self) -> list[SI.Need]:
        """At a stand-in step: what each gone seat the step waits for owes there, in seat order
        (none at the mover's cards: those shares are gathered slot by slot)."""
        return self.needs_at(self.t.base_step()) if self.t.step() == "stand-in" else []

    def needs_at(self, base: str) -> list[SI.Need]:
        """What each gone seat the parallel step `base` waits for owes there, in seat order."""
        t, out = self.t, []
        for v in [p for p in t.owing(base) if p in self.gone] if base in PARALLEL else []:
            if base == "deal":
                out.append(SI.Need(v, t.deal_slots(1, v)))
            elif base == "goal":
                out.append(SI.Need(v, t.goal_slots(v)))
            elif base == "tokens":  # shares gathered slot by slot (`take_shares`)
                continue
            else:
                k = t.round_no
                nxt = t.deal_slots(k + 1, v) if k < ROUNDS_PER_GAME else []
                out.append(SI.Need(v, t.nugget_slots(v) + nxt, k))
        return out

    def epoch_of(self, label: str) -> int:
        return self.t.game.stack(label).round_no

    def images(self, dealer: str, holder: str) -> dict[int, Point]:
        """`holder`'s public images of `dealer`'s keys (made once from the keys and dealing it joined with)."""
        keys, dealing = self.t.shares[dealer], self.t.dealings[dealer]
        made = self._images.get((dealer, holder))
        if made is None or made[0] is not keys or made[1] is not dealing:
            made = keys, dealing, SI.holder_images(keys, dealing, self.t.players.index(holder))
            self._images[(dealer, holder)] = made
        return made[2]

    def take_parts(self, doc: Mental, base: str, check: bool) -> None:
        """A holder's part of what the gone seats owe at the step, on its stand-in block or its
        own deal, goal or reveal block: checked (proofs: if `check`) and kept until K holders
        gave theirs."""
        needs = self.needs_at(base)
        if not needs:
            raise BadPacket(msg("{seat}'s stand-in shares are for {dealer}, whose tokens the table does not wait for",
                                seat=doc.seat, dealer=listed([str(x.dealer)[:40] for x in doc.stand_in or []])))
        self.stand[doc.seat] = SI.read(self.t.game.id, doc.seat, doc.stand_in or [], needs,
                                       lambda v: self.images(v, doc.seat), self.t.cts(), self.epoch_of,
                                       check=check)

    def complete(self) -> tuple[list[str], list[tuple[SI.Need, int | None]]] | None:
        """Once the step waits only for gone seats and K holders gave their parts: the gone
        seats' tokens (made public) and round keys, combined; the quorum and each need's secret."""
        t = self.t
        base, k = t.base_step(), t.game.threshold
        owing = t.owing(base) if base in ("deal", "goal", "reveal") else []
        if not owing or any(p not in self.gone for p in owing) or len(self.stand) < k:
            return None
        quorum = sorted(self.stand, key=t.players.index)[:k]
        done = []
        for need in self.needs_at(base):
            v = need.dealer
            parts = {t.players.index(h): self.stand[h][v] for h in quorum}
            key = t.shares[v][need.epoch] if need.epoch is not None else t.shares[v][0]
            tokens, secret = SI.complete(need, parts, k, key)
            for slot, point in tokens.items():
                t.pub.setdefault(slot, {})[v] = point
            self.stood_in[v] = tokens
            done.append((need, secret))
        self.stand = {}
        return quorum, done
