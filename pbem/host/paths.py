"""Where things live on disk, without importing the heavy modules."""

from __future__ import annotations

from pathlib import Path

from pbem.errors import UsageError
from pbem.ui.words import t


def db_path(game: str | None, db: Path | None, saves: Path | None = None) -> Path:
    """GAME (a name under saves/) or an explicit --db PATH."""
    if db is not None:
        return db
    if not game:
        raise UsageError(t("name a game or pass --db PATH"))
    if "/" in game or game.endswith(".db"):
        return Path(game)
    return (saves or Path("saves")) / f"{game}.db"
