"""One declared host interface (pbem.host.interface.GameHost), met by both kinds of host, and
one way to say a hosted game's facts: `pbem games` and `pbem status` say the same. (That mypy
accepts both hosts as the interface, and refuses half a host, is checked in pbem's own mypy run:
tests/test_types.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from mailservers import MailServers
from processes import pbem

from pbem.host import referee as H
from pbem.seat import keys

SEATS = ["ann", "bob", "cat"]


def _secret(path: Path, secret: str) -> Path:
    path.write_text(f"#!/bin/sh\necho {secret}\n")
    path.chmod(0o700)
    return path


def test_games_says_a_game_served_over_imap_is_served_by_mail(mail_servers: MailServers, tmp_path: Path) -> None:
    """`pbem host run GAME --imap URL` remembers the IMAP folder as the game's transport; `pbem
    games --json` said `transport: null` for it (only a Maildir counted as mail)."""
    s = mail_servers
    homes = {n: tmp_path / f"home-{n}" for n in ["host", *SEATS]}
    ids = {n: keys.create_identity(h, n, None) for n, h in homes.items()}
    db = tmp_path / "saves" / "t.db"
    H.create_game(db, "t", ids["host"], "classic", [(p, ids[p].public) for p in SEATS], [],
                  {n: s.address(n) for n in ["host", *SEATS]})
    secret = _secret(tmp_path / "secret.sh", "pw-host")
    served = pbem("host", "run", "t", "--db", db, "--imap", s.imap.url("host"), "--password-command", secret,
                  "--once", "--no-idle", home=homes["host"], cwd=tmp_path, ok=True)
    assert "serving t-" in served.stdout and "mailed invitation" in served.stdout, served.stdout
    listed = json.loads(pbem("games", "--db", db, "--json", home=homes["host"], cwd=tmp_path, ok=True).stdout)
    [row] = listed["hosting"]
    assert (row["name"], row["transport"], row["trustless"], row["status"]) == ("t", "mail", False, "joining")
    status = json.loads(pbem("status", "t", "--db", db, "--json", home=homes["host"], cwd=tmp_path, ok=True).stdout)
    assert {k: row[k] for k in ("game", "round", "seq", "to_move", "since", "paused", "waiting")} == \
        {k: status[k] for k in ("game", "round", "seq", "to_move", "since", "paused", "waiting")}
    assert row["joined"] == 0 and row["seats"] == len(status["seats"]) == 3
