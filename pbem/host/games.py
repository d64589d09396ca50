"""The games a host keeps, one row each, for `pbem games`: those of a store (classic and
trustless) and of the trustless games' files beside it, or the games of the file given; and
the host of one game, whichever kind it is (`open_game`).

A row holds the facts `pbem status` says of the same game (pbem.host.interface.overview_of
builds each from its status), so the two commands never tell a different round, packet or step.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from pbem.host.paths import as_url, beside, is_blind, sqlite_file, store_folder

if TYPE_CHECKING:
    from pbem.host.interface import GameHost, GameOverview
    from pbem.host.store import Store


def open_game(store: Store | str, game: str | None) -> GameHost:
    """The host of the game called `game` (or with that id; None: the only game) in `store`: a
    referee (pbem.host.referee) or, for a trustless game, a blind host (pbem.host.blind, loaded
    only for such a game). Given a URL, the host owns the store it opens."""
    from pbem.host.store import Store

    st = Store(store) if isinstance(store, str) else store
    owned = st is not store  # closed with the host
    try:
        found = st.locate(game)
        if found.trustless:
            from pbem.host.blind import BlindHost

            blind = BlindHost(st, game=found)
            blind._owns_store = owned
            return blind
        from pbem.host.referee import Host

        host = Host(st, game=found)
        host._owns_store = owned
        return host
    except BaseException:
        if owned:
            st.close()
        raise


def hosted_games(url: str, *, explicit: bool, host_keys: Collection[str] | None = None) -> list[GameOverview]:
    """Every game at `url` (a store, or a trustless game's file) and the trustless games' files
    beside it, by name. A store nobody named (`explicit` False) is read only if its file is there.
    With `host_keys`, only the games whose host key is one of them (the games *you* host)."""
    rows: list[GameOverview] = []
    path = sqlite_file(url)
    own = path is not None and path.is_file() and is_blind(path)  # a trustless game's own file: its games
    stores = [url] if own or explicit or path is None or path.is_file() else []
    stores += [as_url(one) for one in ([] if own else beside(store_folder(url)))
               if path is None or one.resolve() != path.resolve()]
    if stores:  # none (a player's key home): the store's layer (SQLAlchemy) is not loaded
        from pbem.host.store import Store

        for each in stores:
            with Store(each) as st:
                rows += st.overview()
    if host_keys is not None:
        rows = [r for r in rows if r["host_key"] in host_keys]
    return sorted(rows, key=lambda g: g["name"])
