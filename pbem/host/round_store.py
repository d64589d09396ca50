"""A round in the store: dealt from its committed secret, each packet signed and stored, and
at its end the round's result and signed archive (docs/protocol.md).

Each function works on one change of the game (pbem.host.change.Change): its transaction,
the game's row it edits, the host's key and what the host kept of the round.
"""

from __future__ import annotations

import json
from typing import Any, cast

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.sql.elements import BindParameter

from engine.catalog import is_ruleset
from engine.dealer import SeededDealer
from engine.game import Carry, carry_after, standings_winners
from engine.position import dump
from engine.state import ROUNDS_PER_GAME, RoundState
from engine.views import events_for, view
from pbem.errors import BadPacket, msg
from pbem.host import tables, timekeeper, webhooks
from pbem.host.change import Change
from pbem.host.creation import host_info
from pbem.host.memo import RoundLog
from pbem.host.tables import games, moves, packets, rounds, seats
from pbem.names import HOST
from pbem.protocol import fairness
from pbem.protocol.contents import round_result, seat_part
from pbem.protocol.documents import (
    Archive,
    ArchivedMove,
    Carried,
    HandoverRecord,
    Link,
    Packet,
    PublicMove,
    Result,
    Signed,
    Standings,
    b64,
    open_json,
    seal_info,
    seal_json,
    sign,
    to_json,
    unb64,
)

_GAME: BindParameter[str] = bindparam("b_game")
_ADD_PACKET = insert(packets)
_ROUND_KEY = (rounds.c.game_id == _GAME) & (rounds.c.round_no == bindparam("b_round"))
_ROUND = (select(rounds.c.first_seq, rounds.c.start_state_sealed, rounds.c.carried, rounds.c.secret, games.c.invitation)
          .select_from(rounds.join(games, games.c.id == rounds.c.game_id)).where(_ROUND_KEY))
_ROUND_MOVES = (select(moves.c.n, moves.c.seat, moves.c.text_sealed, moves.c.envelope, moves.c.why)
                .where(moves.c.game_id == _GAME, moves.c.round_no == bindparam("b_round")).order_by(moves.c.n))
_CHAIN = (select(packets.c.seq, packets.c.hash, packets.c.prev)
          .where(packets.c.game_id == _GAME, packets.c.seq >= bindparam("b_from")).order_by(packets.c.seq))
_SET_ARCHIVE = update(rounds).where(_ROUND_KEY).values(archive=bindparam("b_archive"))
_CONTRIBUTIONS = select(seats.c.contribution).where(seats.c.game_id == _GAME).order_by(seats.c.idx)
_ADD_ROUND = insert(rounds)
_END_ROUND = update(rounds).where(_ROUND_KEY)


def _joins():  # the game's join blocks (tables.joins is made when first asked for: pbem.host.tables)
    return select(tables.joins.c.envelope).where(tables.joins.c.game_id == _GAME)


def archived(n: int, seat: str, text: str, nonce: str, envelope: bytes, why: str | None) -> ArchivedMove:
    """A move as the archive lists it (`why`: why the host made it; None: the seat's own)."""
    return ArchivedMove(n=n, seat=seat, text=text, nonce=nonce, envelope=b64(envelope), by=HOST if why else None, why=why)


def deal(ch: Change, round_no: int, carried: Carry) -> RoundState:
    """Deal round `round_no` (its chance from the round's secret and the seats' contributions)
    and store its start; the round's log starts with the change's next packet."""
    c, g, f = ch.c, ch.g, ch.facts
    secret = ch.round_secret(round_no)
    contributions = [unb64(x, "contribution") for x in c.execute(
        _CONTRIBUTIONS, {"b_game": f.id}).scalars()]
    if not is_ruleset(f.ruleset):
        raise BadPacket(msg("the game's ruleset {name} is unknown", name=repr(f.ruleset)))
    dealer = SeededDealer(fairness.round_chance(f.id, round_no, secret, contributions))
    state = dealer.deal(f.ruleset, tuple(s.name for s in f.seats), options=frozenset(f.options), round_no=round_no,
                        first_seat=carried.first_seat, gold=carried.gold, nuggets=carried.nuggets)
    g["status"], g["round_no"], g["move_no"] = "playing", round_no, 0
    said = ({"gold": carried.gold, "nuggets": carried.nuggets, "first": state.players[carried.first_seat]}
            if round_no > 1 else {})
    start = dump(state)
    c.execute(_ADD_ROUND, dict(game_id=f.id, round_no=round_no, first_seq=g["seq"] + 1,
                               start_state_sealed=seal_state(ch, start), carried=json.dumps(said)))
    ch.dealt = RoundLog(round_no, start, [])
    return state


def seal_state(ch: Change, state: dict[str, Any]) -> str:
    """A state (dumped), in the host's own box."""
    return seal_json(state, ch.sealing_box(), host_info(ch.facts.id, "state"), pad="state")


def end_round(ch: Change, state: RoundState) -> tuple[Result, RoundState]:
    """The round's result (its secret revealed); the next round dealt, or the game over."""
    c, g = ch.c, ch.g
    secret = ch.round_secret(state.round_no)
    result = round_result(state, secret)
    c.execute(_END_ROUND, {"b_game": ch.facts.id, "b_round": state.round_no, "last_seq": g["seq"] + 1,
                           "secret": secret.hex(), "result": to_json(result).decode()})
    if state.round_no >= ROUNDS_PER_GAME:
        g["status"] = "over"
        return result, state
    nxt = deal(ch, state.round_no + 1, carry_after(state.players, state))
    return result, nxt


def archive(ch: Change, final: RoundState, last: Signed[Packet], log: RoundLog | None) -> Signed[Archive]:
    """Sign the ended round's archive (docs/protocol.md); `last` is the round's last packet,
    `log` the round as this Host kept it (None: read and open every move of the round)."""
    c, f = ch.c, ch.facts
    me = ch.signer()
    key = {"b_game": f.id, "b_round": final.round_no}
    rnd = c.execute(_ROUND, key).one()
    if log is None:
        box = ch.own_box()
        info = host_info(f.id, "move")
        played = []
        for m in c.execute(_ROUND_MOVES, key):
            sealed = open_json(m.text_sealed, box, info)  # its text and nonce, sealed by this host
            played.append(archived(m.n, m.seat, sealed["text"], sealed["nonce"], m.envelope, m.why))
        start = open_json(rnd.start_state_sealed, box, host_info(f.id, "state"))
    else:
        played, start = log.moves, log.start
    if log is not None and log.chain is not None:
        chain = list(log.chain)
    else:
        chain = [Link(seq=r.seq, hash=r.hash, prev=r.prev)
                 for r in c.execute(_CHAIN, {"b_game": f.id, "b_from": rnd.first_seq - 1})]
    chain.append(Link(seq=last.doc.seq, hash=last.hash, prev=last.doc.prev))
    carried = json.loads(rnd.carried)
    signed = sign(Archive(
        game=f.id,
        round=final.round_no,
        invitation=rnd.invitation,
        joins=sorted(b64(e) for e in c.execute(_joins(), key).scalars()),
        secret=rnd.secret,
        carried=Carried(**carried) if carried else Carried(),
        start=start,
        moves=played,
        chain=chain,
        handovers=timekeeper.archive_handovers(ch.memo),
        renewed=ch.memo.renewed or None,
        final=dump(final),
    ), me)
    c.execute(_SET_ARCHIVE, {**key, "b_archive": signed.armored()})
    return signed


def publish(ch: Change, state: RoundState, *, moves: list[PublicMove], events: list,
            result: Result | None = None, ended: RoundState | None = None,
            handover: HandoverRecord | None = None, archived: ArchivedMove | None = None) -> int:
    """Sign and store the next packet; `archived`: the move it answers, as the round's
    archive lists it (appended to the round kept in memory)."""
    c, g, f = ch.c, ch.g, ch.facts
    log = ch.round_log()
    if archived is not None:
        played = ended.round_no if ended is not None else state.round_no
        if log is not None and log.round_no == played and len(log.moves) == archived.n - 1:
            log.moves.append(archived)
        else:
            log = None
    me = ch.signer()
    seq = g["seq"] + 1
    public = dump(view(state, None))
    parts: dict[str, str] = {}
    for st in f.seats:
        part = seat_part(state, st.name, events)
        parts[st.name] = seal_json(part, st.key, seal_info(f.id, seq, HOST, st.name, "part"), pad="part")
    over = g["status"] == "over"
    to_move = None if over else state.player
    extras = timekeeper.packet_extras(ch, seq, to_move, handover)
    deadline = extras.get("deadline")
    webhooks.record(ch, "game-over" if over else "round-over" if result else "to-move", seat=to_move,
                    deadline=deadline.due if deadline is not None else None, round_no=state.round_no, seq=seq)
    doc = Packet(game=f.id, seq=seq, prev=g["head"], round=state.round_no,
                 phase="game-over" if over else "round-over" if result else "playing",
                 to_move=to_move, public=public, moves=moves,
                 events=cast("list[dict[str, Any]]", events_for(events, None)), parts=parts, result=result,
                 standings=Standings(gold=state.gold, winners=standings_winners(state.gold)) if over else None,
                 **extras)
    packet = sign(doc, me)
    armored = packet.armored()
    if ended is not None:
        armored += archive(ch, ended, packet, log).armored()
    if ch.dealt is not None:  # a round dealt by this change: its log starts now
        before = log.chain[-1:] if log is not None and log.chain else []
        ch.dealt.chain = [] if g["seq"] == 0 else before if before and before[0].seq == g["seq"] else None
        log, ch.dealt = ch.dealt, None
    if log is not None and log.chain is not None:
        log.chain.append(Link(seq=seq, hash=packet.hash, prev=g["head"]))
    c.execute(_ADD_PACKET, dict(game_id=f.id, seq=seq, hash=packet.hash, prev=g["head"],
                                round_no=state.round_no, armored=armored, created_at=ch.now()))
    g["state_sealed"] = seal_state(ch, dump(state))
    g["seq"], g["head"], g["public"] = seq, packet.hash, json.dumps({**public, "to_move": to_move})
    ch.made = (state, log)
    return seq
