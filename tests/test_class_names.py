"""No two classes share a name: a name says which thing it is without its module
(`SeatMove`, the signed document, beside the engine's `Move`)."""

from __future__ import annotations

import ast
from collections import defaultdict

from source_trees import ROOT, nodes, sources


def _classes() -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for path in sources("pbem", "engine"):
        for node in nodes(path):
            if isinstance(node, ast.ClassDef):
                found[node.name].append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_no_two_classes_in_pbem_and_the_engine_share_a_name() -> None:
    """Classes inside functions count too (ast.walk reads every node)."""
    places = _classes()
    assert len(places) > 200 and {"Move", "SeatMove", "RuleContext", "GameRecord"} <= places.keys()
    assert {name: where for name, where in places.items() if len(where) > 1} == {}
