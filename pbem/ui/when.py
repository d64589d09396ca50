"""Times and deadlines in words: "your move, due Thu 3 Dec 18:00 UTC, in 1 day 4 hours".

`now` is always passed in (the host's clock, or the player's machine), so the words are the
same for everyone looking at the same moment. Dates are shown in the reader's time zone (TZ;
else the time zone of the key home's profile, `pbem mail setup --timezone`, which the command
line hands to `set_zone`; else the machine's), always with the zone named (`Thu 3 Dec 19:00
CET`, `... 18:00 UTC`): the players of one game live in different time zones, and a named
zone avoids "whose 18:00?". What is stored and sent stays in UTC.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, tzinfo
from typing import Any, Protocol

from pbem.ui import words

_zone: tzinfo | None = None  # the profile's time zone, used when TZ is not set


def zone_named(name: str) -> tzinfo:
    """The IANA time zone `name` (Europe/Berlin, Asia/Shanghai, UTC); ValueError for one the
    system's time zone database does not hold."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(name) from None


def set_zone(name: str | None) -> None:
    """The reader's time zone when TZ is not set: the profile's (None: the machine's). A name
    the system does not know is passed over (`pbem mail setup` refuses one when it is set)."""
    global _zone
    try:
        _zone = zone_named(name) if name else None
    except ValueError:
        _zone = None


def local(when: datetime) -> datetime:
    """`when` in the reader's time zone: TZ if set, else the profile's, else the machine's."""
    if _zone is not None and not os.environ.get("TZ"):
        return when.astimezone(_zone)
    return when.astimezone()


def clock(now: datetime | None = None) -> str:
    """The time of day of a log line, in the reader's zone, named: 18:02:11 CET."""
    dt = local(now or datetime.now(UTC))
    return f"{dt:%H:%M:%S} {_zone_name(dt)}"


def _zone_name(dt: datetime) -> str:
    """The zone's short name (CET, UTC), else its offset: UTC+05, UTC+05:30."""
    zone = dt.tzname() or ""
    if not zone or zone[0] in "+-":
        offset = dt.strftime("%z")
        zone = "UTC" + offset[:3] + (":" + offset[3:] if offset[3:] != "00" else "")
    return zone

_UNITS = (("span day", 86400), ("span hour", 3600), ("span minute", 60), ("span second", 1))


def _parse(when: datetime | str) -> datetime:
    dt = datetime.fromisoformat(when) if isinstance(when, str) else when
    return (dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt).astimezone(UTC)


def date(when: datetime | str, now: datetime | None = None) -> str:
    """Thu 3 Dec 18:00 UTC / 12月3日（周四）18:00 UTC, in the reader's zone (`local`):
    Thu 3 Dec 19:00 CET; with the year when it is not the year of `now` (the
    machine's clock when not given): Wed 1 Jan 9000 00:00 UTC."""
    dt = local(_parse(when))
    wd = words.t("weekdays").split()[dt.weekday()]
    mon = words.t("months").split()[dt.month - 1]
    hm = dt.strftime("%H:%M")
    year = dt.year != local(now or datetime.now(UTC)).year
    if not dt.utcoffset():
        if year:
            return words.t("date year", wd=wd, d=dt.day, mon=mon, year=dt.year, hm=hm)
        return words.t("date", wd=wd, d=dt.day, mon=mon, hm=hm)
    zone = _zone_name(dt)
    if year:
        return words.t("date year in zone", wd=wd, d=dt.day, mon=mon, year=dt.year, hm=hm, zone=zone)
    return words.t("date in zone", wd=wd, d=dt.day, mon=mon, hm=hm, zone=zone)


def span(seconds: float) -> str:
    """The two largest units: 1 day 4 hours, 3 hours 20 minutes, 45 seconds."""
    left = max(0, int(round(seconds)))
    parts: list[str] = []
    for key, size in _UNITS:
        n, left = divmod(left, size)
        if n and len(parts) < 2:
            parts.append(words.t(key, n=n))
        elif parts:
            break  # 1 day 0 hours 5 minutes reads as "1 day"
    if len(parts) == 2:
        return words.t("span pair", first=parts[0], second=parts[1])
    return parts[0] if parts else words.t("span second", n=0)


def left(due: datetime | str, now: datetime) -> str:
    """in 1 day 4 hours / 3 hours late."""
    seconds = (_parse(due) - now).total_seconds()
    return words.t("in span", span=span(seconds)) if seconds >= 0 else words.t("late by", span=span(-seconds))


def due_line(seat: str, due: str, me: str | None, now: datetime) -> str:
    """A packet's deadline (`seat` to move by `due`) in words for seat `me` (None: the host or a
    spectator)."""
    if seat == me:
        return words.t("due mine", when=date(due, now), left=left(due, now))
    return words.t("due other", player=seat, when=date(due, now), left=left(due, now))


def table_lines(me: str | None, now: datetime, *, paused: bool = False, deadline: tuple[str, str] | None = None,
                away: Mapping[str, str] | None = None, absent: Sequence[str] = ()) -> list[str]:
    """What a packet says about time and the seats: the deadline (seat, due), a pause, who is
    away or absent."""
    out = []
    if paused:
        out.append(words.t("paused"))
    elif deadline is not None:
        out.append(due_line(*deadline, me, now))
    if away:
        out.append(words.t("away list", list=words.join(
            [words.t("away until", player=p, when=date(u, now)) for p, u in sorted(away.items())])))
    if absent:
        out.append(words.t("absent list", list=words.join(sorted(absent))))
    return out


def notice_line(kind: str, now: datetime, *, seat: str | None = None, seq: int | None = None, missed: int | None = None,
                policy: str | None = None, fingerprint: str | None = None, due: str | None = None,
                until: str | None = None, step: str | None = None) -> str:
    """A host's notice (reminder, late, absent, away, ...) in one sentence. A notice of a
    trustless game names the step the table waits for (`step`): its own sentences say that
    nobody can answer for the seat."""
    kw: dict[str, Any] = {"player": seat, "seq": seq, "n": missed or 0, "policy": policy, "fingerprint": fingerprint}
    if due:
        kw["when"] = date(due, now)
        kw["left"] = left(due, now)
    if until:
        kw["when"] = date(until, now)
    key = f"nt {kind}"
    if step is not None and words.has(f"{key} step"):
        key, kw["step"] = f"{key} step", words.step_name(step)
    if not words.has(key):  # a notice kind from a newer host
        return words.labelled(kind, seat or "").strip()
    try:
        return words.t(key, **kw)
    except (KeyError, IndexError):
        return words.labelled(kind, seat or "").strip()


def notice_name(kind: str) -> str:
    """A kind of host notice as a noun ("reminder notice"), for the host's log."""
    t = words.t
    named = {"absent": t("absent notice"), "away": t("away notice"), "back": t("back notice"),
             "due": t("due notice"), "handover": t("handover notice"), "late": t("late notice"),
             "paused": t("paused notice"), "reminder": t("reminder notice"), "resigned": t("resigned notice"),
             "resumed": t("resumed notice")}
    return named.get(kind) or t("{kind} notice", kind=kind)  # a kind from a newer host


def reason(why: object) -> str:
    """Why the host moved for a seat (timeout, absent, resigned) in words."""
    key = f"why {why}"
    return words.t(key) if words.has(key) else str(why)


def by_host(line: str, why: object) -> str:
    """A move the host made for a seat, marked as such: "... (played by the host: no move in time)"."""
    return words.t("by host", line=line, why=reason(why))


class DeadlineShape(Protocol):
    """A packet's deadline, as far as its words need it."""

    @property
    def seat(self) -> str: ...
    @property
    def due(self) -> str: ...


class PacketShape(Protocol):
    """What `packet_news` reads of a packet (pbem.protocol.documents.Packet)."""

    @property
    def phase(self) -> str: ...
    @property
    def paused(self) -> bool: ...
    @property
    def away(self) -> Mapping[str, str] | None: ...
    @property
    def absent(self) -> Sequence[str] | None: ...
    @property
    def deadline(self) -> DeadlineShape | None: ...


class NoticeShape(Protocol):
    """What `notice_text` reads of a host's notice (pbem.protocol.documents.Notice)."""

    @property
    def notice(self) -> str: ...
    @property
    def seq(self) -> int: ...
    @property
    def seat(self) -> str | None: ...
    @property
    def due(self) -> str | None: ...
    @property
    def until(self) -> str | None: ...
    @property
    def missed(self) -> int | None: ...
    @property
    def policy(self) -> str | None: ...
    @property
    def fingerprint(self) -> str | None: ...
    @property
    def step(self) -> str | None: ...


def packet_news(doc: PacketShape, me: str | None, now: datetime) -> list[str]:
    """A packet's deadline, a pause, who is away or absent, in words for seat `me`."""
    d = doc.deadline
    return table_lines(me, now, paused=doc.paused, away=doc.away, absent=doc.absent or (),
                       deadline=(d.seat, d.due) if d is not None and doc.phase != "game-over" else None)


def notice_text(doc: NoticeShape, now: datetime) -> str:
    """A host's notice document in one sentence."""
    return notice_line(doc.notice, now, seat=doc.seat, seq=doc.seq, missed=doc.missed, policy=doc.policy,
                       fingerprint=doc.fingerprint, due=doc.due, until=doc.until, step=doc.step)
