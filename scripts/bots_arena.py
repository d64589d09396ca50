"""Bots arena: side win rates of smart and random bots over seeded games.

Run through `scripts/bots-arena` (it sets up .venv). For every table (classic 5 and 10
players, expansion 8 and 12 players) and every matchup (which bot kind plays the gold
diggers' side and which the saboteurs), it plays N seeded three-round games and prints
the share of rounds each side won. Games run in parallel worker processes.

    scripts/bots-arena                    # 1000 games per table and matchup
    scripts/bots-arena --games 100 --tables classic5,expansion12 --jobs 2
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.bots.arena import MATCHUPS, Matchup, Tally, run_games  # noqa: E402

TABLES = {
    "classic5": ("classic", 5),
    "classic10": ("classic", 10),
    "expansion8": ("expansion", 8),
    "expansion12": ("expansion", 12),
}


def _work(args: tuple[str, int, int, int, int, str]) -> tuple[Tally, float]:
    ruleset, players, first, count, matchup_index, seed = args
    t0 = time.perf_counter()
    tally = run_games(ruleset, players, count, MATCHUPS[matchup_index], seed=seed, first=first)
    return tally, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=1000, help="games (of 3 rounds) per table and matchup (default 1000)")
    ap.add_argument("--tables", default=",".join(TABLES), help=f"comma-separated, from {', '.join(TABLES)}")
    ap.add_argument(
        "--matchups", default=",".join(str(i) for i in range(len(MATCHUPS))),
        help="comma-separated matchup numbers: " + "; ".join(f"{i} = {m.name}" for i, m in enumerate(MATCHUPS)),
    )
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: all cores)")
    ap.add_argument("--seed", default="arena", help="series seed (default 'arena')")
    ap.add_argument("--chunk", type=int, default=25, help="games per work unit (default 25)")
    args = ap.parse_args(argv)
    tables = [t.strip() for t in args.tables.split(",") if t.strip()]
    for t in tables:
        if t not in TABLES:
            ap.error(f"unknown table {t!r}")
    matchups = [int(i) for i in args.matchups.split(",")]
    units = []
    for t in tables:
        ruleset, players = TABLES[t]
        for mi in matchups:
            for first in range(0, args.games, args.chunk):
                units.append((t, mi, (ruleset, players, first, min(args.chunk, args.games - first), mi, args.seed)))
    start = time.perf_counter()
    totals: dict[tuple[str, int], Tally] = {}
    cpu: dict[tuple[str, int], float] = {}
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = pool.map(_work, [u[2] for u in units])
        for (t, mi, _), (tally, secs) in zip(units, results):
            totals.setdefault((t, mi), Tally()).add(tally)
            cpu[(t, mi)] = cpu.get((t, mi), 0.0) + secs
    wall = time.perf_counter() - start
    print(f"{args.games} games (3 rounds each) per table and matchup, seed {args.seed!r}, {args.jobs} jobs")
    print(f"{'table':12s} {'matchup':36s} {'rounds':>6s} {'diggers':>8s} {'saboteurs':>9s} {'turns':>6s} {'cpu s':>7s}")
    for t in tables:
        for mi in matchups:
            tally = totals[(t, mi)]
            m: Matchup = MATCHUPS[mi]
            print(
                f"{t:12s} {m.name:36s} {tally.rounds:6d} {100 * tally.digger_rate:7.1f}% "
                f"{100 * tally.saboteur_rate:8.1f}% {tally.turns / max(1, tally.rounds):6.1f} {cpu[(t, mi)]:7.1f}"
            )
        if TABLES[t][0] == "expansion":
            for mi in matchups:
                tally = totals[(t, mi)]
                per = ", ".join(
                    f"{r} {tally.gold_by_role[r] / tally.rounds_by_role[r]:.2f}" for r in sorted(tally.rounds_by_role)
                )
                print(f"{'':12s}   gold per round by role ({MATCHUPS[mi].name}): {per}")
    print(f"wall time {wall:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
