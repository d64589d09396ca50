"""The games a host keeps, one row each, for `pbem games`: those of a store and the trustless
games beside it (each a file of its own), or the one trustless game a file given is.

A row holds the facts `pbem status` says of the same game (pbem.host.interface.overview_of
builds each from its status), so the two commands never tell a different round, packet or step.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from pbem.host.paths import beside, is_blind, sqlite_file, store_folder

if TYPE_CHECKING:
    from pbem.host.interface import GameOverview


def hosted_games(url: str, *, explicit: bool, host_keys: Collection[str] | None = None) -> list[GameOverview]:
    """Every game at `url` (a store, or a trustless game's file) and the trustless games beside
    it, by name. A store nobody named (`explicit` False) is read only if its file is there.
    With `host_keys`, only the games whose host key is one of them (the games *you* host)."""
    from pbem.host.blind import BlindHost

    rows: list[GameOverview] = []
    path = sqlite_file(url)
    if path is not None and path.is_file() and is_blind(path):
        blind = [path]  # a trustless game's own file: that game
    else:
        if explicit or path is None or path.is_file():
            from pbem.host.store import Store

            with Store(url) as st:
                rows += st.overview()
        blind = beside(store_folder(url))
    for one in blind:
        with BlindHost(one) as b:
            rows.append(b.overview())
    if host_keys is not None:
        rows = [r for r in rows if r["host_key"] in host_keys]
    return sorted(rows, key=lambda g: g["name"])
