"""`pbem game new`'s workflow is in the library (pbem/auto/newgame.py): it makes the game and
writes the invitation, returning what the command prints; refusals leave no file behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbem.auto.newgame import new_game, parse_emails
from pbem.errors import UsageError
from pbem.host.store import Store
from pbem.protocol.documents import Invitation, read_blocks
from pbem.seat import keys


def _ids(root: Path, names: list[str]):
    out = {}
    for n in names:
        keys.create_identity(root / f"home-{n}", n, None)
        out[n] = keys.load_identity(root / f"home-{n}", n, None)
    return out


def test_new_game_makes_the_game_and_its_invitation(tmp_path: Path) -> None:
    ids = _ids(tmp_path, ["host", "ann", "bob", "cy"])
    seats = [(n, ids[n].public) for n in ("ann", "bob", "cy")]
    db = tmp_path / "saves" / "g.db"
    made = new_game("g", ids["host"], seats, emails=parse_emails(["bob=bob@example.org"]), db=db)
    assert made.game.startswith("g-") and (made.seats, made.mailed) == (["ann", "bob", "cy"], ["bob"])
    assert made.invitation == tmp_path / "saves" / "g" / "out" / "invitation.pbem"
    [doc] = read_blocks(made.invitation.read_text())
    assert isinstance(doc.doc, Invitation) and doc.game == made.game and doc.signer == ids["host"].public
    with Store(made.url) as st:
        assert st.find("g") is not None


def test_a_trustless_game_refuses_a_stray_address_before_any_file(tmp_path: Path) -> None:
    ids = _ids(tmp_path, ["host", "ann", "bob", "cy"])
    seats = [(n, ids[n].public) for n in ("ann", "bob", "cy")]
    db = tmp_path / "own.db"
    with pytest.raises(UsageError, match="no seat 'zed'"):
        new_game("g", ids["host"], seats, emails=parse_emails(["zed=z@example.org"]), trustless=True, db=db)
    with pytest.raises(UsageError, match="--absent-after"):
        new_game("g", ids["host"], seats, timing={"deadline": 3600}, absent_after=3, trustless=True, db=db)
    assert not db.exists() and not (tmp_path / "g").exists()
    with pytest.raises(UsageError, match="--email"):
        parse_emails(["bob-at-example.org"])
