"""One game per file: the schema of pbem before the store held many games (meta schema 1).

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

from pbem.host.migrations.columns import game, integers, serial, strings, texts

revision = "0001"
down_revision = None


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
        *strings("name", "ruleset"),
        *texts("options"),
        *strings("host_name", "host_key", "created_at"),
        *texts("invitation"),
        *strings("invitation_hash"),
        *texts("commitments", "secrets_sealed"),
        *texts("state_sealed", nullable=True),
        *texts("public"),
        *strings("status"),
        *integers("round_no", "move_no", "seq"),
        *strings("head"),
        *texts("config"),
    )
    op.create_table(
        "seats",
        serial(),
        game(),
        *integers("idx"),
        *strings("name", "key"),
        *strings("email", "contribution", "joined_at", "last_activity", nullable=True),
        *texts("part_sealed", nullable=True),
        sa.UniqueConstraint("game_id", "name"),
        sa.UniqueConstraint("game_id", "idx"),
    )


def _play_tables() -> None:
    """What the game's play leaves: packets, moves, joins and rounds."""
    op.create_table(
        "packets",
        game(primary_key=True),
        sa.Column("seq", sa.Integer(), primary_key=True),
        sa.Column("hash", sa.String(), nullable=False, unique=True),
        *integers("round_no"),
        *texts("armored"),
        *strings("created_at"),
    )
    op.create_table(
        "moves",
        serial(),
        game(),
        *integers("round_no", "n"),
        *strings("seat", "public_text"),
        *texts("text_sealed"),
        sa.Column("envelope", sa.LargeBinary(), nullable=False),
        sa.Column("file_hash", sa.String(), nullable=False, unique=True),
        *integers("answered_seq"),
        *strings("applied_at"),
        sa.UniqueConstraint("game_id", "round_no", "n"),
    )
    op.create_table(
        "joins",
        sa.Column("file_hash", sa.String(), primary_key=True),
        game(),
        *strings("seat"),
        sa.Column("envelope", sa.LargeBinary(), nullable=False),
    )
    op.create_table(
        "rounds",
        game(primary_key=True),
        sa.Column("round_no", sa.Integer(), primary_key=True),
        *integers("first_seq"),
        *integers("last_seq", nullable=True),
        *texts("start_state_sealed", "carried"),
        *strings("secret", nullable=True),
        *texts("result", "archive", nullable=True),
    )
