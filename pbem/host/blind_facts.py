"""Where a trustless game's chain stands, kept in its row of the store (pbem.host.blind_status
reads it): its status, round and latest packet, what the table waits for, and each round that
ended with its public result (trustless_rounds). The blind host writes them in the transaction
of the join or packet that changes them; migration 0011 filled them from the chains kept before.

A round's result holds only what its end made public to everyone: at a round's end every seat
reveals its round key, the round is opened and replayed on its cards (docs/trustless.md §9), so
its roles, winners, finder, payout and gold are the table's, as a referee's round result is.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
from sqlalchemy import Connection, func, insert, select, update

from engine.catalog import card_kind
from pbem.host.blind_status import Public
from pbem.host.tables import trustless_games, trustless_joins, trustless_packets, trustless_rounds
from pbem.protocol.documents import Invitation, Join, Packet, parse, parse_relayed, read_blocks
from pbem.protocol.trustless.ending import RoundEnd
from pbem.protocol.trustless.public import PublicTable

Chain = tuple[PublicTable, int, str]  # the table as of a packet, that packet's number and hash


def follow(c: Connection, game_id: str, inv: Invitation, inv_hash: str, known: Chain | None = None,
           closed: dict[int, int] | None = None) -> Chain:
    """The public table of the game's chain (its joins while none is dealt), from `known` on
    if given (the chain only grows); proofs are not checked again: each was when its block came.
    `closed`, if given, is told the packet that ended each round followed."""
    table, seq, head = known if known is not None else (PublicTable.of(inv, check_proofs=False), 0, inv_hash)
    rows = list(c.execute(select(trustless_packets).where(trustless_packets.c.game_id == game_id,
                                                          trustless_packets.c.seq > seq)
                          .order_by(trustless_packets.c.seq)))
    if seq == 0 and not rows:
        for j in c.execute(select(trustless_joins).where(trustless_joins.c.game_id == game_id)):
            table.take_join(parse("join", j.payload).doc)
        return table, seq, head
    table.check_proofs = False
    for r in rows:
        packet = read_blocks(r.armored)[0].expect(Packet)
        gone = getattr(packet.doc, "gone", None)
        if gone is not None:
            table.declare(gone, r.seq)
        for rel in packet.doc.relayed or []:
            block = parse_relayed(rel, "a relayed block")
            if isinstance(block.doc, Join):
                table.take_join(block.doc)
            else:
                table.take(block.doc, seq)
        seq, head = r.seq, r.hash
        if closed is not None:
            closed.update({end.round_no: seq for end in table.ended if end.round_no not in closed})
    table.check_proofs = True
    return table, seq, head


def public_of(table: PublicTable, inv: Invitation) -> Public:
    w = table.waiting()
    return Public(seats=[(p.name, p.key) for p in inv.seats], joined=[p for p in table.players if p in table.joins],
                  step=w.step, waiting=list(w.seats), to_move=w.seats[0] if w.step == "move" else None,
                  gold=table.ended[-1].gold if table.ended else {}, gone=sorted(table.gone))


def result_of(end: RoundEnd) -> dict[str, Any]:
    """A round's public result, as `trustless_rounds.result` keeps it: roles by kind, as a
    referee's round result names them."""
    s = end.state
    return {"roles": {p: card_kind(str(s.roles[p])).kind for p in s.players}, "winners": list(s.winners),
            "finder": s.finder, "payout": dict(s.payout), "gold": dict(s.gold)}


def record(c: Connection, game_id: str, table: PublicTable, inv: Invitation, seq: int, at: str,
           closed: dict[int, int] | None = None) -> None:
    """Write where the table of packet `seq` stands into the game's row, and each round it ended
    since the last write (`at`: when; `closed`: the packet that ended each, if not `seq`)."""
    step = table.step()
    status = "joining" if step == "join" else "over" if step == "over" else "playing"
    public = msgspec.json.encode(public_of(table, inv)).decode()
    c.execute(update(trustless_games).where(trustless_games.c.id == game_id).values(
        status=status, round_no=table.round_no, seq=seq, public=public))
    have = c.execute(select(func.count()).select_from(trustless_rounds)
                     .where(trustless_rounds.c.game_id == game_id)).scalar_one()
    for end in table.ended[have:]:
        c.execute(insert(trustless_rounds).values(game_id=game_id, round_no=end.round_no,
                                                  last_seq=(closed or {}).get(end.round_no, seq), ended_at=at,
                                                  result=json.dumps(result_of(end), sort_keys=True)))
