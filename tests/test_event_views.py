"""What each seat may see of a move's events: views.events_for, the one rule (host, replay, words)."""

from __future__ import annotations

import pytest

from engine.bots import RandomBot
from engine.catalog import CLASSIC, EXPANSION, Ruleset
from engine.chance import SeededChance
from engine.events import Event
from engine.rules import apply
from engine.state import PLAYING, THEFT, deal
from engine.views import PUBLIC_KEYS, events_for, is_private, secret_events

NAMES = ("ann", "bob", "cat", "dan", "eve", "fay")


def _all_events(ruleset: Ruleset, seed: int) -> list[list[Event]]:
    """The events of every move of one random round."""
    state = deal(ruleset, NAMES, SeededChance(f"events/{ruleset}/{seed}"))
    bot = RandomBot(seed)
    out = []
    while state.phase in (PLAYING, THEFT):
        out.append(apply(state, bot.choose(state)))
    return out


@pytest.mark.parametrize("ruleset,seed", [(CLASSIC, 1), (CLASSIC, 2), (EXPANSION, 1), (EXPANSION, 2), (EXPANSION, 3)])
def test_each_seat_sees_its_own_secrets_and_only_the_public_part_of_others(ruleset: Ruleset, seed: int) -> None:
    private_seen = 0
    for events in _all_events(ruleset, seed):
        public = events_for(events, None)
        assert all(e["event"] != "move" for e in public), "the move event names a discard's cards"
        for e in public:
            if is_private(e):
                assert set(e) <= PUBLIC_KEYS, e
                assert "card" not in e and "role" not in e
        for seat in NAMES:
            mine = events_for(events, seat)
            assert len(mine) == len(public)
            secrets = secret_events(events, seat)
            # a seat's copy is the public copy with its own secrets whole, in the same places
            assert [e for e in mine if e not in public] == [e for e in secrets if e not in public]
            for full, shown in zip([e for e in events if e["event"] != "move"], mine):
                if full.get("player") == seat:
                    assert shown == full
                    private_seen += is_private(full)
                elif is_private(full):
                    assert shown != full and set(shown) <= PUBLIC_KEYS
                else:
                    assert shown == full
    assert private_seen, "the round had draws at least"


def test_a_draw_shows_others_who_drew_but_not_the_card() -> None:
    events: list[Event] = [
        {"event": "move", "player": "ann", "move": "discard cross.1"},
        {"event": "draw", "player": "ann", "card": "map.3"},
        {"event": "map", "player": "bob", "goal": "top", "card": "goal-gold.1", "private": True},
    ]
    assert events_for(events, "cat") == [{"event": "draw", "player": "ann"}, {"event": "map", "player": "bob", "goal": "top"}]
    assert events_for(events, "ann")[0] == {"event": "draw", "player": "ann", "card": "map.3"}
    assert secret_events(events, "bob") == [events[2]]
