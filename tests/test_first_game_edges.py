"""What a newcomer met, by real processes on a real game (a SQLite store, key files, packet
files): `show` says every move since this seat's last turn, in English and in Chinese; a join
of another game is refused without a `latest packet` line; `play rockfall on 4,0` is answered
with the form that works; a packet given to `join` is "not an invitation" in words."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from processes import pbem
from table_games import PASS, Table, make_table, play_until

from pbem.ui import move_words, words

SEATS = ["ann", "bob", "cat"]


def _env(lang: str) -> dict[str, str | None]:
    return {"PBEM_PASSPHRASE": PASS.decode(), "PBEM_LANG": lang, "COLUMNS": "100"}


def _pbem(*args: str, home: Path, cwd: Path, lang: str = "en") -> subprocess.CompletedProcess[str]:
    return pbem(*args, home=home, cwd=cwd, env=_env(lang))


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Table:
    """A round in which the seat to move has moved before: two moves of the others since."""
    t = make_table(tmp_path_factory.mktemp("edges"), SEATS)
    play_until(t, lambda p: p.doc.phase == "playing" and p.doc.seq > 4 and len(p.doc.since_last_move_of(p.doc.to_move)) == 2,
               seed=5)
    return t


@pytest.mark.slow
def test_show_says_every_move_since_your_last_turn(table: Table, tmp_path: Path, here) -> None:
    """(`show` first as a process, then through the command line's entry in this process.)"""
    path, packet = table.latest()
    me = packet.doc.to_move
    since = packet.doc.since_last_move_of(me)
    assert [m.seat for m in since] == [s for s in SEATS[SEATS.index(me) + 1:] + SEATS[:SEATS.index(me)]]
    shown = json.loads(_pbem("show", str(path), "--as", me, "--json", home=table.homes[me], cwd=tmp_path).stdout)
    assert [m["text"] for m in shown["since_my_turn"]] == [m.text for m in since]
    for lang in ("en", "zh-Hans"):
        out = here("show", str(path), "--as", me, home=table.homes[me], cwd=tmp_path, env=_env(lang))
        assert out.returncode == 0, out.stderr
        with words.using(lang):
            said = [move_words.describe_move(m.text, m.seat) for m in since]
        for line in said:
            assert line.split(";")[0] in out.stdout, (lang, line, out.stdout)
        assert out.stdout.index(said[0].split(";")[0]) < out.stdout.index(said[1].split(";")[0])  # in order


@pytest.mark.slow
def test_smaller_first_game_words(table: Table, tmp_path: Path, here) -> None:
    """(`join` first as a process, then through the command line's entry in this process.)"""
    path, packet = table.latest()
    me = packet.doc.to_move
    other = make_table(tmp_path / "other", SEATS)
    other.host.close()
    joined = _pbem("join", str(other.root / "invitation.pbem"), "--as", "ann", "-o", "foreign.pbem",
                   home=other.homes["ann"], cwd=tmp_path)
    assert joined.returncode == 0, joined.stderr
    table.host.close()
    foreign = _pbem("apply", "test", "--db", str(table.root / "game.db"), "foreign.pbem", home=table.homes["referee"],
                    cwd=tmp_path)
    assert foreign.returncode == 3 and "this join file is for game" in foreign.stderr, foreign.stderr
    assert "latest packet" not in foreign.stdout + foreign.stderr
    rockfall = _pbem("move", str(path), "play rockfall on 4,0", "--as", me, home=table.homes[me], cwd=tmp_path)
    assert rockfall.returncode == 2 and "not 'on 4,0'" in rockfall.stderr and "nowhere" not in rockfall.stderr
    assert "hint: did you mean: play rockfall at 4,0" in rockfall.stderr, rockfall.stderr
    no_inv = here("join", str(path), "--as", "ann", home=table.homes["ann"], cwd=tmp_path, env=_env("en"))
    assert no_inv.returncode == 3 and "holds no invitation" in no_inv.stderr and "a invitation" not in no_inv.stderr
    zh = here("join", str(path), "--as", "ann", home=table.homes["ann"], cwd=tmp_path, env=_env("zh-Hans"))
    assert zh.returncode == 3 and "里没有邀请" in zh.stderr, zh.stderr
