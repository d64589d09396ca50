"""A trustless game's status read from its row of the store (trustless_games), as a referee's
game's is from its own: what `pbem status`, `pbem games`, `pbem club` and the daemons ask, read
without following the game's chain again. The blind host writes the row in the transaction of
each join and packet (pbem.host.blind_facts). Light on purpose: no protocol, no engine.
"""

from __future__ import annotations

from typing import Any

import msgspec
from sqlalchemy import Select, select
from sqlalchemy.engine import Connection

from pbem.host.interface import GameOverview, GameStatus, WaitingStatus, overview_of
from pbem.host.tables import trustless_activity, trustless_games, trustless_packets


class Public(msgspec.Struct, frozen=True):
    """trustless_games.public: what every seat may see of the table now."""

    seats: list[tuple[str, str]]  # (name, key as a pbem1 line), in seat order
    joined: list[str] = []
    step: str = "join"  # what the table waits for (docs/trustless.md §5); "over" at the end
    waiting: list[str] = []  # the seats that owe it
    to_move: str | None = None
    gold: dict[str, int] = {}  # after the last round that ended
    gone: list[str] = []  # the seats declared gone (docs/trustless.md §11)


def public_of(text: str) -> Public:
    return msgspec.json.decode(text, type=Public)


# A game's row with the time of its latest packet (`since`), as store._GAME_ROWS reads a referee's
_LATEST = trustless_packets.alias("latest")
ROWS: Select[Any] = (
    select(trustless_games, _LATEST.c.created_at.label("since"))
    .select_from(trustless_games.outerjoin(_LATEST, (_LATEST.c.game_id == trustless_games.c.id)
                                           & (_LATEST.c.seq == trustless_games.c.seq)))
    .order_by(trustless_games.c.name))


def statuses(c: Connection, game_id: str | None = None) -> list[tuple[GameStatus, Any]]:
    """(status, row) of the trustless game `game_id` (None: of every one, by name)."""
    rows = c.execute(ROWS if game_id is None else ROWS.where(trustless_games.c.id == game_id)).all()
    seen = select(trustless_activity)
    activity: dict[str, dict[str, str]] = {}
    for a in c.execute(seen if game_id is None else seen.where(trustless_activity.c.game_id == game_id)):
        activity.setdefault(a.game_id, {})[a.seat] = a.at
    return [(status_of(g, activity.get(g.id, {})), g) for g in rows]


def overviews(c: Connection) -> list[GameOverview]:
    """Every trustless game's row in `pbem games`, by name."""
    from pbem.host.settings import settings_of

    return [overview_of(st, settings_of(g.settings), g.host_key) for st, g in statuses(c)]


def status_of(g: Any, activity: dict[str, str]) -> GameStatus:
    """A trustless game's status from its row (with `since`, as ROWS reads it) and when each seat's
    last block was taken."""
    import json

    from pbem.host.settings import PacketClock, settings_of
    from pbem.protocol.keyline import fingerprint

    pub = public_of(g.public)
    settings = settings_of(g.settings)
    clock = msgspec.json.decode(g.clock, type=PacketClock) if g.clock and g.clock != "null" else PacketClock()
    emails = settings.emails
    waiting: WaitingStatus = {"step": pub.step, "seats": list(pub.waiting)}
    if clock.due and pub.step != "over":
        waiting["due"] = clock.due
    return {"game": g.id, "name": g.name, "ruleset": g.ruleset, "options": list(json.loads(g.options)),
            "status": g.status, "round": g.round_no, "seq": g.seq, "to_move": pub.to_move, "gold": dict(pub.gold),
            "seats": [{"name": name, "joined": name in pub.joined, "last_activity": activity.get(name),
                       "email": emails.get(name), "fingerprint": fingerprint(key)} for name, key in pub.seats],
            "timing": settings.timing.shown(trustless=True) if settings.timing else None, "deadline": None,
            "paused": False, "absent": list(pub.gone), "away": {}, "handovers": [], "trustless": True,
            "waiting": waiting, "since": g.since or g.created_at}
