"""Times and deadlines in words: "your move, due Thu 3 Dec 18:00 UTC, in 1 day 4 hours".

`now` is always passed in (the host's clock, or the player's machine), so the words are the
same for everyone looking at the same moment. Dates (pbem.ui.words.date) are shown in the
reader's time zone (pbem.ui.zone), always with the zone named (`Thu 3 Dec 19:00 CET`, `...
18:00 UTC`): the players of one game live in different time zones, and a named zone avoids
"whose 18:00?". What is stored and sent stays in UTC.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from pbem.ui import words
from pbem.ui.words import date, left, reason


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


def notice_name(kind: str) -> str:
    """A kind of host notice as a noun ("reminder notice"), for the host's log."""
    t = words.t
    named = {"absent": t("absent notice"), "away": t("away notice"), "back": t("back notice"),
             "due": t("due notice"), "handover": t("handover notice"), "late": t("late notice"),
             "paused": t("paused notice"), "reminder": t("reminder notice"), "resigned": t("resigned notice"),
             "resumed": t("resumed notice")}
    return named.get(kind) or t("{kind} notice", kind=kind)  # a kind from a newer host


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


def packet_news(doc: PacketShape, me: str | None, now: datetime) -> list[str]:
    """A packet's deadline, a pause, who is away or absent, in words for seat `me`."""
    d = doc.deadline
    return table_lines(me, now, paused=doc.paused, away=doc.away, absent=doc.absent or (),
                       deadline=(d.seat, d.due) if d is not None and doc.phase != "game-over" else None)


def ago(stamp: str | None, now: datetime | None = None) -> str:
    """An ISO time as the reader says it: `just now`, `5 minutes ago`, `3 hours ago`, `2 days ago`."""
    if not stamp:
        return "-"
    try:
        then = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    seconds = int(((now or datetime.now(UTC)) - then).total_seconds())
    if seconds < 60:
        return words.t("just now")
    if seconds < 3600:
        return words.t("minutes ago", n=seconds // 60)
    if seconds < 86400:
        return words.t("hours ago", n=seconds // 3600)
    return words.t("days ago", n=seconds // 86400)


def game_turn(status: str, to_move: str | None, waiting: Mapping[str, Any] | None, joined: int, seats: int) -> str:
    """Where a hosted game stands, one phrase for `pbem games` and `pbem status` alike: over,
    the step a trustless table waits for and from whom, joining (how many are in), or who is to move."""
    if status == "over":
        return words.t("game over")
    if waiting and waiting.get("seats"):
        return words.t("trustless waits", step=words.step_name(str(waiting["step"])), seats=words.join(list(waiting["seats"])))
    if status == "joining":
        return words.t("joining ({joined}/{seats} in)", joined=joined, seats=seats)
    if to_move:
        return words.t("{player} to move", player=to_move)
    return words.game_status(status)
