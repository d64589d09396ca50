"""The host's store: any number of games behind one SQLAlchemy URL (SQLite or PostgreSQL).

Tables are SQLAlchemy Core tables (pbem.host.tables); the host's hot path is a handful of plain statements per
move. Every change is one transaction (`Store.write`): on SQLite it begins `IMMEDIATE`, so
two daemons on one file serialise; on PostgreSQL the game's row is locked `FOR UPDATE`
(`Store.lock_game`) so two daemons never apply one move twice. Secrets (round secrets, the
full state, full move texts) are stored sealed: the round secrets to the host's key, the rest
in the host's own box (a symmetric key per game, itself sealed to the host's key).

The schema is versioned by Alembic (pbem/host/migrations/). Opening a store of an older
schema upgrades it in one transaction; a newer one is refused, untouched.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from sqlalchemy import (
    Table,
    false,
    inspect,
    select,
    text,
    true,
    union_all,
)
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, OperationalError, ProgrammingError

from pbem.errors import StoreError, UsageError, msg
from pbem.host import server, sqlite
from pbem.host.interface import Closing, GameOverview, GameStatus
from pbem.host.tables import GAME_ROW, HEAD, KNOWN, games, packets, seats, trustless_games

_REVISION = text("SELECT version_num FROM alembic_version")

def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def shown(url: str) -> str:
    """The URL as it may be printed: never its password."""
    try:
        u = make_url(url)
    except ArgumentError:
        return url
    if u.get_backend_name() == "sqlite":
        return u.database or ":memory:"
    return u.render_as_string(hide_password=True)


def _first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    return (str(orig).strip().splitlines() or [type(orig).__name__])[0]


class Located(NamedTuple):
    """A game of a store as `Store.locate` found it. A host given one opens that game without
    looking it up again."""

    id: str
    trustless: bool  # a blind host's game (trustless_games), else a referee's (games)


def dialect_insert(c: Connection, table: Table) -> Any:
    """An INSERT of the store's dialect: both have ON CONFLICT (DO NOTHING, DO UPDATE)."""
    if c.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table)
    from sqlalchemy.dialects.sqlite import insert as lite_insert

    return lite_insert(table)


class Store(Closing):
    """One store URL: its engine, its transactions and its games' names."""

    def __init__(self, url: str, *, create: bool = False) -> None:
        self.url = url
        self._watch: sqlite3.Connection | None = None  # the connection `version` asks
        self.label = shown(url)
        try:
            u = make_url(url)
        except ArgumentError:
            raise UsageError(msg("bad store URL {url}", url=repr(url)),
                             hint=msg("a path to a SQLite file, or {example}", example="postgresql+psycopg://USER@HOST/DB")) from None
        self.sqlite = u.get_backend_name() == "sqlite"
        if self.sqlite:
            path = Path(u.database or "")
            if not u.database:
                raise UsageError(msg("a SQLite store needs a file path"), hint=msg("e.g. {example}", example="--store saves/club.db"))
            if not path.exists():
                if not create:
                    raise StoreError(msg("no store at {store}", store=repr(self.label)),
                                     hint=msg("create a game with 'pbem game new' or pass --store URL"))
                path.parent.mkdir(parents=True, exist_ok=True)
            elif path.is_dir():
                raise StoreError(msg("{store} is a folder, not a store", store=repr(self.label)))
        # On SQLite the lock is the game's row as every reader reads it (GAME_ROW): one statement,
        # compiled once per command (not once per read: compiling a whole row is not free).
        self._lock = GAME_ROW if self.sqlite else GAME_ROW.with_for_update()
        try:
            self.engine: Engine = self._engine(url)
        except (NoSuchModuleError, ImportError) as exc:
            raise StoreError(msg("cannot open store {store}: {why}", store=repr(self.label), why=exc),
                             hint=msg("use {sqlite} or {postgresql}", sqlite="sqlite:///FILE",
                                    postgresql="postgresql+psycopg://...")) from None
        try:
            self._check_schema(create)
            if self.sqlite:  # only once it is known to be ours: WAL is written into the file
                sqlite.use_wal(self.engine)
        except OperationalError as exc:
            self.engine.dispose()
            raise StoreError(msg("cannot reach store {store}: {why}", store=repr(self.label), why=_first_line(exc))) from None
        except DBAPIError as exc:
            self.engine.dispose()
            raise StoreError(msg("{store} is not a pbem store ({why})", store=repr(self.label), why=_first_line(exc))) from None
        except BaseException:
            self.engine.dispose()
            raise

    def _engine(self, url: str) -> Engine:
        if not self.sqlite:
            return server.engine(url)
        return sqlite.engine(url)

    # --- schema ---------------------------------------------------------------------------

    def _revision(self) -> str | None:
        """The store's Alembic revision; None when it has no alembic_version table (a new
        store, another program's, or a one-game file from before Alembic). One query: all that
        opening a store of this pbem's schema asks (the tables are listed only otherwise)."""
        with self.engine.connect() as c:
            c = c.execution_options(pbem_read=True)
            try:
                return c.execute(_REVISION).scalar()
            except (OperationalError, ProgrammingError):  # no such table (SQLite; PostgreSQL)
                return None

    def _check_schema(self, create: bool) -> None:
        rev = self._revision()
        if rev == HEAD:
            return
        with self.engine.connect() as c:
            names = set(inspect(c).get_table_names())
            c.rollback()
        if "alembic_version" in names:
            if rev is None:  # there, yet the one query failed (a lock, a broken table): read again, to say why
                with self.read() as c:
                    rev = c.execute(_REVISION).scalar()
            if rev not in KNOWN:
                raise StoreError(msg("store {store} has schema {rev}, newer than this pbem knows ({head})",
                                   store=repr(self.label), rev=rev, head=HEAD),
                                 hint=msg("upgrade pbem to use this store"))
        elif "meta" in names and "games" in names:
            with self.read() as c:
                version = c.execute(text("SELECT value FROM meta WHERE key = 'schema'")).scalar()
            if version != "1":
                raise StoreError(msg("{store} has an unsupported schema ({version})", store=repr(self.label), version=version))
        elif "blind_game" in names and "games" not in names:
            pass  # a blind host's file of an older pbem: upgraded into a store holding its one game (0010)
        elif names:
            raise StoreError(msg("{store} is not a pbem store", store=repr(self.label)), hint=msg("its tables are someone else's"))
        elif not create:
            raise StoreError(msg("{store} is not a pbem store (it is empty)", store=repr(self.label)),
                             hint=msg("create a game in it with 'pbem game new NAME --store URL'"))
        from pbem.host.migrations import upgrade

        with self.write() as c:
            upgrade(c)

    # --- transactions ---------------------------------------------------------------------

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One change, one transaction: commit on success, roll back on any error."""
        with self.engine.connect() as c:
            with c.begin():
                yield c

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """Queries that change nothing. On PostgreSQL they run outside a transaction: at its
        isolation level (read committed) each statement sees what was committed when it began,
        inside a transaction or not, and a BEGIN and a COMMIT would be two more round trips to the
        server for every read (a daemon reads for every game it serves, many times a second). On
        SQLite, one read transaction (BEGIN): one snapshot for all its statements."""
        with self.engine.connect() as c:
            c = c.execution_options(pbem_read=True, **({} if self.sqlite else {"isolation_level": "AUTOCOMMIT"}))
            with c.begin():
                yield c

    def lock_game(self, c: Connection, game_id: str) -> Any:
        """The game's row, locked for this transaction (SQLite: the whole file already is)."""
        row = c.execute(self._lock, {"b_game": game_id}).first()
        if row is None:
            raise StoreError(msg("game {game} is no longer in store {store}", game=repr(game_id), store=repr(self.label)))
        return row

    # --- games ----------------------------------------------------------------------------

    def find(self, name: str | None) -> str:
        """The id of the game called `name` (or with that id); without a name, the only game."""
        return self.locate(name)[0]

    def locate(self, name: str | None) -> Located:
        """find's id, and whether the game is a trustless one (trustless_games: a blind host's)."""
        both = union_all(select(games.c.id, games.c.name, false().label("trustless")),
                         select(trustless_games.c.id, trustless_games.c.name, true().label("trustless"))).subquery()
        with self.read() as c:
            if name is None:
                rows = c.execute(select(both).order_by(both.c.name).limit(3)).all()
                if len(rows) == 1:
                    return Located(str(rows[0].id), bool(rows[0].trustless))
                if not rows:
                    raise UsageError(msg("store {store} holds no game", store=repr(self.label)),
                             hint=msg("create one with 'pbem game new'"))
                raise UsageError(msg("store {store} holds several games; name one", store=repr(self.label)),
                                 hint=msg("games there: {names}", names=", ".join(r.name for r in rows) + "... (pbem games)"))
            rows = c.execute(select(both).where((both.c.name == name) | (both.c.id == name))).all()
            if len(rows) > 1:
                raise StoreError(msg("the name {name} belongs to {n} games in store {store}", name=repr(name), n=len(rows),
                                   store=repr(self.label)), hint=msg("name the game by its id (pbem games)"))
            if not rows:
                have = [r.name for r in c.execute(select(both.c.name).order_by(both.c.name).limit(6))]
                raise UsageError(msg("no game {name} in store {store}", name=repr(name), store=repr(self.label)),
                                 hint=msg("games there: {names}", names=", ".join(have[:5]) + ("..." if len(have) > 5 else ""))
                                 if have else msg("the store holds no game yet"))
            return Located(str(rows[0].id), bool(rows[0].trustless))

    def name_taken(self, c: Connection, name: str) -> bool:
        """Whether a game of either kind is called `name` (read in the caller's transaction)."""
        return any(c.execute(select(t.c.id).where(t.c.name == name)).first() is not None
                   for t in (games, trustless_games))

    def trustless_list(self) -> list[tuple[str, str, str]]:
        """(id, name, status) of every trustless game, by name."""
        with self.read() as c:
            rows = c.execute(select(trustless_games.c.id, trustless_games.c.name, trustless_games.c.status)
                             .order_by(trustless_games.c.name))
            return [(str(r.id), str(r.name), str(r.status)) for r in rows]

    def game_ids(self) -> list[str]:
        with self.read() as c:
            return [str(r.id) for r in c.execute(select(games.c.id).order_by(games.c.name))]

    def game_list(self) -> list[tuple[str, str, str]]:
        """(id, name, status) of every game, by name."""
        with self.read() as c:
            rows = c.execute(select(games.c.id, games.c.name, games.c.status).order_by(games.c.name))
            return [(str(r.id), str(r.name), str(r.status)) for r in rows]

    def overview(self) -> list[GameOverview]:
        """Every game's row in `pbem games` (trustless ones too), by name: its status (round, whose
        turn, since when, by when) as `status` says it, and how it is served."""
        from pbem.host import blind_status
        from pbem.host.interface import overview_of
        from pbem.host.settings import settings_of

        with self.read() as c:
            rows = c.execute(_GAME_ROWS).all()
            by_game: dict[str, list[Any]] = {}
            for r in c.execute(select(seats).order_by(seats.c.game_id, seats.c.idx)):
                by_game.setdefault(r.game_id, []).append(r)
            blind = blind_status.overviews(c)
        classic = [overview_of(_status(g, by_game.get(g.id, [])), settings_of(g.settings), g.host_key) for g in rows]
        return sorted(classic + blind, key=lambda g: g["name"])

    def status(self, game_id: str) -> GameStatus:
        """A game's round, packet number, whose turn, and its seats (`pbem status`): read here,
        from the store alone, so that saying it loads none of the referee (the engine, the
        documents) nor cryptography (a seat's fingerprint is read off its key's line);
        pbem.host.referee.Host.status is this."""
        with self.read() as c:
            g = c.execute(_GAME_ROWS.where(games.c.id == game_id)).one()
            rows = c.execute(select(seats).where(seats.c.game_id == game_id).order_by(seats.c.idx)).all()
        return _status(g, rows)

    def version(self) -> int | None:
        """A number that changes whenever a change to the store is committed (by any process, and
        by this one): a watch loop that finds it as it was need not read again what it read
        (SQLite's data_version, on a connection of its own that never changes anything). None
        where no such number is kept (PostgreSQL): read every time."""
        if not self.sqlite:
            return None
        if self._watch is None:
            self._watch = sqlite.watcher(make_url(self.url).database or "")
        return int(self._watch.execute("PRAGMA data_version").fetchone()[0])

    def close(self) -> None:
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        self.engine.dispose()


# A game's row with the time of its latest packet (`since`)
_LATEST = packets.alias("latest")
_GAME_ROWS = (select(games, _LATEST.c.created_at.label("since"))
              .select_from(games.outerjoin(_LATEST, (_LATEST.c.game_id == games.c.id) & (_LATEST.c.seq == games.c.seq)))
              .order_by(games.c.name))


def _status(g: Any, rows: Sequence[Any]) -> GameStatus:
    """A game's status from its row (with `since`, as _GAME_ROWS reads it) and its seats' rows."""
    import json

    from pbem.host.settings import memo_of, settings_of, standing_of, status_extras
    from pbem.protocol.keyline import fingerprint

    public = json.loads(g.public or "{}")
    return {
        "game": g.id,
        "name": g.name,
        "ruleset": g.ruleset,
        "options": list(json.loads(g.options)),
        "status": g.status,
        "round": g.round_no,
        "seq": g.seq,
        "to_move": public.get("to_move") if g.status == "playing" else None,
        "gold": public.get("gold", {}),
        "seats": [
            {"name": r.name, "joined": r.joined_at is not None, "last_activity": r.last_activity,
             "email": r.email, "fingerprint": fingerprint(r.key)}
            for r in rows
        ],
        **status_extras(settings_of(g.settings).timing, memo_of(g.memo), {r.name: standing_of(r) for r in rows}, g.seq),
        "trustless": False,
        "waiting": None,
        "since": g.since or g.created_at,
    }
