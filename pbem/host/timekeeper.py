"""The host and the clock: deadlines in packets, reminders, late notices, timeouts, away,
pause, resign and seat handovers (docs/protocol.md, "Deadlines").

What the host remembers lives in the game's config, changed in the same transaction as the
packet or notice it concerns, so a restarted host never sends a reminder twice nor plays a
timeout twice:
- `clock`: the current packet's seat, start, due time, and which notices went out for it;
- `seats`: per seat `missed` (deadlines missed in a row), `absent`, `resigned`, `away_until`;
- `paused`: when the host paused the game; `handovers`: every seat handed to a new key.
Notices are signed documents kept in the store's `notices` table; every publisher (folder,
mail, out-dir) delivers them after the packets (pbem/host/publish.py).

Each function works on one change of the game (pbem.host.change.Change, opened by the
referee): `ch.c` its transaction, `ch.g` the game's row that the change edits and the
referee writes back.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.engine import Connection

from pbem.errors import (
    BadPacket,
    BadSignature,
    Conflict,
    Msg,
    StaleMove,
    UsageError,
    date_word,
    kind_word,
    left_word,
    msg,
    notice_word,
    span_word,
    status_word,
)
from pbem.host.change import Change, GameRow, Seat
from pbem.host.clock import parse_time, stamp
from pbem.host.deadlines import Timing, clock_says
from pbem.host.interface import Outcome
from pbem.host.store import games, moves, notices, packets, seats
from pbem.names import HOST
from pbem.protocol.crypto import PublicKey
from pbem.protocol.documents import (
    Deadline,
    Handover,
    HandoverRecord,
    Notice,
    NoticeKind,
    RecentMove,
    Request,
    Signed,
    b64,
    sign,
)

RECENT_LIMIT = 64  # moves kept in a packet's `recent` (more than a table of 12 makes in 5 rounds)
AWAY_PER_WINDOW, AWAY_WINDOW = 3, 86400.0  # away notices a seat may send in a day (each goes to every seat)
MAX_ACTIONS = 200  # timeouts played in one tick (every seat absent: a whole round at once)


# --- the config ------------------------------------------------------------------------------


def _config(g: GameRow) -> dict[str, Any]:
    return dict(json.loads(g["config"]))


def _save(g: GameRow, config: dict[str, Any]) -> None:
    g["config"] = json.dumps(config, sort_keys=True)


def standing(config: dict[str, Any], seat: str) -> dict[str, Any]:
    return config.setdefault("seats", {}).setdefault(seat, {})


def _seat(ch: Change, name: str) -> Seat:
    seat = ch.facts.seat(name)
    if seat is None:
        raise UsageError(msg("no seat {name} in game {game}", name=repr(name), game=ch.facts.id),
                         hint=msg("seats: {list}", list=", ".join(st.name for st in ch.facts.seats)))
    return seat



def set_timing(ch: Change, timing: Timing) -> dict[str, Any]:
    """Change a game's deadline rules; a game in play restarts the current packet's clock now."""
    timing.check()
    g = ch.g
    ch.signer()  # only the host changes the rules
    config = _config(g)
    config["timing"] = timing.to_config()
    clock = config.get("clock")
    if g["status"] == "playing" and clock and clock.get("seq") == g["seq"] and not config.get("paused"):
        _restart(config, clock, timing, ch.clock.now())
        if "due" in clock:
            _notice(ch, "due", clock["seat"], due=clock["due"])
    _save(g, config)
    return dict(config["timing"])


def _restart(config: dict[str, Any], clock: dict[str, Any], timing: Timing, start: Any) -> None:
    """The current packet's deadline counted from `start` (reminders sent so far stay sent)."""
    seat = clock.get("seat")
    until = standing(config, seat).get("away_until") if seat else None
    if until and parse_time(until) > start:
        start = parse_time(until)
    due = timing.due(start)
    clock["start"] = stamp(start)
    if due is None:
        clock.pop("due", None)
    else:
        clock["due"] = stamp(due)
        clock["sent"] = [k for k in clock.get("sent", []) if not k.startswith("late")]


# --- what packets and the status say -----------------------------------------------------------


def packet_extras(ch: Change, seq: int, to_move: str | None, handover: HandoverRecord | None) -> dict[str, Any]:
    """The packet's signed deadline and table news (fields of `Packet`); starts the new
    packet's clock."""
    g = ch.g
    config = _config(g)
    timing = Timing.from_config(config)
    now = ch.clock.now()
    out: dict[str, Any] = {}
    standings = config.get("seats", {})
    absent = sorted(n for n, st in standings.items() if st.get("absent") or st.get("resigned"))
    away = {n: st["away_until"] for n, st in standings.items()
            if st.get("away_until") and parse_time(st["away_until"]) > now}
    if absent:
        out["absent"] = absent
    if away:
        out["away"] = away
    clock: dict[str, Any] = {"seq": seq, "seat": to_move, "start": stamp(now), "sent": []}
    if to_move and standings.get(to_move, {}).get("absent"):
        clock["absent"] = True  # absent when published: the policy plays at once (until the seat is back)
    if config.get("paused"):
        out["paused"] = True
    elif to_move and timing.deadline:
        _restart(config, clock, timing, now)
        grace = stamp(timing.give_up(parse_time(clock["due"]))) if timing.on_timeout != "wait" else None
        out["deadline"] = Deadline(seat=to_move, due=clock["due"], on_timeout=timing.on_timeout, grace_until=grace)
    readers = [st.name for st in ch.facts.seats if not standings.get(st.name, {}).get("resigned")]
    out["recent"] = since_last_move(ch.recent_window(), readers)
    out["handovers"] = archive_handovers(g)
    if handover is not None:
        out["handover"] = handover.seat
    config["clock"] = clock if to_move else {}
    _save(g, config)
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


def archive_handovers(g: GameRow) -> list[HandoverRecord] | None:
    """Every seat handed over so far (None: none), as packets and archives list them."""
    return [HandoverRecord(**h) for h in _config(g).get("handovers", [])] or None


# --- notices -----------------------------------------------------------------------------------


def _notice(ch: Change, kind: NoticeKind, seat: str | None, **fields: Any) -> Outcome:
    g = ch.g
    at = ch.now()
    block = sign(Notice(game=g["id"], seq=g["seq"], notice=kind, seat=seat, at=at, **fields), ch.signer())
    ch.c.execute(insert(notices).values(game_id=g["id"], seq=g["seq"], kind=kind, seat=seat, armored=block.armored(),
                                        created_at=at))
    return Outcome("notice", msg("notice: {line}", line=notice_word(block.doc, ch.clock.now())))


# --- the clock ticks -----------------------------------------------------------------------------


# What the referee reads, without a lock, to see whether a game's clock may have work (may_act).
CLOCK = select(games.c.status, games.c.seq, games.c.config).where(games.c.id == bindparam("b_game"))


def may_act(config: dict[str, Any], status: str, seq: int) -> bool:
    """Whether the clock may have something to do for the packet waiting now."""
    clock = config.get("clock") or {}
    if status != "playing" or clock.get("seq") != seq or config.get("paused") or not clock.get("seat"):
        return False
    st = config.get("seats", {}).get(clock["seat"], {})
    return bool(clock.get("due")) or bool(st.get("absent") or st.get("resigned"))


def tick_once(ch: Change) -> list[Outcome]:
    """One step of the clock, in one change: what is due by now for the packet waiting (the
    referee repeats it while a step plays a move, up to MAX_ACTIONS)."""
    g = ch.g
    config = _config(g)
    if not may_act(config, g["status"], g["seq"]):
        return []
    clock = config["clock"]
    timing = Timing.from_config(config)
    now = ch.clock.now()
    seat = clock["seat"]
    st = standing(config, seat)
    if timing.on_timeout != "wait" and (st.get("resigned") or (st.get("absent") and clock.get("absent"))):
        return [_play(ch, seat, "resigned" if st.get("resigned") else "absent")]
    if not clock.get("due"):
        return []
    out = []
    for said in clock_says(timing, clock, now):
        if said == "reminder":
            out.append(_notice(ch, "reminder", seat, due=clock["due"]))
            continue
        st["missed"] = int(st.get("missed", 0)) + 1
        out.append(_notice(ch, "late", seat, due=clock["due"], missed=st["missed"]))
        if st["missed"] >= timing.absent_after and not st.get("absent"):
            st["absent"] = True
            out.append(_notice(ch, "absent", seat, missed=st["missed"]))
    _save(g, config)
    if timing.on_timeout != "wait" and now >= timing.give_up(parse_time(clock["due"])):
        out.append(_play(ch, seat, "timeout"))
    return out


def _play(ch: Change, seat: str, why: str) -> Outcome:
    return ch.play_for(_seat(ch, seat), why)


def may_play_for(ch: Change, seat: str, why: str) -> str:
    """The timeout policy that may play for `seat` now, `why` (timeout, absent, resigned);
    Conflict when the game's rules let the host play for nobody: no deadline or not past it
    and its grace, a seat not absent or resigned, a paused game, the policy `wait`."""
    g = ch.g
    config = _config(g)
    timing = Timing.from_config(config)
    clock = config.get("clock") or {}
    st = config.get("seats", {}).get(seat, {})

    def refuse(reason: Msg) -> Conflict:
        return Conflict(msg("the host may not play for {seat} at packet {seq}: {reason}", seat=seat, seq=g["seq"],
                          reason=reason))

    if g["status"] != "playing" or clock.get("seq") != g["seq"] or clock.get("seat") != seat:
        raise refuse(msg("the packet waits for another seat"))
    if timing.on_timeout == "wait":
        raise refuse(msg("the game's timeout policy is wait"))
    if config.get("paused"):
        raise refuse(msg("the game is paused"))
    if why == "resigned" and st.get("resigned"):
        return timing.on_timeout
    if why == "absent" and st.get("absent") and clock.get("absent"):
        return timing.on_timeout
    if why != "timeout":
        raise refuse(msg("{seat} is neither absent nor resigned", seat=seat))
    if not clock.get("due"):
        raise refuse(msg("the game has no deadline"))
    give_up = timing.give_up(parse_time(clock["due"]))
    if ch.clock.now() < give_up:
        raise refuse(msg("its deadline and grace run until {when}", when=date_word(give_up, ch.clock.now())))
    return timing.on_timeout


def _back(ch: Change, config: dict[str, Any], seat: str) -> bool:
    """An absent seat that sent something signed is present again: from its next packet the
    host waits for its deadline (a packet of its waiting now gets a full deadline from now).
    Whether it was absent; `config` is saved by the caller."""
    st = standing(config, seat)
    st["missed"] = 0
    if not st.pop("absent", None):
        return False
    clock = config.get("clock") or {}
    if clock.get("seat") == seat and clock.get("seq") == ch.g["seq"] and clock.pop("absent", None) and clock.get("due"):
        _restart(config, clock, Timing.from_config(config), ch.clock.now())
        _notice(ch, "due", seat, due=clock["due"])
    _notice(ch, "back", seat)
    return True


def back_by_move(ch: Change, block: Signed[Any]) -> Msg | None:
    """A move refused as stale, of an absent seat, for a packet the host played for it: the
    seat is present again (each move file counts once). What to add to the refusal, or None."""
    seat = block.doc.seat
    g = ch.g
    config = _config(g)
    done = config.setdefault("requests", [])
    if g["status"] != "playing" or not standing(config, seat).get("absent") or block.hash in done:
        return None
    played = ch.c.execute(select(moves.c.id).join(packets, (packets.c.game_id == moves.c.game_id)
                                               & (packets.c.seq == moves.c.answered_seq))
                       .where(moves.c.game_id == g["id"], moves.c.seat == seat, moves.c.why.is_not(None),
                              moves.c.answered_seq == block.doc.seq, packets.c.hash == block.doc.packet)).first()
    if played is None:
        return None
    done.append(block.hash)
    _back(ch, config, seat)
    _save(g, config)
    return msg("{seat} is present again: the host waits for their next deadline", seat=seat)


def moved(ch: Change, seat: str) -> None:
    """A seat moved by itself: its missed deadlines are forgiven, an absent seat is back.
    (The config is written only when that changes something: most moves change nothing.)"""
    config = _config(ch.g)
    st = standing(config, seat)
    if not st.get("missed") and not st.get("absent"):
        return
    st["missed"] = 0
    back = st.pop("absent", None)
    _save(ch.g, config)
    if back:
        _notice(ch, "back", seat)


# --- requests from seats, and the host's own commands ------------------------------------------


def request(ch: Change, block: Signed[Request]) -> Outcome:
    """A seat's signed request: `away` (until a time) or `resign`."""
    g = ch.g
    seat = ch.seat_of(block)
    config = _config(g)
    done = config.setdefault("requests", [])
    if block.hash in done:
        return Outcome("duplicate", msg("this request of {seat} was already applied; nothing changed", seat=seat.name))
    if g["status"] != "playing":
        raise StaleMove(msg("game {game} is {status}; it takes no requests now", game=g["id"], status=status_word(g["status"])))
    action = block.doc.action
    st = standing(config, seat.name)
    now = ch.clock.now()
    if action == "away":
        until = parse_time(block.doc.until)
        if until <= now:
            raise BadPacket(msg("{seat}'s away notice ends {when}, which is in the past", seat=seat.name, when=date_word(until, now)))
        longest = Timing.from_config(config).max_away
        if (until - now).total_seconds() > longest:
            raise BadPacket(msg("{seat}'s away notice ends {when}, more than {span} from now", seat=seat.name,
                              when=date_word(until, now), span=span_word(longest)),
                            hint=msg("this game takes away notices of at most {span} (the host's game config --max-away)",
                                   span=span_word(longest)))
        sent = [x for x in st.get("away_sent", []) if (now - parse_time(x)).total_seconds() < AWAY_WINDOW]
        if len(sent) >= AWAY_PER_WINDOW:
            raise Conflict(msg("{seat} sent {n} away notices in the last {span}; this one is refused", seat=seat.name,
                             n=len(sent), span=span_word(AWAY_WINDOW)),
                           hint=msg("each away notice is sent to every seat; send the next one later"))
        st["away_sent"] = [*sent, stamp(now)]
        st["away_until"] = stamp(until)
        done.append(block.hash)
        clock = config.get("clock") or {}
        stretched = False
        if clock.get("seat") == seat.name and clock.get("seq") == g["seq"] and clock.get("due"):
            before = clock["due"]
            _restart(config, clock, Timing.from_config(config), now)  # counts from `until` now
            stretched = parse_time(clock["due"]) > parse_time(before)
            if not stretched:
                clock["due"] = before
        _save(g, config)
        _notice(ch, "away", seat.name, until=st["away_until"])
        if stretched:
            _notice(ch, "due", seat.name, due=clock["due"])
        return Outcome("away", msg("nt away", player=seat.name, when=date_word(st["away_until"], now)))
    if action == "back":
        done.append(block.hash)
        was = _back(ch, config, seat.name)
        _save(g, config)
        if not was:
            return Outcome("back", msg("{seat} was not absent; nothing else changed", seat=seat.name))
        return Outcome("back", msg("{seat} is present again: the host waits for their next deadline", seat=seat.name))
    if action == "resign":
        st["resigned"] = True
        done.append(block.hash)
        _save(g, config)
        policy = Timing.from_config(config).on_timeout
        _notice(ch, "resigned", seat.name, policy=policy)
        return Outcome("resigned", msg("nt resigned", player=seat.name, policy=policy))
    raise BadPacket(msg("unknown request {action} from {seat}", action=repr(str(action)[:20]), seat=seat.name),
                    hint=msg("requests are away and resign"))


def pause(ch: Change) -> Outcome:
    """Stop the game's clock: deadlines stop counting until `resume`."""
    g = ch.g
    ch.signer()  # only the host pauses
    config = _config(g)
    if g["status"] != "playing":
        raise UsageError(msg("game {game} is {status}; only a game in play can be paused", game=g["id"],
                           status=status_word(g["status"])))
    if config.get("paused"):
        raise UsageError(msg("game {game} is already paused since {when}", game=g["id"], when=date_word(config["paused"])),
                         hint=msg("resume it with: {command}", command=f"pbem game resume {ch.facts.name}"))
    config["paused"] = ch.now()
    _save(g, config)
    _notice(ch, "paused", None)
    return Outcome("paused", msg("game {game} paused: deadlines stop counting", game=g["id"]))


def resume(ch: Change) -> Outcome:
    """Start a paused game's clock again: the time that was left is left again."""
    g = ch.g
    ch.signer()
    config = _config(g)
    if not config.get("paused"):
        raise UsageError(msg("game {game} is not paused", game=g["id"]))
    now = ch.clock.now()
    stopped = now - parse_time(config.pop("paused"))
    clock = config.get("clock") or {}
    if clock.get("due"):  # the time that was left is left again
        clock["due"] = stamp(parse_time(clock["due"]) + stopped)
        clock["start"] = stamp(parse_time(clock["start"]) + stopped)
    elif clock.get("seat") and clock.get("seq") == g["seq"]:
        _restart(config, clock, Timing.from_config(config), now)
    _save(g, config)
    _notice(ch, "resumed", None)
    if clock.get("due"):
        _notice(ch, "due", clock["seat"], due=clock["due"])
    said = msg("game {game} resumed", game=g["id"])
    if clock.get("due"):
        said += msg("clause sep") + msg("due other", player=clock["seat"], when=date_word(clock["due"]), left=left_word(clock["due"], now))
    return Outcome("resumed", said)


# --- seat handover -----------------------------------------------------------------------------


def refuse_former_key(g: GameRow, seat: Seat, block: Signed[Any]) -> None:
    """A block signed by a key the seat was handed away from: say so plainly."""
    for h in _config(g).get("handovers", []):
        if h["seat"] == seat.name and h["old"] == block.signer.encode():
            raise BadSignature(msg("seat {seat} was handed over to a new key at packet {seq}; this {kind} is signed by "
                                 "the old key {fingerprint} and is refused", seat=seat.name, seq=h["at"],
                                 kind=kind_word(block.kind), fingerprint=block.signer.fingerprint()))


def handover(ch: Change, block: Signed[Handover]) -> Outcome:
    """Give a seat to a new key: signed by the host or by the seat's current key. The next
    packet (published now) seals the seat's part to the new key; the old key is refused."""
    f = ch.facts
    g = ch.g
    name = block.doc.seat
    seat = f.seat(name)
    if seat is None:
        raise BadPacket(msg("no seat {name} in game {game}", name=repr(str(name)[:32]), game=f.id))
    config = _config(g)
    records = config.setdefault("handovers", [])
    document = b64(block.payload)
    if any(h["document"] == document for h in records):
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
    used = {st.key.encode() for st in f.seats} | {h["old"] for h in records}
    if new.encode() in used:
        raise Conflict(msg("key {fingerprint} already held a seat in game {game}", fingerprint=new.fingerprint(), game=f.id),
                       hint=msg("the new player needs a new key"))
    record = HandoverRecord(seat=seat.name, key=new.encode(), old=seat.key.encode(), at=g["seq"] + 1, by=by,
                            document=document)
    records.append(msgspec.to_builtins(record))
    st = standing(config, seat.name)
    for k in ("missed", "absent", "resigned", "away_until"):
        st.pop(k, None)  # a new person holds the seat
    _save(g, config)
    ch.c.execute(update(seats).where(seats.c.game_id == f.id, seats.c.name == seat.name).values(key=new.encode()))
    ch.hand_over(seat.name, new, len(records))  # the packet below seals the seat's part to the new key
    _notice(ch, "handover", seat.name, fingerprint=new.fingerprint())
    seq = ch.publish(ch.state(), handover=record)
    return Outcome("handover", msg("seat {seat} handed over to key {fingerprint} (signed by {by}); packet {seq}",
                                   seat=seat.name, fingerprint=new.fingerprint(), by=by, seq=seq), seq)
