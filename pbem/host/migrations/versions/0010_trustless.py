"""Trustless games in the store: the blind host's tables, keyed by game.

Revision ID: 0010
Revises: 0009

- trustless_games, trustless_joins, trustless_packets, trustless_activity, trustless_notices
  and trustless_talk hold what a blind host (pbem.host.blind) keeps of each trustless game:
  its invitation and settings, the joins, the chain of packets it signed, the seats' last
  activity, its notices and the table talk.
- A blind host's file of an older pbem (one trustless game, tables blind_game, blind_join,
  blind_packet and, when made, blind_config, blind_activity, blind_notice, blind_talk) is
  upgraded in place: its game's rows are copied into these tables, keyed by its id, and the
  old tables dropped, in the transaction of the upgrade. The file is then a store holding
  that one game.
"""

import json

import sqlalchemy as sa
from alembic import op

from pbem.host.migrations.columns import game, notice_columns, strings, talk_columns, texts

revision = "0010"
down_revision = "0009"

TRUSTLESS = "trustless_games"


def upgrade() -> None:
    games = op.create_table(
        "trustless_games",
        sa.Column("id", sa.String(), primary_key=True),
        *strings("name", "host_name", "host_key", "created_at"),
        *texts("invitation"),
        sa.Column("settings", sa.Text(), nullable=False, server_default="{}"),
        *texts("clock", nullable=True),
    )
    op.create_index("ix_trustless_games_name", "trustless_games", ["name"], unique=True)
    joins = op.create_table(
        "trustless_joins", game(TRUSTLESS, primary_key=True), sa.Column("seat", sa.String(), primary_key=True),
        *strings("hash"), sa.Column("payload", sa.LargeBinary(), nullable=False),
    )
    packets = op.create_table(
        "trustless_packets", game(TRUSTLESS, primary_key=True), sa.Column("seq", sa.Integer(), primary_key=True),
        *strings("hash"), *texts("armored"), *strings("relayed"),
    )
    op.create_index("ix_trustless_packets_relayed", "trustless_packets", ["game_id", "relayed"])
    activity = op.create_table(
        "trustless_activity", game(TRUSTLESS, primary_key=True), sa.Column("seat", sa.String(), primary_key=True),
        *strings("at"),
    )
    notices = op.create_table("trustless_notices", *notice_columns(TRUSTLESS))
    op.create_index("ix_trustless_notices_game", "trustless_notices", ["game_id", "id"])
    talk = op.create_table("trustless_talk", *talk_columns(TRUSTLESS))
    op.create_index("ix_trustless_talk_game", "trustless_talk", ["game_id", "id"])
    c = op.get_bind()
    if "blind_game" in sa.inspect(c).get_table_names():
        _import_file(c, games, joins, packets, activity, notices, talk)


def _import_file(c: sa.Connection, games: sa.Table, joins: sa.Table, packets: sa.Table, activity: sa.Table,
                 notices: sa.Table, talk: sa.Table) -> None:
    """The one game of a blind host's file of an older pbem, into the new tables; the old dropped."""
    from pbem.host.settings import encode, settings_of
    from pbem.protocol.documents import Invitation, read_blocks

    have = set(sa.inspect(c).get_table_names())
    game = c.execute(sa.text("SELECT id, name, host_name, invitation FROM blind_game")).one()
    inv = read_blocks(game.invitation)[0].expect(Invitation)
    config: dict[str, str] = dict(c.execute(sa.text("SELECT key, value FROM blind_config")).all()) if "blind_config" in have else {}
    clock = config.pop("clock", None)
    settings = settings_of("{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in config.items()) + "}")
    c.execute(games.insert().values(id=game.id, name=game.name, host_name=game.host_name, host_key=inv.doc.host.key,
                                    created_at=inv.doc.created, invitation=game.invitation, settings=encode(settings),
                                    clock=None if clock in (None, "null") else clock))
    copied = [(joins, "blind_join", "seat, hash, payload"), (packets, "blind_packet", "seq, hash, armored, relayed"),
              (activity, "blind_activity", "seat, at"), (notices, "blind_notice", "id, seq, kind, seat, armored"),
              (talk, "blind_talk", "id, seat, n, seq, file_hash, armored, created_at")]
    for new, old, columns in copied:
        if old in have:
            rows = [dict(r._mapping, game_id=game.id) for r in c.execute(sa.text(f"SELECT {columns} FROM {old}"))]
            if rows:
                c.execute(new.insert(), rows)
    for old in ("blind_talk", "blind_notice", "blind_activity", "blind_config", "blind_packet", "blind_join",
                "blind_game"):
        if old in have:
            op.drop_table(old)
