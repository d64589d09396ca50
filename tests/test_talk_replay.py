"""Table talk in the replay and the audit (docs/replay.md): the public lines between the moves
where they were said (terminal, --all, --html), a seat's whispers with its key (--as SEAT), and
`pbem audit` checking every line's signature and place."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest
from processes import pbem
from table_games import PASS, make_table, play_until

from pbem.protocol.documents import read_blocks, sign
from pbem.replay.audit import audit_source
from pbem.replay.html import render_html
from pbem.replay.load import load_replay
from pbem.replay.sources import open_source
from pbem.seat import player as P
from pbem.seat import talk as seat_talk

SEATS = ["ann", "bob", "cat"]
AT = "2026-12-05T00:00:00+00:00"
NASTY = "ann lies \u202egnp.exe \x1b[31mred"


def _round_with_talk(root: Path):
    """A round of three seats played to its end, with ann's public line at packet 1, bob's
    whisper to ann at packet 3 and cat's line with control characters at packet 3."""
    table = make_table(root, SEATS)
    host = table.host

    def say(seat: str, text: str, to: list[str]) -> None:
        _, packet = table.latest()
        sp = P.open_packet(packet, table.ids[seat], table.homes[seat])
        host.accept(seat_talk.say(sp, table.homes[seat], text, to, AT))

    say("ann", "cat broke my lamp", [])
    play_until(table, lambda packet: packet.doc.seq >= 3)
    say("bob", "psst the top goal is zanzibar", ["ann"])
    say("cat", NASTY, [])
    play_until(table, lambda packet: packet.doc.result is not None)
    return table


def test_the_replay_places_talk_between_the_moves(tmp_path: Path, here) -> None:
    table = _round_with_talk(tmp_path)
    db = tmp_path / "game.db"
    r = load_replay(None, db=db)
    placed = {p.speaker: p for p in r.talk}
    assert placed["ann"].frame == 0 and placed["bob"].frame == 2 and placed["cat"].frame == 2
    assert r.said(0, "all") == ["ann at packet 1: cat broke my lamp"]
    assert r.said(2, "all") == ["cat at packet 3: ann lies \\u202egnp.exe \\x1b[31mred"]  # no whisper without a key
    assert r.said(2, "ann") == r.said(2, "all")
    with_key = load_replay(None, db=db, reader=("ann", table.ids["ann"]))
    assert "bob at packet 3, whispered to ann: psst the top goal is zanzibar" in with_key.said(2, "ann")
    assert not any("zanzibar" in line for line in with_key.said(2, "cat") + with_key.said(2, "all"))

    assert [(ln["from"], ln["after"]) for ln in with_key.all_json("ann")["talk"]] == [("ann", 0), ("bob", 2), ("cat", 2)]
    assert [ln["from"] for ln in with_key.to_json(1, "cat")["talk"]] == ["ann"]
    # the web page: public lines in the frames, escaped; the whisper only in ann's own page with her key
    page = render_html(r)
    assert "cat broke my lamp" in page and "zanzibar" not in page and "\u202e" not in page and "\x1b" not in page
    assert "zanzibar" in render_html(with_key, "ann") and "zanzibar" not in render_html(with_key, "cat")

    # through the CLI: --all prints the lines after the move they follow; --as ann with her key the whisper
    # (a process of its own, then through the command line's entry in this process)
    passfile = tmp_path / "pass"
    passfile.write_bytes(PASS)
    out = pbem("replay", "--db", db, "--all", home=table.homes["ann"], ok=True).stdout
    assert out.index("cat broke my lamp") < out.index("1. ") < out.index("ann lies") and "zanzibar" not in out
    assert "\x1b" not in out and "\u202e" not in out
    mine = here("replay", "--db", db, "--all", "--as", "ann", "--passphrase-file", passfile,
                home=table.homes["ann"], ok=True).stdout
    assert "whispered to ann: psst the top goal is zanzibar" in mine
    theirs = here("replay", "--db", db, "--all", "--as", "cat", home=table.homes["ann"], ok=True).stdout
    assert "zanzibar" not in theirs and "cat broke my lamp" in theirs
    table.host.close()


def test_the_audit_checks_every_lines_signature_and_place(tmp_path: Path) -> None:
    table = _round_with_talk(tmp_path)
    db = tmp_path / "game.db"
    src = open_source(None, db)
    game = src.games()[0]
    [report] = audit_source(src, game, [1])
    assert report.ok and report.counts["talk"] == 3, [f.line() for f in report.faults]
    assert "3 lines of table talk" in report.summary()

    # a folder of received files: the archive and the lines, then a forged line and a moved one
    folder = tmp_path / "received"
    folder.mkdir()
    (folder / "round-1.pbem").write_text(table.host.archives()[1])
    for said in table.host.talk():
        (folder / f"talk-{said.id}.pbem").write_text(said.armored)
    _, packet = table.latest()
    first = seat_talk.read_lines([folder / "talk-1.pbem"], game)[0]
    forged = sign(msgspec.structs.replace(first.doc, n=9, text="forged", signer=""), table.ids["bob"])
    moved = sign(msgspec.structs.replace(first.doc, n=10, seq=2, signer=""), table.ids["ann"])
    (folder / "forged.pbem").write_text(forged.armored())
    (folder / "moved.pbem").write_text(moved.armored())
    [report] = audit_source(open_source(folder), game, [1])
    faults = sorted((f.packet, f.check) for f in report.faults)
    assert faults == [(1, "talk"), (2, "talk")], [f.line() for f in report.faults]
    assert report.counts["talk"] == 3
    lines = [f.line() for f in report.faults]
    assert any("not the seat's key" in x for x in lines) and any("not the chain's" in x for x in lines)
    # and the audit command fails on them (exit 8), naming each
    run = pbem("audit", folder, home=table.homes["ann"])
    assert run.returncode == 8 and run.stdout.count("FAULT") == 2, run.stdout + run.stderr
    shutil.rmtree(folder)
    table.host.close()


@pytest.mark.slow
def test_a_trustless_rounds_talk_is_placed_on_its_chain(tmp_path: Path) -> None:
    from blind_game import BlindGame, round_over

    from pbem.seat.keys import load_identity

    g = BlindGame(tmp_path)
    ids = {s: load_identity(g.homes[s], s, None) for s in g.seats_}

    def say(seat: str, text: str, to: list[str]) -> None:
        seq, armored = g.host.packets(0)[-1]
        head = (seq, read_blocks(armored)[0].hash)
        g.host.accept(seat_talk.say(seat_talk.at_chain(g.inv, seat, head, ids[seat]), g.homes[seat], text, to, AT))

    say("ann", "cat broke my lamp", [])
    g.play(round_over(1))
    say("bob", "psst the top goal is zanzibar", ["ann"])
    g.publish()
    r = load_replay(g.folder, round_no=1)
    assert [(p.speaker, p.frame) for p in r.talk] == [("ann", 0), ("bob", len(r))]
    assert r.said(0, "all") == ["ann at packet 1: cat broke my lamp"] and r.said(len(r), "ann") == []
    mine = load_replay(g.folder, round_no=1, reader=("ann", ids["ann"]))
    assert mine.said(len(r), "ann") == [f"bob at packet {mine.talk[1].seq}, whispered to ann: psst the top goal is zanzibar"]
