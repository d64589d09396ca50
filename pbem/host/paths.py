"""Where a host's store and files are, without importing the heavy modules.

A store is a SQLAlchemy URL; a plain path means a SQLite file. Which store a command uses:
`--store URL`, else `--db FILE` (a store, often a one-game file of older versions), else
$PBEM_STORE, else a one-game file `saves/GAME.db` when one exists (made by older versions),
else the default store `saves/pbem.db`: a newcomer needs nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

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
    out/ and mail/ folders live there, and so do trustless games (each a file of its own)."""
    path = sqlite_file(url)
    return path.parent if path is not None else SAVES


def out_dir(name: str, url: str) -> Path:
    """Where a game's packet files go by default: GAME/out/ beside its store."""
    return store_folder(url) / name / "out"


def mail_dir(name: str, url: str) -> Path:
    return out_dir(name, url).parent / "mail"
