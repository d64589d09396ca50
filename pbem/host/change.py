"""One change of a game, as the host's parts work on it: the transaction, the game's row that
the change edits, the host's signing key and box, the live state and the packet it publishes.

The referee (pbem.host.referee) opens a change (one transaction, the game's row locked) and
hands it to the joins and moves (pbem.host.moving), the rounds (pbem.host.round_store) and
the timekeeper (pbem.host.timekeeper), which work through this interface alone: none
reaches into another's private state.

The annotations are evaluated as the classes are made (no `from __future__ import annotations`):
the game's row, a typed dict, is made at every start of a host's command, and typing would compile
each string annotation from source there; the names imported only for the type checker are quoted.
"""

from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import msgspec

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from engine.state import RoundState
    from pbem.host.clock import Clock
    from pbem.host.deadlines import Timing
    from pbem.host.interface import Outcome
    from pbem.host.memo import RoundLog
    from pbem.host.settings import Memo, Settings, Standing
    from pbem.protocol.crypto import Identity, OwnBox, PublicKey
    from pbem.protocol.documents import HandoverRecord, RecentMove, Signed

class GameRow(TypedDict):
    """The game's row (pbem.host.store.games) within a change: the change edits it, and the
    referee writes back the columns that changed, in the change's transaction."""

    id: str
    name: str
    ruleset: str
    options: str  # JSON list
    host_name: str
    host_key: str
    created_at: str
    invitation: str
    invitation_hash: str
    commitments: str  # JSON list
    secrets_sealed: str
    state_sealed: str | None
    box_key: str | None
    public: str  # JSON
    status: str
    round_no: int
    move_no: int
    seq: int
    head: str
    settings: str  # JSON: pbem.host.settings.Settings (the change decodes it once: Change.settings)
    memo: str  # JSON: pbem.host.settings.Memo (decoded once, encoded once when the change commits)


class Seat(msgspec.Struct, frozen=True):
    idx: int
    name: str
    key: "PublicKey"


class Facts(msgspec.Struct, frozen=True):
    """What does not change in play: read once per Host. Only a seat handed over to a new
    key changes (`handovers` counts them; a Host that sees more in the game's memo than it
    read, because another process handed a seat over, reads its facts again)."""

    id: str
    name: str
    ruleset: str
    options: tuple[str, ...]
    host_name: str
    host_key: str
    invitation: str  # armoured, as sent (read with the rest: publishing the invitation needs no query)
    invitation_hash: str
    seats: tuple[Seat, ...]
    handovers: int = 0

    def seat(self, name: object) -> Seat | None:
        return next((s for s in self.seats if s.name == name), None)


class Change(Protocol):
    """One change of a game, open: everything it does is in `c`, its transaction."""

    c: "Connection"
    g: GameRow
    made: "tuple[RoundState, RoundLog | None] | None"  # the state and round the change's last packet left
    dealt: "RoundLog | None"  # the round the change dealt, until its first packet

    @property
    def facts(self) -> Facts: ...

    @property
    def clock(self) -> "Clock": ...

    @property
    def settings(self) -> "Settings":
        """How the game is run, decoded once per change."""
        ...

    @property
    def memo(self) -> "Memo":
        """What the host remembers, decoded once per change; edited in place, written on commit."""
        ...

    def standings(self) -> "dict[str, Standing]":
        """Every seat's standing, read once per change; edited in place, written on commit."""
        ...

    def standing(self, seat: str) -> "Standing":
        """One seat's (as `standings`)."""
        ...

    def set_timing(self, timing: "Timing") -> None:
        """The game's deadline rules from now on (written with the change)."""
        ...

    def now(self) -> str:
        """The time now, stamped as documents carry it."""
        ...

    def signer(self) -> "Identity":
        """The host's key, checked against the game's (only the host signs)."""
        ...

    def own_box(self) -> "OwnBox":
        """The host's own box of the game, as the change's row names its key."""
        ...

    def sealing_box(self) -> "OwnBox":
        """The box to seal into (a game without a box key gets one, written with the change)."""
        ...

    def round_secret(self, round_no: int) -> bytes:
        """Round `round_no`'s committed secret (needs the host's key)."""
        ...

    def round_log(self) -> "RoundLog | None":
        """The round so far as the host kept it from its last change (taken), if still current."""
        ...

    def kept_recent(self) -> "list[RecentMove] | None":
        """The last public moves as the host kept them, if read in this change or kept current."""
        ...

    def state(self) -> "RoundState":
        """The round's live state at the change's head (the change may change it)."""
        ...

    def seat_of(self, block: "Signed[Any]") -> Seat:
        """The seat that signed `block`, refused when the signer does not hold it."""
        ...

    def recent_window(self) -> "list[RecentMove]":
        """The game's last public moves, oldest first, with the change's own."""
        ...

    def publish(self, state: "RoundState", *, handover: "HandoverRecord | None" = None) -> int:
        """Sign and store the next packet of `state` (no move in it); its seq."""
        ...

    def play_for(self, seat: Seat, why: str, text: str | None = None) -> "Outcome":
        """The host plays the timeout policy's move for `seat`."""
        ...

    def hand_over(self, seat: str, key: "PublicKey", handovers: int) -> None:
        """From now on in this change `seat` is held by `key` (undone if it does not commit)."""
        ...
