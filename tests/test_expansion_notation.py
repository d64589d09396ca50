"""RULES.md §7, expansion notation: 'discard 2 and remove' and 'steal' parse and print canonically."""

from __future__ import annotations

import pytest

from engine.errors import InvalidMove
from engine.moves import Move, parse, resolve


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("discard map.1 rockfall.1 remove trap", "discard map.1 rockfall.1 remove trap"),
        ("DISCARD Map.1  Rockfall.1 Remove TRAP", "discard map.1 rockfall.1 remove trap"),
        ("discard cross.1 map.2 remove break-pick", "discard cross.1 map.2 remove break-pick"),
        ("discard cross.1 map.2 remove theft", "discard cross.1 map.2 remove theft"),
        ("steal bob", "steal bob"),
        ("Steal BOB", "steal bob"),
        ("steal nobody", "steal nobody"),
        ("discard map.1 rockfall.1 trap.1", "discard map.1 rockfall.1 trap.1"),
        ("play theft.1", "play theft.1"),
        ("play swap-hat.1 on bob", "play swap-hat.1 on bob"),
    ],
)
def test_parse_and_print(text: str, canonical: str) -> None:
    move = parse(text)
    assert str(move) == canonical
    assert parse(str(move)) == move


def test_parsed_fields() -> None:
    assert parse("discard map.1 cross.1 remove trap") == Move(
        "discard", cards=("map.1", "cross.1"), remove="trap"
    )
    assert parse("steal bob") == Move("steal", target="bob")
    assert parse("steal nobody") == Move("steal", target=None)


def test_remove_lists_its_cards_sorted_after_resolving() -> None:
    move = resolve(parse("discard rockfall map remove trap"), ["rockfall.2", "map.4", "map.1"])
    assert str(move) == "discard map.1 rockfall.2 remove trap"


@pytest.mark.parametrize(
    "text",
    [
        "discard map.1 remove trap",  # exactly 2 cards
        "discard map.1 cross.1 rockfall.1 remove trap",
        "discard map.1 cross.1 remove",
        "discard map.1 cross.1 remove map",  # not a type that lies in front of a player
        "discard map.1 cross.1 remove trap theft",
        "discard map.1 cross.1 rockfall.1 free.1",  # at most 3
        "steal",
        "steal bob ann",
    ],
)
def test_bad_notation(text: str) -> None:
    with pytest.raises(InvalidMove):
        parse(text)
