"""What a Host keeps from one change of a game to the next, and the one rule for when it is
stale: everything kept is kept at the head (the last packet's hash) the change left, and the
next change uses it only if the game is still at that head; else another process moved the
game on and each value is read again from the store.

Kept per Host: the live state of the round (opened from the host's box otherwise), the round
so far as its archive will list it (`RoundLog`: read and opened move by move otherwise) and
the last public moves that packets list as `recent` (read otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.state import RoundState
    from pbem.protocol.documents import ArchivedMove, Link, RecentMove


@dataclass
class RoundLog:
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


@dataclass
class Kept:
    """What a change left for the next, at the head it left. A change takes the state and the
    round so far (it may fail half-way through changing them) and extends the recent moves."""

    head: str
    state: RoundState | None = None
    log: RoundLog | None = None
    recent: list[RecentMove] | None = None

    @staticmethod
    def at(kept: Kept | None, head: str) -> Kept:
        """The one rule: what was kept, if the game is still at the head it was kept at; else
        nothing (every value is read again)."""
        return kept if kept is not None and kept.head == head else Kept(head)
