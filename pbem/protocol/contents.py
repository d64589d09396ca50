"""What a packet says to one seat and what closes a round: the pure packet contents that the
host seals and that an audit of packet files rebuilds from a replay (docs/protocol.md,
"Packet"). No store here, so reading or auditing packet files needs no database library."""

from __future__ import annotations

from typing import Any, cast

from engine.events import Event
from engine.position import dump
from engine.state import RoundState
from engine.views import secret_events, view
from pbem.protocol.documents import Part, Result


def seat_part(state: RoundState, seat: str, events: list[Event]) -> Part:
    """What a packet seals to one seat (docs/protocol.md, "Packet"); audits rebuild it too."""
    return Part(seat=seat, role=state.role(seat),
                hand=dump(view(state, None))["hands"][seat] if state.phase != "playing" else sorted(state.hands[seat]),
                knowledge=state.knowledge.get(seat, []),
                events=cast("list[dict[str, Any]]", secret_events(events, seat)))


def round_result(state: RoundState, secret: bytes) -> Result:
    """The `result` of the packet that closes a round; audits rebuild it from the replay."""
    return Result(round=state.round_no, secret=secret.hex(), finder=state.finder, winners=state.winners,
                  payout=state.payout, gold=state.gold, next_start=state.next_start, final=dump(state))
