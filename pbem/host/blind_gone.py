"""The blind host's clock declaring seats gone (docs/trustless.md §10-11).

Under `--on-timeout discard`, a seat the table still waits for past the due time its packet
signed and the grace after it is declared gone in a packet of its own (`Gone`, signed with the
chain): from then on the table takes its turns as face-down discards and waits for the other
seats' stand-in shares for what it owes. Each seat and the audit check the declaration against
the due time they hold. Only as many seats are declared as leave a quorum to stand in for them.
"""

from __future__ import annotations

from datetime import datetime

from pbem.host.clock import parse_time, stamp
from pbem.host.deadlines import Timing
from pbem.protocol.documents import Gone
from pbem.protocol.trustless.public import PublicTable


def declaration(table: PublicTable, timing: Timing, due: str | None, now: datetime) -> Gone | None:
    """The seats to declare gone now (None: nobody): `due` is the due time the last packet signed."""
    if timing.on_timeout != "discard" or due is None or not table.game.threshold:
        return None
    until = timing.give_up(parse_time(due))
    w = table.waiting()
    if now < until or w.step in ("join", "over"):
        return None
    left = len([p for p in table.players if p not in table.gone])
    seats = [p for i, p in enumerate(w.seats) if left - i - 1 >= table.game.threshold]
    if not seats:
        return None
    return Gone(seats=seats, step=w.step, due=due, grace_until=stamp(until), at=stamp(max(now, until)))
