"""Seeded self-play games give the same moves and final positions as when the vectors were made.

A change of the legal-move order, of a rule or of the position format changes a digest here.
When a rule change is meant, regenerate with `python tests/test_selfplay_digests.py --write`
and say why in the commit. The games: random and smart bots, both rulesets, few and many seats.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from engine.bots import make_bot
from engine.catalog import Ruleset
from engine.digest import digest
from engine.selfplay import play_game

VECTORS = Path(__file__).parent / "vectors" / "engine" / "selfplay.json"
GAMES: list[tuple[Ruleset, int, str, int]] = [
    (ruleset, seats, kind, seed)
    for ruleset, seats in (("classic", 5), ("classic", 10), ("expansion", 4), ("expansion", 12))
    for kind in ("random", "smart")
    for seed in range(2)
]


def game_digest(ruleset: Ruleset, seats: int, kind: str, seed: int) -> str:
    """SHA-256 of the JSON of every round's moves and the digest of every round's final state."""
    players = tuple(f"p{i}" for i in range(1, seats + 1))
    game, record = play_game(ruleset, players, f"golden/{seed}", lambda p: make_bot(kind, p, seed))
    return hashlib.sha256(json.dumps([record.moves, [digest(r) for r in game.rounds]]).encode()).hexdigest()


def _key(ruleset: str, seats: int, kind: str, seed: int) -> str:
    return f"{ruleset}/{seats}/{kind}/{seed}"


@pytest.mark.parametrize("game", GAMES, ids=[_key(*g) for g in GAMES])
def test_self_play_digest(game: tuple[Ruleset, int, str, int]) -> None:
    expected = json.loads(VECTORS.read_text(encoding="utf-8"))
    assert game_digest(*game) == expected[_key(*game)]


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    VECTORS.write_text(json.dumps({_key(*g): game_digest(*g) for g in GAMES}, indent=1) + "\n", encoding="utf-8")
