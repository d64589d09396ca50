"""A game's webhook: the notices the host owes it, kept in an outbox (the store's `webhooks`).

A change that publishes a packet (a seat to move, a round or the game over), or that reminds
a seat of its deadline, finds it late or absent, records its notice here, in the change's own
transaction: it exists exactly when the change does. pbem.auto.webhooks POSTs it after the commit, from another thread, and marks it
sent. A notice holds the game's name, the event, the seat and its deadline: never a role, a
hand, a key or anything sealed. docs/playing.md ("Webhooks") shows the bodies.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from sqlalchemy import insert

from pbem.errors import UsageError, msg
from pbem.host import tables
from pbem.host.settings import WebhookSetting

if TYPE_CHECKING:
    from pbem.host.change import Change

Event = Literal["to-move", "reminder", "late", "absent", "round-over", "game-over"]
NOTICE_EVENTS: dict[str, Event] = {"reminder": "reminder", "late": "late", "absent": "absent"}  # the clock's notices told
FORMATS = ("json", "discord", "slack")
MAX_URL = 2000


def check_url(url: str) -> str:
    """`url` if it is an http or https URL with a host, else a UsageError."""
    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and (parts.port or 1) > 0
    except ValueError:  # a port that is not a number, a bracket unclosed
        ok = False
    if not ok or len(url) > MAX_URL or any(ch.isspace() or not ch.isprintable() for ch in url):
        raise UsageError(msg("bad webhook URL {url}", url=repr(url[:200])),
                         hint=msg("an http:// or https:// URL, e.g. {example}",
                                  example="https://discord.com/api/webhooks/ID/TOKEN"))
    return url


def setting(url: str | None, fmt: str | None, kept: WebhookSetting | None) -> WebhookSetting | None | Literal[False]:
    """The game's webhook setting after `--webhook URL` (`none`: remove) and `--webhook-format`;
    False when neither was given (nothing to change)."""
    if url is None and fmt is None:
        return False
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(msg("unknown webhook format {format}", format=repr(fmt)), hint=msg("use json, discord or slack"))
    if url is not None and url.lower() == "none":
        return None
    if url is not None:
        target = check_url(url)
    elif kept:
        target = kept.url
    else:
        raise UsageError(msg("the game has no webhook to format"), hint=msg("give one with --webhook URL"))
    return WebhookSetting(url=target, format=fmt or (kept.format if kept else "json"))


def record(ch: Change, event: Event, *, seat: str | None, deadline: str | None, round_no: int, seq: int,
           notice: int | None = None) -> None:
    """Owe the game's webhook (if it has one) this notice, in the change's transaction. `notice`:
    the host's notice it tells of (a packet may have several reminders), part of its id."""
    hook = ch.settings.webhook
    if hook is None:
        return
    at = ch.now()
    key = f"{ch.g['id']}/{seq}/{event}" + (f"/{notice}" if notice is not None else "")
    body = {"id": key, "event": event, "game": ch.g["name"], "seat": seat, "deadline": deadline, "round": round_no, "packet": seq, "at": at}
    ch.c.execute(insert(tables.webhooks).values(game_id=ch.g["id"], url=hook.url, format=hook.format,
                                         body=json.dumps(body, sort_keys=True), created_at=at, next_at=at, attempts=0))
