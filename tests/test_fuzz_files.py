"""Damaged files of every shape are refused with a PbemError: never another exception, and
never a change to the host's database. The second half drops files of every shape into a real
shared game folder and runs the real `pbem` command on it (PBEM_FUZZ_EXAMPLES=N for more cases
than the quick default)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from on_disk import sqlite_dump
from table_games import make_table

from engine.rules import legal_moves
from pbem.errors import PbemError
from pbem.protocol.documents import parse, read_blocks, sign_json
from pbem.protocol.limits import MAX_FILE
from pbem.seat import player as P


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    table = make_table(tmp_path_factory.mktemp("fuzz"), ["ann", "bob", "cat"])
    path, packet = table.latest()
    mover = packet.doc.to_move
    sp = P.open_packet(packet, table.ids[mover], table.homes[mover])
    move = table.move_file(mover, str(legal_moves(sp.view)[0]), packet).read_text()
    return table, path.read_text(), move, mover


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
    before = sqlite_dump(table.root / "game.db")
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
    assert sqlite_dump(table.root / "game.db") == before


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
    before = sqlite_dump(table.root / "game.db")
    doc = msgspec.to_builtins(read_blocks(move_text)[0].doc)
    doc.update(changes)
    try:
        block = parse("move", sign_json("move", doc, table.ids[mover]))
        outcome = table.host.accept(block)
        assert outcome.kind != "applied", f"a malformed move was applied: {changes}"
    except PbemError:
        pass
    assert sqlite_dump(table.root / "game.db") == before


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


# --- files a stranger drops into a shared game folder, through the real `pbem` command ----------
# Every reader of such a file (the host's inbox, a seat's packets and notices, the manifest, the
# invitation) and the user's own inputs (a position file, an away time) answer one error line or
# carry on: never exit 70, a traceback, a hang or memory without bound.

SHAPES = ["zero", "mem", "loop", "dangling", "fifo", "folder", "sparse", "empty", "latin1", "deep", "deep-object",
          "nul"]


def _drop(path: Path, shape: str | bytes) -> None:
    """Put `shape` at `path`: a link (to a device, to itself, to nothing), a FIFO, a folder, a sparse
    file over the limit, or bytes (given, or of a named kind)."""
    if shape == "zero":
        path.symlink_to("/dev/zero")
    elif shape == "mem":
        path.symlink_to("/proc/self/mem")
    elif shape == "loop":
        path.symlink_to(path.name)  # a link to itself: ELOOP
    elif shape == "dangling":
        path.symlink_to(path.with_name("nowhere"))
    elif shape == "fifo":
        os.mkfifo(path)
    elif shape == "folder":
        path.mkdir()
    elif shape == "sparse":
        with path.open("wb") as f:
            f.truncate(MAX_FILE + 1)
    else:
        data = shape if isinstance(shape, bytes) else {
            "empty": b"", "latin1": "pbem-folder é".encode("latin-1"), "deep": b"[" * 100_000 + b"]" * 100_000,
            "deep-object": b'{"a":' * 50_000 + b"1" + b"}" * 50_000, "nul": b"\x00" * 1000}[shape]
        path.write_bytes(data)


@pytest.fixture(scope="module")
def folder_game(tmp_path_factory):
    """A dealt game in a shared folder, made once; each case runs on a copy."""
    from folder_games import folder_dealt

    root = tmp_path_factory.mktemp("fuzz-folder")
    _, _, _, mover, sp = folder_dealt(root)
    return root, mover.seat, sp.doc.seq


def _copy(folder_game, into: Path) -> tuple[Path, str, int]:
    root, seat, seq = folder_game
    target = into / f"case-{time.monotonic_ns()}"
    shutil.copytree(root, target, symlinks=True)
    return target, seat, seq


def _clean(code: int, out: str, peak: int, what: object) -> None:
    assert code not in (70, -9) and "Traceback" not in out, (what, code, out)  # -9: killed after the timeout
    assert peak < 250, (what, f"peak {peak} MiB")


def _runs(root: Path, seat: str) -> dict[str, tuple[list[object], Path]]:
    folder, db = root / "shared", root / "saves" / "t.db"
    return {"turn": (["turn", folder, "--as", seat], root / f"home-{seat}"),
            "bot": (["bot", "run", "--as", seat, "--folder", folder, "--once"], root / f"home-{seat}"),
            "host": (["host", "run", "t", "--db", db, "--folder", folder, "--once"], root / "home-referee")}


def test_every_poison_at_once_in_packets_notices_and_inbox(folder_game, tmp_path: Path) -> None:
    """Each shape as a packet newer than the real one, as a notice and as an inbox file (with a
    name of 245 characters, and one of escapes): the seat shows its packet, the bot and the host
    carry on, the inbox is emptied into rejected/."""
    from process_tools import run_peak

    root, seat, seq = _copy(folder_game, tmp_path)
    shared = root / "shared"
    (shared / "notices").mkdir(exist_ok=True)
    for i, shape in enumerate(SHAPES, 1):
        _drop(shared / "packets" / "table" / f"{seq + i:06d}-{i:012x}.pbem", shape)
        _drop(shared / "notices" / f"{seq:06d}-late-{i:012x}.pbem", shape)
        if shape != "folder":  # a folder in the inbox is no candidate: left alone
            _drop(shared / "inbox" / f"{shape}.pbem", shape)
    _drop(shared / "inbox" / ("y" * 240 + ".pbem"), b"junk")
    _drop(shared / "inbox" / "\x1b[2J\x07\u202e.pbem", b"junk")
    for p in (shared / "inbox").iterdir():
        if not p.is_symlink() and p.is_file():
            os.utime(p, (time.time() - 60, time.time() - 60))  # no grace for a file being copied
    for name, (args, home) in _runs(root, seat).items():
        code, out, peak = run_peak(args, home, root, timeout=60)
        _clean(code, out, peak, name)
        assert code == 0, (name, out)
        if name == "turn":
            assert out.count("skipped") == len(SHAPES), out
    left = [p.name for p in (shared / "inbox").iterdir() if p.name not in ("done", "rejected", "folder.pbem")]
    assert left == [], left
    assert all(p.name.isprintable() and len(p.name) < 200 for p in (shared / "inbox" / "rejected").iterdir())


@settings(max_examples=int(os.environ.get("PBEM_FUZZ_EXAMPLES", "6")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.sampled_from(["pbem-folder.json", "invitation.pbem"]),
       shape=st.sampled_from(SHAPES) | st.binary(max_size=300)
       | st.recursive(st.sampled_from(['"x"', "1", "null", '"\\ud800"', "9" * 400]),
                      lambda inner: st.lists(inner, max_size=3).map(lambda xs: "[" + ",".join(xs) + "]")
                      | st.dictionaries(st.sampled_from(["format", "version", "game_id", "seats"]), inner, max_size=4)
                      .map(lambda d: "{" + ",".join(f'"{k}":{v}' for k, v in d.items()) + "}"),
                      max_leaves=6).map(str.encode),
       command=st.sampled_from(["turn", "bot", "host"]))
def test_a_poisoned_manifest_or_invitation_never_exits_70(folder_game, tmp_path: Path, where: str, shape, command) -> None:
    from process_tools import run_peak

    root, seat, _ = _copy(folder_game, tmp_path)
    (root / "shared" / where).unlink()
    _drop(root / "shared" / where, shape)
    args, home = _runs(root, seat)[command]
    _clean(*run_peak(args, home, root, timeout=30), (where, shape, command))


@settings(max_examples=int(os.environ.get("PBEM_FUZZ_EXAMPLES", "6")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(until=st.sampled_from(["9999-12-31T23:59:59Z", "9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+14:00",
                              "99999999999d", "1e308d", "inf", "10000-01-01", "\x1b[2J", "-1d"])
       | st.text(max_size=30), data=st.binary(max_size=200))
def test_an_away_time_or_a_position_file_never_exits_70(folder_game, tmp_path: Path, until: str, data: bytes) -> None:
    from process_tools import run_peak

    root, seat, _ = _copy(folder_game, tmp_path)
    if "\x00" not in until:  # a NUL cannot be passed in an argument at all
        _clean(*run_peak(["away", root / "shared", "--until", until, "--as", seat], root / f"home-{seat}", root),
               until)
    (root / "position.json").write_bytes(data)
    _clean(*run_peak(["position", "legal", root / "position.json"], root, root), data)


def test_replay_and_audit_of_a_folder_of_poison_never_exit_70(tmp_path: Path) -> None:
    """Every shape as a .pbem and as a .eml file in a folder given to `pbem replay` and `pbem audit`,
    and each one alone (a link to /proc/self/mem named .eml made both exit 70)."""
    from process_tools import run_peak

    for shape in SHAPES:
        for ext in (".pbem", ".eml"):
            _drop(tmp_path / f"{shape}{ext}", shape)
    for args in (["replay", tmp_path], ["audit", tmp_path], ["replay", tmp_path / "mem.eml"],
                 ["audit", tmp_path / "zero.pbem"], ["replay", tmp_path / "fifo.eml"]):
        _clean(*run_peak(args, tmp_path, tmp_path, timeout=60), args)
