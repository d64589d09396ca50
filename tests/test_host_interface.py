"""One declared host interface (pbem.host.interface.GameHost), met by both kinds of host, and
one way to say a hosted game's facts: `pbem games` and `pbem status` say the same."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mailservers import MailServers
from processes import pbem

from pbem.host import referee as H
from pbem.seat import keys

ROOT = Path(__file__).resolve().parents[1]
SEATS = ["ann", "bob", "cat"]


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_both_hosts_are_accepted_where_the_interface_is_expected() -> None:
    """mypy checks structurally: tests/host_conformance.py passes the referee and the blind host
    as GameHost; a class that lacks one of its members is refused (the check can fail)."""
    run = _mypy("tests/host_conformance.py")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    half = ("from pbem.host.interface import GameHost\n"
            "class Half:  # a host that answers queries only\n"
            "    def game_id(self) -> str:\n        return 'g'\n"
            "def f(h: Half) -> GameHost:\n    return h\n")
    refused = _mypy("-c", half)
    assert refused.returncode == 1 and 'expected "GameHost"' in refused.stdout, refused.stdout


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
