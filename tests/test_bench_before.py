"""scripts/bench compares this tree with an older commit whose modules may differ: a tree its
host benchmark cannot run on gives rows of n/a with a footnote saying why, not a traceback
(the default older commit once stopped the whole table this way)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


def test_a_tree_the_host_benchmark_cannot_run_on_gives_na_rows_and_a_footnote(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("bench_pbem", Path(__file__).parents[1] / "scripts" / "bench_pbem.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    trees = {}
    for label in ("now", "before"):  # an engine without the names bench_host.py imports
        for package in ("engine", "pbem"):
            (tmp_path / label / package).mkdir(parents=True)
            (tmp_path / label / package / "__init__.py").write_text("")
        (tmp_path / label / "engine" / "bots.py").write_text('"""Bots of another name."""\n')
        trees[label] = tmp_path / label
    rows, notes = bench.host_rows(trees, dict(os.environ))
    assert len(rows) == len(bench.HOST_ROWS)
    assert {row[1:] for row in rows} == {("n/a", "n/a")}, rows
    assert len(notes) == 2 and all("bench_host.py failed" in n and "RandomBot" in n for n in notes), notes
