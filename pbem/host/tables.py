"""The host's store's tables (SQLAlchemy Core): every table of the schema. pbem.host.game_tables
holds those a classic game's changes use (a referee's games and what both kinds share); here
are the rest: a blind host's trustless games' chains, the daemons' leases and the store's meta.
pbem.host.store opens them; the schema's history is pbem/host/migrations/.
"""

from __future__ import annotations

from sqlalchemy import Column, Float, Index, Integer, LargeBinary, String, Table, Text

from pbem.host.game_tables import (
    GAME_ROW,
    HEAD,
    KNOWN,
    SCHEMA_VERSION,
    _game_id,
    _notices,
    _talk,
    deliveries,
    games,
    joins,
    metadata,
    moves,
    notices,
    packets,
    rounds,
    seats,
    talk,
    trustless_games,
    webhooks,
)

__all__ = ["GAME_ROW", "HEAD", "KNOWN", "SCHEMA_VERSION", "daemons", "deliveries", "games", "joins", "leases", "meta",
           "metadata", "moves", "notices", "packets", "rounds", "seats", "talk", "trustless_activity", "trustless_games",
           "trustless_joins", "trustless_notices", "trustless_packets", "trustless_rounds", "trustless_talk", "webhooks"]

# Which daemon serves a game until when, and each daemon's heartbeat (pbem/host/leases.py).
# No foreign key: a trustless game beside the store is leased here too.
leases = Table(
    "leases", metadata,
    Column("game_id", String, primary_key=True),
    Column("holder", String, nullable=False),
    Column("expires", Float, nullable=False),  # seconds since the epoch, by the store's clock
)

daemons = Table(
    "daemons", metadata,
    Column("id", String, primary_key=True),
    Column("seen", Float, nullable=False),
)

trustless_joins = Table(
    "trustless_joins", metadata,
    _game_id("trustless_games", primary_key=True),
    Column("seat", String, primary_key=True),
    Column("hash", String, nullable=False),
    Column("payload", LargeBinary, nullable=False),  # the signed join block, verbatim
)

trustless_packets = Table(
    "trustless_packets", metadata,
    _game_id("trustless_games", primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("hash", String, nullable=False),
    Column("armored", Text, nullable=False),
    Column("relayed", String, nullable=False),  # the hash of the block it relays ("joins 1": packet 1)
    Column("created_at", String),  # NULL: made before the store kept the time
    Index("ix_trustless_packets_relayed", "game_id", "relayed"),
)

# Each round of a trustless game that ended (thefts included): its public result, read off the
# round opened with every seat's revealed key, as `rounds.result` is a referee's.
trustless_rounds = Table(
    "trustless_rounds", metadata,
    _game_id("trustless_games", primary_key=True),
    Column("round_no", Integer, primary_key=True),
    Column("last_seq", Integer, nullable=False),  # the packet that ended it
    Column("ended_at", String, nullable=False),
    Column("result", Text, nullable=False),  # JSON: roles, winners, finder, payout, gold
)

# When each seat's last block was taken (`pbem status`'s last activity).
trustless_activity = Table(
    "trustless_activity", metadata,
    _game_id("trustless_games", primary_key=True),
    Column("seat", String, primary_key=True),
    Column("at", String, nullable=False),
)

# The blind host's signed notices (reminders, late notices), as `notices` is a referee's.
trustless_notices = _notices("trustless_notices", "trustless_games")

# Table talk at a trustless table: the columns of `talk` (pbem.host.talk takes both).
trustless_talk = _talk("trustless_talk", "trustless_games")

meta = Table(
    "meta", metadata,
    Column("key", String, primary_key=True),
    Column("value", String, nullable=False),
)
