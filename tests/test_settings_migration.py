"""Stores made by the code before typed settings (commit 6824e26, schema 0005: a game's settings,
clock and standings in one JSON column games.config) are migrated by the commands a user runs,
keep every setting and standing, and play on: tests/fixtures/v5-settings (how it was made:
its make_stores.py), as a SQLite file and as a dump of a real PostgreSQL database."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from processes import pbem
from sqlalchemy import select
from test_store import schema_diff

from engine.rules import legal_moves
from pbem.host import referee as H
from pbem.host.settings import MailMark, PacketClock, Refusal, SmtpSetting, Standing, TransportSetting, memo_of
from pbem.host.tables import games as games_table
from pbem.protocol.documents import read_blocks
from pbem.protocol.timeout import TAKEOVER_TURNS
from pbem.seat import keys
from pbem.seat import player as P

FIXTURE = Path(__file__).parent / "fixtures" / "v5-settings"
PASS = "correct horse"
KEY: dict[str, str | None] = {"PBEM_PASSPHRASE": PASS}
TIMING_5 = {"absent_after": 2, "days": None, "deadline": 3600, "grace": 600, "max_away": 604800,
          "on_timeout": "discard", "reminders": ["50%"]}
TIMING = {**TIMING_5, "bot_turns": TAKEOVER_TURNS}  # a setting added after schema 5 reads as its default
EMAILS = {"ann": "ann@example.org", "bob": "bob@example.org", "cat": "cat@example.org"}
BOOK_AT = 1796129700.0  # when the fixture's script noted round 1's mails (its fake clock)


def old_store(kind: str, root: Path, request: pytest.FixtureRequest) -> str:
    """The fixture's store of `kind`, as commit 6824e26 left it, at schema 0005."""
    if kind == "sqlite":
        db = root / "store.db"
        with sqlite3.connect(db) as c:
            assert c.execute("SELECT version_num FROM alembic_version").fetchone() == ("0005",)
            assert "config" in [r[1] for r in c.execute("PRAGMA table_info(games)")]
        return f"sqlite:///{db}"
    pg = request.getfixturevalue("pg_server")
    url = pg.new_database()
    loaded = subprocess.run([str(pg.bin / "psql"), "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres", "-q",
                             "-v", "ON_ERROR_STOP=1", "-d", url.rsplit("/", 1)[1], "-f", str(root / "postgresql.sql")],
                            capture_output=True, text=True)
    assert loaded.returncode == 0, loaded.stderr
    return url


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_store_of_schema_5_keeps_every_setting_and_standing_and_plays_on(kind: str, tmp_path: Path,
                                                                          request: pytest.FixtureRequest, here) -> None:
    root = tmp_path / "v5"
    shutil.copytree(FIXTURE, root)
    for key in root.glob("home-*/keys/*.key"):
        key.chmod(0o600)  # as `pbem key new` leaves it (git keeps no modes)
    url = old_store(kind, root, request)
    referee = root / "home-referee"

    # `pbem games` (a process of its own) opens the store, as every command does: that upgrades it;
    # the commands after it run through the command line's entry in this process
    listed = json.loads(pbem("games", "--store", url, "--host", "--json", home=referee, ok=True).stdout)
    games = {g["name"]: g for g in listed["hosting"]}
    assert schema_diff(url) == []
    slow, quiet = games["slow"], games["quiet"]
    assert (slow["status"], slow["round"], slow["seq"], slow["to_move"]) == ("playing", 2, 64, "cat")
    assert slow["transport"] == "mail" and slow["due"] == "2026-12-03T16:19:02+00:00" and not slow["paused"]
    assert quiet["paused"] and quiet["transport"] is None and quiet["due"] is None

    status = json.loads(here("status", "slow", "--store", url, "--json", home=referee, ok=True).stdout)
    assert status["timing"] == TIMING
    assert status["deadline"] == {"seat": "cat", "due": "2026-12-03T16:19:02+00:00"}
    assert status["absent"] == ["ann"] and status["away"] == {"cat": "2026-12-03T15:19:02+00:00"}
    assert [(h["seat"], h["at"], h["by"]) for h in status["handovers"]] == [("bob", 63, "host")]
    assert {s["name"]: s["email"] for s in status["seats"]} == EMAILS
    told = here("game", "email", "slow", "--store", url, home=referee, env=KEY, ok=True).stdout.splitlines()
    assert told == ["ann: ann@example.org (zh-Hans)", "bob: bob@example.org", "cat: cat@example.org",
                    "host: referee@example.org"]
    smtp = here("game", "smtp", "slow", "--store", url, home=referee, env=KEY, ok=True).stdout
    assert "SMTP: smtp.example.org:2525 (starttls), from referee@example.org, login referee" in smtp
    assert json.loads(here("game", "config", "slow", "--store", url, "--json", home=referee, env=KEY, ok=True).stdout) == TIMING

    with H.Host(url, game="slow") as host:
        settings, standings = host.settings(), host.standings()
        with host.store.read() as c:
            memo = memo_of(c.execute(select(games_table.c.memo).where(games_table.c.name == "slow")).scalar_one())
    assert settings.emails == {"host": "referee@example.org"} and settings.languages == {"ann": "zh-Hans"}
    assert settings.smtp == SmtpSetting(host="smtp.example.org", from_addr="referee@example.org", port=2525,
                                        security="starttls", user="referee")
    assert settings.transport == TransportSetting(maildir=["/srv/pbem/inbox"], send=True, to_dir="/srv/pbem/outbox")
    assert settings.digest == "1d" and settings.rules().to_config() == TIMING
    assert settings.mail_book == {n: MailMark(56, BOOK_AT, f"{n}@example.org") for n in ("ann", "bob", "cat")}
    assert settings.refusals == {"bob": [Refusal("id:<refused-1@example.org>", BOOK_AT, True)]}
    assert standings == {"ann": Standing(missed=2, absent=0), "bob": Standing(),
                         "cat": Standing(away_until="2026-12-03T15:19:02+00:00",
                                         away_sent=["2026-12-01T15:19:02+00:00"])}
    assert memo.clock == PacketClock(seq=64, seat="cat", start="2026-12-03T15:19:02+00:00",
                                     due="2026-12-03T16:19:02+00:00")
    assert [r.until for r in memo.requests] == [None]  # cat's away request, answered: kept for the game
    assert memo.paused is None and [h.seat for h in memo.handovers] == ["bob"]

    # cat plays a move through the commands: `pbem move` on the packet, `pbem apply` by the host
    with H.Host(url, game="slow") as host:
        packet_text = host.packet(64) or ""
    packet_file = root / "packet-64.pbem"
    packet_file.write_text(packet_text)
    cat = keys.load_identity(root / "home-cat", "cat", PASS.encode())
    view = P.open_packet(read_blocks(packet_text)[0], cat, root / "home-cat", remember=False).view
    move = root / "move.pbem"
    here("move", packet_file, str(legal_moves(view)[0]), "--as", "cat", "-o", move, home=root / "home-cat",
         env=KEY, ok=True)
    applied = here("apply", "slow", move, "--store", url, home=referee, env=KEY, ok=True)
    assert "applied cat's move" in applied.stdout and "packet 65" in applied.stdout
    after = json.loads(here("status", "slow", "--store", url, "--json", home=referee, ok=True).stdout)
    assert after["seq"] == 65 and after["absent"] == ["ann"] and after["handovers"] == status["handovers"]
    with H.Host(url, game="slow") as host:
        assert host.standings()["ann"] == Standing(missed=2, absent=0) and host.settings() == settings
