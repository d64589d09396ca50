"""Damaged files of every shape are refused with a PbemError: never another exception, and
never a change to the host's database."""

from __future__ import annotations

import sqlite3

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pbem_helpers import make_table

from engine.rules import legal_moves
from pbem.errors import PbemError
from pbem.protocol.documents import parse, read_blocks, sign_json
from pbem.seat import player as P


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    table = make_table(tmp_path_factory.mktemp("fuzz"), ["ann", "bob", "cat"])
    path, packet = table.latest()
    mover = packet.doc.to_move
    sp = P.open_packet(packet, table.ids[mover], table.homes[mover])
    move = table.move_file(mover, str(legal_moves(sp.view)[0]), packet).read_text()
    return table, path.read_text(), move, mover


def _dump(table) -> str:
    con = sqlite3.connect(table.root / "game.db")
    try:
        return "\n".join(con.iterdump())
    finally:
        con.close()


edits = st.lists(
    st.tuples(st.sampled_from(["flip", "delete", "insert", "truncate"]), st.floats(0, 1), st.text(max_size=8)),
    min_size=1, max_size=3,
)


def _mangle(text: str, ops) -> str:
    for op, where, junk in ops:
        i = int(where * max(len(text) - 1, 0))
        if op == "flip" and text:
            text = text[:i] + ("A" if text[i] != "A" else "z") + text[i + 1 :]
        elif op == "delete":
            text = text[:i] + text[i + 1 + len(junk) :]
        elif op == "insert":
            text = text[:i] + junk + text[i:]
        else:
            text = text[:i]
    return text


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=edits, which=st.sampled_from(["packet", "move"]))
def test_a_damaged_file_is_refused_cleanly(world, ops, which) -> None:
    table, packet_text, move_text, mover = world
    original = packet_text if which == "packet" else move_text
    before = _dump(table)
    text = _mangle(original, ops)
    try:
        blocks = read_blocks(text)
        intact = read_blocks(original)[0].payload
        for block in blocks:
            if block.payload == intact:
                continue  # the edit hit only what is not signed (a comment line, spacing): harmless
            if block.kind == "packet":
                P.open_packet(block, table.ids["bob"], table.homes["bob"], remember=False)
            elif block.kind == "move":
                outcome = table.host.accept(block)
                pytest.fail(f"a damaged move was accepted: {outcome}")
    except PbemError:
        pass
    assert _dump(table) == before


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.dictionaries(st.sampled_from(["game", "seat", "seq", "packet", "commit", "sealed"]),
                               json_values, min_size=1, max_size=4))
def test_a_properly_signed_but_malformed_move_is_refused_cleanly(world, changes) -> None:
    """A seat may sign anything with its own key: the host still answers with a PbemError."""
    table, _, move_text, mover = world
    before = _dump(table)
    doc = msgspec.to_builtins(read_blocks(move_text)[0].doc)
    doc.update(changes)
    try:
        block = parse("move", sign_json("move", doc, table.ids[mover]))
        outcome = table.host.accept(block)
        assert outcome.kind != "applied", f"a malformed move was applied: {changes}"
    except PbemError:
        pass
    assert _dump(table) == before


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.dictionaries(st.sampled_from(["seq", "prev", "round", "phase", "to_move", "public", "parts",
                                                "moves", "result"]), json_values, min_size=1, max_size=3))
def test_a_player_survives_a_malformed_packet_from_the_host(world, changes) -> None:
    """Even the host's own signature does not make a broken packet crash a player's command."""
    table, packet_text, _, _ = world
    doc = msgspec.to_builtins(read_blocks(packet_text)[0].doc)
    doc.update(changes)
    try:
        block = parse("packet", sign_json("packet", doc, table.ids["referee"]))
        P.open_packet(block, table.ids["bob"], table.homes["bob"], remember=False).summary()
    except PbemError:
        pass
