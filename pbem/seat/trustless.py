"""One seat of a trustless game (docs/trustless.md): its keys, the chain it follows, what it owes.

The seat's key shares are derived from its pbem key and the invitation, like its shuffle
contribution (pbem/protocol/fairness.py): Ed25519 signatures are deterministic, so the same
key gives the same shares and the same join on every machine and every run, nothing secret
is ever written to a file, and only the key's holder can compute them.

`TrustlessSeat.follow` takes the host's packets in order: it checks the host's signature and
the chain (every packet names the one before; a fork is refused), every relayed block's
signature against its seat's key, and every proof in it (through `PublicTable`); once the
stacks are final it opens, with the others' tokens, this seat's role and hand. `owed` is the
block this seat must send at the table's current step, if any.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from engine.catalog import HIDDEN, card_kind
from engine.moves import Move
from engine.state import ROUNDS_PER_GAME, RoundState
from pbem.errors import BadPacket, BadSignature, UsageError
from pbem.protocol import fairness
from pbem.protocol.crypto import Identity, PublicKey
from pbem.protocol.documents import (
    Gone,
    Invitation,
    Join,
    Mental,
    Packet,
    Signed,
    b64,
    parse_relayed,
    read_blocks,
    read_text,
    sign,
)
from pbem.protocol.mental.group import ScalarSource, seeded_scalars
from pbem.protocol.mental.vss import BadShare, combine, share_bytes
from pbem.protocol.trustless import audit
from pbem.protocol.trustless import dealing as D
from pbem.protocol.trustless import messages as M
from pbem.protocol.trustless import setup as S
from pbem.protocol.trustless import standin as SI
from pbem.protocol.trustless.complaints import BEFORE_THE_DEAL
from pbem.protocol.trustless.keys import SeatKeys, joint_keys
from pbem.protocol.trustless.play import debt_bundles
from pbem.protocol.trustless.public import PublicTable
from pbem.protocol.trustless.table import Layout, TableSeat
from pbem.protocol.trustless.tokens import Slot
from pbem.ui.words import join as join_words
from pbem.ui.words import kind_name, render, t

Chooser = Callable[[RoundState], Move]  # a bot's choice on this seat's view of the round

KEY_LABEL = b"pbem-mental-keys/1\n"


def _derived(identity: Identity, inv: Signed[Invitation], purpose: bytes) -> ScalarSource:
    # the seed is this seat's own deterministic signature, a secret only its key can make
    sig = identity.sign(KEY_LABEL + purpose + b"\n" + inv.game.encode() + b"\n" + inv.hash.encode())
    return seeded_scalars(hashlib.sha512(KEY_LABEL + sig).digest())


def seat_keys(identity: Identity, inv: Signed[Invitation]) -> SeatKeys:
    return SeatKeys.new(_derived(identity, inv, b"shares"))


def join(inv: Signed[Invitation], identity: Identity, seat: str) -> Signed[Join]:
    """The trustless join: the usual contribution plus the key shares with their proofs (the
    proofs' nonces derived too, so joining again writes the same bytes)."""
    keys = seat_keys(identity, inv)
    dealing = None
    if inv.doc.threshold:  # the keys shared among the other seats (docs/trustless.md §11)
        dealing = M.dealing(keys, inv.game, seat, [(p.name, PublicKey.decode(p.key)) for p in inv.doc.seats],
                            inv.doc.threshold, _derived(identity, inv, b"join dealing"))
    return sign(Join(game=inv.game, seat=seat, invitation=inv.hash,
                     contribution=b64(fairness.seat_contribution(identity, inv.game, inv.hash)),
                     mental=M.key_shares(keys, inv.game, seat, _derived(identity, inv, b"join proofs")),
                     dealing=dealing), identity)


def read_relayed(packet: Packet, keys: dict[str, PublicKey]) -> list[Signed[Join] | Signed[Mental]]:
    """The seats' blocks a packet relays, each signature checked against its seat's key."""
    out: list[Signed[Join] | Signed[Mental]] = []
    for r in packet.relayed or []:
        block = parse_relayed(r, t("a block relayed in packet {seq}", seq=packet.seq))
        seat = block.doc.seat
        if block.game != packet.game or seat not in keys or block.signer.encode() != keys[seat].encode():
            raise BadSignature(t("packet {seq} relays {a_kind} for {seat} not signed by that seat's key", seq=packet.seq,
                                 a_kind=kind_name(r.kind, article=True), seat=repr(seat[:40])))
        out.append(block)
    return out


@dataclass
class Follower:
    """Anyone following a trustless game's chain, a spectator or an auditor: every packet's
    signature and place in the chain, every relayed block's signature, every proof and move."""

    inv: Signed[Invitation]
    table: PublicTable = field(init=False)
    head: tuple[int, str] = field(init=False)  # the last packet followed and its hash

    def __post_init__(self) -> None:
        self.table = PublicTable.of(self.inv.doc)
        self.head = (0, self.inv.hash)
        self.due: str | None = None  # when the seats the last packet waits for must answer (with deadlines)
        # every seat's block followed: the packet that relayed it, and the round it ended (if it did)
        self.log: list[tuple[int, Mental, int | None]] = []
        self.declared: list[tuple[int, Gone]] = []  # the packets that declared seats gone
        # the blocks this follower made itself (their payloads' hashes): relayed back to it, their
        # proofs are not checked again (it made them on the table as it stood at their step, and
        # the table still refuses a block for another step); every other block's proofs are
        self.made: set[str] = set()
        self._seat_keys = {p.name: PublicKey.decode(p.key) for p in self.inv.doc.seats}

    def follow(self, packet: Signed[Packet], *, check: bool = True) -> list[str]:
        """Follow the next packet of the chain; returns a line per block it relayed. With `check`
        false the proofs in its blocks are not checked (a packet this seat's key checked before:
        pbem/seat/checked.py); every signature and link of the chain still is."""
        doc = packet.doc
        if packet.signer.encode() != self.inv.doc.host.key:
            raise BadSignature(t("packet {seq} is not signed by the host of game {game}", seq=doc.seq, game=self.inv.game))
        seq, h = self.head
        if doc.seq <= seq:
            return []
        if doc.seq != seq + 1 or doc.prev != h:
            raise BadPacket(t("packet {seq} does not follow packet {last} of the chain this seat holds", seq=doc.seq, last=seq),
                            hint=t("the host showed different packets to different seats, or one is missing"))
        lines = []
        gone = getattr(doc, "gone", None)
        if gone is not None:
            lines.append(self._declare(doc, gone))
        for block in read_relayed(doc, self._seat_keys):
            if isinstance(block.doc, Join):
                self.table.take_join(block.doc)
                self._joined(block.doc)
                lines.append(t("{seat} joined (key shares checked)", seat=block.doc.seat))
            else:
                ended = len(self.table.ended)
                mine = block.hash in self.made  # made by this very follower: valid by construction
                lines.append(render(self.table.take(block.doc, seq, check=check and not mine)))
                self._learn(block.doc, check)
                self.log.append((doc.seq, block.doc, self.table.ended[-1].round_no if len(self.table.ended) > ended
                                 else None))
        self.head = (doc.seq, packet.hash)
        self.due = doc.waiting.due if doc.waiting is not None else None
        return lines

    def _declare(self, doc: Packet, gone: Gone) -> str:
        """A packet declaring seats gone: it relays nothing, and its host-signed times say the
        seats were waited for past the due time the packet before signed, and the grace."""
        def when(text: str) -> datetime:
            try:
                return datetime.fromisoformat(text)
            except ValueError:
                raise BadPacket(t("packet {seq} declares seats gone at a time that is no time: {at}", seq=doc.seq,
                                  at=repr(text[:40]))) from None

        if doc.relayed:
            raise BadPacket(t("packet {seq} declares seats gone and relays blocks too", seq=doc.seq))
        if self.due is None or gone.due != self.due or not when(gone.due) <= when(gone.grace_until) <= when(gone.at):
            raise BadPacket(t("packet {seq} declares {seats} gone before their time: due {due}, grace until {grace}, "
                              "declared at {at}", seq=doc.seq, seats=join_words(gone.seats), due=self.due or "-",
                              grace=gone.grace_until, at=gone.at),
                            hint=t("the host's clock runs ahead of the due time it signed"))
        line = render(self.table.declare(gone, doc.seq))
        self.declared.append((doc.seq, gone))
        self._declared()
        return line

    def _declared(self) -> None:
        """What a seat does when seats are declared gone (a spectator: nothing)."""

    def _learn(self, doc: Mental, check: bool) -> None:
        """What a seat does with a block it followed, its proofs checked or not (a spectator holds no slot)."""

    def _joined(self, join: Join) -> None:
        """What a seat does with a join it followed (a spectator holds no share)."""


class TrustlessSeat(Follower):
    """One seat following the chain: its keys, the slots it opened, the blocks it owes."""

    def __init__(self, inv: Signed[Invitation], identity: Identity, me: str) -> None:
        super().__init__(inv)
        self.identity = identity
        self.me = me
        self.keys: SeatKeys = seat_keys(identity, inv)
        self.seat: TableSeat | None = None  # once the stacks are final
        self.choose: Chooser | None = None  # who picks this seat's moves (a bot); None: the seat sends no move
        self.held: dict[str, list[int]] = {}  # each other seat's epoch keys: this seat's shares of them
        self.bad: list[str] = []  # the dealers whose shares for this seat were off (it complains)
        self._checked = 0  # the last round whose opened cards this seat checked against what it read

    def _joined(self, join: Join) -> None:
        """A threshold game: open and check this seat's shares of the joiner's keys (a bad share
        stops the seat here, naming the dealer)."""
        if self.table.game.threshold and join.seat != self.me and join.dealing is not None:
            try:
                self.held[join.seat] = M.open_dealing(join, self.table.dealings[join.seat], self.table.shares[join.seat],
                                                      self.table.players, self.me, self.identity)
            except BadShare:
                self.bad.append(join.seat)  # this seat complains in the open (docs/trustless.md §11.1)

    def _declared(self) -> None:
        self._ready()

    def _ready(self) -> None:
        if self.seat is None and self.table.step() not in ("join", "shuffle"):
            self.seat = TableSeat(self.table.game, self.me, self.identity, self.keys, self._seat_keys,
                                  self.table.shares, self.table.stacks)

    def _learn(self, doc: Mental, check: bool) -> None:
        self._ready()
        if self.seat is not None and doc.seat != self.me:
            for t in doc.tokens or []:  # proofs unchecked where the table checks none (checked before), and
                if t.to in ("all", self.me):  # a public token's where the table checked it as it took the block
                    self.seat.receive(M.bundle(t), check=check and self.table.check_proofs, known=self.table.pub)
        if self.seat is not None:
            for v, points in self.table.vanished.stood_in.items():  # a gone seat's tokens, from the quorum's shares
                if v != self.me:
                    self.seat.receive_points(v, points)
            self._read_own()
        end = self.table.theft or (self.table.ended[-1] if self.table.ended else None)
        if self.seat is not None and end is not None and end.round_no > self._checked:
            self._checked = end.round_no  # a round just opened: every card this seat read must be the one it holds
            audit.check_openings(end.orders, {s: c for s, c in self.seat.opened.items() if s[0].endswith(f"@{end.round_no}")})

    def out_of_turn(self) -> str | None:
        """The step of a block this seat sends though the table does not wait for it: a complaint
        about its dealt shares, or (declared gone) the block that brings it back."""
        t = self.table
        if self.bad and self.me not in t.complaints.filed and t.base_step() in BEFORE_THE_DEAL:
            return "complaint"
        return t.returning(self.me) if self.me in t.gone else None

    def owed(self) -> Signed[Mental] | None:
        """The block this seat owes at the current step (None: nothing, or not its turn)."""
        block = self._owed()
        if block is not None:
            self.made.add(block.hash)
        return block

    def _owed(self) -> Signed[Mental] | None:
        w = self.table.waiting()
        step = self.out_of_turn() or (w.step if self.me in w.seats else None)
        if step is None:
            return None
        seq, h = self.head
        game = self.inv.game
        if step == "complaint":
            return M.message(self.identity, game, self.me, seq, h, "complaint", against=self.bad[0])
        if step == "answer":  # the shares this seat's join sealed to the complainer, in the open
            complainer = next(c for c, d in self.table.complaints.filed.items() if d == self.me)
            players = self.table.players
            _, dealt = D.dealt(self.keys, players, self.me, self.table.game.threshold,
                               _derived(self.identity, self.inv, b"join dealing"))
            return M.message(self.identity, game, self.me, seq, h, "answer", against=complainer,
                             shares=b64(share_bytes(dealt[players.index(complainer)])))
        if step == "stand-in":  # a gone seat's part, from this seat's shares of its keys
            needs = self.table.vanished.needs()
            return M.message(self.identity, game, self.me, seq, h, "stand-in",
                             stand_in=SI.make(game, self.me, needs, self.held, self.table.cts(), self.table.vanished.epoch_of)
                             if needs else self._debt_parts())
        if step == "shuffle":
            doc, _ = S.make_shuffle(game, self.me, self.table.shuffled, list(self.table.game.stacks),
                                    joint_keys(self.table.shares), self.table.stacks)
            return M.message(self.identity, game, self.me, seq, h, "shuffle", shuffle=doc)
        seat, r = self.seat, self.table.round
        if seat is None:
            return None
        riding = self._step_parts(step) or None  # this seat's part of a gone seat's, with its own block
        if step == "deal":
            return M.message(self.identity, game, self.me, seq, h, "deal", bundles=[seat.deal_bundle(1)],
                             stand_in=riding)
        assert r is not None
        if step == "tokens":
            return M.message(self.identity, game, self.me, seq, h, "tokens", bundles=debt_bundles(seat, r.ledger),
                             stand_in=self._debt_parts() or None)
        if step == "goal":
            return M.message(self.identity, game, self.me, seq, h, "goal",
                             bundles=[seat.bundle_for(self.table.goal_slots(self.me))], stand_in=riding)
        if step == "reveal":
            k = r.round_no
            nuggets = self.table.nugget_slots(self.me)
            bundles = [seat.bundle_for(nuggets)] if nuggets else []
            if k < ROUNDS_PER_GAME:
                bundles.append(seat.deal_bundle(k + 1))
            return M.message(self.identity, game, self.me, seq, h, "reveal", bundles=bundles,
                             reveal={str(k): self.keys.secret_hex()[str(k)]}, stand_in=riding)
        if step in ("move", "steal") and self.choose is not None:
            return self.move_block(self.choose(self.view()))
        return None

    def move_block(self, move: Move) -> Signed[Mental]:
        """This seat's move: the tokens it owes, then its card opened (or its discard's slots)."""
        seat, r = self.seat, self.table.round
        assert seat is not None and r is not None
        seq, h = self.head
        if self.table.theft is not None:  # a thief's choice on the opened round: public, no token
            return M.message(self.identity, self.inv.game, self.me, seq, h, "steal", move=str(move))
        bundles = debt_bundles(seat, r.ledger)
        mine = list(r.ledger.holdings[self.me])

        def slot_of(card: str | None) -> Slot:
            slot = next((s for s in mine if seat.opened.get(s, HIDDEN) == card), None)  # HIDDEN: a card not read
            if slot is None:
                raise UsageError(t("you do not hold {card}", card=card))
            mine.remove(slot)
            return slot

        stand_in = self._debt_parts() or None  # this seat's shares of a gone seat's tokens ride along
        if move.verb == "discard":
            return M.message(self.identity, self.inv.game, self.me, seq, h, "move", bundles=bundles,
                             move=str(move.public()), discard=[slot_of(c) for c in move.cards], stand_in=stand_in)
        slot = slot_of(move.card)
        return M.message(self.identity, self.inv.game, self.me, seq, h, "move", bundles=bundles, move=str(move),
                         play=(slot, seat.open_publicly(slot)), handed=seat.hand_on(slot, r.ledger.public),
                         unsealed=self._unsealed(slot), stand_in=stand_in)

    def _unsealed(self, slot: Slot) -> list[dict[str, Any]]:
        """For a card I play whose gone seat's token reached me as sealed shares: that token made public."""
        seat, t, k = self.seat, self.table, self.table.game.threshold
        assert seat is not None
        out = []
        for v in t.players:
            boxes = t.vanished.sealed.get(v, {}).get((slot, self.me), {})
            if v in t.pub.get(slot, {}) or len(boxes) < k - 1 or v not in self.held:
                continue
            e = t.vanished.epoch_of(slot[0])
            used = {h: boxes[h] for h in sorted(boxes, key=t.players.index)[:k - 1]}
            out.append(SI.make_unsealed(self.inv.game, v, self.me, slot, seat.ciphertexts()[slot], self.held[v][e],
                                        self.keys.shares[e], used))
        return out

    def _step_parts(self, step: str) -> list[dict[str, Any]]:
        """This seat's part of what the gone seats owe at a deal, goal or reveal step."""
        needs = [n for n in self.table.vanished.needs_at(step) if n.dealer != self.me] if step in (
            "deal", "goal", "reveal") else []
        return SI.make(self.inv.game, self.me, needs, self.held, self.table.cts(), self.table.vanished.epoch_of) if needs else []

    def _debt_parts(self) -> list[dict[str, Any]]:
        """This seat's stand-in shares of the public tokens each gone seat owes now, the ones it
        has not given yet (docs/trustless.md §11)."""
        t = self.table
        others = [v for v in t.players if v in t.gone and v != self.me]
        needs = [SI.Need(v, t.vanished.debt_missing(v, self.me)) for v in others]
        needs = [n for n in needs if n.slots]
        out = SI.make(self.inv.game, self.me, needs, self.held, t.cts(), t.vanished.epoch_of) if needs else []
        for v in others:  # those sealed to a later reader
            for reader, slots in t.vanished.sealed_missing(v, self.me).items():
                out.append(SI.make_sealed(self.inv.game, self.me, v, reader, slots, self.held[v], t.cts(),
                                          t.shares[reader], t.vanished.epoch_of))
        return out

    def _read_own(self) -> None:
        """A gone seat's token for a card of mine that K - 1 others gave their shares of: my own
        share completes it, so I read the card before my move publishes my share."""
        r, seat, k = self.table.round, self.seat, self.table.game.threshold
        if r is None or seat is None:
            return
        for v in self.table.gone:
            for s in self.table.vanished.debts_of(v, self.me):
                others = {h: p for h, p in self.table.vanished.debt_shares.get(v, {}).get(s, {}).items() if h != self.me}
                if len(others) < k - 1 or v in seat.tokens.get(s, {}):
                    continue
                parts = {self.table.players.index(h): others[h] for h in sorted(others, key=self.table.players.index)[:k - 1]}
                parts[self.table.players.index(self.me)] = seat.ciphertexts()[s].c1 * self.held[v][self.table.vanished.epoch_of(s[0])]
                seat.receive_points(v, {s: combine(parts, k)})
        for v, by_slot in self.table.vanished.sealed.items():  # tokens a gone seat owed me sealed
            for (s, reader), boxes in by_slot.items():
                if reader != self.me or len(boxes) < k - 1 or v in seat.tokens.get(s, {}) or v not in self.held:
                    continue
                e, index = self.table.vanished.epoch_of(s[0]), self.table.players.index
                used = {index(h): boxes[h] for h in sorted(boxes, key=index)[:k - 1]}
                seat.receive_points(v, {s: SI.open_sealed(self.keys.shares[e].secret, self.held[v][e], used,
                                                          seat.ciphertexts()[s].c1, index(self.me), k)})

    # --- what the seat sees ----------------------------------------------------------------------

    def view(self) -> RoundState:
        """The round as this seat sees it: the public position, its own hand, role, and what its
        maps, inspections and new hats showed it (once their tokens are in); while the thieves
        choose, the round opened at its end."""
        if self.table.theft is not None:
            return self.table.theft.state.copy()
        r = self.table.round
        assert r is not None
        v = r.state.copy()
        opened = self.seat.opened if self.seat is not None else {}
        v.hands[self.me] = [opened.get(s, HIDDEN) for s in r.ledger.holdings[self.me]]
        v.roles[self.me] = opened.get(r.ledger.roles[self.me])
        v.knowledge = {p: [] for p in v.players}
        for fact, slot in zip(r.state.knowledge.get(self.me, []), r.ledger.learned.get(self.me, [])):
            card = opened.get(slot, HIDDEN)  # the engine's fact, in the ledger's order of what each seat learns
            known = card if fact[0] == "map" or card == HIDDEN else card_kind(card).kind
            v.knowledge[self.me].append([*fact[:-1], known])
        return v

    def slots(self) -> tuple[Slot | None, list[Slot]]:
        """The slots of this seat's role and of its hand in this round (or the next one's)."""
        r = self.table.round
        if r is None:
            layout = Layout.of(self.table.game, self.table.round_no)
            return layout.roles[self.me], layout.hands[self.me]
        return r.ledger.roles[self.me], list(r.ledger.holdings[self.me])

    def hand(self) -> tuple[str | None, list[str | None]]:
        """This seat's role and hand as far as their tokens are in (None: still waiting)."""
        role, hand = self.slots()
        opened = self.seat.opened if self.seat is not None else {}
        return opened.get(role) if role else None, [opened.get(s) for s in hand]

    def waiting_for(self) -> dict[Slot, list[str]]:
        """Each of this seat's slots still shut, with the seats whose tokens it waits for."""
        role, hand = self.slots()
        tokens = self.seat.tokens if self.seat is not None else {}
        out = {}
        for slot in [s for s in (role, *hand) if s is not None]:
            missing = [p for p in self.table.players if p != self.me and p not in tokens.get(slot, {})]
            if missing:
                out[slot] = missing
        return out


def chain_in(files: list[Path], game: str) -> list[Signed[Packet]]:
    """The packets of `game` among `files` (a folder's packets, a host's out/), in chain order;
    two different packets with one number are a fork of the chain, and refused."""
    found: dict[int, Signed[Packet]] = {}
    for path in files:
        try:
            blocks = read_blocks(read_text(path))
        except BadPacket:
            continue  # a damaged or half-synced file says nothing
        for b in blocks:
            if isinstance(b.doc, Packet) and b.game == game:
                old = found.get(b.doc.seq)
                if old is not None and old.hash != b.hash:
                    raise BadPacket(t("two different packets {seq} of game {game}", seq=b.doc.seq, game=game),
                                    hint=t("the host forked the chain: show both files to the table"))
                found[b.doc.seq] = b
    return [found[s] for s in sorted(found)]
