"""Daemons that share a store's games (pbem/host/leases.py): a lease per game.

Real processes on a real SQLite file and a real PostgreSQL database: several takers race for
a few games with a short lease, each stalling now and then (as a daemon stopped by the
system, or cut off from the store, would) so that its games are taken over; every moment a
taker trusted its lease is recorded, and no two takers' moments on one game overlap.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import random
import time
from pathlib import Path

from pbem.host.leases import AHEAD, Leases
from pbem.host.store import Store

GAMES = ["g1", "g2", "g3"]
PERIOD = 0.4  # seconds


def _taker(url: str, out: str, seconds: float, seed: int) -> None:
    """Take leases in rounds for `seconds`; write each spell a game was trusted as held:
    [game, holder, from, to] in wall-clock seconds (from: the round committed; to: the next
    round began, or the lease ran out by this taker's own clock when it stalled)."""
    rnd = random.Random(seed)
    spells: list[list[object]] = []
    with Store(url) as store:
        leases = Leases(store, PERIOD)
        end = time.time() + seconds
        trusted: list[list[object]] = []  # the spells of the latest round
        while time.time() < end:
            began = time.time()
            for spell in trusted:  # a taker serves nothing while it takes its leases
                spell[3] = min(float(spell[3]), began)  # type: ignore[arg-type]
            held = leases.refresh(GAMES)
            now = time.time()
            trusted = [[g, leases.me, now, now + (leases.until - time.monotonic())] for g in sorted(held)]
            spells += trusted
            # serve a while, and now and then stall past the lease (its games are then the others')
            time.sleep(rnd.uniform(0.0, PERIOD * 0.2) if rnd.random() > 0.15 else rnd.uniform(PERIOD, 2 * PERIOD))
        for spell in trusted:  # given back: trusted no longer
            spell[3] = min(float(spell[3]), time.time())  # type: ignore[arg-type]
        leases.release()
    Path(out).write_text(json.dumps(spells))


def _race(url: str, tmp: Path, takers: int = 4, seconds: float = 2.5) -> list[list]:
    with Store(url, create=True):
        pass
    ctx = mp.get_context("fork")  # after the imports: a taker starts at once
    outs = [tmp / f"taker-{i}.json" for i in range(takers)]
    procs = [ctx.Process(target=_taker, args=(url, str(o), seconds, i)) for i, o in enumerate(outs)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    return [s for o in outs for s in json.loads(o.read_text())]


def test_a_lease_is_never_held_by_two_takers_at_once(tmp_path: Path, store_url: str) -> None:
    spells = _race(store_url, tmp_path)
    holders: dict[str, set[str]] = {}
    for game in GAMES:
        mine = sorted((s for s in spells if s[0] == game), key=lambda s: s[2])
        holders[game] = {s[1] for s in mine}
        for a, b in zip(mine, mine[1:]):
            if a[1] != b[1]:  # taken over: the new holder's spell starts after the old one's ends
                assert b[2] >= a[3], (game, a, b)
        overlapping = [(a, b) for a in mine for b in mine if a[1] != b[1] and a[2] < b[2] < a[3]]
        assert not overlapping, overlapping[:3]
    # the race did race: every game changed hands, and each taker held something
    assert all(len(h) >= 2 for h in holders.values()), holders
    assert len({s[1] for s in spells}) == 4


def test_daemons_share_the_games_fairly_and_take_over_a_stopped_ones(store_url: str) -> None:
    games = [f"g{i}" for i in range(7)]
    with Store(store_url, create=True) as store:
        a, b, c = (Leases(store, 2.0) for _ in range(3))
        assert a.refresh(games) == frozenset(games)  # alone: every game
        assert b.refresh(games) == frozenset() and b.share == 4  # two daemons now: a holds all until its next round
        held_a = a.refresh(games)
        assert len(held_a) == 4  # its share, the rest given back
        held_b = b.refresh(games)
        assert held_a.isdisjoint(held_b) and held_a | held_b == set(games)
        assert c.refresh(games) == frozenset() and c.share == 3
        # b stops without a word (kill -9): its games stay its own until its leases run out
        assert c.refresh(games) == frozenset()
        time.sleep(AHEAD * 2.0 / 2)
        assert c.refresh(games) == frozenset()  # a and c go on with their rounds
        time.sleep(AHEAD * 2.0 / 2 + 0.1)
        # then b, silent since, is gone too: two daemons left, a share of 4, and b's games taken at once
        assert len(a.refresh(games)) == 4 and a.live == 2
        assert len(c.refresh(games)) == 3 and a.held | c.held == set(games) and c.held.isdisjoint(a.held)
        a.release()  # a clean stop gives its games back at once
        assert c.refresh(games) == frozenset(games) and c.live == 1
