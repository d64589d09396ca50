"""A state survives dump and load with every card id intact, and so does a game played through
the host (which stores its state as a dump between moves)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from table_games import make_table, play_until

from engine.catalog import card_sort_key
from engine.chance import SeededChance
from engine.position import dump, load
from engine.state import deal
from pbem.replay.audit import audit_source
from pbem.replay.sources import open_source


def test_role_card_ids_survive_dump_and_load() -> None:
    for seed in range(40):
        for ruleset, n in (("classic", 5), ("expansion", 7), ("expansion", 12)):
            state = deal(ruleset, tuple(f"p{i}" for i in range(n)), SeededChance(seed))
            again = load(json.loads(json.dumps(dump(state))))
            assert again.roles == state.roles
            assert sorted(again.all_cards()) == sorted(state.all_cards())
            assert again.hands == {p: sorted(h, key=card_sort_key) for p, h in state.hands.items()}


@pytest.mark.slow
def test_expansion_games_through_the_host_audit_clean(tmp_path: Path) -> None:
    """The host reloads its state from a dump before every move; the audit never does."""
    for seed, n in ((11, 4), (12, 9)):
        root = tmp_path / f"g{seed}"
        table = make_table(root, [f"p{i}" for i in range(n)], "expansion")
        play_until(table, lambda p: p.doc.phase == "game-over", seed=seed, limit=5000)
        table.host.close()
        src = open_source(str(root / "game.db"))
        reports = audit_source(src, src.games()[0], [1, 2, 3])
        assert [r.ok for r in reports] == [True] * 3, [f.line() for r in reports for f in r.faults]
