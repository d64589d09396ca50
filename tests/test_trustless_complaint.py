"""A holder's complaint about a bad dealt share and its dealer's answer (docs/trustless.md
§11.1), through the real blind host (a real SQLite file, a fake clock) and real seats: the
holder complains in the open, the dealer opens the complained-of shares, and the table decides
who was at fault; a dealer that does not answer in time is named. Either way the join fails:
the game is over with nothing dealt, and the audit says who was at fault."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from processes import pbem
from test_trustless_vanish import Table, _audit

from pbem.errors import BadPacket
from pbem.protocol.documents import Packet, read_blocks, sign
from pbem.protocol.mental.vss import share_bytes
from pbem.protocol.shapes import b64
from pbem.protocol.trustless import dealing as D
from pbem.protocol.trustless import messages as M
from pbem.seat.trustless import _derived, join, seat_keys

SEATS = ("ann", "bob", "cat")


def _table(tmp: Path, cheat: bool) -> Table:
    """Three seats join; with `cheat`, ann seals bob shares of another sharing of her keys (her
    commitments are her join's: bob's shares fail them)."""
    t = Table(tmp, silent=set(), seats=SEATS)
    honest = join(t.inv, t.ids["ann"], "ann")
    if cheat:
        other = M.dealing(seat_keys(t.ids["ann"], t.inv), t.inv.game, "ann", [(s, t.ids[s].public) for s in SEATS], 2,
                          _derived(t.ids["ann"], t.inv, b"another dealing"))
        dealing = msgspec.structs.replace(honest.doc.dealing, shares={**honest.doc.dealing.shares,
                                                                      "bob": other.shares["bob"]})
        honest = sign(msgspec.structs.replace(honest.doc, dealing=dealing, signer=""), t.ids["ann"])
    t.send(honest)
    for s in SEATS[1:]:
        t.send(join(t.inv, t.ids[s], s))
    t.sync()
    return t


def _over(t: Table, fault: str) -> dict:
    """The game is over with nothing dealt, and the audit (the library and the real command) names `fault`."""
    audit = _audit(t)
    assert audit.table.step() == "over" and audit.table.round is None and audit.table.ended == []
    assert t.host.status()["status"] == "over"
    assert all(s.owed() is None for s in t.seats.values())  # nobody owes anything more
    run = pbem("audit", "--db", t.db, "--json", timeout=120)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    failed = json.loads(run.stdout)["failed"]
    assert failed["fault"] == fault
    return failed


@pytest.mark.slow
def test_a_bad_share_complained_of_names_its_dealer(tmp_path: Path) -> None:
    t = _table(tmp_path, cheat=True)
    bob = t.seats["bob"]
    assert bob.bad == ["ann"] and "ann" not in bob.held  # bob found his shares off; cat's were good
    assert t.seats["cat"].bad == [] and "ann" in t.seats["cat"].held
    complaint = bob.owed()
    assert complaint is not None and (complaint.doc.step, complaint.doc.against) == ("complaint", "ann")
    assert t.send(complaint) == "applied"
    t.sync()
    w = t.host.status()["waiting"]
    assert (w["step"], w["seats"]) == ("answer", ["ann"])
    # ann answers with the shares her box held: they fail her commitments, as bob said
    keys = seat_keys(t.ids["ann"], t.inv)
    _, boxed = D.dealt(keys, SEATS, "ann", 2, _derived(t.ids["ann"], t.inv, b"another dealing"))
    ann = t.seats["ann"]
    answer = M.message(t.ids["ann"], t.inv.game, "ann", *ann.head, "answer", against="bob",
                       shares=b64(share_bytes(boxed[1])))
    assert t.send(answer) == "applied"
    t.sync()
    assert _over(t, "ann") == {"dealer": "ann", "complainer": "bob", "fault": "ann", "packet": t.seen}


@pytest.mark.slow
def test_a_forged_complaint_is_answered_and_names_the_complainer(tmp_path: Path) -> None:
    t = _table(tmp_path, cheat=False)
    bob = t.seats["bob"]
    assert bob.bad == [] and bob.owed() is None  # nothing to complain of: the table waits for ann's shuffle
    forged = M.message(t.ids["bob"], t.inv.game, "bob", *bob.head, "complaint", against="ann")
    # a complaint naming oneself, or no seat, is refused with nothing stored
    before = t.host.packets(0)
    for who in ("bob", "eve"):
        with pytest.raises(BadPacket):
            t.send(sign(msgspec.structs.replace(forged.doc, against=who, signer=""), t.ids["bob"]))
    assert t.host.packets(0) == before
    assert t.send(forged) == "applied"
    t.sync()
    answer = t.seats["ann"].owed()  # ann's own seat answers with the shares its join sealed to bob
    assert answer is not None and (answer.doc.step, answer.doc.against) == ("answer", "bob")
    assert t.send(answer) == "applied"
    t.sync()
    assert _over(t, "bob")["dealer"] == "ann"


@pytest.mark.slow
def test_a_dealer_that_does_not_answer_in_time_is_named(tmp_path: Path) -> None:
    t = _table(tmp_path, cheat=True)
    t.send(t.seats["bob"].owed())
    t.sync()
    assert not t.host.tick()  # before its due time and grace: nothing
    t.clock.advance(3600 + 601)
    assert t.host.tick()
    t.sync()
    packets = [read_blocks(a)[0].expect(Packet).doc for _, a in t.host.packets(0)]
    assert packets[-1].gone.seats == ["ann"] and packets[-1].gone.step == "answer"
    assert _over(t, "ann")["packet"] == packets[-1].seq
