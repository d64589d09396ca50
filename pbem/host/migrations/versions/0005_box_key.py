"""The host's own box: games.box_key.

Revision ID: 0005
Revises: 0004

- games.box_key is the key of the host's own box (pbem.protocol.crypto.OwnBox), sealed to
  the host's key: the live state, the moves' full texts and the dealt states are sealed into
  that box (ChaCha20-Poly1305), not to the host's key one HPKE seal each, on every move. A
  game made before it gets its key in its first change after this migration (the migration
  has no host key); what it sealed before still opens with the host's key.
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("box_key", sa.Text(), nullable=True))
