"""The README's file-by-file flow, through the real `pbem` command, with real key files."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import processes
import pytest
from processes import one_error_line
from run_here import here_wide, main_here, pbem_here

from pbem.seat.keys import create_identity

SEATS = ["ann", "bob", "cat"]


PASSPHRASE = "s3cret words"


def pbem(*args: str, home: Path, cwd: Path, ok: bool = True, passphrase: str = PASSPHRASE) -> subprocess.CompletedProcess:
    return processes.pbem(*args, home=home, cwd=cwd, ok=ok, env={"PBEM_PASSPHRASE": passphrase})


@pytest.fixture(scope="module")
def game(tmp_path_factory) -> dict:
    """The README's set-up: keys, `game new`, a join per seat, `apply`. One of each as a process
    of its own; the keys and joins of the other seats made in this process."""
    root = tmp_path_factory.mktemp("cli")
    homes = {n: root / f"home-{n}" for n in ["referee", *SEATS]}
    keys = {"referee": pbem("key", "new", "referee", home=homes["referee"], cwd=root).stdout.splitlines()[0]}
    assert keys["referee"].startswith("pbem1")
    keys |= {n: create_identity(homes[n], n, PASSPHRASE.encode()).public.encode() for n in SEATS}
    players = [x for s in SEATS for x in ("--player", f"{s}={keys[s]}")]
    pbem("game", "new", "friday", "--host", "referee", *players, home=homes["referee"], cwd=root)
    invitation = root / "saves" / "friday" / "out" / "invitation.pbem"
    for s in SEATS:
        args = ["join", str(invitation), "--as", s, "-o", str(root / f"join-{s}.pbem")]
        if s == SEATS[0]:
            pbem(*args, home=homes[s], cwd=root)
        else:
            here_wide(*args, home=homes[s], ok=True, env={"PBEM_PASSPHRASE": PASSPHRASE})
    out = pbem("apply", "friday", *[str(root / f"join-{s}.pbem") for s in SEATS], home=homes["referee"], cwd=root)
    assert "round 1 dealt" in out.stdout
    return {"root": root, "homes": homes, "keys": keys}


def packet(game: dict, seq: int) -> Path:
    return game["root"] / "saves" / "friday" / "out" / f"packet-{seq:06d}.pbem"


def test_show_move_apply_status(game: dict, here) -> None:
    """Each command as a process of its own; a second run of one through its entry in this process."""
    root, homes = game["root"], game["homes"]
    passphrase = {"PBEM_PASSPHRASE": PASSPHRASE}
    summary = json.loads(pbem("show", str(packet(game, 1)), "--as", "ann", "--json", home=homes["ann"], cwd=root).stdout)
    assert summary["me"] == "ann" and summary["seq"] == 1 and len(summary["hand"]) == 6
    for key in ("game", "round", "phase", "to_move", "role", "board", "in_front", "hand_sizes", "deck_size"):
        assert key in summary
    mover = summary["to_move"]
    drawn = pbem("show", str(packet(game, 1)), "--as", mover, home=homes[mover], cwd=root).stdout
    assert "your hand" in drawn.lower() or "hand" in drawn
    hand = summary["hand"] if mover == "ann" else \
        json.loads(here("show", str(packet(game, 1)), "--as", mover, "--json", home=homes[mover], cwd=root, ok=True,
                        env=passphrase).stdout)["hand"]
    move_file = root / "m1.pbem"
    pbem("move", str(packet(game, 1)), f"discard {hand[0]}", "--as", mover, "-o", str(move_file), "--replace",
         home=homes[mover], cwd=root)  # --replace: test_bad_input's move may be kept for packet 1 already
    out = pbem("apply", "friday", str(move_file), home=homes["referee"], cwd=root).stdout
    assert "packet 2" in out and packet(game, 2).exists()
    again = here("apply", "friday", str(move_file), home=homes["referee"], cwd=root, ok=True, env=passphrase).stdout
    assert "already applied" in again
    status = json.loads(pbem("status", "friday", "--json", home=homes["referee"], cwd=root).stdout)
    assert status["seq"] == 2 and status["round"] == 1 and all(s["joined"] for s in status["seats"])
    # a crash between the commit of packet 2 and writing its file leaves the file missing
    # and the out-dir's delivery mark at 1: the next command writes the file
    packet(game, 2).unlink()
    with sqlite3.connect(root / "saves" / "pbem.db") as db:
        assert db.execute("UPDATE deliveries SET seq = 1 WHERE channel LIKE 'dir:%'").rowcount == 1
    here("apply", "friday", str(move_file), home=homes["referee"], cwd=root, ok=True, env=passphrase)
    assert packet(game, 2).exists()
    reissued = pbem("packet", "friday", home=homes["referee"], cwd=root).stdout
    assert reissued == packet(game, 2).read_text()


def test_bad_input_is_one_line_and_a_documented_code(game: dict, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Each refusal through the command line's own entry (`pbem.cli.main`) in this process, the
    wrong passphrase and a usage error as processes of their own."""
    root, homes = game["root"], game["homes"]
    monkeypatch.chdir(root)
    monkeypatch.setenv("PBEM_PASSPHRASE", "s3cret words")

    def refused(*args: str, home: Path) -> subprocess.CompletedProcess:
        code, err = main_here(list(args), home, capsys, monkeypatch)
        return subprocess.CompletedProcess(args, code, "", err)

    p1 = str(packet(game, 1))
    mover = json.loads(pbem_here(["show", p1, "--as", "ann", "--json"], homes["ann"], capsys, monkeypatch,
                                 ok=True).stdout)["to_move"]
    # text that is not a move is a usage error; a move against the rules is an illegal move
    one_error_line(refused("move", p1, "frobnicate", "--as", mover, home=homes[mover]), 2, "frobnicate")
    one_error_line(refused("move", p1, "steal nobody", "--as", mover, home=homes[mover]), 6, "steal")
    typo = refused("move", p1, "play straigth-ew at 1,0", "--as", mover, home=homes[mover])
    one_error_line(typo, 2, "did you mean straight-ew?")
    assert "hint: did you mean: play straight-ew at 1,0" in typo.stderr
    one_error_line(refused("move", p1, "discard 9", "--as", mover, home=homes[mover]), 2,
                   "there is no card 9 in your hand (1 to 6)")
    wrong = pbem("show", p1, "--as", "ann", home=homes["ann"], cwd=root, ok=False, passphrase="nope")
    one_error_line(wrong, 4, "passphrase")
    junk = root / "junk.txt"
    junk.write_text("hello, not a pbem file\n")
    one_error_line(refused("apply", "friday", str(junk), home=homes["referee"]), 3, "no pbem block")
    cut = root / "cut.pbem"
    cut.write_text(packet(game, 1).read_text()[:400])
    one_error_line(refused("show", str(cut), "--as", "ann", home=homes["ann"]), 3, "")
    stale = root / "stale.pbem"
    hand = json.loads(pbem_here(["show", p1, "--as", mover, "--json"], homes[mover], capsys, monkeypatch,
                                ok=True).stdout)["hand"]
    pbem_here(["move", p1, f"discard {hand[-1]}", "--as", mover, "-o", str(stale), "--replace"], homes[mover], capsys,
              monkeypatch, ok=True)
    one_error_line(refused("apply", "friday", str(stale), home=homes["referee"]), 5, "answers packet 1")
    one_error_line(refused("status", "nosuchgame", home=homes["referee"]), 2, "no game 'nosuchgame' in store")
    usage = pbem("status", "--bogus", home=homes["referee"], cwd=root, ok=False)
    assert usage.returncode == 2 and "Traceback" not in usage.stderr


@pytest.mark.slow
def test_turn_in_a_shared_folder_keeps_json_on_stdout(game: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch, here) -> None:
    homes, keys = game["homes"], game["keys"]  # the README flow's key files; a game of its own, in a store of its own
    players = [x for s in SEATS for x in ("--player", f"{s}={keys[s]}")]
    shared = tmp_path / "shared"
    monkeypatch.chdir(tmp_path)  # the set-up in this process; what `turn` prints where, through real processes
    monkeypatch.setenv("PBEM_PASSPHRASE", PASSPHRASE)
    here("game", "new", "sat", "--host", "referee", *players, home=homes["referee"], ok=True)
    here("folder", "init", "sat", shared, home=homes["referee"], ok=True)

    def turn(seat: str, *args: str, in_process: bool) -> subprocess.CompletedProcess:
        """`pbem turn` as a process of its own, or through pbem.cli.main in this process."""
        argv = ["turn", str(shared), "--as", seat, *args, "--json"]
        return here(*argv, home=homes[seat], cwd=tmp_path, ok=True) if in_process else \
            pbem(*argv, home=homes[seat], cwd=tmp_path)

    for s in SEATS:
        joined = turn(s, in_process=s != SEATS[0])
        assert json.loads(joined.stdout)["phase"] == "joining" and "joined" in joined.stderr
    host_once = ["host", "run", "sat", "--folder", str(shared), "--once"]
    here(*host_once, home=homes["referee"], cwd=tmp_path, ok=True)
    views = {s: json.loads(turn(s, in_process=True).stdout) for s in SEATS}
    mover = views[SEATS[0]]["to_move"]
    assert all(v["seq"] == 1 and v["me"] == s and len(v["hand"]) == 6 for s, v in views.items())
    played = turn(mover, f"discard {views[mover]['hand'][0]}", in_process=False)
    json.loads(played.stdout)
    assert "submitted" in played.stderr
    pbem(*host_once, home=homes["referee"], cwd=tmp_path)
    after = json.loads(turn(mover, in_process=False).stdout)
    assert after["seq"] == 2 and after["moves"][-1]["text"] == "discard 1 card"


def test_no_screen_shows_another_seats_hand_or_role(game: dict, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Every screen through the command line's own entry in this process (the same commands as
    processes of their own: test_show_move_apply_status)."""
    root, homes = game["root"], game["homes"]
    p1 = str(packet(game, 1))
    monkeypatch.setenv("PBEM_PASSPHRASE", PASSPHRASE)

    def shown(*args: str, home: Path) -> str:
        return pbem_here(list(args), home, capsys, monkeypatch, root, ok=True).stdout

    json_screens = {s: shown("show", p1, "--as", s, "--json", home=homes[s]) for s in SEATS}
    secret = {s: json.loads(text) for s, text in json_screens.items()}
    for me in SEATS:
        screens = [shown("show", p1, "--as", me, home=homes[me]), json_screens[me]]
        for other in SEATS:
            if other == me:
                continue
            for text in screens:
                assert not any(card in text for card in secret[other]["hand"]), (me, other)
    host_screens = shown("status", "friday", home=homes["referee"]) + \
        shown("status", "friday", "--json", home=homes["referee"])
    for s in SEATS:
        assert not any(card in host_screens for card in secret[s]["hand"])
        assert secret[s]["role"] not in host_screens
