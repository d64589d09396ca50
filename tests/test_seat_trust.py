"""A seat's contribution is fixed for a game, and a seat remembers only
fully verified packets and shows an old packet as old (real key files, real processes)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import msgspec
import processes
import pytest
from on_disk import sqlite_dump
from table_games import PASS, Table, make_table, play_until

from pbem.errors import Conflict, PbemError, StaleMove
from pbem.host import referee as H
from pbem.protocol.documents import b64, read_file, sign, unb64
from pbem.seat import keys
from pbem.seat import player as P
from pbem.seat.home import seen_path

SEATS = ["ann", "bob", "cat"]


def pbem(*args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess:
    return processes.pbem(*args, home=home, cwd=cwd, env={"PBEM_PASSPHRASE": PASS.decode()})


# --- 17.7 one contribution per seat and game ----------------------------------------------


def test_joining_twice_gives_the_host_no_second_deal_to_choose(tmp_path: Path) -> None:
    homes = {n: tmp_path / f"home-{n}" for n in ["referee", *SEATS]}
    ids = {}
    for n, h in homes.items():
        keys.create_identity(h, n, PASS)
        ids[n] = keys.load_identity(h, n, PASS)
    invitation = H.create_game(tmp_path / "g.db", "g", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS], [])
    inv = tmp_path / "invitation.pbem"
    inv.write_text(invitation.armored())
    # The attack: the seat runs `pbem join` twice (two processes), hoping for two contributions.
    for out in ("first.pbem", "second.pbem"):
        run = pbem("join", str(inv), "--as", "ann", "-o", str(tmp_path / out), home=homes["ann"], cwd=tmp_path)
        assert run.returncode == 0, run.stderr
    first, second = (tmp_path / "first.pbem").read_bytes(), (tmp_path / "second.pbem").read_bytes()
    assert first == second  # byte for byte: the same contribution, the same signed join
    # Another key home with the same key (a second machine) makes the same contribution too.
    other = P.join(invitation, ids["ann"], tmp_path / "elsewhere")
    assert other.armored().encode() == first
    # ...while another seat's, or the same seat's in another game, differs.
    joins = {s: P.join(invitation, ids[s], homes[s]) for s in SEATS}
    contributions = {s: joins[s].doc.contribution for s in SEATS}
    assert len(set(contributions.values())) == 3
    invitation2 = H.create_game(tmp_path / "h.db", "g", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS], [])
    assert P.join(invitation2, ids["ann"], homes["ann"]).doc.contribution != contributions["ann"]

    host = H.Host(tmp_path / "g.db", ids["referee"])
    assert host.accept(read_file(tmp_path / "first.pbem")[0]).kind == "joined"
    assert host.accept(read_file(tmp_path / "second.pbem")[0]).kind == "duplicate"
    # A join with another contribution (an old client, or a forged one signed with the seat's
    # key) is refused: the host never holds two contributions of one seat.
    different = sign(msgspec.structs.replace(joins["ann"].doc, contribution=b64(bytes(32))), ids["ann"])
    (tmp_path / "different.pbem").write_text(different.armored())
    before = sqlite_dump(tmp_path / "g.db")
    with pytest.raises(Conflict):
        host.accept(different)
    host.close()
    run = pbem("apply", "g", str(tmp_path / "different.pbem"), "--db", str(tmp_path / "g.db"), home=homes["referee"],
               cwd=tmp_path)
    assert run.returncode == 5 and run.stderr.startswith("error: ") and "already joined" in run.stderr
    assert sqlite_dump(tmp_path / "g.db") == before
    host = H.Host(tmp_path / "g.db", ids["referee"])
    for s in ("bob", "cat"):
        host.accept(joins[s])
    # The deal uses the contribution of the first (and only) join.
    from sqlalchemy import select

    from pbem.host.tables import seats

    with host.store.read() as c:
        stored = dict(c.execute(select(seats.c.name, seats.c.contribution)).all())
    assert unb64(stored["ann"], "c") == unb64(contributions["ann"], "c")
    host.close()


# --- 17.9 only verified packets are remembered; old packets are shown as old --------------


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Table:
    t = make_table(tmp_path_factory.mktemp("trust"), SEATS)
    # ann reads every packet, as a player following the game does.
    play_until(t, lambda p: (P.open_packet(p, t.ids["ann"], t.homes["ann"]) and False) or p.doc.seq >= 12, seed=3)
    return t


def test_an_old_packet_is_shown_as_old_and_cannot_be_answered(table: Table, here) -> None:
    """(`show` first as a process, its --json runs through the command line's entry in this process.)"""
    root, home = table.root, table.homes["ann"]
    newest = max(int(k) for k in json.loads(seen_path(home, table.host.game_id()).read_text()))
    assert newest == 12
    old = root / "out" / "packet-000003.pbem"
    assert read_file(old)[0].doc.seq == 3  # the file is the old packet the test says
    run = pbem("show", str(old), "--as", "ann", home=home, cwd=root)
    assert run.returncode == 0, run.stderr
    assert "packet 3 is an old one: you have already seen packet 12" in run.stdout
    assert "your move" not in run.stdout and "show the newest packet (12 or later) instead" in run.stdout
    env = {"PBEM_PASSPHRASE": PASS.decode()}
    summary = json.loads(here("show", str(old), "--as", "ann", "--json", home=home, cwd=root, env=env).stdout)
    assert summary["old"] is True and summary["newest_seen"] == 12 and summary["my_turn"] is False
    current = json.loads(here("show", str(root / "out" / "packet-000012.pbem"), "--as", "ann", "--json",
                              home=home, cwd=root, env=env).stdout)
    assert current["old"] is False and current["newest_seen"] == 12
    run = pbem("move", str(old), "pass", "--as", "ann", "-o", str(root / "old-move.pbem"), home=home, cwd=root)
    assert run.returncode == 5 and run.stderr.startswith("error: packet 3 is an old one"), run.stderr
    assert not (root / "old-move.pbem").exists()
    sp = P.open_packet(read_file(old)[0], table.ids["ann"], home)
    with pytest.raises(StaleMove, match="already seen packet 12"):
        P.make_move(sp, "pass")
    assert sp.old


def test_a_packet_whose_part_does_not_open_is_not_remembered(table: Table) -> None:
    home, game = table.homes["ann"], table.host.game_id()
    _, head = table.latest()
    seen_before = seen_path(home, game).read_bytes()
    seq = head.doc.seq + 1
    # The host signs packet seq+1 whose part for ann is bob's (ann cannot open it).
    forged = sign(msgspec.structs.replace(head.doc, seq=seq, prev=head.hash,
                                          parts={**head.doc.parts, "ann": head.doc.parts["bob"]}), table.ids["referee"])
    with pytest.raises(PbemError) as info:
        P.open_packet(forged, table.ids["ann"], home)
    assert getattr(info.value, "exit_code", 0) in (3, 4)
    assert seen_path(home, game).read_bytes() == seen_before  # nothing remembered
    # So the real packet seq+1 is not mistaken for a fork later.
    mover = head.doc.to_move
    sp = P.open_packet(head, table.ids[mover], table.homes[mover])
    from engine.rules import legal_moves

    table.apply_file(table.move_file(mover, str(legal_moves(sp.view)[0]), head))
    _, real = table.latest()
    assert P.open_packet(real, table.ids["ann"], home).doc.seq == seq
    assert json.loads(seen_path(home, game).read_text())[str(seq)] == real.hash
