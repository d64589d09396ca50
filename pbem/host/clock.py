"""The one source of "now" for the host: a real clock, or a fake one that tests move by hand.

Everything the host does with time (stamping packets, deadlines, reminders, timeouts) asks
the clock it was given, so a test can play a whole game of deadlines in a second by
advancing a `FakeClock` instead of sleeping.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol

from pbem.errors import BadPacket, msg


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""
        ...


class RealClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FakeClock:
    """A clock that stands still until `advance` (or `set`) moves it."""

    def __init__(self, start: datetime | str = "2026-12-01T12:00:00+00:00") -> None:
        self.at = parse_time(start) if isinstance(start, str) else start.astimezone(UTC)

    def now(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> datetime:
        self.at += timedelta(seconds=seconds)
        return self.at

    def set(self, when: datetime | str) -> None:
        self.at = parse_time(when) if isinstance(when, str) else when


REAL = RealClock()


def stamp(when: datetime) -> str:
    """The wire form of a time: ISO 8601 in UTC, to the second (fractions kept when present)."""
    when = when.astimezone(UTC)
    spec = "seconds" if when.microsecond == 0 else "milliseconds"
    return when.isoformat(timespec=spec)


def parse_time(text: object) -> datetime:
    """A time read from a document or the store; a naive time is taken as UTC."""
    try:
        when = datetime.fromisoformat(str(text))
    except ValueError:
        raise BadPacket(msg("bad time {text}", text=repr(str(text)[:40])),
                        hint=msg("times are ISO 8601, e.g. 2026-12-03T18:00:00+00:00")) from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
