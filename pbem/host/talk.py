"""The host's side of table talk (docs/protocol.md, "Table talk"): it takes a seat's signed line
without waiting for a move, keeps it as it came, and hands it to the publishers to relay.

One mechanism for both hosts: the referee of a store's game keeps lines in the store's `talk`
table, the blind host of a trustless game in a table of its own file; both tables have the
columns `take` writes. A whisper stays sealed: the host checks its shape, its seats and its
place, never its text, which it has no key to open.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table, bindparam, func, insert, select
from sqlalchemy.engine import Connection

from pbem.errors import BadPacket, Conflict, listed, msg
from pbem.host.interface import Outcome, TalkRelease
from pbem.protocol.documents import Signed, Talk
from pbem.protocol.limits import TALK_PER_PACKET


def take(c: Connection, table: Table, scope: dict[str, Any], block: Signed[Talk], seats: tuple[str, ...],
         packet_hash: str | None, at: str) -> Outcome:
    """Keep `block` in `table` (rows of `scope`: the game's id in a store, nothing in a file of
    one game), or refuse it with nothing kept. `packet_hash`: the hash of the packet the line
    names, None when the game has no such packet. The caller has checked the seat's key."""
    doc = block.doc
    where = [table.c[k] == v for k, v in scope.items()]
    if c.execute(select(table.c.id).where(table.c.file_hash == block.hash)).first() is not None:
        return Outcome("duplicate", msg("{seat}'s line {n} was already relayed; nothing changed", seat=doc.seat, n=doc.n))
    if packet_hash != doc.packet:
        raise BadPacket(msg("{seat}'s line answers packet {seq} {hash}, which this host never sent", seat=doc.seat,
                          seq=doc.seq, hash=doc.packet[:12]),
                        hint=msg("a line is bound to its game and to the packet it was said at"))
    for seat in doc.to or []:
        if seat not in seats:
            raise BadPacket(msg("{seat}'s whisper goes to {other}, who holds no seat in this game", seat=doc.seat,
                              other=repr(seat)))
    mine = [*where, table.c.seat == doc.seat]
    if c.execute(select(table.c.id).where(*mine, table.c.n == doc.n)).first() is not None:
        raise Conflict(msg("{seat} said a different line {n} before: a line is kept once", seat=doc.seat, n=doc.n))
    said = c.execute(select(func.count()).select_from(table).where(*mine, table.c.seq == doc.seq)).scalar_one()
    if said >= TALK_PER_PACKET:
        raise BadPacket(msg("{seat} said {n} lines at packet {seq} already, as many as a seat may", seat=doc.seat,
                          n=said, seq=doc.seq))
    c.execute(insert(table).values(**scope, seat=doc.seat, n=doc.n, seq=doc.seq, file_hash=block.hash,
                                   armored=block.armored(), created_at=at))
    if doc.to is None:
        return Outcome("talk", msg("{seat} said a line at packet {seq}", seat=doc.seat, seq=doc.seq))
    return Outcome("talk", msg("{seat} whispered to {seats} at packet {seq}", seat=doc.seat, seats=listed(doc.to),
                             seq=doc.seq))


def lines_after(c: Connection, table: Table, scope: dict[str, Any], after: int) -> list[TalkRelease]:
    """The lines kept after line `after`, in the order the host took them."""
    rows = c.execute(_lines_query(table, tuple(scope)), {**{f"b_{k}": v for k, v in scope.items()}, "b_after": after}).all()
    return [TalkRelease(r.id, r.seq, r.seat, r.armored) for r in rows]


# Each publishing pass asks for the lines after its mark, every game, every pass: the statement is
# built once per table and scope, not once per ask (building and keying a select is not free).
_LINES: dict[tuple[int, tuple[str, ...]], Any] = {}


def _lines_query(table: Table, keys: tuple[str, ...]) -> Any:
    made = _LINES.get((id(table), keys))
    if made is None:
        made = _LINES[(id(table), keys)] = (
            select(table.c.id, table.c.seq, table.c.seat, table.c.armored)
            .where(*[table.c[k] == bindparam(f"b_{k}") for k in keys], table.c.id > bindparam("b_after"))
            .order_by(table.c.id))
    return made
