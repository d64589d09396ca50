"""One move per packet. A seat's move for a packet is kept in its key home (the signed
file, and its words sealed to the seat's own key); `pbem turn`, `pbem mail-move` and `pbem move`
asked again say which move was sent, send that same file, and a different new move is refused
(exit 5), for `pbem move` too unless --replace (before pbem sent the first). Real key files, a real
folder; each command's first run in a process of its own, its further runs through the command line's
entry in this process (`here`), but `turn` at a FIFO (a regression would hang this process)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from folder_games import new_game
from processes import one_error_line, pbem

from engine.moves import shown_hand
from engine.rules import legal_moves
from pbem.auto.host_runner import FolderHost
from pbem.errors import EXIT_STALE
from pbem.folder.layout import GameFolder
from pbem.folder.play import FolderSeat
from pbem.host import referee as H
from pbem.protocol.crypto import Identity, sealed_key_id
from pbem.protocol.documents import read_file, unb64
from pbem.seat import keys
from pbem.seat.home import move_path
from pbem.seat.player import SeatPacket


def errors(proc: subprocess.CompletedProcess) -> list[str]:
    assert "Traceback" not in proc.stderr, proc.stderr
    return [line for line in proc.stderr.splitlines() if line.startswith("error:")]


def dealt(tmp_path: Path, here) -> tuple[Path, H.Host, GameFolder, str, Identity, Path, SeatPacket]:
    """A folder game of three seats, joined and dealt: (folder, host, its GameFolder, the seat
    to move, its key, its key home, its latest packet)."""
    db, homes = new_game(tmp_path)
    folder = tmp_path / "shared"
    here("folder", "init", "t", folder, "--db", db, home=homes["referee"], ok=True)
    for s in ("ann", "bob", "cat"):
        here("turn", folder, "--as", s, home=homes[s], ok=True)
    host = H.Host(db, keys.load_identity(homes["referee"], "referee", None))
    FolderHost(host, folder, lambda line: None).step()  # deals, publishes packet 1
    first = FolderSeat.open(folder, keys.load_identity(homes["ann"], "ann", None), homes["ann"]).latest()
    mover = first.doc.to_move
    me = keys.load_identity(homes[mover], mover, None)
    seat = FolderSeat.open(folder, me, homes[mover]).latest()
    return folder, host, GameFolder.open(folder), mover, me, homes[mover], seat


def test_a_packet_gets_one_move_and_its_words_stay_sealed(tmp_path: Path, here) -> None:
    folder, host, gf, mover, me, home, sp = dealt(tmp_path, here)
    legal = [str(m) for m in legal_moves(sp.view)]
    text = next(m for m in legal if m.startswith("play "))
    card = text.split()[1]
    by_number = text.replace(card, str(shown_hand(sp.view.hands[mover]).index(card) + 1), 1)  # the same move
    other = next(m for m in legal if m.startswith("discard ") and card not in m)

    proc = pbem("turn", folder, "--as", mover, text, home=home, cwd=tmp_path)
    assert proc.returncode == 0 and "move for packet 1 submitted" in proc.stdout, proc.stderr
    kept = move_path(home, gf.game_id, mover, 1)
    sent = gf.inbox()
    assert len(sent) == 1 and sent[0].read_bytes() == kept.read_bytes()
    mine = kept.with_suffix(".mine")
    assert sealed_key_id(unb64(mine.read_text(), "mine")) == me.public.key_id()  # sealed to the seat itself

    # the move's words are on no disk in plain text: key homes, the folder, the host's database
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        data = path.read_bytes()
        assert text.encode() not in data and by_number.encode() not in data, path
        if home in path.parents or folder in path.parents:
            assert card.encode() not in data, path  # nor the card played (the host's DB holds the deal)

    # again with another move: the first is submitted again, said, and the new one refused (exit 5)
    proc = here("turn", folder, "--as", mover, other, home=home, cwd=tmp_path)
    assert proc.returncode == EXIT_STALE == 5, proc.stderr
    assert f"you already answered packet 1 with “{text}”; submitted that move again" in proc.stdout
    assert errors(proc) == [f"error: your new move “{other}” was not sent: packet 1 has your move already"]
    assert [p.read_bytes() for p in gf.inbox()] == [kept.read_bytes()]

    # the same move in other words is no new move: submitted again, exit 0
    proc = here("turn", folder, "--as", mover, by_number, home=home, cwd=tmp_path)
    assert proc.returncode == 0 and "submitted that move again" in proc.stdout and not errors(proc), proc.stderr
    proc = here("turn", folder, "--as", mover, home=home, cwd=tmp_path)
    assert proc.returncode == 0 and f"with “{text}”; waiting for the host" in proc.stdout, proc.stderr

    # mail-move of the same packet: the kept move is mailed again, the new one refused
    packet_file = next(gf.packets_newest_first(mover))[1]
    proc = pbem("mail-move", packet_file, other, "--as", mover, "--to", "host@example.org",
                "--to-dir", tmp_path / "eml", home=home, cwd=tmp_path)
    assert proc.returncode == 5 and f"with “{text}”; mailing that move again" in proc.stdout, proc.stderr
    mailed = [b for eml in (tmp_path / "eml").glob("*.eml") for b in read_file(eml) if b.kind == "move"]
    assert [b.hash for b in mailed] == [read_file(kept)[0].hash]

    # pbem move writes a file to send by hand: the same move is the same file; another one is
    # refused (exit 5) and the file keeps the first, the one the host takes
    proc = pbem("move", packet_file, by_number, "--as", mover, "-o", tmp_path / "same.pbem", home=home, cwd=tmp_path)
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
    assert (tmp_path / "same.pbem").read_bytes() == kept.read_bytes()
    first = kept.read_bytes()
    proc = here("move", packet_file, other, "--as", mover, "-o", tmp_path / "same.pbem", home=home, cwd=tmp_path)
    assert proc.returncode == EXIT_STALE, proc.stderr
    assert errors(proc) == [f"error: your new move “{other}” was not written: you already answered packet 1 with "
                            f"“{text}”"]
    assert "--replace" in proc.stderr
    assert (tmp_path / "same.pbem").read_bytes() == first == kept.read_bytes()
    # --replace once pbem sent the move to the host (the folder's inbox): refused too
    proc = here("move", packet_file, other, "--as", mover, "-o", tmp_path / "same.pbem", "--replace", home=home,
                cwd=tmp_path)
    assert proc.returncode == EXIT_STALE and "was sent to the host already" in proc.stderr, proc.stderr
    assert (tmp_path / "same.pbem").read_bytes() == first == kept.read_bytes()

    # the host took the first move
    FolderHost(host, folder, lambda line: None).step()
    host.close()
    latest = FolderSeat.open(folder, me, home).latest()
    assert latest.doc.seq == 2 and latest.doc.moves_json()[-1]["text"] == text


def test_move_keeps_the_first_move_file_unless_replaced_before_it_is_sent(tmp_path: Path, here) -> None:
    """A second, different `pbem move` for a packet is refused and the file keeps the first
    (the one the host takes); --replace swaps it while pbem has not sent it, never after."""
    folder, host, gf, mover, me, home, sp = dealt(tmp_path, here)
    first, second = [str(m) for m in legal_moves(sp.view) if str(m).startswith("discard ")][:2]
    packet_file = next(gf.packets_newest_first(mover))[1]
    out = tmp_path / "move.pbem"

    assert here("move", packet_file, first, "--as", mover, "-o", out, home=home, cwd=tmp_path).returncode == 0
    kept = move_path(home, gf.game_id, mover, 1)
    written = out.read_bytes()
    assert written == kept.read_bytes()
    proc = here("move", packet_file, second, "--as", mover, "-o", out, home=home, cwd=tmp_path)
    assert proc.returncode == EXIT_STALE and errors(proc) == [
        f"error: your new move “{second}” was not written: you already answered packet 1 with “{first}”"]
    assert f'hint: the host takes the first move it receives; to replace yours before you send it: pbem move ' \
           f'{packet_file} "{second}" --replace' in proc.stderr
    assert out.read_bytes() == written == kept.read_bytes()
    # another file at the default name is not written over either
    (tmp_path / f"move-{mover}-000001.pbem").write_text("mine, not pbem's")
    proc = here("move", packet_file, first, "--as", mover, home=home, cwd=tmp_path)
    assert proc.returncode == 2 and "holds another file; not overwritten" in proc.stderr, proc.stderr
    assert (tmp_path / f"move-{mover}-000001.pbem").read_text() == "mine, not pbem's"

    # replaced before it was sent: the file and the key home hold the second move
    proc = here("move", packet_file, second, "--as", mover, "-o", out, "--replace", home=home, cwd=tmp_path)
    assert proc.returncode == 0 and "replaced your move for packet 1" in proc.stderr, proc.stderr
    assert out.read_bytes() != written and out.read_bytes() == kept.read_bytes()
    proc = here("turn", folder, "--as", mover, home=home, cwd=tmp_path)
    assert f"you already answered packet 1 with “{second}”" in proc.stdout, proc.stdout
    proc = here("turn", folder, "--as", mover, second, home=home, cwd=tmp_path)  # into the folder's inbox
    assert proc.returncode == 0 and [p.read_bytes() for p in gf.inbox()] == [out.read_bytes()], proc.stderr
    # sent: no more replacing
    proc = here("move", packet_file, first, "--as", mover, "-o", out, "--replace", home=home, cwd=tmp_path)
    assert proc.returncode == EXIT_STALE and errors(proc) == [
        "error: your move for packet 1 was sent to the host already: it cannot be replaced"], proc.stderr
    assert out.read_bytes() == kept.read_bytes()
    FolderHost(host, folder, lambda line: None).step()
    host.close()
    after = FolderSeat.open(folder, me, home).latest()
    hand = shown_hand(after.view.hands[mover])
    assert after.doc.seq == 2 and second.split()[1] not in hand and first.split()[1] in hand  # the second was taken


def test_a_damaged_kept_move_is_one_error_line_and_nothing_is_sent(tmp_path: Path, here) -> None:
    """The seat's own kept move cut short, emptied, overwritten by another block, or replaced by
    a FIFO: `pbem turn` says which file, exits 3, sends nothing and leaves the file as it is."""
    folder, host, gf, mover, me, home, sp = dealt(tmp_path, here)
    text = next(str(m) for m in legal_moves(sp.view) if str(m).startswith("discard "))
    assert here("turn", folder, "--as", mover, text, home=home, cwd=tmp_path).returncode == 0
    kept = move_path(home, gf.game_id, mover, 1)
    good = kept.read_bytes()
    for sent in gf.inbox():
        sent.unlink()  # as if the host had not received it yet
    join = next(p for p in (home / "games").rglob("join-*.pbem"))
    for damage in ("empty", "cut", "other", "fifo"):
        kept.unlink()
        if damage == "fifo":
            os.mkfifo(kept)
        else:
            kept.write_bytes({"empty": b"", "cut": good[: len(good) // 2], "other": join.read_bytes()}[damage])
        before = kept.read_bytes() if damage != "fifo" else None
        if damage == "fifo":  # a process of its own: a regression that hangs on it ends at its timeout
            proc = pbem("turn", folder, "--as", mover, home=home, cwd=tmp_path, timeout=60)
        else:
            proc = here("turn", folder, "--as", mover, home=home, cwd=tmp_path)
        one_error_line(proc, 3, "is damaged")
        assert str(kept) in proc.stderr and "hint: delete it to answer packet 1 again" in proc.stderr, proc.stderr
        assert gf.inbox() == [], damage
        if before is not None:
            assert kept.read_bytes() == before, damage
    kept.unlink()  # deleted, as the hint says: the seat answers again
    proc = here("turn", folder, "--as", mover, text, home=home, cwd=tmp_path)
    assert proc.returncode == 0 and "move for packet 1 submitted" in proc.stdout, proc.stderr
