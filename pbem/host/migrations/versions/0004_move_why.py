"""Each move says who made it: moves.why, so no move's envelope is parsed again.

Revision ID: 0004
Revises: 0003

- moves.why is why the host made a move for a silent seat (its own signed move file says
  `by: host` and `why`; "timeout" when it names none), NULL for a seat's own move. Packets
  list the moves since the seat to move last moved, and a round's archive lists every move
  of the round, each with its `by` and `why`: they read this column instead of parsing each
  stored envelope on every move. Filled here from the envelopes the host stored: a 64-byte
  signature, then the canonical JSON of the move.
"""

import json

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"

SIG_LEN = 64  # pbem.protocol.documents.SIG_LEN, fixed by the wire format


def upgrade() -> None:
    conn = op.get_bind()
    with op.batch_alter_table("moves") as batch:
        batch.add_column(sa.Column("why", sa.String(), nullable=True))
    moves = sa.table("moves", sa.column("id"), sa.column("envelope"), sa.column("why"))
    made = []
    for move_id, envelope in conn.execute(sa.select(moves.c.id, moves.c.envelope)):
        doc = json.loads(bytes(envelope)[SIG_LEN:])
        if doc.get("by") == "host":
            made.append({"b_id": move_id, "why": doc.get("why") or "timeout"})
    if made:
        conn.execute(moves.update().where(moves.c.id == sa.bindparam("b_id")), made)
