"""One game per file: the schema of pbem before the store held many games (meta schema 1).

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    _game_tables()
    _play_tables()
    meta = op.create_table(
        "meta",
        sa.Column("key", sa.String(), primary_key=True),
        sa.Column("value", sa.String(), nullable=False),
    )
    op.bulk_insert(meta, [{"key": "schema", "value": "1"}])


def _game_tables() -> None:
    """The game and its seats."""
    op.create_table(
        "games",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("ruleset", sa.String(), nullable=False),
        sa.Column("options", sa.Text(), nullable=False),
        sa.Column("host_name", sa.String(), nullable=False),
        sa.Column("host_key", sa.String(), nullable=False),
        sa.Column("created_at", sa.String(), nullable=False),
        sa.Column("invitation", sa.Text(), nullable=False),
        sa.Column("invitation_hash", sa.String(), nullable=False),
        sa.Column("commitments", sa.Text(), nullable=False),
        sa.Column("secrets_sealed", sa.Text(), nullable=False),
        sa.Column("state_sealed", sa.Text(), nullable=True),
        sa.Column("public", sa.Text(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("round_no", sa.Integer(), nullable=False),
        sa.Column("move_no", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("head", sa.String(), nullable=False),
        sa.Column("config", sa.Text(), nullable=False),
    )
    op.create_table(
        "seats",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("game_id", sa.String(), sa.ForeignKey("games.id"), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("email", sa.String(), nullable=True),
        sa.Column("contribution", sa.String(), nullable=True),
        sa.Column("joined_at", sa.String(), nullable=True),
        sa.Column("last_activity", sa.String(), nullable=True),
        sa.Column("part_sealed", sa.Text(), nullable=True),
        sa.UniqueConstraint("game_id", "name"),
        sa.UniqueConstraint("game_id", "idx"),
    )


def _play_tables() -> None:
    """What the game's play leaves: packets, moves, joins and rounds."""
    op.create_table(
        "packets",
        sa.Column("game_id", sa.String(), sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("seq", sa.Integer(), primary_key=True),
        sa.Column("hash", sa.String(), nullable=False, unique=True),
        sa.Column("round_no", sa.Integer(), nullable=False),
        sa.Column("armored", sa.Text(), nullable=False),
        sa.Column("created_at", sa.String(), nullable=False),
    )
    op.create_table(
        "moves",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("game_id", sa.String(), sa.ForeignKey("games.id"), nullable=False),
        sa.Column("round_no", sa.Integer(), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("seat", sa.String(), nullable=False),
        sa.Column("public_text", sa.String(), nullable=False),
        sa.Column("text_sealed", sa.Text(), nullable=False),
        sa.Column("envelope", sa.LargeBinary(), nullable=False),
        sa.Column("file_hash", sa.String(), nullable=False, unique=True),
        sa.Column("answered_seq", sa.Integer(), nullable=False),
        sa.Column("applied_at", sa.String(), nullable=False),
        sa.UniqueConstraint("game_id", "round_no", "n"),
    )
    op.create_table(
        "joins",
        sa.Column("file_hash", sa.String(), primary_key=True),
        sa.Column("game_id", sa.String(), sa.ForeignKey("games.id"), nullable=False),
        sa.Column("seat", sa.String(), nullable=False),
        sa.Column("envelope", sa.LargeBinary(), nullable=False),
    )
    op.create_table(
        "rounds",
        sa.Column("game_id", sa.String(), sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("round_no", sa.Integer(), primary_key=True),
        sa.Column("first_seq", sa.Integer(), nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=True),
        sa.Column("start_state_sealed", sa.Text(), nullable=False),
        sa.Column("carried", sa.Text(), nullable=False),
        sa.Column("secret", sa.String(), nullable=True),
        sa.Column("result", sa.Text(), nullable=True),
        sa.Column("archive", sa.Text(), nullable=True),
    )
