"""Shared-folder transport and atomic writes, on the real file system."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pbem.atomic import write_atomic, write_new
from pbem.errors import BadPacket, Conflict, UsageError
from pbem.folder.layout import GameFolder

ROOT = Path(__file__).resolve().parents[1]
SEATS = ["alice", "bob", "carol"]


def blob(n: int, size: int = 300) -> bytes:
    head = f"-----BEGIN PBEM TEST-----\n{n}\n".encode()
    return head + bytes([65 + n % 26]) * size + b"\n-----END PBEM TEST-----\n"


def temp_files(d: Path) -> list[Path]:
    return [p for p in d.rglob("*") if p.name.endswith(".tmp")]


@pytest.fixture
def game(tmp_path: Path) -> GameFolder:
    return GameFolder.init(tmp_path / "game", "g-123", SEATS)


# -- atomic ------------------------------------------------------------------


def test_write_atomic_replaces_and_leaves_no_temp(tmp_path: Path) -> None:
    p = tmp_path / "f.bin"
    write_atomic(p, b"one")
    write_atomic(p, b"two")
    assert p.read_bytes() == b"two"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["f.bin"]


def test_write_atomic_failure_cleans_up(tmp_path: Path) -> None:
    p = tmp_path / "f.bin"
    write_atomic(p, b"keep")
    with pytest.raises(TypeError):
        write_atomic(p, "not bytes")  # type: ignore[arg-type]
    assert p.read_bytes() == b"keep"
    assert temp_files(tmp_path) == []


def test_write_new_is_content_addressed(tmp_path: Path) -> None:
    a = write_new(tmp_path, "x", ".pbem", b"A")
    again = write_new(tmp_path, "x", ".pbem", b"A")
    b = write_new(tmp_path, "x", ".pbem", b"B")
    assert a == again and a != b
    assert a.name.startswith("x-") and len(a.stem) == len("x-") + 12
    assert a.read_bytes() == b"A" and b.read_bytes() == b"B"
    assert len(list(tmp_path.iterdir())) == 2


def test_write_new_never_overwrites_a_damaged_file(tmp_path: Path) -> None:
    good = write_new(tmp_path, "x", ".pbem", b"payload")
    good.write_bytes(b"damaged by hand")
    other = write_new(tmp_path, "x", ".pbem", b"payload")
    assert other != good
    assert good.read_bytes() == b"damaged by hand"
    assert other.read_bytes() == b"payload"
    assert len(other.stem) == len("x-") + 64


# -- layout ------------------------------------------------------------------


def test_init_creates_layout_and_open_reads_it(game: GameFolder) -> None:
    d = game.dir
    manifest = json.loads((d / "pbem-folder.json").read_text())
    assert manifest["game_id"] == "g-123" and manifest["seats"] == SEATS and manifest["version"] == 1
    for sub in ["inbox", "inbox/done", "archive", "packets/table", *(f"packets/{s}" for s in SEATS)]:
        assert (d / sub).is_dir(), sub
    opened = GameFolder.open(d)
    assert (opened.game_id, opened.seats) == ("g-123", tuple(SEATS))


def test_init_is_idempotent_but_refuses_another_game(game: GameFolder) -> None:
    again = GameFolder.init(game.dir, "g-123", SEATS)
    assert again.seats == game.seats
    with pytest.raises(Conflict):
        GameFolder.init(game.dir, "other-game", SEATS)
    with pytest.raises(Conflict):
        GameFolder.init(game.dir, "g-123", ["alice", "bob"])


def test_open_rejects_non_folders(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        GameFolder.open(tmp_path)
    (tmp_path / "pbem-folder.json").write_text("{not json")
    with pytest.raises(BadPacket):
        GameFolder.open(tmp_path)
    (tmp_path / "pbem-folder.json").write_text('{"format": "something-else"}')
    with pytest.raises(BadPacket):
        GameFolder.open(tmp_path)
    (tmp_path / "pbem-folder.json").write_text(
        '{"format": "pbem-folder", "version": 99, "game_id": "g", "seats": ["a"]}'
    )
    with pytest.raises(UsageError):
        GameFolder.open(tmp_path)


@pytest.mark.parametrize(
    "seats", [[], ["table"], ["../x"], [".hidden"], ["Alice", "alice"], ["con"], ["a b"], ["x" * 33]]
)
def test_bad_seats_are_refused(tmp_path: Path, seats: list[str]) -> None:
    with pytest.raises(UsageError):
        GameFolder.init(tmp_path / "g", "g", seats)
    assert not (tmp_path / "g" / "pbem-folder.json").exists()


# -- packets -----------------------------------------------------------------


def test_publish_and_latest(game: GameFolder) -> None:
    assert game.latest_packet("alice") is None
    p1 = game.publish_packet(1, blob(1))
    assert p1.parent == game.dir / "packets" / "table"
    assert p1.name.startswith("000001-") and p1.suffix == ".pbem"
    game.publish_packet(2, blob(2), seat="alice")
    game.publish_packet(12, blob(12))
    game.publish_packet(3, blob(3), seat="alice")
    assert [s for s, _ in game.packets(None)] == [1, 12]
    assert [s for s, _ in game.packets("alice")] == [2, 3]
    assert game.latest_packet("alice") == (12, blob(12))  # table is newer
    assert game.latest_packet("bob") == (12, blob(12))  # falls back to table
    assert game.latest_packet(None) == (12, blob(12))
    game.publish_packet(12, b"alice's own copy", seat="alice")
    assert game.latest_packet("alice") == (12, b"alice's own copy")  # seat wins a tie


def test_publishing_twice_yields_one_file(game: GameFolder) -> None:
    a = game.publish_packet(7, blob(7), seat="bob")
    b = game.publish_packet(7, blob(7), seat="bob")
    assert a == b
    assert len(game.packets("bob")) == 1


def test_two_different_packets_with_one_number_is_a_conflict(game: GameFolder) -> None:
    game.publish_packet(5, blob(5))
    game.publish_packet(5, blob(6))
    with pytest.raises(Conflict):
        game.latest_packet(None)


def test_packets_ignore_foreign_files(game: GameFolder) -> None:
    p = game.publish_packet(4, blob(4))
    (p.parent / "notes.txt").write_text("hi")
    (p.parent / ".000009-abc.pbem.1234.tmp").write_bytes(b"partial")
    shutil.copy(p, p.parent / "000009-0123456789ab.sync-conflict-20240101-123456-ABCDEFG.pbem")
    assert [s for s, _ in game.packets(None)] == [4]


def test_unknown_seat_and_bad_seq(game: GameFolder) -> None:
    with pytest.raises(UsageError):
        game.publish_packet(1, b"x", seat="mallory")
    with pytest.raises(UsageError):
        game.submit_move("mallory", 1, b"x")
    with pytest.raises(UsageError):
        game.publish_packet(-1, b"x")


# -- inbox -------------------------------------------------------------------


def test_submit_and_inbox_order(game: GameFolder) -> None:
    a = game.submit_move("alice", 3, blob(30))
    b = game.submit_move("bob", 3, blob(31))
    c = game.submit_move("carol", 4, blob(32))
    assert a.name.startswith("alice-000003-") and a.parent == game.dir / "inbox"
    now = time.time()
    os.utime(a, (now, now))
    os.utime(b, (now - 100, now - 100))
    os.utime(c, (now, now))
    assert game.inbox() == [b, a, c]  # mtime, then name
    assert game.submit_move("alice", 3, blob(30)) == a  # resubmitting is harmless


def test_inbox_skips_temp_hidden_and_foreign_files(game: GameFolder) -> None:
    inbox = game.dir / "inbox"
    real = game.submit_move("alice", 1, blob(1))
    (inbox / ".alice-000002-x.pbem.abcd.tmp").write_bytes(b"partial")
    (inbox / ".syncthing.bob-000001.pbem.tmp").write_bytes(b"partial")
    (inbox / "bob-000001-x.pbem.part").write_bytes(b"partial")
    (inbox / "~lock.pbem").write_bytes(b"")
    (inbox / "desktop.ini").write_text("")
    (inbox / ".DS_Store").write_bytes(b"")
    (inbox / "subdir.pbem").mkdir()
    assert game.inbox() == [real]


def test_conflict_copies_collapse(game: GameFolder) -> None:
    inbox = game.dir / "inbox"
    real = game.submit_move("alice", 5, blob(5))
    stem = real.stem
    copies = [
        f"{stem} (conflicted copy 2024-03-01).pbem",  # Dropbox
        f"{stem} (Bob's conflicted copy 2024-03-01).pbem",  # Dropbox, shared folder
        f"{stem}.sync-conflict-20240101-123456-ABCDEFG.pbem",  # Syncthing
        f"{stem} (conflicted copy 2024-03-01 101112).pbem",  # Nextcloud
        f"{stem} (conflict 2024-03-01).pbem",  # older Nextcloud / ownCloud
    ]
    for name in copies:
        shutil.copy(real, inbox / name)
    different = inbox / f"{stem}.sync-conflict-20240102-000000-ZZZZZZZ.pbem"
    different.write_bytes(blob(6))
    past = time.time() - 50
    os.utime(real, (past, past))
    assert len(game.inbox()) == len(copies) + 2
    unique = game.inbox_unique()
    assert [p for _, p in unique] == [real, different]
    assert len({h for h, _ in unique}) == 2


def test_mark_done(game: GameFolder) -> None:
    p = game.submit_move("bob", 2, blob(2))
    done = game.mark_done(p)
    assert done == game.dir / "inbox" / "done" / p.name and done.read_bytes() == blob(2)
    assert game.inbox() == []
    assert game.mark_done(p) == done  # already moved: harmless
    with pytest.raises(UsageError):
        game.mark_done(game.dir / "archive" / "x.pbem")


def test_mark_done_keeps_both_on_a_name_clash(game: GameFolder) -> None:
    inbox = game.dir / "inbox"
    (inbox / "move.pbem").write_bytes(b"first")
    first = game.mark_done(inbox / "move.pbem")
    (inbox / "move.pbem").write_bytes(b"second")
    second = game.mark_done(inbox / "move.pbem")
    assert first != second
    assert first.read_bytes() == b"first" and second.read_bytes() == b"second"


def test_archive(game: GameFolder) -> None:
    a = game.publish_archive(1, b"round one")
    assert a.parent == game.dir / "archive" and a.name.startswith("round-001-")
    assert game.publish_archive(1, b"round one") == a


# -- concurrency -------------------------------------------------------------

WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from pbem.folder.layout import GameFolder
    d, seat, n, go = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    g = GameFolder.open(d)
    while not go.exists():
        time.sleep(0.001)
    for i in range(n):
        g.submit_move(seat, i, f"{seat}:{i}:".encode() * 2000)
        g.submit_move("carol", 0, b"same bytes from everyone" * 1000)
    """
)


def test_concurrent_submitters_never_clobber(game: GameFolder, tmp_path: Path) -> None:
    n = 40
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(game.dir), seat, str(n), str(go)], env=env)
        for seat in ("alice", "bob")
    ]
    time.sleep(0.3)
    expected = {f"{s}:{i}:".encode() * 2000 for s in ("alice", "bob") for i in range(n)}
    allowed = expected | {b"same bytes from everyone" * 1000}
    go.touch()
    seen_partial = []
    while any(p.poll() is None for p in procs):
        # A reader racing the writers must only ever see complete files.
        for _, path in game.inbox_unique():
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                continue
            if data not in allowed:
                seen_partial.append(path.name)
    assert [p.wait() for p in procs] == [0, 0]
    assert seen_partial == []
    files = game.inbox()
    assert len(files) == 2 * n + 1
    assert {p.read_bytes() for p in files} == allowed
    assert temp_files(game.dir) == []
