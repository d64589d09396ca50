"""Webhook notices: the outbox table.

Revision ID: 0009
Revises: 0008

- webhooks holds each notice the host owes a game's webhook (pbem.host.webhooks): recorded in
  the transaction of the change it tells of, POSTed after that commits, marked sent (or given
  up after its attempts), so that a crash neither loses one nor sends one that was marked.
"""

import sqlalchemy as sa
from alembic import op

from pbem.host.migrations.columns import game, serial, strings, texts

revision = "0009"
down_revision = "0008"


def upgrade() -> None:
    op.create_table(
        "webhooks",
        serial(),
        game(),
        *strings("url", "format"),
        *texts("body"),
        *strings("created_at", "next_at"),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
        *strings("sent_at", "error", nullable=True),
    )
    op.create_index("ix_webhooks_due", "webhooks", ["sent_at", "next_at"])

