"""The group operations a piece of code performs, counted, for tests that bound its work (how
many scalar multiplications a round's opening or a shuffle proof's check costs): each call the
group module makes into libsodium's ristretto255 is counted, and still made."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from pbem.protocol.mental import group

OPS = ("mul", "base", "add", "sub")  # variable-base and fixed-base multiplication, addition, subtraction


@contextmanager
def counted() -> Iterator[Counter[str]]:
    """Within the block, how many times each of OPS was computed."""
    ops: Counter[str] = Counter()
    group.base_mul(1)  # the library loaded, its functions bound
    with pytest.MonkeyPatch.context() as mp:
        for name in OPS:
            mp.setattr(group._sodium, name, _counting(ops, name, getattr(group._sodium, name)))
        yield ops


def _counting(ops: Counter[str], name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        ops[name] += 1
        return real(*args)
    return call
