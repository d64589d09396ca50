"""A store of many games: unique game names, each packet's prev, delivery marks per publisher.

Revision ID: 0002
Revises: 0001

- games.name is unique within a store (a game is found by its name);
- packets.prev is stored (the archive's chain no longer re-reads every packet): packet 1
  chains to the invitation, packet n to packet n-1;
- deliveries holds how far each publisher (out-dir, folder, mail) has delivered a game;
  the old config key "mailed" becomes the mail channel's mark;
- seats.part_sealed is dropped (each seat's part lives in the packet itself);
- meta.schema becomes 2, so the one-game versions refuse the store instead of misreading it.
"""

import json

import sqlalchemy as sa
from alembic import op

from pbem.host.migrations.columns import game, integers

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    conn = op.get_bind()
    op.create_index("ix_games_name", "games", ["name"], unique=True)
    with op.batch_alter_table("packets") as batch:
        batch.add_column(sa.Column("prev", sa.String(), nullable=True))
    packets = sa.table("packets", sa.column("game_id"), sa.column("seq"), sa.column("hash"), sa.column("prev"))
    games = sa.table("games", sa.column("id"), sa.column("invitation_hash"), sa.column("config"))
    earlier = sa.alias(packets, "earlier")
    conn.execute(packets.update().values(prev=sa.select(earlier.c.hash).where(
        earlier.c.game_id == packets.c.game_id, earlier.c.seq == packets.c.seq - 1).scalar_subquery()))
    conn.execute(packets.update().where(packets.c.seq == 1).values(prev=sa.select(games.c.invitation_hash).where(
        games.c.id == packets.c.game_id).scalar_subquery()))
    with op.batch_alter_table("packets") as batch:
        batch.alter_column("prev", existing_type=sa.String(), nullable=False)
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("part_sealed")
    deliveries = op.create_table(
        "deliveries", game(primary_key=True), sa.Column("channel", sa.String(), primary_key=True), *integers("seq"))
    marks = []
    for game_id, config in conn.execute(sa.select(games.c.id, games.c.config)):
        mailed = json.loads(config or "{}").get("mailed")
        if isinstance(mailed, int) and mailed >= 0:
            marks.append({"game_id": game_id, "channel": "mail", "seq": mailed})
    if marks:
        op.bulk_insert(deliveries, marks)
    conn.execute(sa.text("UPDATE meta SET value = '2' WHERE key = 'schema'"))
