"""Table talk: the talk table.

Revision ID: 0006
Revises: 0005

- talk holds each line of table talk the host took (docs/protocol.md, "Table talk"): the
  seat's signed block as it came (a whisper's text sealed inside it, which the host cannot
  open), the packet it answers and the seat's count `n`, each (game, seat, n) once.
"""

from alembic import op

from pbem.host.migrations.columns import talk_columns

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    op.create_table("talk", *talk_columns("games"))
    op.create_index("ix_talk_game", "talk", ["game_id", "id"])
