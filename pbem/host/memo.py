"""What a host keeps from one read or change of a game to the next, and the one rule for when
it is stale: a value is kept at a key that every writer of what it was read from changes, and
is used only while the key is unchanged; else it is read again from the store.

Two keys: the game's head (the last packet's hash), for what only a packet changes: per
classic Host, the live state of the round (opened from the host's box otherwise), the round
so far as its archive will list it (`RoundLog`: read and opened move by move otherwise) and
the last public moves that packets list as `recent` (read otherwise). And the store's version
(`Store.version`: any commit, by any process, changes it), for what changes without a packet:
a blind host's settings and clock. A store that keeps no version (PostgreSQL) keeps nothing
at it: each value is read every time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

import msgspec

if TYPE_CHECKING:
    from engine.state import RoundState
    from pbem.protocol.documents import ArchivedMove, Link, RecentMove

_V = TypeVar("_V")


class RoundLog(msgspec.Struct):
    """A round's archive in the making: its dealt state and its moves so far, as the archive
    lists them. A Host keeps it from one change to the next while nobody else moves the game
    on (as it keeps the live state), so a round's last move signs the archive without reading
    and opening every move of the round again."""

    round_no: int
    start: dict[str, Any]  # the dealt state, dumped
    moves: list[ArchivedMove]
    # the archive's chain so far: the packet before the round's first packet (none before
    # packet 1) up to the head; None when this Host did not see its start (then it is read)
    chain: list[Link] | None = None


class Kept(msgspec.Struct):
    """What a change left for the next, at the head it left. A change takes the state and the
    round so far (it may fail half-way through changing them) and extends the recent moves."""

    head: str
    state: RoundState | None = None
    log: RoundLog | None = None
    recent: list[RecentMove] | None = None

    @staticmethod
    def at(kept: Kept | None, head: str) -> Kept:
        """What was kept, if the game is still at the head it was kept at; else nothing (every
        value is read again): `current`, the one rule."""
        return kept if kept is not None and current(kept.head, head) else Kept(head)


def current(kept_at: object, key: object) -> bool:
    """The one rule: a value kept at `kept_at` is current while the key is still the same; a
    key of None (nothing to key on) keeps nothing."""
    return key is not None and kept_at == key


class KeptAt(msgspec.Struct, Generic[_V], frozen=True):
    """One value as it was read at `key` (pbem.host.blind: the settings at the store's version)."""

    key: object
    value: _V

    def at(self, key: object) -> _V | None:
        """The value, if still current at `key` (`current`); None: read it again."""
        return self.value if current(self.key, key) else None
