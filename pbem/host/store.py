"""The host's game database: SQLAlchemy 2 typed models over one SQLite file.

Every command runs in one transaction (`transaction`), begun IMMEDIATE so that two host
processes on the same file serialise instead of both reading the same head and applying a
move twice. Secrets (round secrets, the full state, full move texts) are stored sealed to
the host's key; each seat's part is also stored sealed to that seat's key.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from sqlalchemy import ForeignKey, LargeBinary, String, Text, UniqueConstraint, create_engine, event, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

from pbem.errors import UsageError
from pbem.host.paths import db_path  # noqa: F401  (re-exported)

SCHEMA_VERSION = 1


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Base(DeclarativeBase):
    pass


class GameRow(Base):
    __tablename__ = "games"
    id: Mapped[str] = mapped_column(String, primary_key=True)
    name: Mapped[str]
    ruleset: Mapped[str]
    options: Mapped[str] = mapped_column(Text, default="[]")  # JSON list
    host_name: Mapped[str]
    host_key: Mapped[str]  # pbem1 line
    created_at: Mapped[str] = mapped_column(default=now)
    invitation: Mapped[str] = mapped_column(Text)  # armoured, as sent
    invitation_hash: Mapped[str]
    commitments: Mapped[str] = mapped_column(Text)  # JSON list of hex
    secrets_sealed: Mapped[str] = mapped_column(Text)  # sealed to the host
    state_sealed: Mapped[str | None] = mapped_column(Text, default=None)  # full round state
    public: Mapped[str] = mapped_column(Text, default="{}")  # JSON: what everyone may see now
    status: Mapped[str] = mapped_column(default="joining")  # joining playing over
    round_no: Mapped[int] = mapped_column(default=0)
    move_no: Mapped[int] = mapped_column(default=0)  # moves applied in this round
    seq: Mapped[int] = mapped_column(default=0)  # latest packet
    head: Mapped[str] = mapped_column(default="")  # hash of the latest packet (or invitation)
    config: Mapped[str] = mapped_column(Text, default="{}")  # JSON: emails, smtp settings
    seats: Mapped[list[SeatRow]] = relationship(order_by="SeatRow.idx", back_populates="game")

    def option_list(self) -> list[str]:
        return list(json.loads(self.options))

    def config_dict(self) -> dict[str, Any]:
        return dict(json.loads(self.config))


class SeatRow(Base):
    __tablename__ = "seats"
    __table_args__ = (UniqueConstraint("game_id", "name"), UniqueConstraint("game_id", "idx"))
    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"))
    idx: Mapped[int]
    name: Mapped[str]
    key: Mapped[str]  # pbem1 line
    email: Mapped[str | None] = mapped_column(default=None)
    contribution: Mapped[str | None] = mapped_column(default=None)  # base64, from the join file
    joined_at: Mapped[str | None] = mapped_column(default=None)
    last_activity: Mapped[str | None] = mapped_column(default=None)
    part_sealed: Mapped[str | None] = mapped_column(Text, default=None)  # sealed to the seat
    game: Mapped[GameRow] = relationship(back_populates="seats")


class PacketRow(Base):
    __tablename__ = "packets"
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(primary_key=True)
    hash: Mapped[str] = mapped_column(unique=True)
    round_no: Mapped[int]
    armored: Mapped[str] = mapped_column(Text)
    created_at: Mapped[str] = mapped_column(default=now)


class MoveRow(Base):
    __tablename__ = "moves"
    __table_args__ = (UniqueConstraint("game_id", "round_no", "n"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"))
    round_no: Mapped[int]
    n: Mapped[int]  # 1-based within the round
    seat: Mapped[str]
    public_text: Mapped[str]
    text_sealed: Mapped[str] = mapped_column(Text)  # full text, sealed to the host
    envelope: Mapped[bytes] = mapped_column(LargeBinary)  # the signed move block, verbatim
    file_hash: Mapped[str] = mapped_column(unique=True)
    answered_seq: Mapped[int]
    applied_at: Mapped[str] = mapped_column(default=now)


class JoinRow(Base):
    __tablename__ = "joins"
    file_hash: Mapped[str] = mapped_column(primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"))
    seat: Mapped[str]
    envelope: Mapped[bytes] = mapped_column(LargeBinary)


class RoundRow(Base):
    __tablename__ = "rounds"
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    round_no: Mapped[int] = mapped_column(primary_key=True)
    first_seq: Mapped[int]
    last_seq: Mapped[int | None] = mapped_column(default=None)
    start_state_sealed: Mapped[str] = mapped_column(Text)  # the dealt state, sealed to the host
    carried: Mapped[str] = mapped_column(Text, default="{}")  # JSON: gold, nugget pile, first seat handed over
    secret: Mapped[str | None] = mapped_column(default=None)  # hex, revealed when the round ends
    result: Mapped[str | None] = mapped_column(Text, default=None)  # JSON, public once over
    archive: Mapped[str | None] = mapped_column(Text, default=None)  # armoured, signed by the host


class NoticeRow(Base):
    """A signed notice to the table (reminder, late, absent, away, pause...), made once:
    the mark that it was made is in the same transaction (pbem/host/timekeeper.py)."""

    __tablename__ = "notices"
    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"))
    seq: Mapped[int]  # the packet it is about
    kind: Mapped[str]
    seat: Mapped[str | None] = mapped_column(default=None)
    armored: Mapped[str] = mapped_column(Text)
    created_at: Mapped[str] = mapped_column(default=now)


class MetaRow(Base):
    __tablename__ = "meta"
    key: Mapped[str] = mapped_column(primary_key=True)
    value: Mapped[str]


def open_engine(path: Path, *, create: bool = False) -> Engine:
    if not create and not path.exists():
        raise UsageError(f"no game database at {str(path)!r}", hint="create one with 'pbem game new' or pass --db")
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": 60})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # We issue BEGIN ourselves (IMMEDIATE), so the driver must not.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA foreign_keys = ON")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = FULL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    if create:
        Base.metadata.create_all(engine)
        with transaction(engine) as s:
            if s.get(MetaRow, "schema") is None:
                s.add(MetaRow(key="schema", value=str(SCHEMA_VERSION)))
    else:
        with Session(engine) as s:
            try:
                row = s.get(MetaRow, "schema")
            except Exception:
                raise UsageError(f"{str(path)!r} is not a pbem game database") from None
            if row is None or int(row.value) != SCHEMA_VERSION:
                raise UsageError(f"{str(path)!r} has an unsupported schema")
        Base.metadata.create_all(engine)  # tables added since the file was made (notices)
    return engine


@contextmanager
def transaction(engine: Engine) -> Iterator[Session]:
    """One command, one transaction: commit on success, roll back on any error."""
    with Session(engine, expire_on_commit=False) as session:
        with session.begin():
            yield session


def the_game(session: Session) -> GameRow:
    game = session.scalars(select(GameRow)).first()
    if game is None:
        raise UsageError("the database holds no game")
    return game
