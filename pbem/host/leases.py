"""Daemons that share a store's games: a lease per game, a heartbeat per daemon.

Each `pbem host run --all` serves only the games it holds a lease on (the leases table: game,
holder, expiry by the store's clock). A lease round is one write transaction:

1. the daemon's heartbeat (the daemons table), and the count of daemons seen since the
   leases of their last round began: its fair share is ceil(active games / live daemons). A
   daemon silent longer holds no lease any more (its heartbeat and its renewals are one
   transaction), so its games are free and the others' shares take them in at once;
2. renew what it holds (a conditional UPDATE: only rows whose holder is still this daemon);
3. give back what is over its share or no longer active (a game over);
4. take free games up to its share: expired rows locked by this taker alone (PostgreSQL's
   FOR UPDATE SKIP LOCKED: two takers never wait on each other, so never deadlock), each
   taken by `UPDATE ... WHERE game_id = g AND (holder = me OR expires < now)`, whose row
   count says whether it is ours. On PostgreSQL an UPDATE waits for a concurrent one's row
   lock and reads its condition again on the row as committed; on SQLite the transaction is
   BEGIN IMMEDIATE (one writer). Either way one taker wins.

A new game's lease row is inserted first, in a transaction of its own.

A lease runs `AHEAD` of a period after its round; a holder renews every `ROUND` of a period,
and a daemon looks for free games as often, so a stopped daemon's games are taken over at
most one period after its last round. A daemon trusts its lease only until its own clock
(monotonic, started before the round began) says the lease ran out: past that it serves
nothing, so no two daemons serve a game at once, even when one stalls or loses the store.
"""

from __future__ import annotations

import math
import os
import socket
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy import and_, delete, func, or_, select, text, update
from sqlalchemy.engine import Connection

from pbem.host.store import Store, dialect_insert
from pbem.host.tables import daemons, leases

AHEAD = 0.8  # a lease ends this many periods after its round
ROUND = 0.2  # a lease round every this many periods
FORGET = 10  # a daemon silent this many periods is dropped from the daemons table
DEFAULT_PERIOD = 30.0  # seconds: --lease


def holder_name() -> str:
    """This daemon's name in the store: its machine, its process and a random part (a pid is
    used again after a restart, and on another machine)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def store_now(c: Connection) -> float:
    """The store's clock, in seconds since the epoch: one clock for every daemon, wherever it runs."""
    if c.dialect.name == "postgresql":
        return float(c.execute(text("SELECT extract(epoch FROM clock_timestamp())")).scalar_one())
    return float(c.execute(text("SELECT (julianday('now') - 2440587.5) * 86400.0")).scalar_one())


def _upsert_heartbeat(c: Connection, me: str, now: float) -> None:
    c.execute(dialect_insert(c, daemons).values(id=me, seen=now).on_conflict_do_update(index_elements=["id"], set_={"seen": now}))


def _insert_free(c: Connection, game_id: str) -> None:
    """The game's lease row, expired and held by no one, unless it has one."""
    c.execute(dialect_insert(c, leases).values(game_id=game_id, holder="", expires=0.0).on_conflict_do_nothing(index_elements=["game_id"]))


@dataclass
class Leases:
    """One daemon's leases on the games of `store`, each `period` seconds long."""

    store: Store
    period: float = DEFAULT_PERIOD
    me: str = field(default_factory=holder_name)
    held: frozenset[str] = frozenset()
    until: float = 0.0  # time.monotonic() past which nothing held is trusted
    next_round: float = 0.0  # time.monotonic() of the next round
    share: int = 0
    known: set[str] = field(default_factory=set)  # games known to have a lease row
    live: int = 0

    def due(self) -> bool:
        return time.monotonic() >= self.next_round

    def holds(self, game_id: str) -> bool:
        """Whether this daemon may serve the game now."""
        return game_id in self.held and time.monotonic() < self.until

    def refresh(self, active: Iterable[str]) -> frozenset[str]:
        """One lease round over the `active` games (those not over): what this daemon holds after it.
        A failed round (the store unreachable) raises; what was held stays trusted until `until`."""
        wanted = set(active)
        self._rows(wanted)
        started = time.monotonic()
        self.next_round = started + ROUND * self.period
        with self.store.write() as c:
            now = store_now(c)
            expires = now + AHEAD * self.period
            _upsert_heartbeat(c, self.me, now)
            c.execute(delete(daemons).where(daemons.c.seen < now - FORGET * self.period))
            self.live = max(1, int(c.execute(select(func.count()).select_from(daemons)
                                             .where(daemons.c.seen >= now - AHEAD * self.period)).scalar_one()))
            self.share = math.ceil(len(wanted) / self.live)
            c.execute(update(leases).where(leases.c.holder == self.me).values(expires=expires))
            mine = {str(g) for g in c.execute(select(leases.c.game_id).where(leases.c.holder == self.me)).scalars()}
            keep = sorted(mine & wanted)[:self.share]
            drop = mine - set(keep)
            if drop:
                c.execute(update(leases).where(and_(leases.c.holder == self.me, leases.c.game_id.in_(sorted(drop))))
                          .values(holder="", expires=0.0))
            held = set(keep)
            need = self.share - len(held)
            if need > 0:
                # free rows, each locked by this taker alone: another taker passes over what this one
                # locks (PostgreSQL's SKIP LOCKED; SQLite has one writer), so takers never wait on each other
                free = list(c.execute(select(leases.c.game_id)
                                      .where(and_(leases.c.game_id.in_(sorted(wanted - held)), leases.c.expires < now))
                                      .order_by(func.random()).limit(need).with_for_update(skip_locked=True)).scalars())
                for game_id in free:
                    got = c.execute(update(leases)
                                    .where(and_(leases.c.game_id == game_id,
                                                or_(leases.c.holder == self.me, leases.c.expires < now)))
                                    .values(holder=self.me, expires=expires))
                    if got.rowcount == 1:
                        held.add(str(game_id))
        self.held = frozenset(held)
        self.until = started + AHEAD * self.period
        return self.held

    def _rows(self, wanted: set[str]) -> None:
        """A lease row for each wanted game that has none (a new game), in a transaction of its
        own, so that a round never waits on another daemon's new row."""
        if not wanted or wanted <= self.known:
            return
        with self.store.read() as c:
            have = {str(g) for g in c.execute(select(leases.c.game_id).where(leases.c.game_id.in_(sorted(wanted)))).scalars()}
        if wanted - have:
            with self.store.write() as c:
                for game_id in sorted(wanted - have):  # one order for every daemon
                    _insert_free(c, game_id)
        self.known |= wanted

    def release(self) -> None:
        """Give back every lease and leave the daemons table (a daemon that stops): the others
        take the games over at their next round, not a period later."""
        with self.store.write() as c:
            c.execute(update(leases).where(leases.c.holder == self.me).values(holder="", expires=0.0))
            c.execute(delete(daemons).where(daemons.c.id == self.me))
        self.held = frozenset()
        self.until = 0.0
