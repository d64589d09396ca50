"""Joins and moves into the store: a seat's join (the last one deals round 1), a seat's move
answering the head, and the host's own move for a silent seat (the timeout policy's).

Each function works on one change of the game (pbem.host.change.Change); a refusal raises
and the change, one transaction, leaves nothing.
"""

from __future__ import annotations

import os

from sqlalchemy import bindparam, insert, select, update

from engine.game import Carry, standings_winners
from engine.rules import apply as apply_move
from engine.rules import check as check_move
from engine.state import OVER, RoundState
from engine.views import view
from pbem.errors import BadPacket, Conflict, StaleMove, listed, msg, reason_word, status_word
from pbem.host import tables, timekeeper
from pbem.host.change import Change, Seat
from pbem.host.creation import host_info
from pbem.host.interface import Outcome
from pbem.host.round_store import archived, deal, end_round, publish
from pbem.host.tables import PACKET_HASH, moves, seats
from pbem.names import HOST
from pbem.protocol import fairness
from pbem.protocol.documents import (
    MOVE_NONCE_LEN,
    Join,
    PublicMove,
    RecentMove,
    SealedMove,
    SeatMove,
    Signed,
    b64,
    move_commitment,
    move_nonce,
    open_as,
    seal_info,
    seal_json,
    sign,
    unb64,
)
from pbem.protocol.timeout import policy_move, renewed_to

_MOVE_SEEN = select(moves.c.id).where(moves.c.file_hash == bindparam("b_hash"))
_ADD_MOVE = insert(moves)
_TOUCH_SEAT = (update(seats).where(seats.c.game_id == bindparam("b_game"), seats.c.name == bindparam("b_name"))
               .values(last_activity=bindparam("b_at")))


def take_join(ch: Change, block: Signed[Join]) -> Outcome:
    """A seat's join: its contribution to every round's chance; the last one deals round 1."""
    c, joins = ch.c, tables.joins
    seat = ch.seat_of(block)
    if c.execute(select(joins.c.file_hash).where(joins.c.file_hash == block.hash)).first() is not None:
        return Outcome("duplicate", msg("{seat}'s join was already applied; nothing changed", seat=seat.name))
    if block.doc.invitation != ch.facts.invitation_hash:
        raise BadPacket(msg("{seat}'s join answers another invitation", seat=seat.name))
    where = (seats.c.game_id == ch.facts.id) & (seats.c.name == seat.name)
    if c.execute(select(seats.c.joined_at).where(where)).scalar() is not None:
        raise Conflict(msg("{seat} has already joined with a different join file", seat=seat.name))
    contribution = unb64(block.doc.contribution, "contribution")
    if len(contribution) != fairness.CONTRIBUTION_BYTES:
        raise BadPacket(msg("{seat}'s contribution has {n} bytes, not {want}", seat=seat.name, n=len(contribution),
                          want=fairness.CONTRIBUTION_BYTES))
    at = ch.now()
    c.execute(update(seats).where(where).values(contribution=b64(contribution), joined_at=at, last_activity=at))
    c.execute(insert(joins).values(file_hash=block.hash, game_id=ch.facts.id, seat=seat.name, envelope=block.payload))
    waiting = [r.name for r in c.execute(select(seats.c.name).where(seats.c.game_id == ch.facts.id,
                                                                    seats.c.joined_at.is_(None)).order_by(seats.c.idx))]
    if waiting:
        return Outcome("joined", msg("{seat} joined; waiting for {waiting}", seat=seat.name, waiting=listed(waiting)))
    state = deal(ch, 1, Carry())
    seq = publish(ch, state, moves=[], events=[])
    return Outcome("dealt", msg("{seat} joined; everyone is in: round 1 dealt, packet {seq}", seat=seat.name, seq=seq), seq)



def take_move(ch: Change, block: Signed[SeatMove]) -> Outcome:
    """A seat's move answering the head: opened, checked against its commitment, applied."""
    c, g, f = ch.c, ch.g, ch.facts
    seat = ch.seat_of(block)
    # A move applied before answered a packet that is no longer the head (applying it made
    # the next one): only a move that does not answer the head may be one already applied.
    answers_head = _answers_head(ch, block.doc)
    if not answers_head and c.execute(_MOVE_SEEN, {"b_hash": block.hash}).first() is not None:
        return Outcome("duplicate", msg("this move by {seat} was already applied; nothing changed", seat=seat.name))
    if g["status"] != "playing":
        raise StaleMove(msg("game {game} is {status}; it takes no moves now", game=f.id, status=status_word(g["status"])))
    if block.doc.by is not None:
        raise BadPacket(msg("{seat}'s move says it was made by the {by}; only the host marks its own moves", seat=seat.name,
                          by=block.doc.by))
    answered = block.doc.seq
    if not answers_head:
        raise StaleMove(msg("{seat}'s move answers packet {answered}, but the game is at packet {seq}", seat=seat.name,
                          answered=answered, seq=g["seq"]), hint=msg("show the latest packet and move again"))
    state = ch.state()
    if state.player != seat.name:
        raise StaleMove(msg("it is {player}'s turn, not {seat}'s", player=state.player, seat=seat.name))
    sealed = open_as(SealedMove, block.doc.sealed, ch.signer(), seal_info(f.id, answered, seat.name, HOST, "move"))
    text = sealed.move
    nonce = move_nonce(sealed.nonce)
    if move_commitment(nonce, text) != block.doc.commit:
        raise BadPacket(msg("{seat}'s move file does not match its commitment", seat=seat.name))
    return apply(ch, seat, state, text, nonce, block)


def _answers_head(ch: Change, move: SeatMove) -> bool:
    """Whether `move` answers the packet waiting: that packet, or the one before a fresh packet
    of the same position renewed it to name a deadline (timeout.renewed_to), by its number and hash."""
    g = ch.g
    if move.seq == g["seq"]:
        return move.packet == g["head"]
    if move.seq > g["seq"] or renewed_to(move.seq, ch.memo.renewed) != g["seq"]:
        return False
    return ch.c.execute(PACKET_HASH, {"b_game": ch.facts.id, "b_seq": move.seq}).scalar() == move.packet


def play_for(ch: Change, seat: Seat, state: RoundState, why: str, text: str | None = None) -> Outcome:
    """The host plays the timeout policy's move for `seat` (`why`: timeout, absent or
    resigned), signed as the host's own move file with the time it was made, marked `by:
    host` so that packet, archive, audit and replay all say so. Refused (Conflict, nothing
    changes) when the game's rules let the host play for nobody now
    (timekeeper.may_play_for), and when `text` is given and is not the policy's own move."""
    g, f = ch.g, ch.facts
    me = ch.signer()
    policy, turns = timekeeper.may_play_for(ch, seat.name, why)  # what the packet waiting names
    if state.player != seat.name:
        raise Conflict(msg("it is {player}'s turn, not {seat}'s", player=state.player, seat=seat.name))
    chosen = policy_move(view(state, seat.name), seat.name, policy, f.id, g["seq"], turns)
    if text is not None and text != chosen:
        raise Conflict(msg("the host may play only its timeout policy's move for {seat}: {policy} plays {move}, "
                         "not {other}", seat=seat.name, policy=policy, move=repr(chosen), other=repr(text)))
    nonce = os.urandom(MOVE_NONCE_LEN)
    info = seal_info(f.id, g["seq"], seat.name, HOST, "move")
    block = sign(SeatMove(game=f.id, seat=seat.name, seq=g["seq"], packet=g["head"],
                      commit=move_commitment(nonce, chosen), by=HOST, why=why, at=ch.now(),
                      sealed=seal_json(SealedMove(move=chosen, nonce=b64(nonce)), me.public, info, pad="move")), me)
    return apply(ch, seat, state, chosen, nonce, block, by=why)


def apply(ch: Change, seat: Seat, state: RoundState, text: str, nonce: bytes, block: Signed[SeatMove],
          by: str | None = None) -> Outcome:
    """Apply `text`, checked, for `seat` (`by`: why the host made it; None: the seat's own
    move) and publish the next packet: with the round's result and archive when it ended."""
    c, g, f = ch.c, ch.g, ch.facts
    move = check_move(state, text)  # the canonical, resolved move
    if str(move) != text:
        raise BadPacket(msg("{seat}'s move {text} is not in canonical form", seat=seat.name, text=repr(text)),
                        hint=msg("write moves with 'pbem move'"))
    events = apply_move(state, move)
    said = str(move.public())
    g["move_no"] += 1
    at = ch.now()
    c.execute(_ADD_MOVE, dict(
        game_id=f.id, round_no=g["round_no"], n=g["move_no"], seat=seat.name, public_text=said,
        text_sealed=seal_json({"text": text, "nonce": b64(nonce)}, ch.sealing_box(), host_info(f.id, "move"),
                              pad="move"),
        envelope=block.payload, file_hash=block.hash, answered_seq=g["seq"], applied_at=at, why=by))
    window = ch.kept_recent()
    if window is not None:  # else read with this move, when a packet lists them
        window.append(RecentMove(round=g["round_no"], n=g["move_no"], seat=seat.name, text=said, seq=g["seq"],
                                 by=HOST if by else None, why=by))
        del window[: -timekeeper.RECENT_LIMIT]
    done = archived(g["move_no"], seat.name, text, b64(nonce), block.payload, by)
    moved = [PublicMove(round=g["round_no"], n=g["move_no"], seat=seat.name, text=said,
                        by=HOST if by else None, why=by)]
    if by is None:
        c.execute(_TOUCH_SEAT, {"b_game": f.id, "b_name": seat.name, "b_at": at})
        timekeeper.moved(ch, seat.name)
    result = None
    ended = state
    if state.phase == OVER:
        result, state = end_round(ch, state)
    seq = publish(ch, state, moves=moved, events=events, result=result,
                  ended=ended if result is not None else None, archived=done)
    if by:
        told = msg("applied the host's move for {seat} ({why}): {move}; packet {seq}", seat=seat.name,
                 why=reason_word(by), move=said, seq=seq)
    else:
        told = msg("applied {seat}'s move: {move}; packet {seq}", seat=seat.name, move=said, seq=seq)
    if result is not None:  # the host's apply and the daemon's log say when a round or the game ends
        told += msg("clause sep") + msg("round {n} is over: winners {winners}", n=result.round,
                                    winners=listed(list(result.winners)) if result.winners else msg("nobody"))
    if g["status"] == "over":
        told += msg("clause sep") + msg("the game is over: {winners} won", winners=listed(standings_winners(ended.gold)))
    return Outcome("applied", told, seq)
