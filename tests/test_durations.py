"""Every option that takes a span of time reads it one way (pbem.host.deadlines.parse_duration).

The same forms pass and the same bad ones are one `error:` line naming the option, exit 2,
nothing stored, through the CLI's own entry (`pbem.cli.main` with its argv) on a real store
of a real game; and once as a separate `pbem` process, for the option that used to read
durations its own way (`--digest 1d12h` was refused while `--deadline 1d12h` passed).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from folder_games import new_game
from on_disk import sqlite_dump
from processes import one_error_line, pbem
from run_here import main_here

from pbem.host import referee as H

GOOD = ["2.5s", " 1D 12H ", "1d12h"]
BAD = ["", "12", "1y", "1d12", "-3h", "0h", "99999999d"]


def test_every_duration_option_reads_the_same_forms(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    db, homes = new_game(tmp_path)
    ref = homes["referee"]
    commands: dict[str, list[object]] = {
        "--deadline": ["game", "config", "t", "--db", db],
        "--grace": ["game", "config", "t", "--db", db],
        "--max-away": ["game", "config", "t", "--db", db],
        "--remind": ["game", "config", "t", "--db", db],
        "--digest": ["mail", "t", "--db", db, "--to-dir", tmp_path / "out"],
        "--until": ["away", tmp_path / "no-such-folder"],  # read before the target is looked for
        "--timeout": ["agent", "start"],  # read before the key home is looked at
    }
    for option, command in commands.items():
        for text in BAD:
            before = sqlite_dump(db)
            code, err = main_here([*command, option, text], ref, capsys, monkeypatch)
            lines = err.strip().splitlines()
            assert code == 2, (option, text, err)
            assert lines[0].startswith("error: ") and option in lines[0], (option, text, err)
            assert all(line.startswith(("error: ", "hint: ")) for line in lines), (option, text, err)
            assert sqlite_dump(db) == before, (option, text)
        for text in GOOD:
            code, err = main_here([*command, option, text], ref, capsys, monkeypatch)
            assert option not in err, (option, text, err)  # whatever else it says, not about the span
    with H.Host(db) as host:
        timing, digest = host.settings().rules(), host.settings().digest
    assert timing.deadline == timing.grace == timing.max_away == 36 * 3600
    assert timing.reminders == ["1d12h"]
    assert digest == "1d12h"


def test_a_digest_of_days_and_hours_through_the_command(tmp_path: Path) -> None:
    db, homes = new_game(tmp_path)
    run = pbem("mail", "t", "--db", db, "--to-dir", tmp_path / "out", "--digest", "1d12h", home=homes["referee"])
    assert "--digest" not in run.stderr, run.stderr
    with H.Host(db) as host:
        assert host.settings().digest == "1d12h"
    before = sqlite_dump(db)
    one_error_line(pbem("mail", "t", "--db", db, "--digest", "1d12", home=homes["referee"]), 2, "--digest")
    assert sqlite_dump(db) == before
