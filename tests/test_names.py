"""Names that become paths are checked whole, in one place (pbem.names), before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from folder_games import keys_here
from processes import pbem

from pbem.errors import BadPacket, UsageError
from pbem.names import check_game_id, check_game_name, check_identity_name, check_seat_name
from pbem.protocol.crypto import Identity
from pbem.seat.home import game_dir

BAD_NAMES = ["", "a/b", "../evil", "..", ".hidden", "has space", "ünï", "ok\n", "nul\x00x", "A" * 33, "x\\y", "con"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_names_are_refused_everywhere(name: str) -> None:
    for check in (check_game_name, check_seat_name, check_identity_name):
        with pytest.raises(UsageError):
            check(name)


@pytest.mark.parametrize("game", ["", "../x", "a/b", "x\n", "x\x00", "é", "a" * 65, ".x"])
def test_a_game_id_from_a_file_never_becomes_a_path(tmp_path: Path, game: str) -> None:
    with pytest.raises(BadPacket):
        check_game_id(game)
    with pytest.raises(BadPacket):
        game_dir(tmp_path, game)


@pytest.mark.parametrize("name", ["host", "table", "nobody", "top", "middle", "bottom"])
def test_reserved_seat_names(name: str) -> None:
    with pytest.raises(UsageError):
        check_seat_name(name)


def test_good_names_pass() -> None:
    assert check_game_name("friday-2") == "friday-2"
    assert check_seat_name("ann_b") == "ann_b"
    assert check_game_id("friday-0a1b2c3d") == "friday-0a1b2c3d"


@pytest.mark.parametrize("name", ["a/b", "../evil", "has space", "ünï"])
def test_game_new_with_a_bad_name_writes_nothing(tmp_path: Path, name: str, here) -> None:
    """`pbem game new` as a process for the first name, through the command line's entry in this
    process for the others; the host's key file made by the library (`pbem key new`'s file)."""
    home = tmp_path / "home"
    keys_here({"referee": home})
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    players = [a for s in ("ann", "bob", "cat") for a in ("--player", f"{s}={Identity.generate(s).public.encode()}")]
    args = ("game", "new", name, "--host", "referee", *players)
    run = pbem(*args, home=home, cwd=tmp_path) if name == "a/b" else here(*args, home=home, cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith("error: bad game name") and "Traceback" not in run.stderr
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert not (tmp_path.parent / "evil.db").exists()
