"""Where a host's store and files are, without importing the heavy modules.

A store is a SQLAlchemy URL; a plain path means a SQLite file. Which store a command uses:
`--store URL`, else `--db FILE` (a store, often a one-game file of older versions), else
$PBEM_STORE, else a one-game file `saves/GAME.db` when one exists (made by older versions),
else the default store `saves/pbem.db`: a newcomer needs nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3

ENV_STORE = "PBEM_STORE"
SAVES = Path("saves")
DEFAULT_STORE = SAVES / "pbem.db"


def as_url(store: str | Path) -> str:
    text = str(store)
    return text if "://" in text else f"sqlite:///{text}"


def store_url(store: str | None = None, db: Path | None = None, game: str | None = None) -> str:
    if store:
        return as_url(store)
    if db is not None:
        return as_url(db)
    if os.environ.get(ENV_STORE):
        return as_url(os.environ[ENV_STORE])
    if game and (SAVES / f"{game}.db").is_file():
        return as_url(SAVES / f"{game}.db")
    return as_url(DEFAULT_STORE)


def sqlite_file(url: str) -> Path | None:
    """The file of a sqlite:/// URL, else None."""
    if url.startswith("sqlite:///"):
        return Path(url[len("sqlite:///"):].split("?", 1)[0])
    return None


def store_folder(url: str) -> Path:
    """The folder beside a store: its SQLite file's, or saves/ for a database server. Games'
    out/ and mail/ folders live there, and so do the files of trustless games made apart."""
    path = sqlite_file(url)
    return path.parent if path is not None else SAVES


def out_dir(name: str, url: str) -> Path:
    """Where a game's packet files go by default: GAME/out/ beside its store."""
    return store_folder(url) / name / "out"


def mail_dir(name: str, url: str) -> Path:
    return out_dir(name, url).parent / "mail"


def is_blind(path: Path) -> bool:
    """Whether the file at `path` holds trustless games and nothing else: a blind host's file of
    an older pbem, or a store of trustless games only (read only: any other file, a club store
    or not a database at all, is left exactly as it was)."""
    return probe(path)[0]


def probe(path: Path, game: str | None = None) -> tuple[bool, str | None]:
    """What the file at `path` is, read only (any other file, a club store or not a database at
    all, is left exactly as it was): whether it holds trustless games and nothing else (is_blind),
    and, if it says, the name of its host's key: that of the game called `game` (or with that id,
    as Store.locate reads it), or with no name, of its only game. The name is what a host command
    begins unlocking before it imports the store's layer (pbem.cli.play.open_unlocked_host); the
    store, once open, has the last word on it."""
    import sqlite3

    if not path.is_file():
        return False, None
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "blind_game" in tables:  # a blind host's file of an older pbem: one game
                return True, _only(con, "SELECT host_name FROM blind_game", ())
            blind = ("trustless_games" in tables and _only(con, "SELECT count(*) FROM games", ()) == 0
                     and (_only(con, "SELECT count(*) FROM trustless_games", ()) or 0) > 0)
            if game is None:
                return blind, _only(con, "SELECT host_name FROM trustless_games", ()) if blind else None
            named = [_only(con, f"SELECT host_name FROM {t} WHERE name = ? OR id = ?", (game, game))
                     for t in ("games", "trustless_games") if t in tables]
            return blind, next((n for n in named if n is not None), None)
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return False, None


def _only(con: sqlite3.Connection, query: str, args: tuple[str, ...]) -> Any:
    """The one row's value that `query` reads, else None (none, several, or no such table: a store
    of another schema, whose opening says what it is)."""
    import sqlite3

    try:
        rows = con.execute(query, args).fetchmany(2)
    except sqlite3.DatabaseError:
        return None
    return rows[0][0] if len(rows) == 1 and isinstance(rows[0][0], str | int) else None


def beside(folder: Path) -> list[Path]:
    """The files of trustless games in `folder` (each checked read only: is_blind), by name: the
    blind hosts' files of an older pbem, and stores of trustless games only made with --db."""
    return sorted(p for p in folder.glob("*.db") if is_blind(p)) if folder.is_dir() else []
