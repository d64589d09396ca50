"""A seat that vanishes owing tokens sealed to one reader (docs/trustless.md §11.2): the cards a
swap-hand took from it, a second map of a goal it mapped first. The others meet those debts with
stand-in shares sealed to the reader, which every seat and the host check in public; the reader
opens them with its own share and reads the card, and a card so read plays as any card of its
hand (its opening makes the gone seat's token public). Through the real blind host (a real
SQLite file, a fake clock) and real seats; the card stays in no byte a seat other than its
reader holds, nor in any byte the host keeps or relays."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from test_trustless_expansion import eager
from test_trustless_vanish import Table, _audit

from engine.catalog import HIDDEN, card_kind
from engine.moves import Move
from engine.rules import legal_moves
from engine.state import PLAYING, RoundState
from pbem.protocol.documents import Packet, Signed, parse_relayed, read_blocks, sign
from pbem.protocol.mental.vss import BadShare, open_stand_in
from pbem.protocol.shapes import b64
from pbem.protocol.trustless.keys import unb64
from pbem.seat.trustless import TrustlessSeat

SEATS = ("ann", "bob", "cat", "dan")
Slot = tuple[str, int]


def _walk(x: Any, out: list[bytes]) -> None:
    if isinstance(x, str):
        out.append(x.encode())
        try:
            out.append(base64.b64decode(x, validate=True))
        except (binascii.Error, ValueError):
            pass
    elif isinstance(x, dict):
        for v in x.values():
            _walk(v, out)
    elif isinstance(x, list):
        for v in x:
            _walk(v, out)


def _every_byte(t: Table) -> bytes:
    """Every byte the host keeps (its store's files) and relays (each block's fields, decoded)."""
    out = [p.read_bytes() for p in sorted(t.db.parent.iterdir()) if p.is_file()]
    for _, armored in t.host.packets(0):
        for rel in read_blocks(armored)[0].expect(Packet).doc.relayed or []:
            _walk(msgspec.to_builtins(parse_relayed(rel, "a relayed block").doc), out)
    return b"".join(out)


def _only_the_reader_holds(t: Table, reader: str, gone: str, slot: Slot) -> None:
    """The whisper's check, for a card: the gone seat's token for `slot` and each holder's share of
    it, as the reader opened them, are in no byte the host keeps or relays (a public token is: the
    search can fail), and no seat but the reader (and the gone seat, whose card it was) opened it."""
    me = t.seats[reader]
    assert me.seat is not None
    token = me.seat.tokens[slot][gone]
    e = me.table.vanished.epoch_of(slot[0])
    boxes = me.table.vanished.sealed[gone][(slot, reader)]
    opened = [open_stand_in(me.keys.shares[e].secret, box) for box in boxes.values()]
    every = _every_byte(t)
    assert token.raw not in every and all(p.raw not in every for p in opened)
    public = next(p for p in me.table.pub[slot].values())  # another seat's public token for the same slot
    assert public.raw in every
    learned = me.table.round.ledger.learned if me.table.round is not None else {}
    for p in t.names:
        if p not in (reader, gone) and slot not in learned.get(p, []):
            assert slot not in t.seats[p].seat.opened, p
            assert gone not in t.seats[p].seat.tokens.get(slot, {}), p
    assert slot not in me.table.opened and gone not in me.table.pub.get(slot, {})


class Swapped(Table):
    """Eager Saboteur 2 bots; the first seat to owe its old hand's tokens sealed to the seat a
    swap-hand gave it to goes silent at once, before it sends them. The new holder plays a card
    of that old hand as soon as it may. The first honest block to carry a share sealed to the new
    holder is sent forged first (`_forge_sealed`)."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp, silent=set(), seats=SEATS, ruleset="expansion")
        self.owing: dict[str, list[Slot]] = {}
        self.blind: list[tuple[str, str]] = []  # (seat, move) chosen with an unread card in hand
        self.played: list[tuple[str, Slot, str]] = []  # a card of the gone seat's old hand, played by its new holder
        self.read: list[tuple[str, Slot, str]] = []
        self.forging = False  # inside Table.forge: its block is no honest one
        # the forged sealed share: (its sender, the rounds ended then, whether the host stored
        # nothing, what the honest block then came to)
        self.sealed: tuple[str, int, bool, str] | None = None
        for s in SEATS:
            self.seats[s].choose = self._watch(s, eager(s, f"sealed-{s}", self.seats[s]))

    def forge(self, block: Signed) -> None:
        self.forging = True
        try:
            super().forge(block)
        finally:
            self.forging = False

    def send(self, block: Signed) -> str:
        if self.sealed is None and not self.forging and self.owing and self._sealed_to_holder(block):
            return self._forge_sealed(block)
        kind = super().send(block)
        self.sync()
        r = self.seats["ann"].table.round
        swap = getattr(block.doc, "step", None) == "move" and "swap-hand" in (block.doc.move or "")
        if swap and not self.silent and r is not None:
            for p in SEATS:
                owed = r.ledger.owed_by(p)
                sealed = {to: s for to, s in owed.items() if to != "all" and set(s) & set(r.ledger.holdings[to])}
                if sealed:
                    self.owing, self.silent = sealed, {p}
                    break
        return kind

    def _sealed_to_holder(self, block: Signed) -> bool:
        """Whether `block` is a block of a seat other than the gone one and the new holder that
        carries a share sealed to the new holder."""
        (gone,), (holder,) = self.silent, self.owing
        doc = block.doc
        return getattr(doc, "seat", None) not in (gone, holder) and bool(self.seats["ann"].table.gone) \
            and any(x.to == holder for x in getattr(doc, "stand_in", None) or [])

    def _forge_sealed(self, block: Signed) -> str:
        """A sealed share's proof is over public values: a box that does not hold the holder's
        share is refused at the host, as a public share is, though nobody but the reader can open
        it; nothing is stored, and the honest block is then taken."""
        (holder,) = self.owing
        parts = list(block.doc.stand_in)
        k = next(i for i, x in enumerate(parts) if x.to == holder)
        raw = bytearray(unb64(parts[k].shares, "shares"))
        raw[64] ^= 1  # the proof's challenge: the box is no longer shown to hold the holder's share
        parts[k] = msgspec.structs.replace(parts[k], shares=b64(bytes(raw)))
        before = self.host.packets(0)
        with pytest.raises(BadShare):
            Table.send(self, sign(msgspec.structs.replace(block.doc, stand_in=parts, signer=""),
                                  self.ids[block.doc.seat]))
        stored_nothing = self.host.packets(0) == before
        ended = len(self.seats["ann"].table.ended)
        self.sealed = (block.doc.seat, ended, stored_nothing, "")
        kind = self.send(block)
        self.sealed = (block.doc.seat, ended, stored_nothing, kind)
        return kind

    def _watch(self, seat: str, choose: Callable[[RoundState], Move]) -> Callable[[RoundState], Move]:
        def watched(v: RoundState) -> Move:
            if v.phase != PLAYING:
                return choose(v)
            if HIDDEN in v.hands[seat]:
                self.blind.append((seat, str(choose(v))))
            ts: TrustlessSeat = self.seats[seat]
            assert ts.seat is not None and ts.table.round is not None
            old = [s for s in ts.table.round.ledger.holdings[seat] if s in self.owing.get(seat, [])]
            if self.silent and old and not self.played:
                (gone,) = self.silent
                cards = {ts.seat.opened[s]: s for s in old}
                self.read += [(seat, s, c) for c, s in cards.items()]
                for m in legal_moves(v):
                    if m.verb == "play" and m.card in cards:
                        _only_the_reader_holds(self, seat, gone, cards[m.card])
                        self.played.append((seat, cards[m.card], m.card))
                        return m
            return choose(v)
        return watched


@pytest.fixture(scope="module")
def swapped(tmp_path_factory: pytest.TempPathFactory) -> Swapped:
    """Round 1 of a Swapped table played to its end (the two tests below look at its two sides).
    The deal is random: in some deals (one failed run of about eighteen) the new holder never has a legal play with
    the gone seat's old cards before the round ends, and such a game shows nothing of the play;
    the table is then dealt again (three deals at most)."""
    for _ in range(3):
        t = Swapped(tmp_path_factory.mktemp("swapped")).join()
        t.run(rounds=1)
        if t.played:
            break
    return t


@pytest.mark.slow
def test_a_swapped_hand_of_a_gone_seat_is_read_and_played_by_its_new_holder(swapped: Swapped) -> None:
    t = swapped
    assert t.owing, "no seat came to owe a swapped hand's tokens"
    (gone,) = t.silent
    (holder,) = t.owing
    assert t.blind == []  # every seat read every card it held at each of its turns
    # the new holder read the gone seat's old hand: the cards the gone seat itself had read there
    truth = t.seats[gone].seat.opened
    assert t.read and all(seat == holder and truth[slot] == card for seat, slot, card in t.read)
    assert t.played, "the new holder never had a legal play with the gone seat's old cards"
    seat, slot, card = t.played[0]
    audit = _audit(t, check=False)  # what the chain says: the host checked each block's proofs as it came in
    table = audit.table
    assert list(table.gone) == [gone] and len(table.ended) == 1
    # the card played opened to everyone: through the gone seat's token made public at the play
    assert table.opened[slot] == card and gone in table.pub[slot]
    moves = [doc for _, doc, _ in audit.log if doc.step == "move" and doc.play and doc.play.slot.slot == slot]
    assert len(moves) == 1 and [u.dealer for u in moves[0].play.unsealed] == [gone]
    # its sealed shares rode on the others' own blocks, addressed to the holder (and to any later
    # reader of the gone seat's cards: an inspector of its role, a seat they went on to by swap-hand)
    sealed = [x for _, doc, _ in audit.log for x in doc.stand_in or [] if x.to is not None]
    assert any(x.to == holder for x in sealed) and all(x.dealer == gone and x.to != gone for x in sealed)
    # the round, opened at its end with the gone seat's rebuilt key, has that card in that slot
    assert table.ended[0].orders[slot[0]][slot[1]] == card


class Mapped(Table):
    """Three classic seats that play a map on the top goal whenever they may; the first to map it
    goes silent right after its map was read (its tokens in)."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp, silent=set(), seats=SEATS[:3])
        self.first: str | None = None
        self.second: str | None = None
        self.read: tuple[str, list] | None = None  # the second mapper's card and knowledge, as it first read it
        for s in SEATS[:3]:
            self.seats[s].choose = self._maps(s, self.seats[s].choose)

    def _maps(self, seat: str, choose: Callable[[RoundState], Move]) -> Callable[[RoundState], Move]:
        def chosen(v: RoundState) -> Move:
            if self.first is not None and self.silent and seat == self.first:
                raise AssertionError("a silent seat moved")
            maps = [m for m in legal_moves(v) if m.verb == "play" and m.target == "top"
                    and card_kind(str(m.card)).action == "map"]
            if maps and v.phase == PLAYING and (self.first is None or (self.silent and seat != self.first)):
                if self.first is None:
                    self.first = seat
                else:
                    self.second = seat
                return maps[0]
            return choose(v)
        return chosen

    def send(self, block: Signed) -> str:
        kind = super().send(block)
        self.sync()
        ts = self.seats[self.first] if self.first else None
        if ts is not None and not self.silent and ts.table.round is not None:
            goal = ts.table.round.ledger.layout.goals["top"]
            if goal in ts.seat.opened:
                self.silent = {self.first}
        reader = self.seats[self.second] if self.second else None
        if reader is not None and self.read is None and reader.table.round is not None:
            goal = reader.table.round.ledger.layout.goals["top"]
            if goal in reader.seat.opened:  # read the moment the others' sealed shares are in
                (gone,) = self.silent
                _only_the_reader_holds(self, self.second, gone, goal)
                self.read = (reader.seat.opened[goal], reader.view().knowledge[self.second])
        return kind


@pytest.mark.slow
def test_a_second_map_of_a_goal_a_gone_seat_mapped_first_is_read_by_its_mapper(tmp_path: Path) -> None:
    t = Mapped(tmp_path).join()
    while t.second is None and len(t.seats["bob"].table.ended) < 3:
        t.run(until=t.seen + 1, rounds=3)
    assert t.second is not None, "no second map of the top goal after its first mapper was gone"
    (gone,) = t.silent
    reader = t.seats[t.second]
    goal = reader.table.round.ledger.layout.goals["top"]
    # the others' shares, sealed to the reader, ride on their blocks; it reads the goal by its next turn
    while t.read is None:
        t.run(until=t.seen + 1, rounds=3)
        assert reader.table.round is not None and reader.table.round.ledger.layout.goals["top"] == goal
    assert list(reader.table.gone) == [gone]
    card, knowledge = t.read
    assert card == t.seats[gone].seat.opened[goal]  # what the first mapper saw
    assert [k[-1] for k in knowledge if k[0] == "map"][-1] == card


@pytest.mark.slow
def test_a_bad_sealed_share_is_refused_by_the_host_with_nothing_stored(swapped: Swapped) -> None:
    """A sealed share's proof is over public values: a box that does not hold the holder's share
    is refused at the host, as a public share is, though nobody but the reader can open it
    (`Swapped._forge_sealed`, on the first block sealing a share to the new holder)."""
    t = swapped
    assert t.owing and t.seats["ann"].table.gone, "nobody came to owe a swapped hand's tokens"
    (gone,), (holder,) = t.silent, t.owing
    assert t.sealed is not None, "no seat sealed a share of the gone seat's tokens to the new holder"
    sender, ended, stored_nothing, kind = t.sealed
    assert sender not in (gone, holder) and ended == 0  # in round 1
    assert stored_nothing  # refused (BadShare) with nothing stored
    assert kind == "applied"  # the honest block is taken
