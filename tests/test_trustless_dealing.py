"""A trustless join carries the seat's keys shared among the others (docs/trustless.md §11):
through the real blind host and seats, each holder opens and checks its shares; a bad share is
caught by its holder; a game from before thresholds still reads."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from folder_games import keys_here
from processes import one_error_line, pbem

from pbem.errors import BadPacket, UsageError
from pbem.host import blind
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Packet, read_blocks, sign
from pbem.protocol.mental.vss import BadShare, reconstruct
from pbem.protocol.trustless import messages as M
from pbem.protocol.trustless.keys import EPOCHS
from pbem.protocol.trustless.public import PublicTable
from pbem.seat.trustless import TrustlessSeat, _derived, join, seat_keys

SEATS = ("ann", "bob", "cat", "dan")


class Table:
    def __init__(self, tmp: Path, threshold: int | None = None) -> None:
        self.db = tmp / "saves" / "t.db"
        self.ids = {n: Identity.generate(n) for n in ("referee", *SEATS)}
        self.inv = blind.create_game(self.db, "t", self.ids["referee"], "classic",
                                     [(s, self.ids[s].public) for s in SEATS], [], threshold=threshold)
        self.host = blind.BlindHost(self.db, self.ids["referee"])
        self.seats = {s: TrustlessSeat(self.inv, self.ids[s], s) for s in SEATS}

    def send(self, block) -> str:
        return self.host.accept(read_blocks(block.armored())[0]).kind

    def packets(self) -> list:
        return [read_blocks(a)[0].expect(Packet) for _, a in self.host.packets(0)]


def test_each_join_deals_its_keys_and_any_quorum_of_the_others_rebuilds_them(tmp_path: Path) -> None:
    t = Table(tmp_path)
    assert t.inv.doc.threshold == 3  # the default: all the other seats
    assert [t.send(join(t.inv, t.ids[s], s)) for s in SEATS] == ["joined"] * 3 + ["dealt"]  # dealt: packet 1
    for packet in t.packets():
        for seat in t.seats.values():
            seat.follow(packet)
    for dealer in SEATS:
        secrets = seat_keys(t.ids[dealer], t.inv).shares
        held = {SEATS.index(h): t.seats[h].held[dealer] for h in SEATS if h != dealer}
        for e in EPOCHS:
            parts = {i: shares[e] for i, shares in held.items()}
            assert reconstruct(parts, secrets[e].public, 3) == secrets[e].secret
            with pytest.raises(BadShare):  # two of the three others are not a quorum
                reconstruct(dict(list(parts.items())[:2]), secrets[e].public, 2)
    assert t.seats["ann"].table.step() == "shuffle"


def test_a_smaller_threshold_and_one_out_of_range(tmp_path: Path) -> None:
    t = Table(tmp_path, threshold=2)
    assert t.inv.doc.threshold == 2
    for k in (0, 4):
        with pytest.raises(UsageError):
            Table(tmp_path / str(k), threshold=k)


def test_a_bad_share_is_caught_by_its_holder_only(tmp_path: Path) -> None:
    t = Table(tmp_path)
    honest = join(t.inv, t.ids["ann"], "ann")
    keys = seat_keys(t.ids["ann"], t.inv)
    seats = [(s, t.ids[s].public) for s in SEATS]
    other = M.dealing(keys, t.inv.game, "ann", seats, 3, _derived(t.ids["ann"], t.inv, b"another dealing"))
    assert honest.doc.dealing is not None
    # bob's box from another polynomial of the same keys: it opens, and fails the commitments
    bad = msgspec.structs.replace(honest.doc.dealing, shares={**honest.doc.dealing.shares, "bob": other.shares["bob"]})
    cheat = sign(msgspec.structs.replace(honest.doc, dealing=bad, signer=""), t.ids["ann"])
    assert t.send(cheat) == "joined"  # the host cannot open the boxes: the holder checks
    for s in SEATS[1:]:
        t.send(join(t.inv, t.ids[s], s))
    (first,) = t.packets()
    for s in ("cat", "dan"):
        t.seats[s].follow(first)
        assert "ann" in t.seats[s].held
    t.seats["bob"].follow(first)  # bob's are off: he complains in the open (tests/test_trustless_complaint.py)
    assert t.seats["bob"].bad == ["ann"] and "ann" not in t.seats["bob"].held
    complaint = t.seats["bob"].owed()
    assert complaint is not None and (complaint.doc.step, complaint.doc.against) == ("complaint", "ann")


def test_a_join_without_its_dealing_is_refused_and_an_old_game_reads_joins_without(tmp_path: Path) -> None:
    t = Table(tmp_path)
    good = join(t.inv, t.ids["ann"], "ann")
    bare = sign(msgspec.structs.replace(good.doc, dealing=None, signer=""), t.ids["ann"])
    before = t.host.packets(0)
    with pytest.raises(BadPacket):
        t.send(bare)
    short = msgspec.structs.replace(good.doc.dealing, shares={k: v for k, v in good.doc.dealing.shares.items()
                                                              if k != "dan"})
    with pytest.raises(BadPacket):
        t.send(sign(msgspec.structs.replace(good.doc, dealing=short, signer=""), t.ids["ann"]))
    assert t.host.packets(0) == before
    # a game made before thresholds: its invitation names none, and its joins deal nothing
    old = PublicTable.of(msgspec.structs.replace(t.inv.doc, threshold=None))
    old.take_join(bare.doc)
    assert "ann" in old.shares and not old.dealings
    with pytest.raises(BadPacket):
        PublicTable.of(msgspec.structs.replace(t.inv.doc, threshold=None)).take_join(good.doc)


def test_game_new_takes_a_threshold_and_refuses_a_bad_one(tmp_path: Path, here) -> None:
    """`game new` first as a process of its own, then through the command line's entry in this
    process; the key files made by the library (the files `pbem key new` writes)."""
    homes = {n: tmp_path / f"home-{n}" for n in ("referee", "ann", "bob", "cat")}
    pubs = keys_here(homes)
    players = [a for s in ("ann", "bob", "cat") for a in ("--player", f"{s}={pubs[s]}")]
    host = homes["referee"]
    for extra, words in ((["--trustless", "--threshold", "3"], "bad --threshold 3"),
                         (["--trustless", "--threshold", "0"], "bad --threshold 0"),
                         (["--threshold", "1"], "--threshold needs --trustless")):
        run = pbem if words == "bad --threshold 3" else here
        one_error_line(run("game", "new", "t", "--host", "referee", *players, "--db", tmp_path / "t.db", *extra,
                           home=host, cwd=tmp_path), 2, words)
        assert not (tmp_path / "t.db").exists()
    here("game", "new", "t", "--host", "referee", *players, "--db", tmp_path / "t.db", "--trustless", "--threshold",
         "1", home=host, cwd=tmp_path, ok=True)
    inv = read_blocks((tmp_path / "t" / "out" / "invitation.pbem").read_text())[0]
    assert inv.doc.threshold == 1


def test_a_box_that_is_no_box_is_refused_at_the_host_and_one_for_another_seat_by_its_holder(tmp_path: Path) -> None:
    t = Table(tmp_path)
    honest = join(t.inv, t.ids["ann"], "ann")
    boxes = honest.doc.dealing.shares

    def with_box(box: str):
        bad = msgspec.structs.replace(honest.doc.dealing, shares={**boxes, "bob": box})
        return sign(msgspec.structs.replace(honest.doc, dealing=bad, signer=""), t.ids["ann"])

    for box in ("not base64!", boxes["bob"][:-8] + "=" * 0, ""):
        with pytest.raises(BadPacket):
            t.send(with_box(box))
    assert t.host.packets(0) == []
    assert t.send(with_box(boxes["cat"])) == "joined"  # cat's box, the right size: only bob can tell
    for s in SEATS[1:]:
        t.send(join(t.inv, t.ids[s], s))
    (first,) = t.packets()
    t.seats["dan"].follow(first)
    t.seats["bob"].follow(first)  # the box does not open for bob: a bad share, he complains
    assert t.seats["bob"].bad == ["ann"] and t.seats["bob"].owed().doc.step == "complaint"
