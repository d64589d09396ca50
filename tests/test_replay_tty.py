"""`pbem replay` in a real terminal (a pseudo-terminal): keys step, jump and switch perspective."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from process_tools import read_until
from processes import PBEM, cli_env
from table_games import make_table, play_until

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


@pytest.mark.slow
def test_keys_step_jump_switch_and_quit(tmp_path: Path) -> None:
    table = make_table(tmp_path, ["ann", "bob", "cat"])
    play_until(table, lambda p: p.doc.phase != "playing", seed=5)
    table.host.close()
    main, sub = pty.openpty()
    env = cli_env(COLUMNS="100", LINES="60", TERM="xterm")
    proc = subprocess.Popen([*PBEM, "replay", str(tmp_path / "game.db"), "--round", "1"],
                            stdin=sub, stdout=sub, stderr=sub, env=env, close_fds=True)
    os.close(sub)
    try:
        read_until(main, "the deal (0 of")
        os.write(main, b"\x1b[C")  # Right
        read_until(main, "move 1 of")
        os.write(main, b"g3\r")  # jump to move 3
        read_until(main, "move 3 of")
        os.write(main, b"\x1b[D")  # Left
        read_until(main, "move 2 of")
        os.write(main, b"v")  # all cards open -> as ann saw it then
        read_until(main, "as ann saw it then")
        os.write(main, b"q")
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
