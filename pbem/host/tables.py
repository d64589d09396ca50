"""The host's store's tables (SQLAlchemy Core): a referee's games, a blind host's trustless
games, and what both share (leases, daemons, webhooks). pbem.host.store opens them; the
schema's history is pbem/host/migrations/.

The tables a referee's change and a store's lookup of a game by name use are made when this
module loads; the rest (a blind host's chain of packets, the daemons' leases, the store's
marks, the seats' join blocks, the webhooks' outbox) and `metadata`, which holds every table,
when one of them is first asked for: `pbem apply` of a move never uses them, and a table's
columns take a moment to make. A module that uses one of them reads it as `tables.NAME` where it
runs (a `from pbem.host.tables import NAME` at its top would make them all as it loads).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    bindparam,
    false,
    select,
)

_metadata = MetaData()  # every table, once `metadata` is asked for (_later)

# The newest migration (pbem/host/migrations/versions/): these tables are the schema it leaves,
# and a new store is made so at once (pbem.host.migrations.upgrade). A store stamped with any
# other revision that is not in KNOWN is newer than this pbem.
HEAD = "0011"
KNOWN = ("0001", "0002", "0003", "0004", "0005", "0006", "0007", "0008", "0009", "0010", "0011")
SCHEMA_VERSION = 2  # meta.schema, which the one-game versions (schema 1) check and refuse


def _game_id(games_: str, *, primary_key: bool = False) -> Column:
    """A row's game (`games_`.id): part of the row's primary key, or a plain reference."""
    return Column("game_id", String, ForeignKey(f"{games_}.id"), primary_key=primary_key, nullable=False)


games = Table(
    "games", _metadata,
    Column("id", String, primary_key=True),
    Column("name", String, nullable=False),
    Column("ruleset", String, nullable=False),
    Column("options", Text, nullable=False),  # JSON list
    Column("host_name", String, nullable=False),
    Column("host_key", String, nullable=False),  # pbem1 line
    Column("created_at", String, nullable=False),
    Column("invitation", Text, nullable=False),  # armoured, as sent
    Column("invitation_hash", String, nullable=False),
    Column("commitments", Text, nullable=False),  # JSON list of hex
    Column("secrets_sealed", Text, nullable=False),  # sealed to the host
    Column("state_sealed", Text),  # the live round state, in the host's own box
    Column("box_key", Text),  # the key of the host's own box (crypto.OwnBox), sealed to the host
    Column("public", Text, nullable=False),  # JSON: what everyone may see now
    Column("status", String, nullable=False),  # joining playing over
    Column("round_no", Integer, nullable=False),
    Column("move_no", Integer, nullable=False),  # moves applied in this round
    Column("seq", Integer, nullable=False),  # latest packet
    Column("head", String, nullable=False),  # hash of the latest packet (or the invitation)
    Column("settings", Text, nullable=False, server_default="{}"),  # JSON: how the game is run (pbem.host.settings.Settings)
    Column("memo", Text, nullable=False, server_default="{}"),  # JSON: what the host remembers between changes (settings.Memo)
    Index("ix_games_name", "name", unique=True),
)

seats = Table(
    "seats", _metadata,
    Column("id", Integer, primary_key=True),
    _game_id("games"),
    Column("idx", Integer, nullable=False),
    Column("name", String, nullable=False),
    Column("key", String, nullable=False),  # pbem1 line
    Column("email", String),
    Column("contribution", String),  # base64, from the join file
    Column("joined_at", String),
    Column("last_activity", String),
    # the seat's standing with the clock (pbem.host.settings.Standing)
    Column("missed", Integer, nullable=False, server_default="0"),  # deadlines missed in a row
    Column("absent", Integer),  # absent since this packet; NULL: present
    Column("resigned", Boolean, nullable=False, server_default=false()),
    Column("away_until", String),
    Column("away_sent", Text),  # JSON list: when it sent its away notices of the last day
    UniqueConstraint("game_id", "name"),
    UniqueConstraint("game_id", "idx"),
)

packets = Table(
    "packets", _metadata,
    _game_id("games", primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("hash", String, nullable=False, unique=True),
    Column("prev", String, nullable=False),  # the hash this packet chains to
    Column("round_no", Integer, nullable=False),
    Column("armored", Text, nullable=False),  # with the round's archive appended at its end
    Column("created_at", String, nullable=False),
)

moves = Table(
    "moves", _metadata,
    Column("id", Integer, primary_key=True),
    _game_id("games"),
    Column("round_no", Integer, nullable=False),
    Column("n", Integer, nullable=False),  # 1-based within the round
    Column("seat", String, nullable=False),
    Column("public_text", String, nullable=False),
    Column("text_sealed", Text, nullable=False),  # full text and nonce, in the host's own box
    Column("envelope", LargeBinary, nullable=False),  # the signed move block, verbatim
    Column("file_hash", String, nullable=False, unique=True),
    Column("answered_seq", Integer, nullable=False),
    Column("applied_at", String, nullable=False),
    Column("why", String),  # why the host made it for a silent seat (by: host); NULL: the seat's own
    UniqueConstraint("game_id", "round_no", "n"),
)

rounds = Table(
    "rounds", _metadata,
    _game_id("games", primary_key=True),
    Column("round_no", Integer, primary_key=True),
    Column("first_seq", Integer, nullable=False),
    Column("last_seq", Integer),
    Column("start_state_sealed", Text, nullable=False),  # the dealt state, in the host's own box
    Column("carried", Text, nullable=False),  # JSON: gold, nugget pile, first seat handed over
    Column("secret", String),  # hex, revealed when the round ends
    Column("result", Text),  # JSON, public once over
    Column("archive", Text),  # armoured, signed by the host
)

# How far each publisher (an out-dir, a shared folder, the mail) has delivered a game's
# packets: publishing sends only what is newer, so its cost does not grow with the game.
deliveries = Table(
    "deliveries", _metadata,
    _game_id("games", primary_key=True),
    Column("channel", String, primary_key=True),
    Column("seq", Integer, nullable=False),  # highest delivered; 0 is the invitation
)

# The host's signed notices to a table (reminder, late, absent, away, pause...), each made
# once: the mark that it was made is in the same transaction (pbem/host/timekeeper.py).
def _notices(name: str, games_: str, *more: Column) -> Table:
    """The table of signed notices to `games_`' games: a referee's (with `more`) and a blind host's."""
    return Table(
        name, _metadata,
        Column("id", Integer, primary_key=True),
        _game_id(games_),
        Column("seq", Integer, nullable=False),  # the packet it is about
        Column("kind", String, nullable=False),
        Column("seat", String),
        Column("armored", Text, nullable=False),
        *more,
        Index(f"ix_{name}_game", "game_id", "id"),
    )


notices = _notices("notices", "games", Column("created_at", String, nullable=False))

# Table talk: each seat's signed line as it came (a whisper sealed inside it), relayed by the
# publishers after their own mark ("CHANNEL talk"); (game, seat, n) once: a line is never replayed.
def _talk(name: str, games_: str) -> Table:
    """The table of talk lines of `games_`' games: a referee's and a blind host's alike."""
    return Table(
        name, _metadata,
        Column("id", Integer, primary_key=True),
        _game_id(games_),
        Column("seat", String, nullable=False),
        Column("n", Integer, nullable=False),  # the seat's count of lines
        Column("seq", Integer, nullable=False),  # the packet it answers
        Column("file_hash", String, nullable=False, unique=True),
        Column("armored", Text, nullable=False),
        Column("created_at", String, nullable=False),
        UniqueConstraint("game_id", "seat", "n"),
        Index(f"ix_{name}_game", "game_id", "id"),
    )


talk = _talk("talk", "games")

# Trustless games (pbem.host.blind): the blind host keeps only public facts, the invitation,
# the joins and the chain of packets it signed, so none of the tables above (a dealt state, round
# secrets, moves) is theirs. A name is unique across `games` and `trustless_games` (Store.locate).
trustless_games = Table(
    "trustless_games", _metadata,
    Column("id", String, primary_key=True),
    Column("name", String, nullable=False),
    Column("host_name", String, nullable=False),
    Column("host_key", String, nullable=False),  # pbem1 line
    Column("created_at", String, nullable=False),
    Column("invitation", Text, nullable=False),  # armoured, as sent
    Column("settings", Text, nullable=False, server_default="{}"),  # JSON: pbem.host.settings.Settings
    Column("clock", Text),  # JSON: the step waiting now (pbem.host.settings.PacketClock); NULL: none
    # where the chain stands, written with each packet (pbem.host.blind_facts), so that a status,
    # `pbem games` and the daemons read it here instead of following the chain again
    Column("ruleset", String, nullable=False, server_default="classic"),
    Column("options", Text, nullable=False, server_default="[]"),  # JSON list
    Column("status", String, nullable=False, server_default="joining"),  # joining playing over
    Column("round_no", Integer, nullable=False, server_default="1"),
    Column("seq", Integer, nullable=False, server_default="0"),  # the latest packet
    Column("public", Text, nullable=False, server_default="{}"),  # JSON: pbem.host.blind_status.Public
    Index("ix_trustless_games_name", "name", unique=True),
)

# A game's whole row, by its id (bound as b_game): what opening a Host, a status and (on SQLite)
# a change's lock read.
GAME_ROW = select(games).where(games.c.id == bindparam("b_game"))
# Its seats' whole rows in seat order, the same way: what opening a Host (the seats' keys) and a
# change (their standings) read, one statement for both.
SEAT_ROWS = select(seats).where(seats.c.game_id == bindparam("b_game")).order_by(seats.c.idx)
# A packet's hash by its number (b_game, b_seq): what a move answering the packet before a renewal
# and a line of table talk are checked against, one statement for both.
PACKET_HASH = select(packets.c.hash).where(packets.c.game_id == bindparam("b_game"), packets.c.seq == bindparam("b_seq"))

# The names made on demand (the module's docstring says why), and their types for mypy.
if TYPE_CHECKING:
    metadata: MetaData
    joins: Table
    webhooks: Table
    leases: Table
    daemons: Table
    trustless_joins: Table
    trustless_packets: Table
    trustless_rounds: Table
    trustless_activity: Table
    trustless_notices: Table
    trustless_talk: Table
    meta: Table


_making = threading.Lock()  # two threads asking at once make them once


def __getattr__(name: str) -> object:
    """A name made on demand, when first asked for: the tables are made, all at once, and
    `metadata` (which holds every table) with them."""
    if name not in _LATER:
        raise AttributeError(name)
    with _making:
        if "metadata" not in globals():
            globals().update(_later())
    return globals()[name]


def _later() -> dict[str, object]:
    """The tables made on demand, by name, and `metadata`."""
    return {"metadata": _metadata, **_referee_later(), **_store_own(), **_trustless()}


def _referee_later() -> dict[str, Table]:
    """A referee's tables that its moves never read."""
    # The seats' join blocks, verbatim (a round's archive lists them; a join is taken once).
    joins = Table(
        "joins", _metadata,
        Column("file_hash", String, primary_key=True),
        _game_id("games"),
        Column("seat", String, nullable=False),
        Column("envelope", LargeBinary, nullable=False),
    )

    # The webhook outbox (pbem.host.webhooks): a notice recorded with the change it tells of, POSTed
    # after commit, then marked sent; `attempts` and `next_at` space the retries, `error` the last failure.
    webhooks = Table(
        "webhooks", _metadata,
        Column("id", Integer, primary_key=True),
        _game_id("games"),
        Column("url", String, nullable=False),
        Column("format", String, nullable=False),  # json discord slack
        Column("body", Text, nullable=False),  # the notice's JSON facts (never a secret)
        Column("created_at", String, nullable=False),
        Column("next_at", String, nullable=False),
        Column("attempts", Integer, nullable=False, server_default="0"),
        Column("sent_at", String),
        Column("error", String),
        Index("ix_webhooks_due", "sent_at", "next_at"),
    )
    return {"joins": joins, "webhooks": webhooks}


def _store_own() -> dict[str, Table]:
    """The store's own tables: leases, daemons and its marks."""
    # Which daemon serves a game until when, and each daemon's heartbeat (pbem/host/leases.py).
    # No foreign key: a trustless game beside the store is leased here too.
    leases = Table(
        "leases", _metadata,
        Column("game_id", String, primary_key=True),
        Column("holder", String, nullable=False),
        Column("expires", Float, nullable=False),  # seconds since the epoch, by the store's clock
    )

    daemons = Table(
        "daemons", _metadata,
        Column("id", String, primary_key=True),
        Column("seen", Float, nullable=False),
    )

    # The store's own marks (meta.schema: pbem.host.migrations).
    meta = Table(
        "meta", _metadata,
        Column("key", String, primary_key=True),
        Column("value", String, nullable=False),
    )
    return {"leases": leases, "daemons": daemons, "meta": meta}


def _trustless() -> dict[str, Table]:
    """The blind host's tables beside `trustless_games` (pbem.host.blind)."""
    # The blind host's signed notices (reminders, late notices), as `notices` is a referee's.
    trustless_notices = _notices("trustless_notices", "trustless_games")

    # Table talk at a trustless table: the columns of `talk` (pbem.host.talk takes both).
    trustless_talk = _talk("trustless_talk", "trustless_games")

    trustless_joins = Table(
        "trustless_joins", _metadata,
        _game_id("trustless_games", primary_key=True),
        Column("seat", String, primary_key=True),
        Column("hash", String, nullable=False),
        Column("payload", LargeBinary, nullable=False),  # the signed join block, verbatim
    )

    trustless_packets = Table(
        "trustless_packets", _metadata,
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
        "trustless_rounds", _metadata,
        _game_id("trustless_games", primary_key=True),
        Column("round_no", Integer, primary_key=True),
        Column("last_seq", Integer, nullable=False),  # the packet that ended it
        Column("ended_at", String, nullable=False),
        Column("result", Text, nullable=False),  # JSON: roles, winners, finder, payout, gold
    )

    # When each seat's last block was taken (`pbem status`'s last activity).
    trustless_activity = Table(
        "trustless_activity", _metadata,
        _game_id("trustless_games", primary_key=True),
        Column("seat", String, primary_key=True),
        Column("at", String, nullable=False),
    )

    return {"trustless_joins": trustless_joins, "trustless_packets": trustless_packets,
            "trustless_rounds": trustless_rounds, "trustless_activity": trustless_activity,
            "trustless_notices": trustless_notices, "trustless_talk": trustless_talk}


_LATER = ("metadata", "joins", "webhooks", "leases", "daemons", "trustless_joins", "trustless_packets",
          "trustless_rounds", "trustless_activity", "trustless_notices", "trustless_talk", "meta")
