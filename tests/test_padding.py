"""Sealed boxes are padded: their lengths depend only on the kind of box, not on
what a seat holds or which card a move names. Checked in the bytes: packets, move files and the
host's database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from table_games import Table, make_table, play_until

from pbem.protocol.documents import PAD, parse, read_blocks, unb64

SEATS = ["ann", "bob", "cat", "dan", "eve"]
SEAL_OVERHEAD = 1 + 8 + 32 + 16  # version, key id, HPKE enc, AEAD tag (keys-and-armor.md §5)
BOX_OVERHEAD = 1 + 12 + 16  # version, nonce, AEAD tag: the host's own box (keys-and-armor.md §5)


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Table:
    table = make_table(tmp_path_factory.mktemp("padding"), SEATS)
    play_until(table, lambda p: p.doc.phase != "playing", seed=11)
    return table


def _sealed_len(text: str) -> int:
    return len(unb64(text, "sealed"))


def test_every_part_of_every_packet_has_the_same_length(played: Table) -> None:
    lengths = set()
    for _, armored in played.host.packets():
        packet = read_blocks(armored)[0].doc
        per_packet = {_sealed_len(v) for v in packet.parts.values()}
        assert len(per_packet) == 1, (packet.seq, per_packet)
        lengths |= per_packet
    assert lengths == {PAD["part"] + SEAL_OVERHEAD}  # the whole round: one length


def test_every_move_has_the_same_length_whatever_it_says(played: Table) -> None:
    archive = read_blocks(played.host.archives()[1])[0].doc
    texts = {m.text.split()[0] for m in archive.moves}
    assert {"discard", "play"} <= texts  # moves of different kinds and lengths were made
    lengths = {_sealed_len(parse("move", unb64(m.envelope, "e")).doc.sealed) for m in archive.moves}
    assert lengths == {PAD["move"] + SEAL_OVERHEAD}
    assert len({len(unb64(m.envelope, "e")) for m in archive.moves if m.seat == archive.moves[0].seat}) <= 2


def test_the_hosts_sealed_columns_are_padded_too(played: Table) -> None:
    """(Each seat's part lives only in the packets, checked above; the store keeps no copy.)"""
    con = sqlite3.connect(played.root / "game.db")
    try:
        moves = {_sealed_len(t) for (t,) in con.execute("SELECT text_sealed FROM moves")}
        starts = {_sealed_len(t) for (t,) in con.execute("SELECT start_state_sealed FROM rounds")}
        state, secrets, box_key = con.execute("SELECT state_sealed, secrets_sealed, box_key FROM games").fetchone()
    finally:
        con.close()
    assert moves == {PAD["move"] + BOX_OVERHEAD}  # in the host's own box
    assert {(n - BOX_OVERHEAD) % PAD["state"] for n in starts | {_sealed_len(state)}} == {0}
    assert _sealed_len(secrets) == PAD["secrets"] + SEAL_OVERHEAD  # to the host's key
    assert _sealed_len(box_key) == PAD["secrets"] + SEAL_OVERHEAD


def test_a_padded_box_still_opens_to_canonical_json(played: Table, tmp_path: Path) -> None:
    from pbem.seat import player as P

    _, packet = played.latest()
    for seat in SEATS:
        sp = P.open_packet(packet, played.ids[seat], played.homes[seat], remember=False)
        assert sp.part.seat == seat
