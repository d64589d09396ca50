"""Deadlines: the host's signed notices, and how far the mail has delivered them.

Revision ID: 0003
Revises: 0002

- notices holds each signed notice (reminder, late, absent, away, pause...) once. A file
  made by the one-game pbem of the deadlines work (schema 1 with a notices table, created
  outside any migration) keeps its notices; the table gains its index;
- the old config key "noticed" (the last notice mailed) becomes the mark of the mail
  channel's notices ("mail notices" in deliveries);
- a game mailed before mail digests (config "mailed", no "mail_book") mailed every packet
  to every address: its book says so, as of now, so nobody gets a digest of old news.
"""

import json
import time

import sqlalchemy as sa
from alembic import op

from pbem.host.migrations.columns import notice_columns, strings

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    conn = op.get_bind()
    if "notices" not in sa.inspect(conn).get_table_names():
        op.create_table("notices", *notice_columns("games"), *strings("created_at"))
    op.create_index("ix_notices_game", "notices", ["game_id", "id"])
    games = sa.table("games", sa.column("id"), sa.column("config"))
    deliveries = sa.table("deliveries", sa.column("game_id"), sa.column("channel"), sa.column("seq"))
    marks = []
    for game_id, text in conn.execute(sa.select(games.c.id, games.c.config)).all():
        config = json.loads(text or "{}")
        noticed = config.get("noticed")
        if isinstance(noticed, int) and noticed > 0:
            marks.append({"game_id": game_id, "channel": "mail notices", "seq": noticed})
        mailed = config.get("mailed")
        if isinstance(mailed, int) and mailed > 0 and "mail_book" not in config:
            config["mail_book"] = {name: {"seq": mailed, "at": time.time()} for name in config.get("emails") or {}}
            conn.execute(games.update().where(games.c.id == game_id).values(config=json.dumps(config, sort_keys=True)))
    if marks:
        op.bulk_insert(deliveries, marks)
