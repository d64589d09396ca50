"""The webhook sender: POSTs the notices in a store's outbox (pbem.host.webhooks) from a thread
of its own, so that no server, slow or dead, ever holds up play.

Each POST waits at most TIMEOUT seconds (to connect and to answer). A notice that fails is tried
again after a growing pause (BACKOFF, doubled each time, at most MAX_PAUSE), MAX_ATTEMPTS times
in all, each failure logged; the other notices for a URL that failed wait as long.
A notice is marked sent in the store once its server answered 2xx: one that was sent but not yet
marked when the process died is sent again (its `id` tells a receiver it saw it already); one that
was marked is never sent again.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update

from pbem.host.clock import Clock, RealClock, stamp
from pbem.host.store import Store
from pbem.host.tables import webhooks
from pbem.ui.words import t

TIMEOUT = 2.0
BACKOFF = 5.0
MAX_PAUSE = 3600.0
MAX_ATTEMPTS = 10
BATCH = 50


def payload(fmt: str, body: dict[str, Any]) -> dict[str, Any]:
    """What is POSTed: the facts as they are (json), or one line for a chat (discord, slack)."""
    if fmt == "json":
        return body
    line = _line(body)
    return {"content": line} if fmt == "discord" else {"text": line}


def _line(b: dict[str, Any]) -> str:
    game, seat, due = b["game"], b.get("seat"), b.get("deadline")
    if b["event"] == "late":
        return t("pbem {game}: {seat} is late (the deadline was {deadline})", game=game, seat=seat, deadline=due)
    if b["event"] == "reminder":
        return t("pbem {game}: a reminder: {seat} to move, by {deadline}", game=game, seat=seat, deadline=due)
    if b["event"] == "absent":
        return t("pbem {game}: {seat} missed too many deadlines and is absent now", game=game, seat=seat)
    if b["event"] == "game-over":
        return t("pbem {game}: the game is over", game=game)
    said = (t("pbem {game}: round {round} is over", game=game, round=b["round"]) + " ") if b["event"] == "round-over" else ""
    if due:
        return said + t("pbem {game}: {seat} to move, by {deadline}", game=game, seat=seat, deadline=due)
    return said + t("pbem {game}: {seat} to move", game=game, seat=seat)


def post(url: str, data: bytes, timeout: float = TIMEOUT) -> None:
    """POST `data` (JSON) to `url`; an OSError or HTTPError when it does not answer 2xx in time."""
    import urllib.request  # with http.client: loaded by a daemon only when a game has a webhook to call

    req = urllib.request.Request(url, data=data, method="POST",
                                 headers={"Content-Type": "application/json", "User-Agent": "pbem-webhook"})
    with urllib.request.urlopen(req, timeout=timeout) as r:  # noqa: S310 (check_url allows http and https only)
        r.read(4096)


class Sender:
    """Sends what a store's outbox owes, one pass at a time (`drain`) or in a thread (`start`)."""

    def __init__(self, url: str, log: Callable[[str], None], clock: Clock | None = None,
                 timeout: float = TIMEOUT) -> None:
        self.url, self.log, self.clock, self.timeout = url, log, clock or RealClock(), timeout
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._passes = 0

    def drain(self, store: Store) -> int:
        """One pass over the notices due now; how many were sent."""
        now = self.clock.now()
        failed: set[str] = set()
        sent, after = 0, 0
        while True:  # a batch at a time, oldest first
            with store.read() as c:
                due = c.execute(select(webhooks).where(webhooks.c.sent_at.is_(None), webhooks.c.attempts < MAX_ATTEMPTS,
                                                       webhooks.c.next_at <= stamp(now), webhooks.c.id > after)
                                .order_by(webhooks.c.id).limit(BATCH)).all()
            if not due:
                return sent
            after = due[-1].id
            sent += self._send(store, due, failed)

    def _send(self, store: Store, due: Sequence[Any], failed: set[str]) -> int:
        sent = 0
        for row in due:
            if row.url in failed:
                continue
            data = json.dumps(payload(row.format, json.loads(row.body)), sort_keys=True).encode()
            try:
                post(row.url, data, self.timeout)
            except (OSError, ValueError) as exc:  # refused, timed out, HTTP 4xx/5xx, a bad answer
                failed.add(row.url)
                self._failed(store, row, exc)
                continue
            with store.write() as c:
                c.execute(update(webhooks).where(webhooks.c.id == row.id, webhooks.c.sent_at.is_(None))
                          .values(sent_at=stamp(self.clock.now()), attempts=row.attempts + 1, error=None))
            sent += 1
        return sent

    def _failed(self, store: Store, row: Any, exc: BaseException) -> None:
        attempts = row.attempts + 1
        pause = min(BACKOFF * 2 ** (attempts - 1), MAX_PAUSE)
        why = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        later = stamp(self.clock.now() + timedelta(seconds=pause))
        with store.write() as c:  # the URL rests: its other notices wait as long (none tried meanwhile)
            c.execute(update(webhooks).where(webhooks.c.id == row.id).values(attempts=attempts, error=why, next_at=later))
            c.execute(update(webhooks).where(webhooks.c.url == row.url, webhooks.c.sent_at.is_(None),
                                             webhooks.c.next_at < later).values(next_at=later))
        if attempts >= MAX_ATTEMPTS:
            self.log(t("webhook of game {game}: notice {id} given up: {why}", game=row.game_id, id=row.id, why=why))
        else:
            self.log(t("webhook of game {game}: notice {id} not delivered ({why}); again in {seconds} s",
                       game=row.game_id, id=row.id, why=why, seconds=int(pause)))

    def start(self, poll: float = 1.0) -> None:
        """Send in a thread of its own, a pass every `poll` seconds, until `stop`."""
        def loop() -> None:
            with Store(self.url) as store:
                while True:
                    stopping = self._stop.wait(poll) if self._passes else False
                    self._passes += 1
                    try:  # a last pass when stopped: what the last step owes goes out now
                        self.drain(store)
                    except Exception as exc:  # a store hiccup: the next pass tries again
                        self.log(t("webhook sender: {why}", why=(str(exc).splitlines() or [""])[0][:200]))
                    if stopping:
                        return

        self._thread = threading.Thread(target=loop, name="pbem-webhooks", daemon=True)
        self._thread.start()

    def stop(self, wait: float | None = None) -> None:
        """Stop the thread after one last pass; wait at most `wait` seconds for it (default: one
        timeout and a half: a dead server never holds a command up longer)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self.timeout * 1.5 if wait is None else wait)


@contextmanager
def sending(url: str | None, log: Callable[[str], None], poll: float) -> Iterator[None]:
    """While a host runs: its store's webhook notices sent from a thread (none for `url` None:
    a game without a store, a trustless game's blind host)."""
    if url is None:
        yield
        return
    sender = Sender(url, log)
    sender.start(max(poll, 0.2))
    try:
        yield
    finally:
        sender.stop()
