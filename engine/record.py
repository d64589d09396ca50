"""Equality, hash and repr of the engine's plain records, from the fields they name.

What `@dataclass` would write, written once here: the engine compiled by mypyc compiles these
methods ahead of time, while a dataclass's are generated from source at every start. A record
names its fields in `FIELDS`, in its `__init__`'s order (tests/test_listed_moves.py checks it).
"""

from __future__ import annotations

from typing import ClassVar


class Record:
    """Equal to a record of its own class with equal fields; shown with its fields, as a dataclass
    is. Unhashable, as a dataclass that is not frozen."""

    __slots__ = ()
    FIELDS: ClassVar[tuple[str, ...]] = ()

    def field_values(self) -> tuple[object, ...]:
        """The fields' values, in FIELDS' order."""
        return tuple([getattr(self, name) for name in self.FIELDS])

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Record)
        return self.field_values() == other.field_values()

    def __repr__(self) -> str:
        shown = ", ".join([f"{name}={value!r}" for name, value in zip(self.FIELDS, self.field_values())])
        return f"{type(self).__qualname__}({shown})"


class Frozen(Record):
    """A record whose fields never change (they are `Final`: mypy checks it, and the compiled
    engine refuses an assignment at run time), hashed by its fields."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self.field_values())
