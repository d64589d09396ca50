"""A stranger who can write to the shared folder: what they drop there is read bounded,
only as a regular file, never through a link; a bad entry is set aside unread and the real moves
beside it are applied; the host writes nothing outside the folder.

Each test performs the attack on a real game (real key files, a real SQLite file, a real folder)
through the real `pbem` command, and checks its exit code, its output, its peak memory (the
process's own ru_maxrss) and the bytes in and outside the folder.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from folder_games import folder_dealt, new_game, started_game
from process_tools import run_peak
from processes import PBEM, cli_env, start

from engine.rules import legal_moves
from pbem.folder.layout import GameFolder
from pbem.folder.play import init_folder
from pbem.host import referee as H
from pbem.seat import keys

GIB = 1 << 30
PEAK_LIMIT_MIB = 250  # a pbem process is ~60-90 MiB; reading the poison unbounded takes a GiB or all there is
ESC_NAME = "\x1b]0;pwned\x07\x1b[31mred\u202e.pbem"




def host_once(db: Path, folder: Path, homes: dict[str, Path], root: Path, **kw) -> tuple[int, str, int]:
    return run_peak(["host", "run", "t", "--db", db, "--folder", folder, "--once"], homes["referee"], root, **kw)


def packets(folder: Path) -> list[int]:
    return [seq for seq, _ in GameFolder.open(folder).packets(None)]


def junk(path: Path) -> None:
    """A file that holds no pbem block, written a minute ago (younger, the host would give it
    time: it may still be being copied)."""
    path.write_text("junk\n")
    os.utime(path, (time.time() - 60, time.time() - 60))


def sparse(path: Path, size: int) -> None:
    with path.open("wb") as f:
        f.truncate(size)  # no disk, no time: only the size says gigabytes


def test_poison_in_the_inbox_is_set_aside_unread_and_the_real_move_is_applied(tmp_path: Path) -> None:
    db, folder, homes, mover, sp = folder_dealt(tmp_path)
    inbox = folder / "inbox"
    sparse(inbox / "huge.pbem", GIB)
    (inbox / "zero.pbem").symlink_to("/dev/zero")
    (inbox / "mem.pbem").symlink_to("/proc/self/mem")
    os.mkfifo(inbox / "fifo.pbem")
    long_name = "x" * 240 + ".pbem"  # 245 characters: its .why name and temp file were too long
    junk(inbox / long_name)
    junk(inbox / ESC_NAME)
    mover.move(sp, str(legal_moves(sp.view)[0]))
    before = packets(folder)

    code, out, peak = host_once(db, folder, homes, tmp_path)

    assert code == 0, out
    assert peak < PEAK_LIMIT_MIB, f"peak {peak} MiB"
    assert packets(folder) == [*before, before[-1] + 1], out  # the real move was applied
    assert [p.name for p in inbox.iterdir() if p.is_file() or p.is_symlink()] == [], list(inbox.iterdir())
    rejected = sorted((inbox / "rejected").iterdir())
    names = [p.name for p in rejected]
    assert len(names) == 12, names  # six files and six reasons
    assert all(n.isprintable() and "\u202e" not in n and len(n) <= 140 for n in names), names
    assert os.path.islink(inbox / "rejected" / "zero.pbem") and os.path.islink(inbox / "rejected" / "mem.pbem")
    why = {p.name: p.read_text() for p in rejected if p.name.endswith(".why")}
    assert "is a link" in why["zero.pbem.why"] and "is a link" in why["mem.pbem.why"]
    assert "device or special file" in why["fifo.pbem.why"] and "over the limit" in why["huge.pbem.why"]
    assert all("\x1b" not in text and "\x07" not in text for text in why.values()), why
    assert "\x1b" not in out


def test_many_large_inbox_files_are_read_one_at_a_time(tmp_path: Path) -> None:
    """12 different files just under the limit (15 MiB each, sparse but for their last byte):
    the host holds one at a time, not all 180 MiB at once."""
    db, folder, homes, _, _ = folder_dealt(tmp_path)
    for i in range(12):
        with (folder / "inbox" / f"big-{i}.pbem").open("wb") as f:
            f.seek(15 * (1 << 20) - 1)
            f.write(bytes([i]))
        os.utime(folder / "inbox" / f"big-{i}.pbem", (time.time() - 60, time.time() - 60))
    code, out, peak = host_once(db, folder, homes, tmp_path)
    assert code == 0 and out.count("rejected big-") == 12, out
    assert peak < 150, f"peak {peak} MiB"  # one file's 15 MiB above a bare run's ~60


def test_a_file_the_host_cannot_read_is_set_aside_and_the_real_move_is_applied(tmp_path: Path) -> None:
    db, folder, homes, mover, sp = folder_dealt(tmp_path)
    secret = folder / "inbox" / "ann-000001-aaaaaaaaaaaa.pbem"
    secret.write_text("junk\n")
    secret.chmod(0)
    mover.move(sp, str(legal_moves(sp.view)[0]))
    before = packets(folder)

    code, out, _ = host_once(db, folder, homes, tmp_path, unprivileged=True)

    assert code == 0, out
    assert packets(folder) == [*before, before[-1] + 1], out
    assert "permission denied" in (folder / "inbox" / "rejected" / f"{secret.name}.why").read_text()


def test_a_rejected_folder_replaced_by_a_file_stalls_nothing_and_is_said_once(tmp_path: Path) -> None:
    _, host, fh, lines, seats, _ = started_game(tmp_path)
    inbox = tmp_path / "shared" / "inbox"
    (inbox / "rejected").write_text("not a folder\n")
    (inbox / "poison.pbem").write_text("junk\n")
    (inbox / "mem.pbem").symlink_to("/proc/self/mem")
    sp = seats["ann"].latest()
    mover = seats[sp.doc.to_move]
    msp = mover.latest()
    mover.move(msp, str(legal_moves(msp.view)[0]))
    before = packets(tmp_path / "shared")
    lines.clear()
    for _ in range(3):
        fh.step()
    host.close()
    assert packets(tmp_path / "shared") == [*before, before[-1] + 1], lines  # the real move applied
    assert sorted(p.name for p in inbox.iterdir() if p.is_file() or p.is_symlink()) == [
        "mem.pbem", "poison.pbem", "rejected"]
    cannot = [line for line in lines if line.startswith("cannot move")]
    assert len(cannot) == 2 and all("is not a folder" in line for line in cannot), lines
    assert len([line for line in lines if line.startswith("rejected")]) == 2, lines


@pytest.mark.parametrize("sub", ["inbox/done", "inbox/rejected", "packets/table"])
def test_a_sub_folder_that_is_a_link_gets_nothing_written_through_it(tmp_path: Path, sub: str, here) -> None:
    """The host as a process of its own for the first; through the command line's entry in this
    process for the others (no memory bound is measured here)."""
    db, folder, homes, mover, sp = folder_dealt(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    link = folder / sub
    if link.exists():
        for p in link.iterdir():
            p.unlink()
        link.rmdir()
    link.symlink_to(outside)
    mover.move(sp, str(legal_moves(sp.view)[0]))  # applied: its file goes to done/, its packet to the table
    junk(folder / "inbox" / "junk.pbem")  # refused: goes to rejected/

    if sub == "inbox/done":
        code, out, _ = host_once(db, folder, homes, tmp_path)
    else:
        run = here("host", "run", "t", "--db", db, "--folder", folder, "--once", home=homes["referee"], cwd=tmp_path)
        code, out = run.returncode, run.stdout + run.stderr

    assert list(outside.iterdir()) == [], out
    assert "is a link" in out, out
    assert "Traceback" not in out and code in (0, 3), (code, out)


def test_a_seat_reads_no_poison_packet_notice_or_manifest(tmp_path: Path) -> None:
    _, folder, homes, mover, sp = folder_dealt(tmp_path)
    table = folder / "packets" / "table"
    top = sp.doc.seq
    (table / f"{top + 3:06d}-{'a' * 12}.pbem").symlink_to("/dev/zero")
    sparse(table / f"{top + 2:06d}-{'b' * 12}.pbem", GIB)
    os.mkfifo(table / f"{top + 1:06d}-{'c' * 12}.pbem")
    (folder / "notices").mkdir(exist_ok=True)
    (folder / "notices" / f"{top:06d}-late-{'d' * 12}.pbem").symlink_to("/dev/zero")

    code, out, peak = run_peak(["turn", folder, "--as", mover.seat], homes[mover.seat], tmp_path)

    assert code == 0, out
    assert peak < PEAK_LIMIT_MIB, f"peak {peak} MiB"
    assert out.count("skipped") == 3, out
    assert f"packet {top}" in out or str(top) in out, out


@pytest.mark.parametrize("attack", ["manifest-zero", "manifest-deep", "invitation-zero", "invitation-fifo"])
def test_a_poisoned_manifest_or_invitation_is_one_error_line(tmp_path: Path, attack: str) -> None:
    db, folder, homes, mover, _ = folder_dealt(tmp_path)
    what, how = attack.split("-")
    target = folder / ("pbem-folder.json" if what == "manifest" else "invitation.pbem")
    target.unlink()
    if how == "zero":
        target.symlink_to("/dev/zero")
    elif how == "fifo":
        os.mkfifo(target)
    else:
        target.write_text("[" * 100_000 + "]" * 100_000)
    for args, home in ((["turn", folder, "--as", mover.seat], homes[mover.seat]),
                       (["host", "run", "t", "--db", db, "--folder", folder, "--once"], homes["referee"])):
        code, out, peak = run_peak(args, home, tmp_path, timeout=30)
        assert code not in (0, 70, -9) and peak < PEAK_LIMIT_MIB, (args, code, peak, out)
        assert "Traceback" not in out
        if args[0] == "turn":
            lines = out.strip().splitlines()
            assert code == 3 and lines[0].startswith("error: ") and target.name in lines[0], out
            assert all(line.startswith(("error: ", "hint: ")) for line in lines), out


def test_a_junk_packet_before_the_deal_stops_no_seat_from_joining(tmp_path: Path) -> None:
    db, homes = new_game(tmp_path)
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    host = H.Host(db, ids["referee"])
    init_folder(tmp_path / "shared", host)
    host.close()
    folder = tmp_path / "shared"
    (folder / "packets" / "table" / "999999-000000000000.pbem").write_text("junk")

    code, out, _ = run_peak(["turn", folder, "--as", "ann"], homes["ann"], tmp_path)
    assert code == 0, out
    assert any(p.name.startswith("ann-000000-") for p in (folder / "inbox").iterdir()), out

    log = tmp_path / "bot-bob.log"
    bot = start([*PBEM, "bot", "run", "--as", "bob", "--folder", folder, "--poll", "0.05"],
                env=cli_env(homes["bob"]), stdout=log.open("wb"), stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(p.name.startswith("bob-000000-")
                                                      for p in (folder / "inbox").iterdir()):
            time.sleep(0.05)
        time.sleep(0.5)  # ten more polls
    finally:
        bot.terminate()
        bot.wait(timeout=30)
    said = log.read_text()
    assert any(p.name.startswith("bob-000000-") for p in (folder / "inbox").iterdir()), said
    assert said.count("skipped 999999") == 1, said


def test_a_key_file_others_can_read_is_used_with_one_warning(tmp_path: Path, here) -> None:
    _, folder, homes, mover, _ = folder_dealt(tmp_path)
    key = keys.key_path(homes[mover.seat], mover.seat)
    key.chmod(0o644)
    code, out, _ = run_peak(["turn", folder, "--as", mover.seat], homes[mover.seat], tmp_path)
    assert code == 0, out
    warning = [line for line in out.splitlines() if line.startswith("warning: key file")]
    assert len(warning) == 1 and "(mode 0644)" in warning[0] and f"chmod 600 {key}" in warning[0], out
    key.chmod(0o600)
    again = here("turn", folder, "--as", mover.seat, home=homes[mover.seat], cwd=tmp_path)
    assert again.returncode == 0 and "warning" not in again.stdout + again.stderr, again


@pytest.mark.parametrize("until", ["99999999999d", "9999999999999999999999s", "3000000d", "10000-01-01", "0000-01-01"])
def test_an_away_time_past_the_calendar_is_one_error_line(tmp_path: Path, until: str, here) -> None:
    """Before: OverflowError, exit 70. (The first as a process of its own, the others through the
    command line's entry in this process.)"""
    _, folder, homes, mover, _ = folder_dealt(tmp_path)
    if until == "99999999999d":
        run = subprocess.run([*PBEM, "away", folder, "--until", until, "--as", mover.seat],
                             env=cli_env(homes[mover.seat]), cwd=tmp_path, capture_output=True, text=True, timeout=60,
                             check=False)
    else:
        run = here("away", folder, "--until", until, "--as", mover.seat, home=homes[mover.seat], cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.startswith("error: ") and "Traceback" not in run.stderr, run.stderr
    assert not any(p.name.startswith(f"{mover.seat}-") for p in (folder / "inbox").iterdir())


def test_a_trustless_seat_and_the_blind_host_read_no_poison(tmp_path: Path) -> None:
    """The same poison in a trustless game's folder: `pbem turn` (the trustless seat) and `pbem host
    run` (the blind host) stay bounded, and the host sets the inbox poison aside unread."""
    from blind_game import BlindGame

    game = BlindGame(tmp_path).play(lambda table: True)  # joined, the first packets out
    folder = game.folder
    top = max(packets(folder))
    table = folder / "packets" / "table"
    (table / f"{top + 3:06d}-{'a' * 12}.pbem").symlink_to("/dev/zero")
    sparse(table / f"{top + 2:06d}-{'b' * 12}.pbem", GIB)
    os.mkfifo(table / f"{top + 1:06d}-{'c' * 12}.pbem")
    (folder / "notices").mkdir(exist_ok=True)
    (folder / "notices" / f"{top:06d}-late-{'d' * 12}.pbem").symlink_to("/dev/zero")
    sparse(folder / "inbox" / "huge.pbem", GIB)
    (folder / "inbox" / "zero.pbem").symlink_to("/dev/zero")
    os.mkfifo(folder / "inbox" / "fifo.pbem")
    game.host.close()

    code, out, peak = run_peak(["turn", folder, "--as", "ann"], game.homes["ann"], tmp_path)
    assert code not in (70, -9) and "Traceback" not in out and peak < PEAK_LIMIT_MIB, (code, peak, out)
    code, out, peak = run_peak(["host", "run", "t", "--db", game.db, "--folder", folder, "--once"],
                               game.homes["referee"], tmp_path)
    assert code == 0 and peak < PEAK_LIMIT_MIB, (code, peak, out)
    assert sorted(p.name for p in (folder / "inbox" / "rejected").iterdir() if not p.name.endswith(".why")) == [
        "fifo.pbem", "huge.pbem", "zero.pbem"], out


def test_a_junk_packet_stops_no_key_from_taking_a_seat_handed_to_it(tmp_path: Path, here) -> None:
    """A seat handed to a new key: the key finds its seat in the newest packet the host signed,
    not in whatever file is named like the newest packet. (The reseat through the command line's
    entry in this process: it runs as a process of its own in test_handover.)"""
    db, host, fh, _, _, _ = started_game(tmp_path)
    eve = keys.create_identity(tmp_path / "home-eve", "eve", None)
    here("game", "reseat", "t", "bob", "--key", eve.public.encode(), "--store", db, home=tmp_path / "home-referee",
         ok=True)
    fh.step()
    host.close()
    top = max(packets(tmp_path / "shared"))
    junk(tmp_path / "shared" / "packets" / "table" / f"{top + 1:06d}-{'e' * 12}.pbem")
    code, out, _ = run_peak(["turn", tmp_path / "shared", "--as", "eve"], tmp_path / "home-eve", tmp_path)
    assert code == 0 and "bob" in out and "skipped" in out, out


def test_a_passphrase_file_is_read_no_further_than_a_passphrase(tmp_path: Path) -> None:
    """`--passphrase-file /dev/zero` read until MemoryError; a pipe still works."""
    code, out, peak = run_peak(["key", "new", "eve", "--passphrase-file", "/dev/zero"], tmp_path / "home", tmp_path)
    assert code == 2 and out.startswith("error: '/dev/zero' is over the limit of 4,096 bytes"), out
    assert peak < PEAK_LIMIT_MIB and not (tmp_path / "home" / "keys" / "eve.key").exists()
    read, write = os.pipe()
    os.write(write, b"correct horse battery staple\n")
    os.close(write)
    run = subprocess.run([*PBEM, "key", "new", "eve", "--passphrase-file", f"/dev/fd/{read}"], pass_fds=(read,),
                         env=cli_env(tmp_path / "home"), capture_output=True, text=True, timeout=60, check=False)
    os.close(read)
    assert run.returncode == 0 and (tmp_path / "home" / "keys" / "eve.key").exists(), run.stderr
