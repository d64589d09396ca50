"""The host and the clock: deadlines in packets, reminders, late notices, timeouts, and a seat
coming back (docs/protocol.md, "Deadlines"); the seats' requests, pause and handovers that
act on the same memory are pbem.host.requests.

What the host remembers (pbem.host.settings: the game's `Memo` and each seat's `Standing`)
changes in the same transaction as the packet or notice it concerns, so a restarted host
never sends a reminder twice nor plays a timeout twice: the current packet's clock (seat,
start, due time, which notices went out), each seat's missed deadlines, absence, resignation
and away time, when the host paused the game, every seat handed to a new key.
Notices are signed documents kept in the store's `notices` table; every publisher (folder,
mail, out-dir) delivers them after the packets (pbem/host/publish.py).

Each function works on one change of the game (pbem.host.change.Change, opened by the
referee): `ch.c` its transaction, `ch.g` the game's row that the change edits and the
referee writes back.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, insert, select
from sqlalchemy.engine import Connection

from pbem.errors import (
    Conflict,
    Msg,
    UsageError,
    date_word,
    msg,
    notice_word,
)
from pbem.host import webhooks
from pbem.host.change import Change, GameRow, Seat
from pbem.host.clock import parse_time, stamp
from pbem.host.deadlines import Timing
from pbem.host.interface import Outcome
from pbem.host.settings import Memo, PacketClock, clock_says, give_up_at
from pbem.host.tables import games, moves, notices, packets, seats
from pbem.names import HOST
from pbem.protocol.documents import (
    Deadline,
    HandoverRecord,
    Notice,
    NoticeKind,
    Packet,
    RecentMove,
    Signed,
    read_blocks,
    sign,
)
from pbem.protocol.timeout import named_for, takeovers

RECENT_LIMIT = 64  # moves kept in a packet's `recent` (more than a table of 12 makes in 5 rounds)
MAX_ACTIONS = 200  # timeouts played in one tick (every seat absent: a whole round at once)


# --- the clock's memory ------------------------------------------------------------------------------


def _seat(ch: Change, name: str) -> Seat:
    seat = ch.facts.seat(name)
    if seat is None:
        raise UsageError(msg("no seat {name} in game {game}", name=repr(name), game=ch.facts.id),
                         hint=msg("seats: {list}", list=", ".join(st.name for st in ch.facts.seats)))
    return seat



def set_timing(ch: Change, timing: Timing) -> Timing:
    """Change a game's deadline rules; a game in play restarts the current packet's clock now."""
    timing.check()
    g = ch.g
    ch.signer()  # only the host changes the rules
    ch.set_timing(timing)
    memo = ch.memo
    clock = memo.clock
    if g["status"] == "playing" and clock.seat and clock.seq == g["seq"] and not memo.paused and not renew(ch):
        restart(ch, clock, timing, ch.clock.now())
        if clock.due:
            notice(ch, "due", clock.seat, due=clock.due)
    return timing


def renew(ch: Change) -> bool:
    """The packet waiting names no deadline (published while the game was paused, or had
    none) but the rules now give one: publish a fresh packet of the same position that names
    it, as a handover does, so that the deadline is a promise every seat and the audit see
    (the archive lists the packet in `renewed`). Whether it did."""
    clock, g = ch.memo.clock, ch.g
    if not clock.seat or clock.seq != g["seq"] or promised(ch) is not None or not ch.settings.rules().deadline:
        return False
    ch.memo.renewed.append(g["seq"] + 1)
    ch.publish(ch.state())
    return True


def restart(ch: Change, clock: PacketClock, timing: Timing, start: datetime) -> None:
    """The current packet's deadline counted from `start` (reminders sent so far stay sent),
    never before the due time the packet names: a shorter rule applies from the next packet."""
    until = ch.standing(clock.seat).away_until if clock.seat else None
    if until and parse_time(until) > start:
        start = parse_time(until)
    due = timing.due(start)
    named = promised(ch)
    if due is not None and named is not None and due < parse_time(named.due):
        due = parse_time(named.due)
    clock.start = stamp(start)
    if due is None:
        clock.due = None
    else:
        clock.due = stamp(due)
        clock.sent = [k for k in clock.sent if not k.startswith("late")]


# --- what packets and the status say -----------------------------------------------------------


def packet_extras(ch: Change, seq: int, to_move: str | None, handover: HandoverRecord | None) -> dict[str, Any]:
    """The packet's signed deadline and table news (fields of `Packet`); starts the new
    packet's clock."""
    memo, timing = ch.memo, ch.settings.rules()
    now = ch.clock.now()
    out: dict[str, Any] = {}
    standings = ch.standings()
    absent = sorted(n for n, st in standings.items() if st.absent is not None or st.resigned)
    away = {n: st.away_until for n, st in standings.items() if st.away_until and parse_time(st.away_until) > now}
    if absent:
        out["absent"] = absent
    if away:
        out["away"] = away
    clock = PacketClock(seq=seq, seat=to_move, start=stamp(now), named=True)  # its deadline: below
    if to_move and standings[to_move].absent is not None:
        clock.absent = True  # absent when published: the policy plays at once (until the seat is back)
    if memo.paused:
        out["paused"] = True
    elif to_move and timing.deadline:
        restart(ch, clock, timing, now)
        assert clock.due is not None
        grace = stamp(timing.give_up(parse_time(clock.due))) if timing.on_timeout != "wait" else None
        turns = timing.bot_turns if timing.on_timeout == "bot" else None
        out["deadline"] = Deadline(seat=to_move, due=clock.due, on_timeout=timing.on_timeout, grace_until=grace,
                                   bot_turns=turns)
    clock.deadline, clock.named = out.get("deadline"), True  # the promise the host keeps (promised)
    readers = [st.name for st in ch.facts.seats if not standings[st.name].resigned]
    out["recent"] = since_last_move(ch.recent_window(), readers)
    out["handovers"] = archive_handovers(memo)
    if handover is not None:
        out["handover"] = handover.seat
    memo.clock = clock if to_move else PacketClock()
    forget_ended(memo, now)
    return out


_RECENT = (select(moves.c.round_no, moves.c.n, moves.c.seat, moves.c.public_text, moves.c.answered_seq, moves.c.why)
           .where(moves.c.game_id == bindparam("b_game")).order_by(moves.c.id.desc()).limit(RECENT_LIMIT))


def read_recent(c: Connection, g: GameRow) -> list[RecentMove]:
    """The game's last RECENT_LIMIT public moves, oldest first, as the store has them."""
    out = [RecentMove(round=r.round_no, n=r.n, seat=r.seat, text=r.public_text, seq=r.answered_seq,
                      by=HOST if r.why else None, why=r.why) for r in c.execute(_RECENT, {"b_game": g["id"]})]
    return out[::-1]


def since_last_move(window: list[RecentMove], seats: list[str]) -> list[RecentMove]:
    """Public moves since the last own move of the seat in `seats` that waited longest (one
    that made none in the window: all of it), oldest first: everything each seat has missed
    since its own last turn. The host's moves for a seat are not its own: a seat back from
    being absent or away finds every move made meanwhile (up to RECENT_LIMIT)."""
    last = {m.seat: i for i, m in enumerate(window) if m.by is None}
    start = min((last.get(seat, -1) for seat in seats), default=-1)
    return window[start + 1 :]


def archive_handovers(memo: Memo) -> list[HandoverRecord] | None:
    """Every seat handed over so far (None: none), as packets and archives list them."""
    return [HandoverRecord(seat=h.seat, key=h.key, old=h.old, at=h.at, by=h.by, document=h.document)
            for h in memo.handovers] or None


def forget_ended(memo: Memo, now: datetime) -> None:
    """Forget the away requests that have ended: a replay of one is refused as in the past."""
    if any(r.until and parse_time(r.until) <= now for r in memo.requests):
        memo.requests = [r for r in memo.requests if not (r.until and parse_time(r.until) <= now)]


# --- notices -----------------------------------------------------------------------------------


def notice(ch: Change, kind: NoticeKind, seat: str | None, **fields: Any) -> Outcome:
    g = ch.g
    at = ch.now()
    block = sign(Notice(game=g["id"], seq=g["seq"], notice=kind, seat=seat, at=at, **fields), ch.signer())
    made = ch.c.execute(insert(notices).values(game_id=g["id"], seq=g["seq"], kind=kind, seat=seat,
                                               armored=block.armored(), created_at=at))
    event, key = webhooks.NOTICE_EVENTS.get(kind), made.inserted_primary_key
    if event is not None:  # the clock's deadline: the one coming, or the one missed
        webhooks.record(ch, event, seat=seat, deadline=ch.memo.clock.due, round_no=g["round_no"], seq=g["seq"],
                        notice=key[0] if kind == "reminder" and key else None)  # several a packet
    return Outcome("notice", msg("notice: {line}", line=notice_word(block.doc, ch.clock.now())))


# --- the clock ticks -----------------------------------------------------------------------------


# What the referee reads, without a lock, to see whether a game's clock may have work (may_act).
CLOCK = select(games.c.status, games.c.seq, games.c.memo).where(games.c.id == bindparam("b_game"))
OUT = select(seats.c.absent, seats.c.resigned).where(seats.c.game_id == bindparam("b_game"),
                                                     seats.c.name == bindparam("b_name"))


def may_act(memo: Memo, status: str, seq: int, out: Callable[[str], bool]) -> bool:
    """Whether the clock may have something to do for the packet waiting now (`out(seat)`:
    whether the seat is absent or resigned)."""
    clock = memo.clock
    if status != "playing" or clock.seq != seq or memo.paused or not clock.seat:
        return False
    return bool(clock.due) or out(clock.seat)


def promised(ch: Change) -> Deadline | None:
    """The deadline the packet waiting names for its seat (None: it names none), which the host
    keeps whatever the game's rules say now (pbem.protocol.timeout.takeovers)."""
    clock = ch.memo.clock
    if not clock.named and clock.seq is not None:  # a clock kept before it recorded it: the packet says
        armored = ch.c.execute(select(packets.c.armored).where(packets.c.game_id == ch.facts.id,
                                                               packets.c.seq == clock.seq)).scalar()
        clock.deadline = read_blocks(armored)[0].expect(Packet).doc.deadline if armored else None
        clock.named = True
    return named_for(clock.deadline, clock.seat) if clock.seat else None


def _takeover(ch: Change) -> tuple[str, int | None] | None:
    """The policy, with its bot budget, that plays for the seat of the packet waiting: the one
    the packet names, or, naming none, the game's now; None when none plays (wait)."""
    named = promised(ch)
    allowed = takeovers(named)
    policy = named.on_timeout if named is not None else ch.settings.rules().on_timeout
    return (policy, allowed[policy]) if policy in allowed else None


def _out(ch: Change) -> Callable[[str], bool]:
    return lambda seat: ch.standing(seat).absent is not None or ch.standing(seat).resigned


def tick_once(ch: Change) -> list[Outcome]:
    """One step of the clock, in one change: what is due by now for the packet waiting (the
    referee repeats it while a step plays a move, up to MAX_ACTIONS)."""
    g, memo = ch.g, ch.memo
    if not may_act(memo, g["status"], g["seq"], _out(ch)):
        return []
    clock, timing = memo.clock, ch.settings.rules()
    now = ch.clock.now()
    seat = clock.seat
    assert seat is not None
    st = ch.standing(seat)
    plays = _takeover(ch) is not None
    if plays and (st.resigned or (st.absent is not None and clock.absent)):
        return [_play(ch, seat, "resigned" if st.resigned else "absent")]
    if not clock.due:
        return []
    out = []
    for said in clock_says(timing, clock, now):
        if said == "reminder":
            out.append(notice(ch, "reminder", seat, due=clock.due))
            continue
        st.missed += 1
        out.append(notice(ch, "late", seat, due=clock.due, missed=st.missed))
        if st.missed >= timing.absent_after and st.absent is None:
            st.absent = g["seq"]
            out.append(notice(ch, "absent", seat, missed=st.missed))
    give_up = give_up_at(timing, clock)  # (`plays` above recorded the packet's deadline in the clock)
    if plays and give_up is not None and now >= give_up:
        out.append(_play(ch, seat, "timeout"))
    return out


def _play(ch: Change, seat: str, why: str) -> Outcome:
    return ch.play_for(_seat(ch, seat), why)


def may_play_for(ch: Change, seat: str, why: str) -> tuple[str, int | None]:
    """The timeout policy, with its bot budget, that may play for `seat` now, `why` (timeout,
    absent, resigned): the one the packet waiting names (`_takeover`). Conflict when the rules
    let the host play for nobody: no deadline named or not past it and its grace, a seat not
    absent or resigned, a paused game, the policy `wait`."""
    g, memo = ch.g, ch.memo
    timing, clock, st = ch.settings.rules(), memo.clock, ch.standing(seat)

    def refuse(reason: Msg) -> Conflict:
        return Conflict(msg("the host may not play for {seat} at packet {seq}: {reason}", seat=seat, seq=g["seq"],
                          reason=reason))

    if g["status"] != "playing" or clock.seq != g["seq"] or clock.seat != seat:
        raise refuse(msg("the packet waits for another seat"))
    takeover = _takeover(ch)
    if takeover is None:
        raise refuse(msg("the packet's timeout policy is wait"))
    if memo.paused:
        raise refuse(msg("the game is paused"))
    if why == "resigned" and st.resigned:
        return takeover
    if why == "absent" and st.absent is not None and clock.absent:
        return takeover
    if why != "timeout":
        raise refuse(msg("{seat} is neither absent nor resigned", seat=seat))
    named = promised(ch)
    if not clock.due:
        raise refuse(msg("the game has no deadline"))
    if named is None:  # a deadline set since: it applies from the next packet
        raise refuse(msg("the packet names no deadline"))
    give_up = give_up_at(timing, clock)
    assert give_up is not None  # a due time, a deadline named, a policy that plays
    if ch.clock.now() < give_up:
        raise refuse(msg("its deadline and grace run until {when}", when=date_word(give_up, ch.clock.now())))
    return takeover


def back(ch: Change, seat: str) -> bool:
    """An absent seat that sent something signed is present again: from its next packet the
    host waits for its deadline (a packet of its waiting now gets a full deadline from now).
    Whether it was absent."""
    st = ch.standing(seat)
    st.missed = 0
    if st.absent is None:
        return False
    st.absent = None
    clock = ch.memo.clock
    if clock.seat == seat and clock.seq == ch.g["seq"] and clock.absent:
        clock.absent = False
        if clock.due:
            restart(ch, clock, ch.settings.rules(), ch.clock.now())
            notice(ch, "due", seat, due=clock.due)
    notice(ch, "back", seat)
    return True


def back_by_move(ch: Change, block: Signed[Any]) -> Msg | None:
    """A move refused as stale, of an absent seat, for a packet the host played for it since
    the seat became absent: the seat is present again. A move file counts once: once back,
    only a later absence makes it absent again, and that is after the packet the move answers.
    What to add to the refusal, or None."""
    seat = block.doc.seat
    g = ch.g
    since = ch.standing(seat).absent
    if g["status"] != "playing" or since is None or block.doc.seq < since or answered(ch.memo, block.hash):
        return None
    played = ch.c.execute(select(moves.c.id).join(packets, (packets.c.game_id == moves.c.game_id)
                                               & (packets.c.seq == moves.c.answered_seq))
                       .where(moves.c.game_id == g["id"], moves.c.seat == seat, moves.c.why.is_not(None),
                              moves.c.answered_seq == block.doc.seq, packets.c.hash == block.doc.packet)).first()
    if played is None:
        return None
    back(ch, seat)
    return msg("{seat} is present again: the host waits for their next deadline", seat=seat)


def answered(memo: Memo, block_hash: str) -> bool:
    return any(r.hash == block_hash for r in memo.requests)


def moved(ch: Change, seat: str) -> None:
    """A seat moved by itself: its missed deadlines are forgiven, an absent seat is back.
    (Its standing is written only when that changes something: most moves change nothing.)"""
    st = ch.standing(seat)
    if not st.missed and st.absent is None:
        return
    st.missed = 0
    back, st.absent = st.absent is not None, None
    if back:
        notice(ch, "back", seat)
