"""A trustless seat's key home keeps how far it checked the chain (pbem/seat/checked.py), so
the next `pbem turn` follows that part without checking its proofs again; and nothing but the
seat's own key can make it skip a check.

The attack, through real `pbem turn` processes on a real folder: the blind host (its key)
appends a packet relaying bob's deal tokens with a bad proof (two tokens swapped, signed again
by bob). ann's turn refuses it, whatever record a stranger put in her key home for that packet
(a record with a bad signature, bob's own record, a link to a good one, a FIFO), and nothing
is sent; only a record signed by ann's key makes the turn take it (the attack is real).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import msgspec
import pytest
from blind_game import BlindGame
from processes import one_error_line, pbem

from pbem.errors import BadPacket
from pbem.folder.layout import GameFolder
from pbem.protocol.documents import Packet, RelayPacket, Signed, read_blocks, relay, sign
from pbem.protocol.trustless import messages as M
from pbem.protocol.trustless.tokens import TOKEN_BYTES
from pbem.seat import trustless_client
from pbem.seat.checked import checked_in, mark_checked, read_checked
from pbem.seat.home import checked_path


def _packets(g: BlindGame) -> list[Signed[Packet]]:
    return [read_blocks(p.read_text())[0].expect(Packet) for _, p in GameFolder.open(g.folder).packets(None)]


def _forged(g: BlindGame, head: Signed[Packet]) -> Signed[Packet]:
    """The packet after `head`, signed by the host, relaying bob's deal with two tokens swapped."""
    bundle = g.seats["bob"].seat.deal_bundle(1)
    raw = bytearray(base64.b64decode(bundle["tokens"]))
    raw[:2 * TOKEN_BYTES] = raw[TOKEN_BYTES:2 * TOKEN_BYTES] + raw[:TOKEN_BYTES]
    bundle["tokens"] = base64.b64encode(bytes(raw)).decode()
    block = M.message(g.ids["bob"], g.inv.game, "bob", head.doc.seq, head.hash, "deal", bundles=[bundle])
    waiting = msgspec.structs.replace(head.doc.waiting, seats=[s for s in head.doc.waiting.seats if s != "bob"])
    return sign(RelayPacket(game=g.inv.game, seq=head.doc.seq + 1, prev=head.hash, round=1, phase="playing",
                            to_move=None, public={}, moves=[], events=[], parts={}, relayed=[relay(block)],
                            waiting=waiting), g.ids["referee"])


@pytest.mark.slow  # a dealt game in one process, then three `pbem turn` processes
def test_a_seat_checks_only_what_its_key_did_not_check_before_and_no_stranger_can_say_it_did(
        tmp_path: Path, here, monkeypatch: pytest.MonkeyPatch) -> None:
    g = BlindGame(tmp_path).play(lambda table: table.step() == "deal")
    home, inbox = g.homes["ann"], g.folder / "inbox"
    record = checked_path(home, g.inv.game, "ann")

    def turn():
        return pbem("turn", g.folder, "--as", "ann", "--json", home=home, timeout=180)

    first = turn()  # every proof checked: the record names the newest packet, signed by ann's key
    assert first.returncode == 0, first.stderr
    chain = _packets(g)
    assert read_checked(home, g.ids["ann"], g.inv, "ann") == (chain[-1].doc.seq, chain[-1].hash)
    assert read_checked(home, g.ids["bob"], g.inv, "ann") is None  # checked against ann's own key only
    sent = sorted(inbox.glob("*.pbem"))
    assert len(sent) == 1  # her deal tokens
    # the record holds for a chain with that very packet and every one before it: with a gap, the
    # packets before the gap are tied to the head by no hash, so each is checked again
    head = read_checked(home, g.ids["ann"], g.inv, "ann")
    assert checked_in(head, chain, 0) == checked_in(head, chain[2:], 2) == len(chain)
    assert checked_in(head, chain[:2] + chain[3:], 0) == checked_in(head, chain[:-1], 0) == 0
    # `pbem show` of an older packet, which the folder's packets after it tie to the record's head:
    # its proofs are not checked again, and the record stays where it was; with a packet after it
    # missing from its folder, nothing ties it to the head: every proof up to it is checked
    from group_ops import counted

    older = g.packet_file(2)
    gap = tmp_path / "gap"
    gap.mkdir()
    for p in older.parent.glob("*.pbem"):
        if p != g.packet_file(3):
            shutil.copy(p, gap / p.name)
    ops = {}
    reads: list[Path] = []  # the record is read and its signature verified once a command
    monkeypatch.setattr(trustless_client, "read_checked", lambda h, *a: reads.append(h) or read_checked(h, *a))
    for what, packet in (("tied", older), ("gap", gap / older.name)):
        reads.clear()
        with counted() as ops[what]:
            shown = here("show", packet, "--as", "ann", "--json", home=home, ok=True)
        assert json.loads(shown.stdout)["waiting"]["seats"] == ["bob"], shown.stdout
        assert reads == [home], (what, reads)
        if what == "tied":
            assert read_checked(home, g.ids["ann"], g.inv, "ann") == head
    assert 50 * ops["tied"]["mul"] < ops["gap"]["mul"], ops  # left: the joins' key proofs, always checked
    mark_checked(home, g.ids["ann"], g.inv, "ann", chain[-1])  # as it was

    forged = _forged(g, chain[-1])
    GameFolder.open(g.folder).publish_packet(forged.doc.seq, forged.armored().encode())
    mine = record.read_bytes()
    bobs = checked_path(tmp_path / "bob-home", g.inv.game, "ann")  # bob's key says it for ann
    mark_checked(tmp_path / "bob-home", g.ids["bob"], g.inv, "ann", forged)
    good = checked_path(tmp_path / "good", g.inv.game, "ann")  # ann's key says it (she never would)
    mark_checked(tmp_path / "good", g.ids["ann"], g.inv, "ann", forged)
    planted: dict[str, Callable[[Path], object]] = {
        "a bad signature": lambda r: r.write_bytes(mine.replace(f"{chain[-1].doc.seq} {chain[-1].hash}".encode(),
                                                                f"{forged.doc.seq} {forged.hash}".encode())),
        "bob's record": lambda r: r.write_bytes(bobs.read_bytes()),
        "too long": lambda r: r.write_bytes(mine + b" " * 600),
        "a link to a good record": lambda r: r.symlink_to(good),
        "a FIFO": lambda r: os.mkfifo(r),
        "ann's own record": lambda r: shutil.copy(good, r),  # the attack is real
    }

    def home_with(what: str) -> Path:  # a copy of ann's key home, the record replaced
        h = tmp_path / f"home-ann-{len(what)}-{what[:5]}"
        shutil.copytree(home, h)
        checked_path(h, g.inv.game, "ann").unlink()
        planted[what](checked_path(h, g.inv.game, "ann"))
        return h

    homes = {what: home_with(what) for what in planted}
    real = ("a FIFO", "ann's own record")  # real processes; the other records' turns in this process
    with ThreadPoolExecutor(max_workers=len(real)) as pool:  # independent of each other: side by side
        runs = {what: pool.submit(pbem, "turn", g.folder, "--as", "ann", "--json", home=homes[what], timeout=180)
                for what in real}
    said = {what: here("turn", g.folder, "--as", "ann", "--json", home=h) for what, h in homes.items()
            if what not in real}
    said |= {what: run.result() for what, run in runs.items()}
    for what, run in said.items():
        if what == "ann's own record":
            assert run.returncode == 0, run.stderr
        else:  # exit 3: a bad packet
            one_error_line(run, BadPacket.exit_code, "bob's token for slot dwarves@1 #0 does not match")
    assert len(said) == len(planted)
    assert sorted(inbox.glob("*.pbem")) == sent


def test_a_seat_does_not_check_again_the_proofs_of_the_blocks_it_made_itself(tmp_path: Path) -> None:
    """The shuffles, ann's proofs checked as she follows: her own shuffle, relayed back to her,
    costs her no multiplication (she made it, on the table as it stood); bob's and cat's cost her
    what they cost a spectator. ann's seat started again (a new process: nothing made) checks
    her shuffle as any other."""
    from group_ops import counted

    from pbem.seat.trustless import Follower, TrustlessSeat

    g = BlindGame(tmp_path)
    ann = g.seats["ann"]
    ann.table.check_proofs = True
    first = [read_blocks(a)[0].expect(Packet) for _, a in g.host.packets(0)]
    spectator, again = Follower(g.inv), TrustlessSeat(g.inv, g.ids["ann"], "ann")
    for p in first:
        spectator.follow(p)
        again.follow(p)
    cost: dict[str, tuple[int, int, int]] = {}
    while g.table.step() == "shuffle":
        seat = g.table.waiting().seats[0]
        g.host.accept(read_blocks(g.seats[seat].owed().armored())[0])
        (seq, armored), = g.host.packets(g.seen)
        packet = read_blocks(armored)[0].expect(Packet)
        with counted() as mine:
            ann.follow(packet)
        with counted() as theirs:
            spectator.follow(packet)
        with counted() as restarted:
            again.follow(packet)
        for other in ("bob", "cat"):
            g.seats[other].follow(packet)
        g.seen = seq
        cost[seat] = (mine["mul"], theirs["mul"], restarted["mul"])
    assert list(cost) == ["ann", "bob", "cat"]
    assert cost["ann"][0] == 0 and cost["ann"][1] == cost["ann"][2] > 0, cost
    assert cost["bob"][0] == cost["bob"][1] > 0 and cost["cat"][0] == cost["cat"][1] > 0, cost
    assert ann.table.stacks == spectator.table.stacks == again.table.stacks
