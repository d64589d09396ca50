"""Table talk: the talk table.

Revision ID: 0006
Revises: 0005

- talk holds each line of table talk the host took (docs/protocol.md, "Table talk"): the
  seat's signed block as it came (a whisper's text sealed inside it, which the host cannot
  open), the packet it answers and the seat's count `n`, each (game, seat, n) once.
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "talk",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("game_id", sa.String(), sa.ForeignKey("games.id"), nullable=False),
        sa.Column("seat", sa.String(), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("file_hash", sa.String(), nullable=False, unique=True),
        sa.Column("armored", sa.Text(), nullable=False),
        sa.Column("created_at", sa.String(), nullable=False),
        sa.UniqueConstraint("game_id", "seat", "n"),
    )
    op.create_index("ix_talk_game", "talk", ["game_id", "id"])
