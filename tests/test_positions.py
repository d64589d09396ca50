"""Runs every rules case under tests/positions/ (see the README there)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.errors import IllegalMove, InvalidMove, MoveError
from engine.position import dump, load
from engine.rules import apply, legal_moves

ROOT = Path(__file__).parent / "positions"
CASES = sorted(ROOT.glob("*/*.json"))


def _matches(actual: Any, expected: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and _matches(actual[k], v) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(actual, list):
        return len(actual) == len(expected) and all(_matches(a, e) for a, e in zip(actual, expected))
    return actual == expected


def _subsequence(events: list[dict], wanted: list[dict]) -> bool:
    it = iter(events)
    return all(any(_matches(e, w) for e in it) for w in wanted)


def test_there_are_cases() -> None:
    assert len(CASES) >= 1


def _refused(case: dict[str, Any], key: str, error: type[MoveError]) -> None:
    """Each move under `key` is refused with `error`, quoting the reason, and changes nothing."""
    items = case.get(key, [])
    for item in [items] if isinstance(items, dict) else items:
        probe = load(case["position"])
        with pytest.raises(error) as err:
            apply(probe, item["move"])
        assert item.get("reason", "") in str(err.value)
        assert dump(probe) == dump(load(case["position"])), "a refused move must not change the state"


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_case(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    assert case.get("rule"), f"{path.name}: every case names its rule"
    state = load(case["position"])
    legal = sorted(str(m) for m in legal_moves(state))
    if "legal" in case:
        assert legal == sorted(case["legal"])
    for move in case.get("legal_includes", []):
        assert move in legal, f"{move!r} should be legal"
    for move in case.get("legal_excludes", []):
        assert move not in legal, f"{move!r} should not be legal"
    if "legal_count" in case:
        assert len(legal) == case["legal_count"]
    for key, error in (("illegal", IllegalMove), ("invalid", InvalidMove)):
        _refused(case, key, error)
    events: list[dict] = []
    for move in case.get("apply", []):
        events += apply(state, move)
    if "expect" in case:
        result = json.loads(json.dumps(dump(state)))
        for key, value in case["expect"].items():
            assert key in result, f"no key {key!r} in the result"
            assert _matches(result[key], value), f"{key}: got {result[key]!r}, want {value!r}"
    if "events" in case:
        assert _subsequence(events, case["events"]), f"events were {events!r}"
    for kind in case.get("no_events", []):
        assert all(e["event"] != kind for e in events), f"unexpected {kind} event"
