"""Bots arena: side win rates of the bots over seeded games.

Run through `scripts/bots-arena` (it sets up .venv). For every table (classic 5 and 10
players, expansion 8 and 12 players) and every matchup (which bot kind plays the gold
diggers' side and which the saboteurs), it plays N seeded three-round games and prints
the share of rounds each side won. Games run in parallel worker processes.

    scripts/bots-arena                    # 1000 games per table and matchup
    scripts/bots-arena --games 100 --tables classic5,expansion12 --jobs 2

With `--bots A,B`, one seat against the rest: in each of N seeded deals (one round each), a
seat dealt a role of the side `--seat-role` (both sides unless given) is played by bot A and
every other seat by bot B; the same deal is then played with B in that seat too. It prints
how often the seat's side won either way, the difference and its 95% interval (paired).
`--think S` is the search bot's budget a decision (`--turns N`: exactly N simulated turns a
decision instead); `--json` prints the table as JSON. Matchup 4, search in every seat, is
run only when named (`--matchups 3,4`: the balance table of docs/bots.md).

    scripts/bots-arena --bots search,smart --tables classic5 --games 150 --think 0.1
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from script_args import at_least_one, listed, think_time, zero_or_more

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.bots import KINDS, THINK  # noqa: E402
from engine.bots.arena import MATCHUPS, TABLES, Duel, Matchup, Tally, margin, run_duel, run_games  # noqa: E402


def _work(args: tuple[str, int, int, int, int, str, float, int | None]) -> tuple[Tally, float]:
    ruleset, players, first, count, matchup_index, seed, think, turns = args
    t0 = time.process_time()
    tally = run_games(ruleset, players, count, MATCHUPS[matchup_index], seed=seed, first=first, think=think, turns=turns)
    return tally, time.process_time() - t0


def _duel_work(args: tuple[str, int, int, int, str, str, str, float, int | None, str]
               ) -> tuple[list[tuple[bool, bool]], float]:
    ruleset, players, first, count, tested, baseline, role, think, turns, seed = args
    t0 = time.process_time()
    pairs = run_duel(ruleset, players, count, Duel(tested, baseline, role, think, turns), seed=seed, first=first)
    return pairs, time.process_time() - t0


def duels(ap: argparse.ArgumentParser, args: argparse.Namespace, tables: list[str]) -> int:
    """The `--bots A,B` mode: one seat against the rest, paired deals."""
    bots = [b.strip() for b in args.bots.split(",")]
    if len(bots) != 2 or any(b not in KINDS for b in bots):
        ap.error(f"--bots takes two of {', '.join(KINDS)}, as A,B")
    roles = [args.seat_role] if args.seat_role else ["digger", "saboteur"]
    units = []
    for t in tables:
        ruleset, players = TABLES[t]
        for role in roles:
            for first in range(0, args.games, args.chunk):
                count = min(args.chunk, args.games - first)
                units.append((t, role, (ruleset, players, first, count, bots[0], bots[1], role, args.think, args.turns,
                                             args.seed)))
    start = time.perf_counter()
    pairs: dict[tuple[str, str], list[tuple[bool, bool]]] = {}
    cpu: dict[tuple[str, str], float] = {}
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for (t, role, _), (got, secs) in zip(units, pool.map(_duel_work, [u[2] for u in units])):
            pairs.setdefault((t, role), []).extend(got)
            cpu[(t, role)] = cpu.get((t, role), 0.0) + secs
    wall = time.perf_counter() - start
    rows = []
    for t in tables:
        for role in roles:
            m = margin(pairs[(t, role)])
            rows.append({"table": t, "seat_role": role, "rounds": m.rounds, "tested": m.tested,
                         "baseline": m.baseline, "diff": m.diff, "low": m.low, "high": m.high,
                         "cpu_s": round(cpu[(t, role)], 1)})
    if args.json:
        print(json.dumps({"tested": bots[0], "baseline": bots[1], "think": args.think, "turns": args.turns, "seed": args.seed,
                          "games": args.games, "rows": rows, "wall_s": round(wall, 1)}, indent=1))
        return 0
    budget = f"think {args.think} s" if args.turns is None else f"{args.turns} turns a decision"
    print(f"{bots[0]} in one seat vs {bots[1]} in the rest; {args.games} deals a line, seed {args.seed!r}, {budget}")
    print(f"{'table':12s} {'seat':9s} {'rounds':>6s} {bots[0]:>8s} {bots[1]:>8s} {'diff':>7s}  95% interval")
    for r in rows:
        print(f"{r['table']:12s} {r['seat_role']:9s} {r['rounds']:6d} {100 * r['tested']:7.1f}% "
              f"{100 * r['baseline']:7.1f}% {100 * r['diff']:+6.1f}  [{100 * r['low']:+.1f}, {100 * r['high']:+.1f}]")
    print(f"wall time {wall:.1f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/bots-arena", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=at_least_one, default=1000, help="games (of 3 rounds) per table and matchup (default 1000)")
    ap.add_argument("--tables", type=listed(TABLES), default=list(TABLES), help=f"comma-separated, from {', '.join(TABLES)}")
    ap.add_argument(
        "--matchups", type=listed(str(i) for i in range(len(MATCHUPS))),
        default=[str(i) for i in range(len(MATCHUPS)) if "search" not in MATCHUPS[i].name],
        help="comma-separated matchup numbers: " + "; ".join(f"{i} = {m.name}" for i, m in enumerate(MATCHUPS)),
    )
    ap.add_argument("--jobs", type=at_least_one, default=os.cpu_count() or 1, help="worker processes (default: all cores)")
    ap.add_argument("--seed", default="arena", help="series seed (default 'arena')")
    ap.add_argument("--chunk", type=at_least_one, default=25, help="games per work unit (default 25)")
    ap.add_argument("--bots", help="A,B: bot A in one seat, bot B in the others (and in that seat, for comparison)")
    ap.add_argument("--seat-role", choices=("digger", "saboteur"), help="with --bots: the side of the seat (default: both)")
    ap.add_argument("--think", type=think_time, default=THINK, help=f"the search bot's seconds a decision (default {THINK})")
    ap.add_argument("--turns", type=zero_or_more, help="the search bot's simulated turns a decision, instead of --think")
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    args = ap.parse_args(argv)
    tables: list[str] = args.tables
    if args.bots:
        return duels(ap, args, tables)
    matchups = [int(i) for i in args.matchups]
    units = []
    for t in tables:
        ruleset, players = TABLES[t]
        for mi in matchups:
            for first in range(0, args.games, args.chunk):
                units.append((t, mi, (ruleset, players, first, min(args.chunk, args.games - first), mi, args.seed,
                                      args.think, args.turns)))
    start = time.perf_counter()
    totals: dict[tuple[str, int], Tally] = {}
    cpu: dict[tuple[str, int], float] = {}
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = pool.map(_work, [u[2] for u in units])
        for (t, mi, _), (tally, secs) in zip(units, results):
            totals.setdefault((t, mi), Tally()).add(tally)
            cpu[(t, mi)] = cpu.get((t, mi), 0.0) + secs
    wall = time.perf_counter() - start
    if args.json:
        print(json.dumps({"games": args.games, "seed": args.seed, "wall_s": round(wall, 1), "rows": [
            {"table": t, "matchup": MATCHUPS[mi].name, "rounds": totals[(t, mi)].rounds,
             "diggers": totals[(t, mi)].digger_rate, "saboteurs": totals[(t, mi)].saboteur_rate,
             "turns": totals[(t, mi)].turns / max(1, totals[(t, mi)].rounds), "cpu_s": round(cpu[(t, mi)], 1)}
            for t in tables for mi in matchups]}, indent=1))
        return 0
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
