"""The legal moves of a position as parts, made into `Move`s all at once or one at a time.

`rules.legal_moves` makes every move (`flat`); `rules.listed_moves` gives a `Listed`, which
makes a move only when it is asked for. A random player counts the moves and takes one of
them (a classic turn lists 13-16, an expansion turn 40-70, mostly discards), so making only
that one saves most of the cost of a `Move` per turn. Both give the same moves in the same order.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate
from operator import index as operator_index
from operator import itemgetter
from typing import Any, Final, overload

from .moves import Move

# How a part's items become moves; a part is (how, items, extra).
MADE: Final = 0  # the items are moves
TURNED: Final = 1  # cells the card `extra` is played at turned (a path card)
DISCARDED: Final = 2  # the cards of a discard, removing the type `extra` (None: a plain pass)
LOOKED_UP: Final = 3  # keys of the mapping `extra`, whose values are the moves
AT: Final = 4  # cells the card `extra` is played at (a path card unturned, a rockfall)
AIMED: Final = 5  # (target, tool) aims of the card `extra` (engine/actions.py: ActionRule.part)
Part = tuple[int, Sequence[Any], Any]

_ITEMS = itemgetter(1)  # a part's items
_new = tuple.__new__  # a Move from its fields in order, faster than Move(...) in the hot loops


def flat(parts: list[Part]) -> list[Move]:
    """Every move of `parts`, in order."""
    out: list[Move] = []
    for how, items, extra in parts:
        if how == MADE:
            out += items
        elif how == AT:
            out += [_new(Move, ("play", extra, pos, False, None, None, (), None)) for pos in items]
        elif how == TURNED:
            out += [_new(Move, ("play", extra, pos, True, None, None, (), None)) for pos in items]
        elif how == DISCARDED:
            out += [_new(Move, ("discard", None, None, False, None, None, cards, extra)) for cards in items]
        elif how == AIMED:
            out += [_new(Move, ("play", extra, None, False, target, tool, (), None)) for target, tool in items]
        else:
            out += map(extra.__getitem__, items)
    return out


class Listed(Sequence[Move]):
    """The moves of `parts` in the order `flat` gives them, each made when first asked for
    (asking for the same place twice gives the same object)."""

    __slots__ = ("_parts", "_ends", "_len", "_made")

    def __init__(self, parts: list[Part]) -> None:
        self._parts = parts
        # where each part ends in the list: a move's part is found by bisection, not a Python loop
        self._ends = ends = list(accumulate(map(len, map(_ITEMS, parts))))
        self._len = ends[-1] if ends else 0
        self._made: dict[int, Move] = {}

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> Move: ...

    @overload
    def __getitem__(self, index: slice) -> list[Move]: ...

    def __getitem__(self, index: int | slice) -> Move | list[Move]:
        if type(index) is not int or not 0 <= index < self._len:  # (the commonest ask first: an index from 0 up)
            return self._other(index)
        made = self._made.get(index)
        if made is not None:
            return made
        i = index
        ends = self._ends
        k = bisect_right(ends, i)  # the first part ending after i (empty parts end where the one before does)
        how, items, extra = self._parts[k]
        item = items[i - ends[k - 1] if k else i]
        # (made here, not by a call: the commonest kinds of classic turns first)
        if how == LOOKED_UP:
            made = extra[item]
        elif how == AT:
            made = _new(Move, ("play", extra, item, False, None, None, (), None))
        elif how == AIMED:
            made = _new(Move, ("play", extra, None, False, item[0], item[1], (), None))
        elif how == DISCARDED:
            made = _new(Move, ("discard", None, None, False, None, None, item, extra))
        elif how == TURNED:
            made = _new(Move, ("play", extra, item, True, None, None, (), None))
        else:
            made = item
        self._made[i] = made
        return made

    def _other(self, index: int | slice) -> Move | list[Move]:
        """A slice, an index from the end, or one out of range."""
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._len))]
        i = operator_index(index)
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError(f"move {index} of {self._len}")
        return self[i]

    def __iter__(self) -> Iterator[Move]:
        for i in range(self._len):
            yield self[i]

    def __repr__(self) -> str:
        return f"Listed({list(self)!r})"
