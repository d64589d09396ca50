"""A trustless game's status in its row, and its rounds' public results.

Revision ID: 0011
Revises: 0010

- trustless_games.ruleset, options, status, round_no, seq and public: where the game's chain
  stands (pbem.host.blind_status reads them), written by the blind host with each join and
  packet (pbem.host.blind_facts), so that `pbem status`, `pbem games` and the daemons read a row
  instead of following the chain again, and a finished game is no longer served.
- trustless_packets.created_at: when the host made each packet (a game's `since`). The packets
  made before have none, but for a game's latest one: the last time the host took a seat's block.
- trustless_rounds: each ended round's public result (roles, winners, finder, payout, gold), for
  `pbem club`. A round that ended before gets that same last time as its end.
Each game's facts are filled here from its chain, followed as the blind host follows it.
"""

import json

import sqlalchemy as sa
from alembic import op

from pbem.host.migrations.columns import game

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("trustless_games") as batch:
        batch.add_column(sa.Column("ruleset", sa.String(), nullable=False, server_default="classic"))
        batch.add_column(sa.Column("options", sa.Text(), nullable=False, server_default="[]"))
        batch.add_column(sa.Column("status", sa.String(), nullable=False, server_default="joining"))
        batch.add_column(sa.Column("round_no", sa.Integer(), nullable=False, server_default="1"))
        batch.add_column(sa.Column("seq", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("public", sa.Text(), nullable=False, server_default="{}"))
    with op.batch_alter_table("trustless_packets") as batch:
        batch.add_column(sa.Column("created_at", sa.String(), nullable=True))
    op.create_table(
        "trustless_rounds",
        game("trustless_games", primary_key=True),
        sa.Column("round_no", sa.Integer(), primary_key=True),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.Column("ended_at", sa.String(), nullable=False),
        sa.Column("result", sa.Text(), nullable=False),
    )
    c = op.get_bind()
    for game_id, in c.execute(sa.text("SELECT id FROM trustless_games")).all():
        _fill(c, game_id)


def _fill(c: sa.Connection, game_id: str) -> None:
    """One game's facts, from its chain."""
    from pbem.host import blind_facts
    from pbem.protocol.documents import Invitation, read_blocks

    row = c.execute(sa.text("SELECT invitation, created_at FROM trustless_games WHERE id = :g"), {"g": game_id}).one()
    inv = read_blocks(row.invitation)[0].expect(Invitation)
    last = c.execute(sa.text("SELECT max(at) FROM trustless_activity WHERE game_id = :g"), {"g": game_id}).scalar()
    at = max(last or row.created_at, row.created_at)
    c.execute(sa.text("UPDATE trustless_games SET ruleset = :r, options = :o WHERE id = :g"),
              {"r": inv.doc.ruleset, "o": json.dumps(sorted(inv.doc.options)), "g": game_id})
    closed: dict[int, int] = {}
    table, seq, _ = blind_facts.follow(c, game_id, inv.doc, inv.hash, closed=closed)
    if seq:
        c.execute(sa.text("UPDATE trustless_packets SET created_at = :at WHERE game_id = :g AND seq = :s"),
                  {"at": at, "g": game_id, "s": seq})
    blind_facts.record(c, game_id, table, inv.doc, seq, at, closed)
