"""How far each channel of a game has delivered it, and what a channel still owes.

A channel (a mail route, a folder) marks the highest packet it delivered; its notices and its
table talk have marks of their own ("CHANNEL notices", "CHANNEL talk": pbem.host.publish). A
mark only rises: two daemons may race.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import bindparam, case, func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import BindParameter

from pbem.host import talk as table_talk
from pbem.host.interface import HostNotice, Outbox, Release
from pbem.host.publish import notices_channel, talk_channel
from pbem.host.store import Store, dialect_insert
from pbem.host.tables import deliveries, games, notices, packets, rounds
from pbem.host.tables import talk as talk_table

# The statements, built once: building a statement costs more than running it.
_GAME: BindParameter[str] = bindparam("b_game")
_CHANNEL = (deliveries.c.game_id == _GAME) & (deliveries.c.channel == bindparam("b_channel"))
_DELIVERED = select(deliveries.c.seq).where(_CHANNEL)
_ADD_DELIVERY = insert(deliveries)
_RAISE_DELIVERY = update(deliveries).where(_CHANNEL).values(seq=bindparam("b_seq"))
_NOTICES = (select(notices.c.id, notices.c.seq, notices.c.kind, notices.c.seat, notices.c.armored)
            .where(notices.c.game_id == _GAME, notices.c.id > bindparam("b_after")).order_by(notices.c.id))
_MARK = {k: select(deliveries.c.seq).where((deliveries.c.game_id == _GAME) & (deliveries.c.channel == bindparam(f"b_{k}")))
         .scalar_subquery().label(k) for k in ("packets", "notices", "talk")}
# What a channel may owe, in one statement: the game's row gives the newest packet and the status,
# beside the newest notice and line of talk and the channel's three marks
_OWED = select(games.c.seq, games.c.status,
               select(func.max(notices.c.id)).where(notices.c.game_id == _GAME).scalar_subquery().label("notice"),
               select(func.max(talk_table.c.id)).where(talk_table.c.game_id == _GAME).scalar_subquery().label("line"),
               *_MARK.values()).where(games.c.id == _GAME)
_RELEASES = (select(packets.c.seq, packets.c.armored, rounds.c.round_no, rounds.c.archive)
             .select_from(packets.outerjoin(rounds, (rounds.c.game_id == packets.c.game_id)
                                            & (rounds.c.last_seq == packets.c.seq)))
             .where(packets.c.game_id == _GAME, packets.c.seq > bindparam("b_after")).order_by(packets.c.seq))


def notices_after(c: Connection, game: str, after: int) -> list[HostNotice]:
    """The host's signed notices of `game` after notice `after`, oldest first."""
    return [HostNotice(r.id, r.seq, r.kind, r.seat, r.armored) for r in c.execute(_NOTICES, {"b_game": game, "b_after": after})]


def delivered(c: Connection, game: str, channel: str) -> int:
    """The highest seq `channel` has delivered (0: the invitation), -1 for nothing yet."""
    seq = c.execute(_DELIVERED, {"b_game": game, "b_channel": channel}).scalar()
    return -1 if seq is None else int(seq)


def releases(c: Connection, game: str, after: int) -> list[Release]:
    """Every packet of `game` after `after`, in order."""
    return [Release(r.seq, r.armored, (r.round_no, r.archive) if r.archive else None)
            for r in c.execute(_RELEASES, {"b_game": game, "b_after": after})]


def outbox(store: Store, game: str, channel: str, invitation: Callable[[], str]) -> Outbox:
    """What `channel` has not delivered yet, in one read: the marks and the newest of each kind
    in one statement, then only the kinds that are owed."""
    with store.read() as c:
        row = c.execute(_OWED, {"b_game": game, "b_packets": channel, "b_notices": notices_channel(channel),
                                "b_talk": talk_channel(channel)}).one()
        after = -1 if row.packets is None else int(row.packets)
        out = releases(c, game, after) if row.seq > after else []
        told = -1 if row.notices is None else int(row.notices)
        owed = notices_after(c, game, told) if row.notice is not None and row.notice > told else []
        heard = -1 if row.talk is None else int(row.talk)
        lines = table_talk.lines_after(c, talk_table, {"game_id": game}, heard) if row.line is not None and row.line > heard else []
    return Outbox(([Release(0, invitation())] if after < 0 else []) + out, owed, lines, (int(row.seq), str(row.status)))


_RAISE: dict[str, Any] = {}  # the dialect's name -> raise_mark's statement, built once


def raise_mark(c: Connection, game: str, channel: str, seq: int) -> None:
    """Raise `channel`'s mark to `seq`, in one statement: the mark made, or raised if it is lower.
    (The statement is built once per dialect: a daemon raises a mark for every move.)"""
    statement = _RAISE.get(c.dialect.name)
    if statement is None:
        add = dialect_insert(c, deliveries).values(game_id=_GAME, channel=bindparam("b_channel"), seq=bindparam("b_seq"))
        statement = _RAISE[c.dialect.name] = add.on_conflict_do_update(index_elements=["game_id", "channel"], set_={
            "seq": case((add.excluded.seq > deliveries.c.seq, add.excluded.seq), else_=deliveries.c.seq)})
    c.execute(statement, {"b_game": game, "b_channel": channel, "b_seq": seq})


def set_mark(c: Connection, game: str, channel: str, seq: int) -> None:
    """Raise `channel`'s mark to `seq` (never lower it), read then written in the caller's transaction."""
    key = {"b_game": game, "b_channel": channel}
    old = c.execute(_DELIVERED, key).scalar()
    if old is None:
        c.execute(_ADD_DELIVERY, {"game_id": game, "channel": channel, "seq": seq})
    elif seq > old:
        c.execute(_RAISE_DELIVERY, {**key, "b_seq": seq})
