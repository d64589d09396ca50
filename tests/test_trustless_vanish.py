"""A seat that vanishes (docs/trustless.md §11), through the real blind host (a real SQLite
file, a fake clock) and real seats in one process: the host declares the seat gone past its
deadline and grace in a signed packet, the others stand in for what it owes with proven shares,
its turns are face-down discards, the game ends and its chain audits; a bad stand-in share is
refused with nothing stored."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from blind_game import follow_host

from engine.bots import make_bot
from pbem.errors import BadPacket, UsageError
from pbem.host import blind
from pbem.host.clock import FakeClock
from pbem.host.deadlines import Timing
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Mental, Packet, Signed, read_blocks, sign
from pbem.protocol.mental.proofs import BadProof
from pbem.protocol.shapes import b64
from pbem.protocol.trustless.keys import unb64
from pbem.seat.trustless import Follower, TrustlessSeat, join
from pbem.ui.words import notice_text

SEATS = ("ann", "bob", "cat", "dan")


class Table:
    def __init__(self, tmp: Path, silent: set[str], seats: tuple[str, ...] = SEATS, ruleset: str = "classic") -> None:
        self.db = tmp / "saves" / "t.db"
        self.names = seats
        self.ids = {n: Identity.generate(n) for n in ("referee", *seats)}
        self.inv = blind.create_game(self.db, "t", self.ids["referee"], ruleset,
                                     [(s, self.ids[s].public) for s in seats], [])
        self.clock = FakeClock()
        self.host = blind.BlindHost(self.db, self.ids["referee"], self.clock)
        self.host.set_timing(Timing(deadline=3600, grace=600, on_timeout="discard", reminders=[]))
        self.seats = {s: TrustlessSeat(self.inv, self.ids[s], s) for s in seats}
        for s in seats:
            self.seats[s].choose = make_bot("random", s, f"v-{s}").choose
            # the host checks every proof as a block comes in, and `_audit` the whole chain again:
            # the seats here follow it without checking them a third time (tests/blind_game.py)
            self.seats[s].table.check_proofs = False
        self.silent = silent
        self.silent_from = 0  # the packet from which the silent seats say nothing
        self.forged = 0  # moves whose stand-in shares were forged first (and refused)
        self.seen = 0

    def send(self, block: Signed) -> str:
        return self.host.accept(read_blocks(block.armored())[0]).kind

    def sync(self) -> None:
        self.seen = follow_host(self.host, self.seats.values(), self.seen)

    def join(self) -> Table:
        """Every seat joins (a silent one too: it vanishes right after)."""
        for s in self.names:
            self.send(join(self.inv, self.ids[s], s))
        return self

    def run(self, until: int = 10_000, rounds: int = 3) -> int:
        """Play until `rounds` rounds are over (or packet `until`): each seat that is not silent
        sends what it owes; when nobody does, the clock passes the deadline and grace."""
        while self.seen < until and len(self.seats["bob"].table.ended) < rounds:
            self.sync()
            sent = False
            for s in self.names:
                if s in self.silent and self.seen >= self.silent_from:
                    continue
                block = self.seats[s].owed()
                if block is not None and block.doc.step == "move" and block.doc.stand_in and not self.forged:
                    self.forge(block)
                if block is not None:
                    self.send(block)
                    self.sync()
                    sent = True
            if self.seats["ann"].table.step() == "over":
                break
            if not sent:
                self.clock.advance(3600 + 601)
                assert self.host.tick(), "the clock declares nobody gone"
                self.sync()
        return self.seen


    def forge(self, block: Signed[Mental]) -> None:
        """A move whose shares of the gone seat's tokens, riding on it, are off: refused at the
        host with nothing stored (the honest move is then taken)."""
        part = block.doc.stand_in[0]
        raw = bytearray(unb64(part.shares, "shares"))
        raw[-1] ^= 1
        bad = msgspec.structs.replace(part, shares=b64(bytes(raw)))
        before = self.host.packets(0)
        with pytest.raises(BadProof):
            self.send(sign(msgspec.structs.replace(block.doc, stand_in=[bad], signer=""), self.ids[block.doc.seat]))
        assert self.host.packets(0) == before
        self.forged += 1


def _audit(t: Table, check: bool = True) -> Follower:
    """The host's chain followed from its start, as an auditor does; `check=False` skips its proofs
    (checked by the host as each block came in) where only what the chain says is looked at."""
    f = Follower(t.inv)
    f.table.check_proofs = check
    for _, armored in t.host.packets(0):
        f.follow(read_blocks(armored)[0].expect(Packet))
    return f


@pytest.mark.slow
def test_a_seat_gone_right_after_joining_the_others_finish_the_game(tmp_path: Path) -> None:
    t = Table(tmp_path, silent={"ann"}).join()  # ann joins, then never answers again (she shuffles first)
    t.run()
    packets = [read_blocks(a)[0].expect(Packet) for _, a in t.host.packets(0)]
    declared = [p.doc for p in packets if getattr(p.doc, "gone", None)]
    assert [(p.gone.seats, p.gone.step) for p in declared] == [(["ann"], "shuffle")]
    assert declared[0].relayed == [] and declared[0].waiting.step == "shuffle"
    assert declared[0].waiting.seats == ["bob"]  # a shuffle needs no seat in particular
    audit = _audit(t)
    table = audit.table
    assert table.step() == "over" and len(table.ended) == 3 and table.gone == {"ann": declared[0].seq}
    assert table.shuffled == 3
    steps = [doc.step for _, doc, _ in audit.log]
    assert all(doc.seat != "ann" for _, doc, _ in audit.log)
    assert t.forged == 1  # a forged share riding on a move was refused
    # every part of ann's came with the others' own blocks: her deal tokens and round keys on
    # their deal and reveal blocks, her tokens for the cards they drew on their moves
    assert "stand-in" not in steps
    assert {doc.step for _, doc, _ in audit.log if doc.stand_in} == {"deal", "move", "reveal"}
    for end in table.ended:  # ann's turns: face-down discards of her first slot, replayed on their cards
        assert any(seat == "ann" and text.startswith("discard ") for seat, text in end.played)
    gold = table.ended[-1].gold
    assert set(gold) == set(SEATS)
    # every seat read its own cards: the quorum's shares made ann's tokens for them
    for s in SEATS[1:]:
        assert t.seats[s].table.ended[-1].gold == gold


@pytest.mark.slow
def test_a_seat_gone_mid_round_its_debts_goals_and_round_key_come_from_the_others(tmp_path: Path) -> None:
    t = Table(tmp_path, silent={"cat"}).join()
    t.silent_from = 20  # cat plays round 1 for a while, then vanishes
    t.run(rounds=2)
    audit = _audit(t)
    table = audit.table
    assert len(table.ended) == 2 and list(table.gone) == ["cat"] and table.gone["cat"] > 20
    declared = [p.doc for _, a in t.host.packets(0) if getattr((p := read_blocks(a)[0].expect(Packet)).doc, "gone", None)]
    assert len(declared) == 1 and declared[0].gone.step != "shuffle"
    stood = [doc for seq, doc, _ in audit.log if doc.stand_in]  # on their own blocks, or stand-in blocks
    # every part stands in for cat: at most one public part a block, and beside it any shares
    # sealed to a later reader (a second map of a goal cat mapped first), never the holder itself
    assert stood and all(doc.seat != "cat" and {x.dealer for x in doc.stand_in} == {"cat"} for doc in stood)
    assert all([x.to for x in doc.stand_in].count(None) <= 1 for doc in stood)
    assert all(x.to in (None, *SEATS) and x.to not in (doc.seat, "cat") for doc in stood for x in doc.stand_in)
    assert any(x.key for doc in stood if doc.step in ("reveal", "stand-in") for x in doc.stand_in)  # its round key
    assert table.ended[0].round_no == 1 and any(s == "cat" and x.startswith("discard ")
                                                for s, x in table.ended[1].played)


def test_a_bad_stand_in_share_is_refused_with_nothing_stored(tmp_path: Path) -> None:
    t = Table(tmp_path, silent={"cat"}, seats=SEATS[:3]).join()
    t.silent_from = 4  # cat shuffles (packet 4), then sends no deal tokens: the others dealt before it was gone
    t.run(until=4)
    while t.seats["ann"].table.step() != "stand-in":
        t.run(until=t.seen + 1)
    late = [read_blocks(n.armored)[0].doc for n in t.host.notices() if n.kind == "late"]
    assert [(n.seat, n.step, n.policy) for n in late] == [("cat", "deal", "discard")]
    assert "the other seats stand in" in notice_text(late[0], t.clock.now())
    assert t.host.status()["absent"] == ["cat"]  # `pbem status` lists it
    block = t.seats["ann"].owed()
    assert block is not None and block.doc.step == "stand-in"
    part = block.doc.stand_in[0]
    raw = bytearray(unb64(part.shares, "shares"))
    raw[40] ^= 1  # one byte of the first share's proof
    bad_part = msgspec.structs.replace(part, shares=b64(bytes(raw)))
    cheat = sign(msgspec.structs.replace(block.doc, stand_in=[bad_part], signer=""), t.ids["ann"])
    before = t.host.packets(0)
    db = b"".join(p.read_bytes() for p in sorted(t.db.parent.iterdir()) if p.is_file() and p.suffix == ".db")
    with pytest.raises(BadProof) as e:
        t.send(cheat)
    assert "stand-in share" in str(e.value.message) or "stand-in" in repr(e.value.message)
    assert t.host.packets(0) == before
    # a stand-in for other slots than cat owes is refused too
    fewer = msgspec.structs.replace(part, slots=part.slots[1:], shares=b64(unb64(part.shares, "s")[96:]))
    with pytest.raises(BadPacket):
        t.send(sign(msgspec.structs.replace(block.doc, stand_in=[fewer], signer=""), t.ids["ann"]))
    assert t.host.packets(0) == before
    assert t.send(block) == "applied"  # the honest one is taken
    del db


def test_bot_is_refused_and_discard_needs_shared_keys(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as e:
        blind.check_timing(Timing(deadline=60, on_timeout="bot"))
    assert "--on-timeout bot" in str(e.value.message) or "bot" in repr(e.value.message)
    with pytest.raises(UsageError):
        blind.check_timing(Timing(deadline=60, on_timeout="discard"), shared=False)
    assert blind.check_timing(Timing(deadline=60, on_timeout="discard")).on_timeout == "discard"
