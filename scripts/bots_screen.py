"""Screen a version of the search bot against the smart bot, one decision at a time.

Run through `scripts/bots-screen` (it sets up .venv). The arena (`scripts/bots-arena --bots
search,smart`) gives one bit a deal, and the seat's moves change it in about one deal in six,
so 150 deals leave a band of +-6 points: it cannot tell versions apart. This is sharper.

The smart bot plays every seat of the arena's seeded deals (the same deals and seat as
`--bots`). At each decision of the seat, the version (the search bot, changed by `--set`)
says what it would play, from the seat's view and the public moves, as in the arena. Where
it would play something else than the smart bot, both moves are valued from the true state
by `--playouts` play-outs to the round's end: the deck shuffled again for each (the same
shuffles for both moves), smart bots in every seat carrying what they learnt so far and
judging every move of the play-out. The smart bot's move is then played and the deal goes on.
A deal's gain is the sum over its decisions of (the version's value - the smart bot's), in
points of the seat's side's chance to win: what the version's choices are worth one at a
time, every other move being the smart bot's. It prints the mean gain a deal and its 95%
interval (normal approximation over deals), the decisions and how many the version changed,
and the changes by the kinds of move swapped ("path -> fix": the smart bot's path card, the
version's repair), each kind's count and points in all: which decisions the version changes,
and whether those changes win.

    scripts/bots-screen --table classic5 --seat-role saboteur --deals 40
    scripts/bots-screen --table classic10 --seat-role saboteur --json > before.json
    scripts/bots-screen --table classic10 --seat-role saboteur --set horizon=1 --against before.json

`--set NAME=VALUE` sets an attribute of the search bot (engine/bots/search.py: candidates,
evidence, horizon, primed, distinct, min_worlds; numbers, true or false). Gains of single
decisions do not simply add up in the arena: once the version deviates, its later
decisions differ too (docs/search-bot-trials.md).

`--against FILE` compares with an earlier run's `--json` output deal by deal: both runs meet
the same decisions (the smart bot plays the deal either way) and value a move by the same
play-outs, so where two versions choose alike their gains are equal, and the difference of
two versions is much sharper than either one's gain.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from script_args import at_least_one, existing_file, think_time, zero_or_more

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.bots import THINK  # noqa: E402
from engine.bots.arena import TABLES, spectator_of  # noqa: E402
from engine.bots.search import SearchBot, play_out  # noqa: E402
from engine.bots.sides import side_of, side_won  # noqa: E402
from engine.bots.smart import SmartBot  # noqa: E402
from engine.bots.suspicion import Suspicion  # noqa: E402
from engine.catalog import Ruleset, card_kind  # noqa: E402
from engine.chance import SeededChance  # noqa: E402
from engine.game import Game  # noqa: E402
from engine.moves import Move  # noqa: E402
from engine.rules import apply_unchecked  # noqa: E402
from engine.state import PLAYING, THEFT, RoundState  # noqa: E402
from engine.views import view  # noqa: E402

Settings = list[tuple[str, float | bool]]


def _copy(sus: Suspicion, saboteur: bool) -> Suspicion:
    other = sus.seen_by(sus.me, saboteur)
    other.known = dict(sus.known)
    return other


def value(state: RoundState, move: Move, bots: dict[str, SmartBot], seed: str, playouts: int, role: str) -> float:
    """The seat's side's share of wins over `playouts` play-outs of `move` from the true `state`."""
    mover = state.player
    before = state.board
    won = 0
    for k in range(playouts):
        s = state.copy()
        random.Random(f"{seed}/{k}").shuffle(s.deck)
        apply_unchecked(s, move)
        players = {}
        for p, b in bots.items():
            sus = b.sus if b.sus is not None else Suspicion(p, s.players, s.ruleset)  # (no move seen yet)
            fresh = SmartBot(p, f"{seed}/{k}")
            fresh.prime(s, _copy(sus, s.role(p) == "saboteur"))
            players[p] = fresh
        play_out(s, players, (before, str(move.public()), mover))
        won += side_won(s, role)
    return won / playouts


def kind_of(move: Move) -> str:
    """What sort of move it is, for the breakdown of changes: path, dead end, the action, discard."""
    if move.verb != "play" or move.card is None:
        return move.verb
    k = card_kind(move.card)
    if k.action is not None:
        return k.action
    return "dead end" if k.kind.startswith("dead") else "path"


Change = tuple[str, str, float]  # (the smart bot's kind of move, the version's, the gain)


def screen_deal(ruleset: Ruleset, players: tuple[str, ...], seed: str, side: str, think: float,
                settings: Settings, playouts: int) -> tuple[float, int, int, list[Change]] | None:
    """One deal: the version's gain (sum over the seat's decisions), decisions, deviations and
    each deviation's kinds of move and gain."""
    dealt = Game(ruleset, players).start_round(SeededChance(seed))
    seats = [p for p in players if side_of(dealt.role(p)) == side]
    if not seats:
        return None
    seat = seats[SeededChance(f"{seed}/seat").below(len(seats))]  # (the arena's seat: arena.duel_round)
    role = dealt.role(seat)
    state = Game(ruleset, players).start_round(SeededChance(seed))
    bots = {p: SmartBot(p, seed) for p in players}
    version = SearchBot(seat, seed, think)
    for name, val in settings:
        setattr(version, name, val)
    gain, decisions, deviations = 0.0, 0, 0
    changes: list[Change] = []
    while state.phase in (PLAYING, THEFT):
        me = state.player
        v = view(state, me)
        if me == seat and state.phase == PLAYING:
            mine = version.choose(v)
            move = bots[me].choose(v)
            decisions += 1
            if str(mine) != str(move):
                deviations += 1
                at = f"{seed}/decision{decisions}"
                assert role is not None
                got = value(state, mine, bots, at, playouts, role) - value(state, move, bots, at, playouts, role)
                gain += got
                changes.append((kind_of(move), kind_of(mine), got))
        else:
            move = bots[me].choose(v)
        apply_unchecked(state, move)
        if state.phase == PLAYING:
            public = spectator_of(view(state, state.player))
            text = str(move.public())
            for b in bots.values():
                b.observe(public, text, me)
            version.observe(public, text, me)
    return gain, decisions, deviations, changes


Deal = tuple[int, float, int, int, list[Change]]  # the deal's number, its gain, decisions, deviations, changes


def _work(args: tuple[Ruleset, int, str, str, int, int, float, Settings, int]) -> tuple[list[Deal], float]:
    ruleset, n, seed, side, first, count, think, settings, playouts = args
    t0 = time.process_time()
    names = tuple(f"p{i}" for i in range(1, n + 1))
    out = []
    for g in range(first, first + count):
        got = screen_deal(ruleset, names, f"{seed}/{ruleset}/{n}/{side}/{g}", side, think, settings, playouts)
        if got is not None:
            out.append((g, *got))
    return out, time.process_time() - t0


def mean_band(xs: list[float]) -> tuple[float, float, float]:
    """The mean of `xs` and its 95% interval (normal approximation)."""
    m = len(xs)
    mean = sum(xs) / m if m else 0.0
    half = 1.96 * (sum((x - mean) ** 2 for x in xs) / max(1, m - 1) / max(1, m)) ** 0.5
    return mean, mean - half, mean + half


def _earlier(text: str) -> tuple[str, dict[int, float]]:
    """`--against FILE`: an earlier run's gains by deal, read before this run starts its work."""
    path = existing_file(text)
    try:
        with path.open("rb") as f:
            doc = json.loads(f.read(1 << 24))
        return text, {int(g): float(x) for g, x in doc["gains"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a --json output of this script ({exc})") from None


def _setting(text: str) -> tuple[str, float | int | bool]:
    """NAME=VALUE, the value of the attribute's own type (the compiled engine takes no other)."""
    name, _, raw = text.partition("=")
    if not hasattr(SearchBot("x"), name) or not raw:
        raise argparse.ArgumentTypeError(f"--set takes NAME=VALUE with NAME an attribute of the search bot, not {text!r}")
    kind = type(getattr(SearchBot("x"), name))
    if kind is bool:
        if raw.lower() not in ("true", "false"):
            raise argparse.ArgumentTypeError(f"--set {name}: true or false, not {raw!r}")
        return name, raw.lower() == "true"
    try:
        return name, int(raw) if kind is int else float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--set {name}: {'a whole number' if kind is int else 'a number'}, "
                                         f"not {raw!r}") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/bots-screen", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", default="classic5", choices=sorted(TABLES))
    ap.add_argument("--seat-role", default="saboteur", choices=("digger", "saboteur"))
    ap.add_argument("--deals", type=at_least_one, default=40, help="deals 0 .. N-1 of the arena's series (default 40)")
    ap.add_argument("--first", type=zero_or_more, default=0, help="the first deal (default 0)")
    ap.add_argument("--playouts", type=at_least_one, default=8, help="play-outs valuing each move (default 8)")
    ap.add_argument("--think", type=think_time, default=THINK, help=f"the search bot's seconds a decision (default {THINK})")
    ap.add_argument("--set", dest="settings", action="append", type=_setting, default=[], metavar="NAME=VALUE",
                    help="an attribute of the search bot (e.g. horizon=1, candidates=4); may be repeated")
    ap.add_argument("--seed", default="arena", help="series seed (default 'arena', the arena's)")
    ap.add_argument("--jobs", type=at_least_one, default=1, help="worker processes (default 1)")
    ap.add_argument("--chunk", type=at_least_one, default=5, help="deals per work unit (default 5)")
    ap.add_argument("--against", metavar="FILE", type=_earlier,
                    help="an earlier run's --json output (same table, side, seed): the difference, deal by deal")
    ap.add_argument("--json", action="store_true", help="print the result as JSON (with each deal's gain)")
    args = ap.parse_args(argv)
    ruleset, n = TABLES[args.table]
    units = [(ruleset, n, args.seed, args.seat_role, first, min(args.chunk, args.first + args.deals - first), args.think,
              args.settings, args.playouts) for first in range(args.first, args.first + args.deals, args.chunk)]
    start = time.perf_counter()
    deals: list[Deal] = []
    cpu = 0.0
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for got, secs in pool.map(_work, units):
            deals.extend(got)
            cpu += secs
    gains = {g: round(100 * gain, 3) for g, gain, _, _, _ in deals}
    kinds: dict[str, list[float]] = {}
    for _, _, _, _, made in deals:
        for was, now, pts in made:
            kinds.setdefault(f"{was} -> {now}", []).append(100 * pts)
    mean, low, high = mean_band(list(gains.values()))
    row: dict[str, object] = {
        "table": args.table, "seat_role": args.seat_role, "deals": len(deals), "first": args.first, "seed": args.seed,
        "think": args.think, "playouts": args.playouts, "settings": dict(args.settings),
        "decisions": sum(d for _, _, d, _, _ in deals), "deviations": sum(x for _, _, _, x, _ in deals),
        "gain": round(mean, 2), "low": round(low, 2), "high": round(high, 2),
        "cpu_s": round(cpu, 1), "wall_s": round(time.perf_counter() - start, 1), "gains": gains,
        "changes": {k: {"n": len(v), "points": round(sum(v), 1)} for k, v in sorted(kinds.items(), key=lambda kv: -len(kv[1]))}}
    if args.against:
        # The same deals and decisions, the same play-outs: a deal's two gains differ only where
        # the versions chose differently, so the difference is far less noisy than either.
        earlier, other = args.against
        both = [g for g in gains if g in other]
        diff, dlow, dhigh = mean_band([gains[g] - other[g] for g in both])
        row["against"] = {"file": earlier, "deals": len(both), "diff": round(diff, 2), "low": round(dlow, 2),
                          "high": round(dhigh, 2)}
    if args.json:
        print(json.dumps(row, indent=1))
        return 0
    changes = " ".join(f"{k}={v}" for k, v in args.settings) or "as it is"
    print(f"search ({changes}) against smart, {args.table} {args.seat_role}, {len(deals)} deals from {args.first}, "
          f"seed {args.seed!r}, think {args.think} s, {args.playouts} play-outs a move")
    print(f"decisions {row['decisions']}, changed {row['deviations']}; gain a deal {mean:+.1f} points, "
          f"95% interval [{low:+.1f}, {high:+.1f}]; {cpu:.0f} CPU s")
    for k, v in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        print(f"  {k}: {len(v)} times, {sum(v):+.1f} points in all ({sum(v) / len(v):+.1f} each)")
    if args.against:
        print(f"against {args.against}: {diff:+.1f} points a deal, 95% interval [{dlow:+.1f}, {dhigh:+.1f}], "
              f"{len(both)} deals in both")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
