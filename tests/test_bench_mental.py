"""scripts/bench-mental's game through the blind host runs and reports every row the cost table
needs (its first round at 3 seats, the smallest table, to stay quick: each aim it checks is per
round or per packet)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


@pytest.mark.slow
def test_the_bench_plays_a_round_and_reports_each_cost() -> None:
    spec = importlib.util.spec_from_file_location("bench_mental", Path(__file__).parents[1] / "scripts" / "bench_mental.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = dict(bench.blind_rows(3, rounds=1))
    tag = "3 seats (classic)"
    assert rows[f"messages (packets) before the first move, {tag}"].startswith("7 (2n + 1)")
    assert "aim < 30 s: met" in rows[f"a seat's CPU for the first round, {tag}"]
    assert "aim < 512 KiB: met" in rows[f"bytes per packet (median / the largest), {tag}"]
    assert rows[f"the time a vanished seat costs the table, {tag}"].startswith("not yet")
    for key in ("a seat's CPU per shuffle", "a seat's CPU per turn", "bytes in the first round"):
        assert any(k.startswith(key) for k in rows), key
