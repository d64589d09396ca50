"""A holder's public images of a gone seat's keys (pbem/protocol/trustless/vanished.py), against
which each stand-in share it gives is checked: made once per dealer and holder from the keys and
dealing that seat joined with, not again for every slot of every stand-in block (an image is a
sum of K - 1 multiplications per epoch; a stand-in share's check costs about as much)."""

from __future__ import annotations

from pathlib import Path

from group_ops import counted
from test_trustless_vanish import SEATS, Table

from pbem.protocol.documents import Packet, read_blocks
from pbem.protocol.trustless import standin as SI
from pbem.seat.trustless import Follower


def test_a_holders_images_of_a_dealers_keys_are_made_once(tmp_path: Path) -> None:
    t = Table(tmp_path, silent=set()).join()
    follower = Follower(t.inv)  # the joins followed: every seat's key shares and dealing checked
    (_, armored), = t.host.packets(0)
    follower.follow(read_blocks(armored)[0].expect(Packet))
    table, vanished = follower.table, follower.table.vanished
    for dealer in SEATS:
        for holder in SEATS:
            if holder == dealer:
                continue
            with counted() as first:
                made = vanished.images(dealer, holder)
            with counted() as again:
                assert vanished.images(dealer, holder) is made
            assert first["mul"] > 0 and again["mul"] == again["base"] == again["add"] == 0, (first, again)
            assert made == SI.holder_images(table.shares[dealer], table.dealings[dealer], table.players.index(holder))
