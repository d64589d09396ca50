"""What is on disk, read for a test: a store's rows or a SQLite file's SQL (equal dumps, nothing
changed), and a rules case's position."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def store_dump(url: str) -> str:
    """Every row of every table of a store (SQLite or PostgreSQL), in a stable order: two
    dumps are equal when nothing in the store changed."""
    from pbem.host.store import Store
    from pbem.host.tables import metadata

    with Store(url) as st, st.read() as c:
        return "\n".join(f"{t.name}: {sorted(map(repr, c.execute(t.select()).all()))}" for t in metadata.sorted_tables)


POSITION_CASES = Path(__file__).parent / "positions"


def case_position_file(tmp_path: Path, ruleset: str, case: str) -> tuple[Path, dict]:
    """Write the position of rules case tests/positions/<ruleset>/<case>.json to a file of
    its own (what `pbem position` reads); return the file and the whole case."""
    import json

    doc = json.loads((POSITION_CASES / ruleset / f"{case}.json").read_text(encoding="utf-8"))
    path = tmp_path / f"{case}.position.json"
    path.write_text(json.dumps(doc["position"]), encoding="utf-8")
    return path, doc


def sqlite_dump(db: Path) -> str:
    """The whole SQLite file as SQL text: equal dumps, nothing in the file changed."""
    con = sqlite3.connect(db)
    try:
        return "\n".join(con.iterdump())
    finally:
        con.close()
