"""Fit the outlook model (engine/bots/outlook.py) on the smart bots' own rounds.

Run through `scripts/fit-outlook` (it sets up .venv). Every turn of every round is a row:
`outlook.features(state)` of the whole state, and whether the digger side went on to win.
A logistic regression (Newton's method, a light ridge) over the tables named together; it
prints the weights (the intercept first, then the features in order) and the log-loss on a
third as many rounds held out, against the model in the tree and the bare base rate.

    scripts/fit-outlook --tables classic5 --rounds 300      # 5 classic seats alone
    scripts/fit-outlook --tables classic4,classic5,classic7,classic10

Self-play fits what goes with winning, not what makes it: a feature that moves with the
bots' way of playing (who gets blocked, and when) can get a weight a search should not act
on (docs/search-bot-trials.md).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from script_args import at_least_one, listed

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.bots.arena import TABLES as ARENA_TABLES  # noqa: E402
from engine.bots.arena import play_round_observed  # noqa: E402
from engine.bots.outlook import digger_chance, features  # noqa: E402
from engine.bots.sides import digger_side_won  # noqa: E402
from engine.bots.smart import SmartBot  # noqa: E402
from engine.chance import SeededChance  # noqa: E402
from engine.game import Game  # noqa: E402
from engine.selfplay import Bot  # noqa: E402
from engine.state import PLAYING, RoundState  # noqa: E402

# the arena's tables and a few more sizes, to fit across
TABLES = {**ARENA_TABLES, "classic4": ("classic", 4), "classic7": ("classic", 7), "expansion5": ("expansion", 5)}


def rows(ruleset: str, n: int, rounds: int, seed: str) -> list[tuple[list[float], int, float]]:
    """(features, digger side won, the tree's model) for every turn of `rounds` smart rounds."""
    names = tuple(f"p{i}" for i in range(1, n + 1))
    out = []
    for g in range(rounds):
        state = Game(ruleset, names).start_round(SeededChance(f"{seed}/{ruleset}/{n}/{g}"))
        seen = _played(state, {p: SmartBot(p, f"{seed}/{g}") for p in names})
        won = int(digger_side_won(state))
        out.extend((f, won, p) for f, p in seen)
    return out


def _played(state: RoundState, bots: dict[str, Bot]) -> list[tuple[list[float], float]]:
    """Play the round out (arena.play_round_observed); (features, the tree's model) of every
    turn of play, each before its move."""
    seen = []

    def look(s: RoundState) -> None:
        if s.phase == PLAYING:
            seen.append((list(features(s)), digger_chance(s)))

    play_round_observed(state, bots, before=look)
    return seen


def fit(xs: list[list[float]], ys: list[int], ridge: float = 1e-3, steps: int = 30) -> list[float]:
    """Logistic regression by Newton's method; the intercept first."""
    k = len(xs[0]) + 1
    w = [0.0] * k
    for _ in range(steps):
        grad = [0.0] * k
        hess = [[0.0] * k for _ in range(k)]
        for x, y in zip(xs, ys):
            row = [1.0, *x]
            z = max(-30.0, min(30.0, sum(a * b for a, b in zip(w, row))))
            p = 1 / (1 + math.exp(-z))
            for i in range(k):
                grad[i] += (p - y) * row[i]
                for j in range(k):
                    hess[i][j] += p * (1 - p) * row[i] * row[j]
        for i in range(k):
            grad[i] += ridge * w[i]
            hess[i][i] += ridge + 1e-9
        w = [a - b for a, b in zip(w, solve(hess, grad))]
    return w


def solve(a: list[list[float]], b: list[float]) -> list[float]:
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[piv] = m[piv], m[c]
        if abs(m[c][c]) < 1e-12:
            continue
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] if abs(m[i][i]) > 1e-12 else 0.0 for i in range(n)]


def logloss(ps: list[float], ys: list[int]) -> float:
    return -sum(math.log(max(1e-9, p if y else 1 - p)) for p, y in zip(ps, ys)) / max(1, len(ys))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/fit-outlook", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tables", type=listed(TABLES), default=["classic5"], help=f"comma-separated, from {', '.join(TABLES)}")
    ap.add_argument("--rounds", type=at_least_one, default=300, help="rounds a table to fit on (and a third more held out)")
    ap.add_argument("--seed", default="outlook")
    args = ap.parse_args(argv)
    train, held = [], []
    for t in args.tables:
        ruleset, n = TABLES[t]
        train += rows(ruleset, n, args.rounds, args.seed)
        held += rows(ruleset, n, max(1, args.rounds // 3), args.seed + "/held")
    w = fit([r[0] for r in train], [r[1] for r in train])
    ys = [r[1] for r in held]
    base = sum(r[1] for r in train) / len(train)

    def model(x: list[float]) -> float:
        z = max(-30.0, min(30.0, w[0] + sum(a * b for a, b in zip(w[1:], x))))
        return 1 / (1 + math.exp(-z))

    print(f"tables {args.tables}: {len(train)} rows, {len(held)} held out")
    print("weights", "(" + ", ".join(f"{x:.3f}" for x in w) + ")")
    print(f"held-out log-loss: fitted {logloss([model(r[0]) for r in held], ys):.4f}, "
          f"the tree's {logloss([r[2] for r in held], ys):.4f}, base rate {logloss([base] * len(ys), ys):.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
