"""Engine benchmark: random self-play rounds per second and legal-move generations per second.

Run through `scripts/bench-engine` (it sets up .venv). Every number comes from RandomBot,
which enumerates every legal move (`legal_moves`) on each turn and picks one uniformly.
Times are CPU time of this process (`time.process_time`), so a busy machine skews them less.

    scripts/bench-engine                 # default: 3 s per measurement
    scripts/bench-engine --seconds 10
    scripts/bench-engine --views         # also measure rounds played through views
    scripts/bench-engine --profile classic5 --top 25
    scripts/bench-engine --against /tmp/old       # rounds/s as ratios to another checkout, alternating runs
    valgrind --tool=callgrind .venv/bin/python scripts/bench_engine.py --playouts 20 --config classic5
    scripts/bench-engine --peer /tmp/peer/build    # classic 5p rounds/s against saboteur-game/engine (Node)

Wall and CPU time on the shared 2-core machine vary by +-30%, so compare trees with
`--against` (both measured in turn, in the same minutes) or by instruction counts: callgrind
on `--playouts N` minus `--playouts 0` (the imports) is repeatable to a fraction of a percent.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path

from script_args import at_least_one, duration, positive

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.bots import RandomBot  # noqa: E402
from engine.catalog import CLASSIC, EXPANSION  # noqa: E402
from engine.chance import SeededChance  # noqa: E402
from engine.rules import apply_unchecked, legal_moves  # noqa: E402
from engine.state import PLAYING, THEFT, deal  # noqa: E402
from engine.views import view  # noqa: E402

NAMES = tuple(f"p{i}" for i in range(1, 13))


def play_random_round(ruleset: str, players: int, seed: int, use_views: bool = False) -> tuple[int, int]:
    """One full round of random play; returns (turns, legal-move generations)."""
    names = NAMES[:players]
    state = deal(ruleset, names, SeededChance(f"bench/{ruleset}/{players}/{seed}"))
    bots = {p: RandomBot(f"{seed}/{p}") for p in names}
    turns = 0
    while state.phase in (PLAYING, THEFT):
        me = state.player
        move = bots[me].choose(view(state, me) if use_views else state)
        apply_unchecked(state, move)
        turns += 1
    return turns, turns  # RandomBot calls legal_moves once per turn


def rounds_per_second(ruleset: str, players: int, seconds: float, use_views: bool = False) -> tuple[float, float, int]:
    """(rounds/s, turns/round, rounds played) over about `seconds`."""
    start = time.process_time()
    rounds = turns = 0
    while True:
        t, _ = play_random_round(ruleset, players, rounds, use_views)
        rounds += 1
        turns += t
        elapsed = time.process_time() - start
        if elapsed >= seconds and rounds >= 3:
            return rounds / elapsed, turns / rounds, rounds


def collect_positions(ruleset: str, players: int, rounds: int) -> list:
    """States sampled along random rounds (every turn), to time legal_moves alone."""
    out = []
    names = NAMES[:players]
    for seed in range(rounds):
        state = deal(ruleset, names, SeededChance(f"positions/{ruleset}/{players}/{seed}"))
        bot = RandomBot(seed)
        while state.phase == PLAYING:
            out.append(state.copy())
            apply_unchecked(state, bot.choose(state))
    return out


def legal_per_second(ruleset: str, players: int, rounds: int, seconds: float) -> tuple[float, float]:
    """Legal-move generations per second over positions sampled from random rounds.

    Each call gets a copy of a position as play left it: the reach and the open cells kept up
    to date (a copy shares them), the placements of each kind listed afresh, as on most turns
    of play (a copy would share those too, so its memo is emptied). Copying is not timed.
    Returns (generations/s, average moves per generation).
    """
    positions = collect_positions(ruleset, players, rounds)
    calls = moves = 0
    timed = 0.0
    while timed < seconds:
        copies = [p.copy() for p in positions]  # not timed
        for c in copies:
            c.board._fits = {}  # the per-kind placements memo (Board.placements), shared by copies
        t0 = time.process_time()
        for p in copies:
            moves += len(legal_moves(p))
        timed += time.process_time() - t0
        calls += len(copies)
    return calls / timed, moves / calls


CONFIGS = {"classic5": (CLASSIC, 5), "expansion12": (EXPANSION, 12)}


def playouts(which: str, rounds: int) -> None:
    """Play `rounds` seeded random rounds and nothing else (for instruction counts)."""
    ruleset, players = CONFIGS[which]
    for seed in range(rounds):
        play_random_round(ruleset, players, seed)


# Run in a fresh interpreter inside a tree: its engine's rounds/s, classic 5p and expansion 12p.
_RATE = """
import sys
sys.path[:0] = [{tree!r}, {tree!r} + "/scripts"]
from bench_engine import engine_kind, rounds_per_second
print(rounds_per_second("classic", 5, {seconds})[0], rounds_per_second("expansion", 12, {seconds})[0], engine_kind())
"""


def engine_kind() -> str:
    """Which engine `import engine` gave: "compiled" (by mypyc, scripts/compiled_engine.py) or "pure"."""
    from importlib.machinery import EXTENSION_SUFFIXES

    import engine.rules

    return "compiled" if (engine.rules.__file__ or "").endswith(tuple(EXTENSION_SUFFIXES)) else "pure"


def against(other: str, seconds: float, runs: int) -> None:
    """Rounds/s of this tree over `other`'s (any checkout with scripts/bench_engine.py; "pure": this
    tree's pure engine, PBEM_ENGINE=pure), in alternating runs, each in a fresh interpreter: the
    median of the per-pair ratios."""
    here = str(Path(__file__).resolve().parent.parent)
    sides = {"other": (here if other == "pure" else other, "pure" if other == "pure" else None), "this tree": (here, None)}
    rates: dict[str, list[tuple[float, float]]] = {"other": [], "this tree": []}
    kinds: dict[str, set[str]] = {"other": set(), "this tree": set()}
    for _ in range(runs):
        for label, (tree, mode) in sides.items():
            code = _RATE.format(tree=tree, seconds=seconds)
            env = dict(os.environ, PBEM_ENGINE=mode) if mode else None
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
            c5, x12, *kind = out.split()  # (a tree from before the compiled engine prints no kind)
            rates[label].append((float(c5), float(x12)))
            kinds[label].add(kind[0] if kind else "pure")
    for label in rates:
        print(f"{label:10s} ({'/'.join(sorted(kinds[label]))} engine) rounds/s classic 5p / expansion 12p: "
              + "  ".join(f"{a:.0f}/{b:.0f}" for a, b in rates[label]))
    for i, what in enumerate(("classic 5p", "expansion 12p")):
        ratios = [new[i] / old[i] for new, old in zip(rates["this tree"], rates["other"])]
        print(f"{what} random rounds/s, this tree / other: median {statistics.median(ratios):.2f} "
              f"(runs: {', '.join(f'{r:.2f}' for r in ratios)})")


_CLASSIC_RATE = _RATE.replace(', rounds_per_second("expansion", 12, {seconds})[0]', "")


def peer(build: str, seconds: float, runs: int) -> None:
    """Classic 5p random rounds/s of this engine over the TypeScript peer's (saboteur-game/engine
    compiled to `build`, played by scripts/bench_peer.js on Node), with its ids from a counter and
    with its uuids, in alternating runs: the medians of the per-run ratios (docs/engine-speed.md)."""
    script = str(Path(__file__).resolve().parent / "bench_peer.js")
    here = str(Path(__file__).resolve().parent.parent)

    def rate(cmd: list[str]) -> float:
        return float(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split()[0])

    print(f"this engine: {engine_kind()}")
    node = ["node", "--single-threaded", script, build, str(seconds)]
    rows = []
    for _ in range(runs):
        bare = rate(node + ["nouuid"])
        ours = rate([sys.executable, "-c", _CLASSIC_RATE.format(tree=here, seconds=seconds)])
        uuids = rate(node)
        rows.append((ours, bare, uuids))
        print(f"classic 5p rounds/s: this engine {ours:.0f}, peer without uuids {bare:.0f}, peer {uuids:.0f}")
    for i, what in ((1, "the peer without its uuids"), (2, "the peer")):
        ratios = [r[0] / r[i] for r in rows]
        print(f"this engine / {what}: median {statistics.median(ratios):.2f} "
              f"(runs: {', '.join(f'{x:.2f}' for x in ratios)})")


# Run in a fresh interpreter inside a tree: SHA-256 of every turn of seeded random rounds
# (the legal moves in order, the events, the open cells with their constraints, the reach),
# classic 3-10 and expansion 2-12 players, bots on the state and (every third round) on views.
# Only engine calls that every version since before 16.5 has, so two trees can be compared.
_TRACE = """
import hashlib, json, random, sys
sys.path[:0] = [{tree!r}]
from engine.catalog import CLASSIC, EXPANSION
from engine.chance import SeededChance
from engine.rules import apply, legal_moves
from engine.state import PLAYING, THEFT, deal
from engine.views import view
h = hashlib.sha256()
turns = 0
for ruleset, counts in ((CLASSIC, range(3, 11)), (EXPANSION, range(2, 13))):
    for players in counts:
        for seed in range({rounds}):
            names = tuple("p%d" % i for i in range(1, players + 1))
            state = deal(ruleset, names, SeededChance("trace/%s/%d/%d" % (ruleset, players, seed)))
            rng = random.Random(seed)
            while state.phase in (PLAYING, THEFT):
                me = state.player
                moves = legal_moves(view(state, me) if seed % 3 == 2 else state)
                move = moves[rng.randrange(len(moves))]
                board = state.board
                h.update(repr([tuple(m) for m in moves]).encode())
                h.update(repr([(p, tuple(s)) for p, s in board.slots().items()]).encode())
                h.update(repr(sorted(board.reach().items())).encode())
                h.update(json.dumps(apply(state, move), sort_keys=True).encode())
                turns += 1
import engine.rules
from importlib.machinery import EXTENSION_SUFFIXES
print(h.hexdigest(), turns, "compiled" if engine.rules.__file__.endswith(tuple(EXTENSION_SUFFIXES)) else "pure")
"""


def trace(tree: str, rounds: int, pure: bool = False) -> str:
    """The trace hash of `tree`'s engine over `rounds` seeds per table, the turns it covered and
    which engine ran (`pure`: the pure one, PBEM_ENGINE=pure)."""
    code = _TRACE.format(tree=str(Path(tree).resolve()), rounds=rounds)
    env = dict(os.environ, PBEM_ENGINE="pure") if pure else None
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    digest, turns, kind = out.split()
    return f"{digest} ({turns} turns, {kind} engine)"


def profile(which: str, rounds: int, top: int) -> None:
    ruleset, players = CONFIGS[which]
    prof = cProfile.Profile()
    prof.enable()
    for seed in range(rounds):
        play_random_round(ruleset, players, seed)
    prof.disable()
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/bench-engine", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=duration, default=3.0, help="time per measurement (default 3)")
    ap.add_argument("--views", action="store_true", help="also measure rounds played through views (like play_round)")
    ap.add_argument("--profile", choices=list(CONFIGS), help="cProfile random rounds instead")
    ap.add_argument("--against", metavar="TREE", help="rounds/s as ratios to the engine of another checkout "
                    "(pure: to this tree's pure engine, when the compiled one runs)")
    ap.add_argument("--peer", metavar="BUILD", help="classic 5p rounds/s as ratios to saboteur-game/engine "
                    "compiled to BUILD (needs node; docs/engine-speed.md)")
    ap.add_argument("--runs", type=at_least_one, default=5, help="alternating runs for --against and --peer (default 5)")
    ap.add_argument("--playouts", type=at_least_one, metavar="N", help="only play N seeded random rounds (for callgrind)")
    ap.add_argument("--config", choices=list(CONFIGS), default="classic5", help="table for --playouts")
    ap.add_argument("--trace", type=at_least_one, metavar="N", help="print the trace hash of N seeded rounds per table "
                    "(with --against: of both trees)")
    ap.add_argument("--rounds", type=at_least_one, default=200, help="rounds to profile (default 200)")
    ap.add_argument("--top", type=at_least_one, default=20, help="profile lines to print (default 20)")
    ap.add_argument("--target", type=positive, default=264.0, help="classic 5p rounds/s target (default 264)")
    args = ap.parse_args(argv)
    if args.against and args.against != "pure" and not (Path(args.against) / "engine").is_dir():
        ap.error(f"--against: {args.against!r} is no checkout (it has no engine/ folder)")
    if args.peer and not Path(args.peer).is_dir():
        ap.error(f"--peer: no folder {args.peer!r}")
    if args.profile:
        profile(args.profile, args.rounds, args.top)
        return 0
    if args.trace is not None:
        here = str(Path(__file__).resolve().parent.parent)
        for tree in ([args.against] if args.against else []) + [here]:
            print(f"{tree}: {trace(here if tree == 'pure' else tree, args.trace, pure=tree == 'pure')}")
        return 0
    if args.playouts is not None:
        playouts(args.config, args.playouts)
        return 0
    if args.peer:
        peer(args.peer, args.seconds, args.runs)
        return 0
    if args.against:
        against(args.against, args.seconds, args.runs)
        return 0
    print(f"python {sys.version.split()[0]}, {engine_kind()} engine, {args.seconds:g} s per measurement")

    def row(label: str, value: float, note: str = "") -> None:
        print(f"{label:42s}{value:9.1f}   {note}".rstrip())

    c5, c5t, c5n = rounds_per_second(CLASSIC, 5, args.seconds)
    row("classic 5p random rounds/s", c5, f"({c5t:.0f} turns/round, {c5n} rounds)")
    x12, x12t, x12n = rounds_per_second(EXPANSION, 12, args.seconds)
    row("expansion 12p random rounds/s", x12, f"({x12t:.0f} turns/round, {x12n} rounds)")
    if args.views:
        v5, _, _ = rounds_per_second(CLASSIC, 5, args.seconds, use_views=True)
        row("classic 5p rounds/s, bots on views", v5, "(like selfplay.play_round)")
        v12, _, _ = rounds_per_second(EXPANSION, 12, args.seconds, use_views=True)
        row("expansion 12p rounds/s, bots on views", v12)
    for ruleset, players, rounds in ((CLASSIC, 5, 20), (EXPANSION, 12, 10)):
        lm, avg = legal_per_second(ruleset, players, rounds, args.seconds / 2)
        row(f"legal-move generations/s, {ruleset} {players}p", lm, f"({avg:.0f} moves each, placements listed afresh)")
    verdict = "meets" if c5 >= args.target else "BELOW"
    print(f"target {args.target:g} classic 5p rounds/s (1.5x the TypeScript engine's 176/s): {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
