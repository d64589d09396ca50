"""Text from a file someone else wrote reaches a terminal with no escape sequence raw, not even
the colour codes (SGR) that rich draws with: a move's text in a packet, a host move's reason in
an archive, a game's or a seat's name in a store. Real `pbem` processes on a pseudo-terminal (where click
keeps escape codes, as a person's terminal gets them); the bytes they write are checked."""

from __future__ import annotations

import json
import os
import pty
import select
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from process_tools import read_until
from processes import PBEM, cli_env
from source_trees import nodes
from table_games import PASS, make_table, play_until

from pbem.protocol.armor import armor
from pbem.protocol.documents import SIG_LEN, read_blocks, sign_json

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

SGR = "\x1b[31mred\x1b[8mhidden\x1b[0m"  # colour, then hide what follows: SGR codes only
RAW, SHOWN = b"\x1b[31mred", b"\\x1b[31mred"


def _tty(args: list[object], home: Path, keys: tuple[tuple[str, bytes], ...] = ()) -> bytes:
    """`pbem ARGS` on a pseudo-terminal: every byte it wrote (for each (text seen, keys) pair,
    the keys typed once the text showed)."""
    main, sub = pty.openpty()
    env = cli_env(home, COLUMNS="120", LINES="50", TERM="xterm", PBEM_PASSPHRASE=PASS.decode(), PBEM_LANG="en")
    proc = subprocess.Popen([*PBEM, *map(str, args)], stdin=sub, stdout=sub, stderr=sub, env=env, close_fds=True)
    os.close(sub)
    out = b""
    try:
        for seen, typed in keys:
            out += read_until(main, seen).encode()
            os.write(main, typed)
        end = time.monotonic() + 60
        while time.monotonic() < end:
            ready, _, _ = select.select([main], [], [], 0.2)
            try:
                chunk = os.read(main, 65536) if ready else b""
            except OSError:  # the process closed the terminal
                break
            out += chunk
            if not chunk and proc.poll() is not None:
                break
        code = proc.wait(timeout=30)
        assert code == 0 or (code != 70 and b"error: " in out), (code, out[-2000:])
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
    return out


def _resigned(block, changes: dict, signer) -> str:
    doc = json.loads(block.payload[SIG_LEN:])
    doc.update(changes)
    return armor(block.kind.upper(), sign_json(block.kind, doc, signer))


@pytest.mark.slow
def test_escape_codes_in_a_packet_an_archive_or_a_store_reach_no_terminal_raw(tmp_path: Path) -> None:
    table = make_table(tmp_path, ["ann", "bob", "cat"])
    play_until(table, lambda p: p.doc.round >= 2 and p.doc.moves and p.doc.moves[-1].round == 2)  # round 1 ended
    referee = table.ids["referee"]
    # a packet whose latest move's text holds the codes, signed by the game's host
    latest = table.latest()[1]
    doc = json.loads(latest.payload[SIG_LEN:])
    for listed in (doc["moves"], doc["recent"]):
        listed[-1]["text"] = f"discard 1 {SGR}"
    packet = tmp_path / "forged.pbem"
    packet.write_text(_resigned(latest, {"moves": doc["moves"], "recent": doc["recent"]}, referee))
    # the reader neither moves next nor made that move: `show` lists the moves since a seat's own
    reader = next(s for s in table.seats if s not in (latest.doc.to_move, doc["moves"][-1]["seat"]))
    # round 1's archive, its first move marked as the host's, for a reason that holds the codes
    archive = next(b for b in read_blocks(table.host.archives()[1]) if b.kind == "archive")
    moves = json.loads(archive.payload[SIG_LEN:])["moves"]
    moves[0].update(by="host", why=SGR)
    forged_archive = tmp_path / "forged-archive.pbem"
    forged_archive.write_text(_resigned(archive, {"moves": moves}, referee))
    table.host.close()
    # store files: one whose game is named with the codes, one whose seat bob is
    db, seated = tmp_path / "game.db", tmp_path / "seated.db"
    seated.write_bytes(db.read_bytes())
    with sqlite3.connect(db) as c:
        c.execute("UPDATE games SET name = ?", (f"test{SGR}",))
    with sqlite3.connect(seated) as c:
        c.execute("UPDATE seats SET name = ? WHERE name = 'bob'", (f"bob{SGR}",))

    runs = {
        "show": _tty(["show", packet, "--as", reader], table.homes[reader]),
        "replay --all": _tty(["replay", forged_archive, "--all"], table.homes["ann"]),
        "replay": _tty(["replay", forged_archive], table.homes["ann"],  # full screen: a key to the move, q
                       (("the deal (0 of", b"\x1b[C"), ("played by the host", b"q"))),
        "games": _tty(["games", "--host", "--store", db], table.homes["referee"]),
        "status (game)": _tty(["status", "test", "--store", db], table.homes["referee"]),  # no such game
        "status (seat)": _tty(["status", "test", "--store", seated], table.homes["referee"]),
    }
    raw = [what for what, out in runs.items() if RAW in out or b"\x1b[8m" in out]
    assert raw == [], {what: runs[what][-2000:] for what in raw}
    unseen = [what for what, out in runs.items() if SHOWN not in out]  # shown, as text anyone can read
    assert unseen == [], {what: runs[what][-2000:] for what in unseen}


def test_every_rich_console_pbem_draws_with_cleans_its_text() -> None:
    """rich keeps its styles on the way out (Shown.rich_proxied_file), so a console that did not
    clean what it draws would let a name's escape codes through: pbem makes every console with
    pbem.ui.terminal.console, never rich's Console directly."""
    import ast

    root = Path(__file__).resolve().parent.parent / "pbem"
    made = []
    for path in root.rglob("*.py"):
        for node in nodes(path):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Console":
                made.append(f"{path.relative_to(root)}:{node.lineno}")
    assert made == [str(Path("ui/terminal.py")) + f":{_console_line(root)}"], made


def _console_line(root: Path) -> int:
    text = (root / "ui" / "terminal.py").read_text().splitlines()
    return next(n for n, line in enumerate(text, 1) if "made = Console(" in line)
