"""Table talk through a game folder and file by file (docs/protocol.md, "Table talk"): `pbem say`
as real processes, the host relaying every line to the right seats without a move, what each
seat sees in `pbem turn` and `pbem show --json`, a whisper's text in no byte the host or the
folder holds, bad input refused with nothing kept, and the host refusing forged, replayed and
moved lines. Each command runs as a process of its own at least once in this file (`say` to a
folder and to a file each); its further runs go through the command line's own entry in this
process (`here`)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import msgspec
import pytest
from cli_games import cli_game
from folder_games import SEATS, folder_dealt, new_game, started_game
from processes import pbem
from run_here import main_here

from pbem.errors import BadPacket, BadSignature, Conflict
from pbem.host import referee as H
from pbem.host.tables import talk as talk_table
from pbem.protocol import talk
from pbem.protocol.armor import dearmor_all
from pbem.protocol.documents import Talk, sign
from pbem.protocol.limits import TALK_CHARS, TALK_PER_PACKET
from pbem.seat import player as P
from pbem.seat import talk as seat_talk
from pbem.seat.home import talk_dir

PUBLIC = "cat broke my lamp: cat is a saboteur"
SECRET = "I saw the map: the top one is stone"


def _every_byte(root: Path) -> bytes:
    """Every file under `root` as it is, and every armoured block in it decoded (a SQLite file:
    in its rows), so that text sent as base64 armour is found as well as raw text."""
    out = []
    for p in sorted(p for p in root.rglob("*") if p.is_file()):
        data = p.read_bytes()
        out.append(data)
        text = data.decode("utf-8", errors="replace")
        if data.startswith(b"SQLite format 3"):
            with sqlite3.connect(p) as db:
                text = "\n".join(db.iterdump())
        out += [payload for _, payload in dearmor_all(text)]
    return b"\n".join(out)


def _dealt(root: Path) -> tuple[Path, Path, dict[str, Path]]:
    """A game folder, every seat joined and dealt, made in this process: what is tested is the talk
    that follows, through real `pbem` processes."""
    db, folder, homes, _, _ = folder_dealt(root)
    return db, folder, homes


def _json(folder: Path, home: Path, seat: str, run=pbem) -> list[dict]:
    """What `pbem turn --json` says of the talk (`run`: processes.pbem, or `here`)."""
    return json.loads(run("turn", folder, "--as", seat, "--json", home=home, ok=True).stdout)["talk"]


@pytest.mark.slow
def test_a_folder_game_carries_lines_and_whispers_to_the_right_seats(tmp_path: Path, here) -> None:
    db, folder, homes = _dealt(tmp_path)
    host = ("host", "run", "t", "--db", db, "--folder", folder, "--once")
    said = pbem("say", folder, PUBLIC, "--as", "ann", home=homes["ann"], ok=True)
    assert "line to the table at packet 1" in said.stdout
    whispered = here("say", folder, SECRET, "--as", "bob", "--to", "ann", home=homes["bob"], ok=True)
    assert "whisper to ann at packet 1" in whispered.stdout
    relayed = pbem(*host, home=homes["referee"], ok=True).stdout
    assert "bob whispered to ann at packet 1" in relayed and "ann said a line at packet 1" in relayed
    # no move was made: the lines came without a packet
    assert sorted(p.name[:6] for p in (folder / "packets" / "table").iterdir()) == ["000001"]

    line = {"from": "ann", "to": None, "text": PUBLIC, "packet": 1, "n": 1}
    whisper = {"from": "bob", "to": ["ann"], "text": SECRET, "packet": 1, "n": 1}
    ann = _json(folder, homes["ann"], "ann", here)
    strip = [{k: v for k, v in ln.items() if k != "at"} for ln in ann]
    assert strip == [line, whisper] or strip == [whisper, line]
    assert [ln["text"] for ln in _json(folder, homes["bob"], "bob", here)] == [ln["text"] for ln in ann]
    assert [{k: v for k, v in ln.items() if k != "at"} for ln in _json(folder, homes["cat"], "cat", here)] == [line]

    # `pbem turn` shows the lines since the seat last looked, once
    first = pbem("turn", folder, "--as", "ann", home=homes["ann"], ok=True).stdout
    assert "table talk:" in first and f"ann at packet 1: {PUBLIC}" in first
    assert f"bob at packet 1, whispered to ann: {SECRET}" in first
    again = here("turn", folder, "--as", "ann", home=homes["ann"], ok=True).stdout
    assert "table talk" not in again
    cat = here("turn", folder, "--as", "cat", home=homes["cat"], ok=True).stdout
    assert PUBLIC in cat and SECRET not in cat and "whispered" not in cat

    # the whisper's text is in no byte the host holds, nor in the folder, nor in cat's key home;
    # the same search finds the public line there (the search can fail)
    for where in (tmp_path / "saves", folder, homes["referee"], homes["cat"]):
        every = _every_byte(where)
        assert SECRET.encode() not in every, where
        if where in (tmp_path / "saves", folder):
            assert PUBLIC.encode() in every, where


@pytest.mark.slow
def test_bad_lines_are_refused_and_nothing_is_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch, here) -> None:
    db, folder, homes = _dealt(tmp_path)

    def state() -> list[str]:  # what a line would leave: a file in the inbox, a kept line, a row
        return sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()
                      and ("inbox" in p.parts or "talk" in p.parts)) + [str(_rows(db))]

    for _ in range(TALK_PER_PACKET):
        here("say", folder, "hello", "--as", "ann", home=homes["ann"], ok=True)
    before = state()
    for args, words in [(["", "--as", "ann"], "empty"),
                        (["   ", "--as", "ann"], "empty"),
                        (["x" * (TALK_CHARS + 1), "--as", "bob"], f"at most {TALK_CHARS} characters"),
                        (["one more", "--as", "ann"], f"you said {TALK_PER_PACKET} lines at packet 1"),
                        (["psst", "--as", "bob", "--to", "dan"], "no seat 'dan' in this game"),
                        (["psst", "--as", "bob", "--to", "bob"], "your own seat"),
                        (["hi", "--as", "referee"], "holds no seat")]:
        who = args[args.index("--as") + 1]
        # through the command line's entry in this process: many inputs to one command
        code, stderr = main_here(["say", folder, *args], homes[who], capsys, monkeypatch)
        assert code == 2, (args, stderr)
        err = stderr.strip().splitlines()
        assert err[0].startswith("error: ") and words in stderr and "Traceback" not in stderr, stderr
    assert state() == before
    # and once as a process of its own
    run = pbem("say", folder, "one more", "--as", "ann", home=homes["ann"])
    assert run.returncode == 2 and f"you said {TALK_PER_PACKET} lines at packet 1" in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and state() == before

    # a line that could not be sent (the inbox is not a folder) is kept, and goes first with the next one
    inbox = folder / "inbox"
    inbox.rename(tmp_path / "inbox-aside")
    inbox.write_text("not a folder")
    failed = here("say", folder, "lost?", "--as", "bob", home=homes["bob"])
    assert failed.returncode == 3 and "Traceback" not in failed.stderr, failed.stderr
    inbox.unlink()
    (tmp_path / "inbox-aside").rename(inbox)
    again = here("say", folder, "and more", "--as", "bob", home=homes["bob"], ok=True).stdout
    assert "line 1 at packet 1, not sent before" in again and "line to the table at packet 1" in again
    relayed = here("host", "run", "t", "--db", db, "--folder", folder, "--once", home=homes["referee"], ok=True).stdout
    assert relayed.count("bob said a line at packet 1") == 2
    assert [ln["text"] for ln in _json(folder, homes["cat"], "cat", here) if ln["from"] == "bob"] == ["lost?", "and more"]


@pytest.mark.slow
def test_control_characters_and_bidi_overrides_never_reach_the_terminal(tmp_path: Path, here) -> None:
    db, folder, homes = _dealt(tmp_path)
    nasty = "\x1b[2J\x1b[31mred\x1b]0;title\x07 \u202egnp.exe\rerror: fake"
    here("say", folder, nasty, "--as", "ann", home=homes["ann"], ok=True)
    here("host", "run", "t", "--db", db, "--folder", folder, "--once", home=homes["referee"], ok=True)
    out = pbem("turn", folder, "--as", "cat", home=homes["cat"], ok=True).stdout
    line = next(x for x in out.splitlines() if "ann at packet 1" in x)
    assert "\x1b" not in out and "\u202e" not in out and "\r" not in out and "\x07" not in out
    assert "\\x1b[31mred" in line and "\\u202egnp.exe" in line and "\\rerror: fake" in line
    # --json carries the text as written (JSON escapes), which reads back the same
    assert _json(folder, homes["cat"], "cat", here)[0]["text"] == nasty


@pytest.mark.slow
def test_file_by_file_a_talk_file_is_applied_and_shown_beside_the_packet(tmp_path: Path, here) -> None:
    db, folder, homes = cli_game(tmp_path, here=here)
    out = tmp_path / "out"
    inv = folder / "invitation.pbem"
    for s in SEATS:
        here("join", inv, "--as", s, "-o", tmp_path / f"join-{s}.pbem", home=homes[s], ok=True)
    here("apply", "t", *[tmp_path / f"join-{s}.pbem" for s in SEATS], "--db", db, "--out", out, home=homes["referee"], ok=True)
    packet = out / "packet-000001.pbem"
    said = pbem("say", packet, PUBLIC, "--as", "cat", "-o", tmp_path / "talk-cat.pbem", home=homes["cat"],
                cwd=tmp_path, ok=True)
    assert "talk file:" in said.stdout
    here("say", packet, SECRET, "--as", "ann", "--to", "bob", home=homes["ann"], cwd=tmp_path, ok=True)
    whisper = tmp_path / "talk-ann-000001-1.pbem"
    # refusing to write over a file, before anything is made
    refused = here("say", packet, "again", "--as", "cat", "-o", tmp_path / "talk-cat.pbem", home=homes["cat"])
    assert refused.returncode == 2 and "refusing to write over it" in refused.stderr
    applied = pbem("apply", "t", tmp_path / "talk-cat.pbem", whisper, "--db", db, "--out", out,
                   home=homes["referee"], ok=True).stdout
    assert "cat said a line at packet 1" in applied and "ann whispered to bob at packet 1" in applied
    assert "latest packet" not in applied  # no packet came of it
    assert len(list((out / "talk").glob("*.pbem"))) == 2
    again = here("apply", "t", whisper, "--db", db, "--out", out, home=homes["referee"], ok=True)
    assert "already relayed; nothing changed" in again.stdout
    for seat, want in (("bob", [PUBLIC, SECRET]), ("cat", [PUBLIC])):
        run = pbem if seat == "bob" else here
        shown = json.loads(run("show", packet, "--as", seat, "--json", home=homes[seat], ok=True).stdout)
        assert sorted(ln["text"] for ln in shown["talk"]) == sorted(want)
    assert SECRET.encode() not in _every_byte(tmp_path / "saves") + _every_byte(out)


# --- the host refuses forged, replayed and moved lines, keeping nothing --------------------------------


def _rows(db: Path) -> int:
    with sqlite3.connect(db) as c:
        return c.execute(f"SELECT count(*) FROM {talk_table.name}").fetchone()[0]


def test_the_host_refuses_forged_replayed_and_moved_lines(tmp_path: Path) -> None:
    db, host, _, _, seats, ids = started_game(tmp_path)
    ann = seats["ann"].latest()
    assert ann is not None
    keys = ann.invitation.doc.seat_keys()
    game, packet = ann.packet.game, ann.packet.hash
    at = "2026-12-05T00:00:00+00:00"

    def line(seat: str, n: int = 1, seq: int = 1, packet: str = packet, text: str = PUBLIC, by: str | None = None,
             to: list[str] | None = None, game: str = game):
        return talk.make(game, seat, seq, packet, n, at, text, to or [], keys, ids[by or seat])

    good = line("ann")
    assert host.accept(good).kind == "talk" and _rows(db) == 1
    assert host.accept(good).kind == "duplicate" and _rows(db) == 1
    # signed by another key than the seat's
    with pytest.raises(BadSignature):
        host.accept(line("ann", n=2, by="bob"))
    # a different line under a count already used: a replay of n as a new line
    with pytest.raises(Conflict):
        host.accept(line("ann", text="something else"))
    # moved to another packet: a number the game does not have, or another packet's hash
    with pytest.raises(BadPacket, match="never sent"):
        host.accept(line("ann", n=2, seq=2))
    with pytest.raises(BadPacket, match="never sent"):
        host.accept(line("ann", n=2, packet="0" * 64))
    # a whisper to a seat not in the game (sealed with a stranger's key)
    stranger = {**keys, "dan": ids["referee"].public.encode()}
    with pytest.raises(BadPacket, match="holds no seat"):
        host.accept(talk.make(game, "ann", 1, packet, 2, at, "psst", ["dan"], stranger, ids["ann"]))
    # replayed into another game: another game's host refuses it
    other_db, other_homes = new_game(tmp_path / "other")
    from pbem.seat import keys as key_files

    other = H.Host(other_db, key_files.load_identity(other_homes["referee"], "referee", None))
    with pytest.raises(BadPacket, match="is for game"):
        other.accept(good)
    # the same line re-made for the other game is signed by ann's key, not the other game's seat's
    copied = sign(msgspec.structs.replace(good.doc, game=other.game_id(), signer=""), ids["ann"])
    with pytest.raises((BadSignature, BadPacket)):
        other.accept(copied)
    # as many lines at one packet as a seat may, then refused
    for n in range(2, TALK_PER_PACKET + 1):
        host.accept(line("ann", n=n, text=f"line {n}"))
    with pytest.raises(BadPacket, match="as many as a seat may"):
        host.accept(line("ann", n=TALK_PER_PACKET + 1))
    assert _rows(db) == TALK_PER_PACKET
    host.close()
    other.close()


def test_a_seat_hears_only_lines_its_speakers_signed_at_packets_it_saw(tmp_path: Path) -> None:
    """A line dropped into the folder by someone else (signed by a key that holds no seat, or
    saying another hash for a packet the seat saw) is not heard."""
    _, host, fh, _, seats, ids = started_game(tmp_path)
    cat = seats["cat"].latest()
    assert cat is not None
    keys = cat.invitation.doc.seat_keys()
    at = "2026-12-05T00:00:00+00:00"
    forged = sign(Talk(game=cat.packet.game, seat="ann", seq=1, packet=cat.packet.hash, n=7, at=at, text="forged"),
                  ids["referee"])
    moved = talk.make(cat.packet.game, "ann", 1, "1" * 64, 8, at, "moved", [], keys, ids["ann"])
    said = talk.make(cat.packet.game, "ann", 1, cat.packet.hash, 9, at, "said", [], keys, ids["ann"])
    for block in (forged, moved, said):
        (tmp_path / "shared" / "talk").mkdir(exist_ok=True)
        (tmp_path / "shared" / "talk" / f"000001-ann-{block.hash[:12]}.pbem").write_text(block.armored())
    heard = seat_talk.heard(cat, seats["cat"].home, seats["cat"].talk_files())
    assert [ln.text for ln in heard] == ["said"]
    assert not talk_dir(seats["cat"].home, cat.packet.game).exists()  # hearing keeps nothing
    host.close()


@pytest.mark.slow
def test_a_trustless_folder_game_carries_talk_through_the_blind_host(tmp_path: Path, here) -> None:
    db, folder, homes = cli_game(tmp_path, trustless=True, here=here)
    for s in SEATS:
        here("turn", folder, "--as", s, home=homes[s], ok=True)
    host = ("host", "run", "t", "--db", db, "--folder", folder, "--once")
    here(*host, home=homes["referee"], ok=True)
    here("turn", folder, "--as", "ann", home=homes["ann"], ok=True)  # follows the chain to its newest packet
    here("say", folder, PUBLIC, "--as", "ann", home=homes["ann"], ok=True)
    here("say", folder, SECRET, "--as", "ann", "--to", "bob", home=homes["ann"], ok=True)
    relayed = here(*host, home=homes["referee"], ok=True).stdout
    assert "ann said a line" in relayed and "ann whispered to bob" in relayed
    bob = here("turn", folder, "--as", "bob", home=homes["bob"], ok=True).stdout
    assert f"ann at packet 1: {PUBLIC}" in bob and f"whispered to bob: {SECRET}" in bob
    cat = [ln["text"] for ln in _json(folder, homes["cat"], "cat", here)]
    assert cat == [PUBLIC]
    for where in (tmp_path / "saves", folder, homes["referee"], homes["cat"]):
        assert SECRET.encode() not in _every_byte(where), where

    # the audit of the chain checks every line: its seat's signature, its packet's hash
    from pbem.replay.sources import open_source
    from pbem.replay.trustless import audit_chain
    from pbem.seat.keys import load_identity

    src = open_source(folder)
    game = src.games()[0]
    rep = audit_chain(src, game, None)
    assert rep.fault is None and rep.talk == 2
    line = next(iter(src.talk[game].values()))
    moved = sign(msgspec.structs.replace(line.doc, n=7, packet="2" * 64, signer=""), load_identity(homes["ann"], "ann", None))
    (folder / "talk" / f"000001-ann-{moved.hash[:12]}.pbem").write_text(moved.armored())
    rep = audit_chain(open_source(folder), game, None)
    assert rep.talk == 2 and rep.fault is not None and "not the chain's" in str(rep.fault)


def test_the_store_keeps_each_line_once_on_sqlite_and_postgresql(tmp_path: Path, store_url: str) -> None:
    from table_games import make_table

    from pbem.host.publish import OutDir, publish_pending

    table = make_table(tmp_path, SEATS, store=store_url)
    _, packet = table.latest()
    sp = P.open_packet(packet, table.ids["ann"], table.homes["ann"])
    at = "2026-12-05T00:00:00+00:00"
    first = seat_talk.say(sp, table.homes["ann"], PUBLIC, [], at)
    second = seat_talk.say(sp, table.homes["ann"], SECRET, ["bob"], at)
    assert [table.host.accept(b).kind for b in (first, second, first)] == ["talk", "talk", "duplicate"]
    with pytest.raises(Conflict):
        table.host.accept(talk.make(first.game, "ann", 1, first.doc.packet, 1, at, "other", [],
                                    sp.invitation.doc.seat_keys(), table.ids["ann"]))
    assert [(r.seat, r.seq) for r in table.host.talk()] == [("ann", 1), ("ann", 1)]
    assert table.host.talk(table.host.talk()[0].id) == table.host.talk()[1:]
    out = OutDir(tmp_path / "out")
    publish_pending(table.host, out)
    assert len(list((tmp_path / "out" / "talk").glob("*.pbem"))) == 2
    assert not any(where for _, where in publish_pending(table.host, out))  # relayed once
    table.host.close()
