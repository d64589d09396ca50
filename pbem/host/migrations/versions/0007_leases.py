"""Daemons that share a store's games: the leases and daemons tables.

Revision ID: 0007
Revises: 0006

- leases: which daemon (`pbem host run --all`) serves a game, until when (seconds since the
  epoch, by the store's clock); taken and renewed by a conditional UPDATE (pbem/host/leases.py).
  No foreign key: a trustless game beside the store (a file of its own) is leased here too.
- daemons: each running daemon's heartbeat, so each takes a fair share of the games.
"""

import sqlalchemy as sa
from alembic import op

from pbem.host.migrations.columns import strings

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    op.create_table(
        "leases",
        sa.Column("game_id", sa.String(), primary_key=True),
        *strings("holder"),
        sa.Column("expires", sa.Float(), nullable=False),
    )
    op.create_table(
        "daemons",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("seen", sa.Float(), nullable=False),
    )
