"""Webhook notices: the outbox table.

Revision ID: 0009
Revises: 0008

- webhooks holds each notice the host owes a game's webhook (pbem.host.webhooks): recorded in
  the transaction of the change it tells of, POSTed after that commits, marked sent (or given
  up after its attempts), so that a crash neither loses one nor sends one that was marked.
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "webhooks",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("game_id", sa.String(), sa.ForeignKey("games.id"), nullable=False),
        sa.Column("url", sa.String(), nullable=False),
        sa.Column("format", sa.String(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", sa.String(), nullable=False),
        sa.Column("next_at", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("sent_at", sa.String()),
        sa.Column("error", sa.String()),
    )
    op.create_index("ix_webhooks_due", "webhooks", ["sent_at", "next_at"])

