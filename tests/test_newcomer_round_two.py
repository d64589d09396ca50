"""What a newcomer met in a first game, round two, each through the real `pbem` command: what
`game new` says to do with the invitation, `pbem packet` on a terminal, a host stopped by
SIGTERM, and a public key cut short. (Where a test runs one command several times, the first run
is a process of its own and the others go through the command line's entry in this process.)"""

from __future__ import annotations

import os
import pty
import subprocess
import time
from pathlib import Path

import pytest
from folder_games import keys_here
from process_tools import read_until
from processes import PBEM, cli_env, one_error_line, pbem, start


def _keys(root: Path, names: list[str]) -> tuple[Path, dict[str, str]]:
    """What `pbem key new NAME --no-passphrase` makes for each name in one home, made in this
    process (the commands after it are the point): the home and each public key line."""
    home = root / "home"
    return home, keys_here({n: home for n in names})


def _here(here, root: Path, home: Path, *args: object) -> None:
    """`pbem ARGS` run in this process in folder `root`: set-up before the command a test is about."""
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        here(*args, home=home, ok=True)


def test_game_new_says_who_gets_the_invitation_by_mail(tmp_path: Path, here) -> None:
    home, lines = _keys(tmp_path, ["referee", "ann", "bob", "cat"])
    seats = [x for s in ("ann", "bob", "cat") for x in ("--player", f"{s}={lines[s]}")]
    mails = [x for s in ("ann", "bob", "cat") for x in ("--email", f"{s}={s}@example.org")]
    by_mail = pbem("game", "new", "m", "--host", "referee", *seats, *mails, home=home, cwd=tmp_path, ok=True)
    assert "'pbem host run m' mails it to every player; each joins with: pbem turn m" in by_mail.stderr
    assert "send it to every player" not in by_mail.stderr
    some = here("game", "new", "s", "--host", "referee", *seats, "--email", "ann=ann@example.org", home=home,
                cwd=tmp_path, ok=True)
    assert "'pbem host run s' mails it to ann; send it yourself to bob and cat" in some.stderr, some.stderr
    by_hand = here("game", "new", "h", "--host", "referee", *seats, home=home, cwd=tmp_path, ok=True)
    assert "send it to every player; each answers with: pbem join INVITATION --as NAME" in by_hand.stderr


def test_a_cut_short_key_is_said_to_be_cut_short(tmp_path: Path, here) -> None:
    home, lines = _keys(tmp_path, ["referee"])
    for i, (cut, words) in enumerate((("pbem1abc", "public key is cut short: 3 of its 111 characters after pbem1"),
                                      (lines["referee"][:-5], "public key is cut short: 106 of its 111 characters"),
                                      (lines["referee"] + "abc", "public key is too long: 114 characters after pbem1, not 111"),
                                      ("pbem1ab!c", "public key has characters outside base32"))):
        args = ("game", "new", "g", "--host", "referee", "--player", f"ann={cut}", "--player",
                f"bob={lines['referee']}", "--player", f"cat={lines['referee']}")
        run = pbem(*args, home=home, cwd=tmp_path) if i == 0 else here(*args, home=home, cwd=tmp_path)
        one_error_line(run, 3, words)
        assert not (tmp_path / "saves").exists()


def test_pbem_packet_writes_no_armour_to_a_terminal(tmp_path: Path, here) -> None:
    home, lines = _keys(tmp_path, ["referee", "ann", "bob", "cat"])
    seats = [x for s in ("ann", "bob", "cat") for x in ("--player", f"{s}={lines[s]}")]
    _here(here, tmp_path, home, "game", "new", "g", "--host", "referee", *seats)
    main, sub = pty.openpty()
    proc = subprocess.Popen([*PBEM, "packet", "g"], stdin=sub, stdout=sub, stderr=sub, cwd=tmp_path, close_fds=True,
                            env=cli_env(home, COLUMNS="100"))
    os.close(sub)
    try:
        shown = read_until(main, "hint:")
        assert proc.wait(timeout=30) == 2
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
    assert "error: a packet is long armour, not for the terminal: pass -o FILE" in shown
    assert "BEGIN PBEM" not in shown
    piped = pbem("packet", "g", home=home, cwd=tmp_path, ok=True)  # not a terminal: the armour, as before
    assert piped.stdout.startswith("-----BEGIN PBEM INVITATION-----")


def test_host_run_stopped_by_sigterm_says_so_and_exits_0(tmp_path: Path, here) -> None:
    home, lines = _keys(tmp_path, ["referee", "ann", "bob", "cat"])
    seats = [x for s in ("ann", "bob", "cat") for x in ("--player", f"{s}={lines[s]}")]
    _here(here, tmp_path, home, "game", "new", "g", "--host", "referee", *seats)
    proc = start([*PBEM, "host", "run", "g", "--folder", tmp_path / "shared", "--poll", "0.1"], cwd=tmp_path,
                 env=cli_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # said as the watch loop starts
        assert "host: serving g-" in first, (first, proc.communicate())
        time.sleep(0.5)  # a few polls: the loop runs
        proc.terminate()  # SIGTERM, as systemd stops a service
        out, err = proc.communicate(timeout=30)
        out = first + out
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, (proc.returncode, out, err)
    assert "host: stopped (SIGTERM); what was done is kept, and a new start goes on from there" in out, out
    assert "Traceback" not in err and "error" not in err, err


def test_the_host_auditing_its_own_store_is_anchored_and_a_page_says_whose_view(tmp_path: Path, here) -> None:
    """The host never joined its own game: the invitation its own key signed is its anchor, so
    its audit says where the trust comes from and gives no 'not anchored' warning; a stranger's
    key home still gets the warning."""
    from table_games import PASS, make_table, play_until

    table = make_table(tmp_path, ["ann", "bob", "cat"])
    play_until(table, lambda p: p.doc.round > 1, seed=3)
    table.host.close()
    env = {"PBEM_PASSPHRASE": PASS.decode()}
    run = pbem("audit", "--db", tmp_path / "game.db", home=table.homes["referee"], env=env, timeout=300)
    assert run.returncode == 0 and "audit ok" in run.stdout, run.stdout + run.stderr
    assert "anchored to the invitation your key referee signed as the host" in run.stdout
    assert "not anchored" not in run.stderr, run.stderr
    stranger = here("audit", "--db", tmp_path / "game.db", home=tmp_path / "nobody", env=env)
    assert stranger.returncode == 0 and stranger.stderr.startswith("warning: not anchored"), stranger.stderr

    # the same round as a page: one seat's view is said as such, every view as such
    one = pbem("replay", tmp_path / "game.db", "--round", "1", "--as", "bob", "--html", tmp_path / "bob.html",
               home=tmp_path / "nobody", ok=True)
    assert "moves and the deal) as bob saw it then, " in one.stdout and "for as" not in one.stdout, one.stdout
    every = here("replay", tmp_path / "game.db", "--round", "1", "--html", tmp_path / "all.html",
                 home=tmp_path / "nobody", ok=True)
    assert "moves and the deal) for each of 4 perspectives, " in every.stdout, every.stdout


def test_deadlines_are_shown_in_the_readers_time_zone_with_its_name(tmp_path: Path, here) -> None:
    home, lines = _keys(tmp_path, ["referee", "ann", "bob", "cat"])
    seats = [x for s in ("ann", "bob", "cat") for x in ("--player", f"{s}={lines[s]}")]
    _here(here, tmp_path, home, "game", "new", "g", "--host", "referee", *seats, "--deadline", "48h")
    invitation = tmp_path / "saves" / "g" / "out" / "invitation.pbem"
    joins = []
    for s in ("ann", "bob", "cat"):
        joins.append(tmp_path / f"join-{s}.pbem")
        _here(here, tmp_path, home, "join", invitation, "--as", s, "-o", joins[-1])
    _here(here, tmp_path, home, "apply", "g", *joins)
    utc = pbem("status", "g", home=home, cwd=tmp_path, env={"TZ": "UTC"}, ok=True).stdout
    tokyo = pbem("status", "g", home=home, cwd=tmp_path, env={"TZ": "Asia/Tokyo"}, ok=True).stdout
    india = pbem("--lang", "zh-Hans", "status", "g", home=home, cwd=tmp_path, env={"TZ": "Asia/Kolkata"},
                 ok=True).stdout
    due_utc = next(line for line in utc.splitlines() if "due " in line)
    due_tokyo = next(line for line in tokyo.splitlines() if "due " in line)
    assert due_utc.count(" UTC") == 1 and " JST" in due_tokyo and " UTC" not in due_tokyo, (due_utc, due_tokyo)
    hm = due_utc.split(" UTC")[0].split()[-1]
    h, m = map(int, hm.split(":"))
    assert f"{(h + 9) % 24:02d}:{m:02d} JST" in due_tokyo  # the same moment, nine hours on
    assert f"{(h * 60 + m + 330) // 60 % 24:02d}:{(m + 30) % 60:02d} IST" in india, india
