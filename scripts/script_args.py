"""Argument types the scripts share: a bad value is argparse's usage and one error line, at once,
never a traceback after minutes of work (`type=at_least_one`, `type=listed(TABLES)`, ...)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterable
from pathlib import Path


def at_least_one(text: str) -> int:
    """A whole number, at least 1 (games, runs, jobs, play-outs)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a whole number, at least 1, not {text!r}")
    return int(text)


def zero_or_more(text: str) -> int:
    """A whole number, 0 or more (a first deal, a count of turns)."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"a whole number, 0 or more, not {text!r}")
    return int(text)


def _number(text: str) -> float:
    """`text` as a finite number, else NaN (which no bound below takes)."""
    try:
        value = float(text)
    except ValueError:
        return math.nan
    return value if math.isfinite(value) else math.nan


def duration(text: str) -> float:
    """A time, more than 0."""
    value = _number(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"seconds, more than 0, not {text!r}")
    return value


def think_time(text: str) -> float:
    """A search bot's seconds a decision: 0 (no search) or more."""
    value = _number(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"seconds, 0 or more, not {text!r}")
    return value


def positive(text: str) -> float:
    """A number more than 0 that is not a time (a target rate)."""
    value = _number(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"a number more than 0, not {text!r}")
    return value


def listed(names: Iterable[str]) -> Callable[[str], list[str]]:
    """Comma-separated names, each one of `names`."""
    known = list(names)

    def parse(text: str) -> list[str]:
        got = [t.strip() for t in text.split(",") if t.strip()]
        wrong = [t for t in got if t not in known]
        if wrong or not got:
            raise argparse.ArgumentTypeError(f"{', '.join(map(repr, wrong)) or 'nothing'} is not one of {', '.join(known)}")
        return got

    return parse


def numbers(low: int, high: int | None = None) -> Callable[[str], list[int]]:
    """Comma-separated whole numbers, each from `low` to `high` (seat counts, daemon counts)."""
    span = f"{low} to {high}" if high is not None else f"at least {low}"

    def parse(text: str) -> list[int]:
        parts = text.split(",")
        if not all(p.strip().isdigit() for p in parts):
            raise argparse.ArgumentTypeError(f"whole numbers separated by commas, not {text!r}")
        got = [int(p) for p in parts]
        if min(got) < low or (high is not None and max(got) > high):
            raise argparse.ArgumentTypeError(f"each {span}, not {text!r}")
        return got

    return parse


def existing_file(text: str) -> Path:
    """A file that exists and is a regular one (not a folder, a pipe or a device)."""
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no file {text!r}")
    return path
