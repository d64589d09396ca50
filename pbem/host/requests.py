"""What seats ask of the host and what the host commands itself: away, back and resign
requests, pause and resume, and handing a seat to a new key (docs/protocol.md, "Deadlines").

Each function works on one change of the game (pbem.host.change.Change), as the clock's do
(pbem.host.timekeeper): what it remembers changes in the same transaction as the notice or
packet it makes.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import update

from pbem.errors import (
    BadPacket,
    BadSignature,
    Conflict,
    StaleMove,
    UsageError,
    date_word,
    kind_word,
    left_word,
    msg,
    span_word,
    status_word,
)
from pbem.host import timekeeper
from pbem.host.change import Change, Seat
from pbem.host.clock import parse_time, stamp
from pbem.host.deadlines import Timing
from pbem.host.interface import Outcome
from pbem.host.settings import Answered, HandedOver
from pbem.host.tables import seats
from pbem.names import HOST
from pbem.protocol.crypto import PublicKey
from pbem.protocol.documents import Handover, HandoverRecord, Request, Signed, b64

AWAY_PER_WINDOW, AWAY_WINDOW = 3, 86400.0  # away notices a seat may send in a day (each goes to every seat)


# --- requests from seats, and the host's own commands ------------------------------------------


def request(ch: Change, block: Signed[Request]) -> Outcome:
    """A seat's signed request: `away` (until a time), `back` or `resign`. Each is applied
    once: an away request is remembered until it ends (then it is refused as in the past), a
    `back` for the rest of the game; a seat that resigned stays resigned until handed over."""
    g, memo = ch.g, ch.memo
    seat = ch.seat_of(block)
    st = ch.standing(seat.name)
    action = block.doc.action
    if timekeeper.answered(memo, block.hash) or (action == "resign" and st.resigned):
        return Outcome("duplicate", msg("this request of {seat} was already applied; nothing changed", seat=seat.name))
    if g["status"] != "playing":
        raise StaleMove(msg("game {game} is {status}; it takes no requests now", game=g["id"], status=status_word(g["status"])))
    timing = ch.settings.rules()
    if action == "away":
        return _away(ch, seat, block, timing)
    if action == "back":
        memo.requests.append(Answered(block.hash))
        if not timekeeper.back(ch, seat.name):
            return Outcome("back", msg("{seat} was not absent; nothing else changed", seat=seat.name))
        return Outcome("back", msg("{seat} is present again: the host waits for their next deadline", seat=seat.name))
    if action == "resign":
        st.resigned = True
        timekeeper.notice(ch, "resigned", seat.name, policy=timing.on_timeout)
        return Outcome("resigned", msg("nt resigned", player=seat.name, policy=timing.on_timeout))
    raise BadPacket(msg("unknown request {action} from {seat}", action=repr(str(action)[:20]), seat=seat.name),
                    hint=msg("requests are away and resign"))


def _away(ch: Change, seat: Seat, block: Signed[Request], timing: Timing) -> Outcome:
    g, memo, st = ch.g, ch.memo, ch.standing(seat.name)
    now = ch.clock.now()
    until = parse_time(block.doc.until)
    if until <= now:
        raise BadPacket(msg("{seat}'s away notice ends {when}, which is in the past", seat=seat.name, when=date_word(until, now)))
    longest = timing.max_away
    if (until - now).total_seconds() > longest:
        raise BadPacket(msg("{seat}'s away notice ends {when}, more than {span} from now", seat=seat.name,
                          when=date_word(until, now), span=span_word(longest)),
                        hint=msg("this game takes away notices of at most {span} (the host's game config --max-away)",
                               span=span_word(longest)))
    sent = [x for x in st.away_sent if (now - parse_time(x)).total_seconds() < AWAY_WINDOW]
    if len(sent) >= AWAY_PER_WINDOW:
        raise Conflict(msg("{seat} sent {n} away notices in the last {span}; this one is refused", seat=seat.name,
                         n=len(sent), span=span_word(AWAY_WINDOW)),
                       hint=msg("each away notice is sent to every seat; send the next one later"))
    st.away_sent = [*sent, stamp(now)]
    st.away_until = stamp(until)
    timekeeper.forget_ended(memo, now)
    memo.requests.append(Answered(block.hash, until=st.away_until))
    clock = memo.clock
    stretched = False
    if clock.seat == seat.name and clock.seq == g["seq"] and clock.due:
        before = clock.due
        timekeeper.restart(ch, clock, timing, now)  # counts from `until` now
        stretched = clock.due is not None and parse_time(clock.due) > parse_time(before)
        if not stretched:
            clock.due = before
    timekeeper.notice(ch, "away", seat.name, until=st.away_until)
    if stretched:
        timekeeper.notice(ch, "due", seat.name, due=clock.due)
    return Outcome("away", msg("nt away", player=seat.name, when=date_word(st.away_until, now)))


def pause(ch: Change) -> Outcome:
    """Stop the game's clock: deadlines stop counting until `resume`."""
    g, memo = ch.g, ch.memo
    ch.signer()  # only the host pauses
    if g["status"] != "playing":
        raise UsageError(msg("game {game} is {status}; only a game in play can be paused", game=g["id"],
                           status=status_word(g["status"])))
    if memo.paused:
        raise UsageError(msg("game {game} is already paused since {when}", game=g["id"], when=date_word(memo.paused)),
                         hint=msg("resume it with: {command}", command=f"pbem game resume {ch.facts.name}"))
    memo.paused = ch.now()
    timekeeper.notice(ch, "paused", None)
    return Outcome("paused", msg("game {game} paused: deadlines stop counting", game=g["id"]))


def resume(ch: Change) -> Outcome:
    """Start a paused game's clock again: the time that was left is left again."""
    g, memo = ch.g, ch.memo
    ch.signer()
    if not memo.paused:
        raise UsageError(msg("game {game} is not paused", game=g["id"]))
    now = ch.clock.now()
    stopped = now - parse_time(memo.paused)
    memo.paused = None
    clock = memo.clock
    if clock.due and clock.start:  # the time that was left is left again
        clock.due = stamp(parse_time(clock.due) + stopped)
        clock.start = stamp(parse_time(clock.start) + stopped)
    timekeeper.notice(ch, "resumed", None)
    said = msg("game {game} resumed", game=g["id"])
    waiting = g["seq"]
    if not clock.due and timekeeper.renew(ch):  # a packet published while paused: a fresh one names the deadline
        clock = memo.clock
        said += msg("clause sep") + msg("packet {seq} published: it names the deadline packet {waiting} did not",
                                        seq=waiting + 1, waiting=waiting)
    elif not clock.due and clock.seat and clock.seq == g["seq"]:
        timekeeper.restart(ch, clock, ch.settings.rules(), now)
    if clock.due:
        timekeeper.notice(ch, "due", clock.seat, due=clock.due)
    if clock.due:
        said += msg("clause sep") + msg("due other", player=clock.seat, when=date_word(clock.due), left=left_word(clock.due, now))
    return Outcome("resumed", said)


# --- seat handover -----------------------------------------------------------------------------


def refuse_former_key(ch: Change, seat: Seat, block: Signed[Any]) -> None:
    """A block signed by a key the seat was handed away from: say so plainly."""
    for h in ch.memo.handovers:
        if h.seat == seat.name and h.old == block.signer.encode():
            raise BadSignature(msg("seat {seat} was handed over to a new key at packet {seq}; this {kind} is signed by "
                                 "the old key {fingerprint} and is refused", seat=seat.name, seq=h.at,
                                 kind=kind_word(block.kind), fingerprint=block.signer.fingerprint()))


def handover(ch: Change, block: Signed[Handover]) -> Outcome:
    """Give a seat to a new key: signed by the host or by the seat's current key. The next
    packet (published now) seals the seat's part to the new key; the old key is refused."""
    f, g, memo = ch.facts, ch.g, ch.memo
    name = block.doc.seat
    seat = f.seat(name)
    if seat is None:
        raise BadPacket(msg("no seat {name} in game {game}", name=repr(str(name)[:32]), game=f.id))
    records = memo.handovers
    document = b64(block.payload)
    if any(h.document == document for h in records):
        return Outcome("duplicate", msg("this handover of seat {seat} was already applied; nothing changed", seat=seat.name))
    signer = block.signer.encode()
    if signer == f.host_key:
        by = HOST
    elif signer == seat.key.encode():
        by = seat.name
    else:
        raise BadSignature(msg("a handover of seat {seat} must be signed by the host or by the seat's own key, "
                             "not by key {fingerprint}", seat=seat.name, fingerprint=block.signer.fingerprint()))
    new = PublicKey.decode(block.doc.key)
    if g["status"] != "playing":
        raise StaleMove(msg("game {game} is {status}; seats are handed over during play", game=f.id,
                          status=status_word(g["status"])),
                        hint=msg("before round 1, make a new game with the new key"))
    if new.encode() == seat.key.encode():
        raise Conflict(msg("seat {seat} is already held by key {fingerprint}", seat=seat.name, fingerprint=new.fingerprint()))
    used = {st.key.encode() for st in f.seats} | {h.old for h in records}
    if new.encode() in used:
        raise Conflict(msg("key {fingerprint} already held a seat in game {game}", fingerprint=new.fingerprint(), game=f.id),
                       hint=msg("the new player needs a new key"))
    record = HandoverRecord(seat=seat.name, key=new.encode(), old=seat.key.encode(), at=g["seq"] + 1, by=by,
                            document=document)
    records.append(HandedOver(seat=record.seat, key=record.key, old=record.old, at=record.at, by=by,
                              document=document))
    st = ch.standing(seat.name)  # a new person holds the seat
    st.missed, st.absent, st.resigned, st.away_until = 0, None, False, None
    ch.c.execute(update(seats).where(seats.c.game_id == f.id, seats.c.name == seat.name).values(key=new.encode()))
    ch.hand_over(seat.name, new, len(records))  # the packet below seals the seat's part to the new key
    timekeeper.notice(ch, "handover", seat.name, fingerprint=new.fingerprint())
    seq = ch.publish(ch.state(), handover=record)
    return Outcome("handover", msg("seat {seat} handed over to key {fingerprint} (signed by {by}); packet {seq}",
                                   seat=seat.name, fingerprint=new.fingerprint(), by=by, seq=seq), seq)
