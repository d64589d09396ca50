"""A game's settings, the host's memo and the seats' standing, each in its own place.

Revision ID: 0008
Revises: 0007

games.config held everything as one JSON object. It is split (pbem.host.settings):
- games.settings: the deadline rules, the host's own mail address, languages, SMTP, transport,
  digest, the mail's book and the refused mails noted;
- games.memo: the clock of the packet waiting, when the game was paused, the seats handed
  over, and the hashes of the requests answered (each kept until the game ends);
- seats.missed, absent, resigned, away_until, away_sent: each seat's standing. A seat that
  was absent is absent since packet 0 (any packet the host played for it counts when it is
  back, as before);
- a seat's mail address lives in seats.email only (it was also in the config's emails).
games.config is dropped.
"""

import json

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"

_SETTINGS = ("timing", "languages", "smtp", "transport", "digest", "mail_book", "refusals")
_CLOCK = ("seq", "seat", "start", "due", "sent", "absent")


def _split(config: dict) -> tuple[dict, dict, dict]:
    """(settings, memo, standing per seat) of one game's old config."""
    settings = {k: config[k] for k in _SETTINGS if config.get(k)}
    emails = config.get("emails") or {}
    if emails.get("host"):
        settings["emails"] = {"host": emails["host"]}
    if isinstance(settings.get("refusals"), dict):
        settings["refusals"] = {seat: [e for e in noted if isinstance(e, dict) and "key" in e]
                                for seat, noted in settings["refusals"].items() if isinstance(noted, list)}
    clock = {k: v for k, v in (config.get("clock") or {}).items() if k in _CLOCK and v not in (None, [], False)}
    memo: dict = {"clock": clock} if clock else {}
    if config.get("paused"):
        memo["paused"] = config["paused"]
    if config.get("handovers"):
        memo["handovers"] = config["handovers"]
    if config.get("requests"):
        memo["requests"] = [{"hash": h} for h in config["requests"]]
    standings = {}
    for seat, st in (config.get("seats") or {}).items():
        standings[seat] = {"missed": int(st.get("missed") or 0), "absent": 0 if st.get("absent") else None,
                           "resigned": bool(st.get("resigned")), "away_until": st.get("away_until"),
                           "away_sent": json.dumps(st["away_sent"]) if st.get("away_sent") else None}
    return settings, memo, standings


def upgrade() -> None:
    conn = op.get_bind()
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("settings", sa.Text(), nullable=False, server_default="{}"))
        batch.add_column(sa.Column("memo", sa.Text(), nullable=False, server_default="{}"))
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("missed", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("absent", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("resigned", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("away_until", sa.String(), nullable=True))
        batch.add_column(sa.Column("away_sent", sa.Text(), nullable=True))
    games = sa.table("games", sa.column("id"), sa.column("config"), sa.column("settings"), sa.column("memo"))
    seats = sa.table("seats", sa.column("game_id"), sa.column("name"), sa.column("email"), sa.column("missed"),
                     sa.column("absent"), sa.column("resigned", sa.Boolean()), sa.column("away_until"),
                     sa.column("away_sent"))
    for game_id, text in conn.execute(sa.select(games.c.id, games.c.config)).all():
        config = json.loads(text or "{}")
        settings, memo, standings = _split(config)
        conn.execute(games.update().where(games.c.id == game_id).values(
            settings=json.dumps(settings, sort_keys=True), memo=json.dumps(memo, sort_keys=True)))
        for seat, st in standings.items():
            conn.execute(seats.update().where(seats.c.game_id == game_id, seats.c.name == seat).values(**st))
        for seat, address in (config.get("emails") or {}).items():
            if seat != "host" and address:
                conn.execute(seats.update().where(seats.c.game_id == game_id, seats.c.name == seat,
                                                  seats.c.email.is_(None)).values(email=address))
    if conn.dialect.name == "sqlite":  # SQLite 3.35+ drops a column in place (a copy of games would break its references)
        conn.execute(sa.text("ALTER TABLE games DROP COLUMN config"))
    else:
        op.drop_column("games", "config")
