"""Deadlines as data: how long a seat has to answer, which days count, what happens after.

A game's timing lives in its settings (pbem.host.settings), set by `pbem game new/config --deadline ...`.
Everything here is pure arithmetic on times given to it; the host's clock (pbem/host/clock.py)
supplies "now". The host side that acts on it (reminders, late notices, timeouts) is
pbem/host/timekeeper.py.

The annotations are evaluated as the classes are made (no `from __future__ import annotations`),
as pbem.host.settings says why: `Timing` is part of a game's settings.
"""

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict

import msgspec

from pbem.errors import UsageError, msg
from pbem.host.clock import parse_time
from pbem.protocol.timeout import MAX_TAKEOVER_TURNS, TAKEOVER_TURNS, budget_allowed


class DeadlineStatus(TypedDict):
    """The deadline of the packet waiting now: whose answer is due, and when."""

    seat: str
    due: str


class ClockStatus(TypedDict):
    """What a game's status says of its clock and its seats' standing."""

    timing: dict[str, Any] | None  # the deadline rules (pbem.host.deadlines.Timing), if any
    deadline: DeadlineStatus | None  # a classic game's; a trustless one's is in `waiting`
    paused: bool
    absent: list[str]
    away: dict[str, str]  # seat -> away until
    handovers: list[dict[str, Any]]


UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
POLICIES = ("wait", "discard", "bot")
DEFAULT_REMINDERS = ("50%", "2h")
DEFAULT_MAX_AWAY = 14 * 86400.0  # how far ahead a seat may say it is away (game config --max-away)
# The rules of a game's seats that a trustless game's blind host does not apply: it marks nobody
# absent, takes no away request and plays for no seat (docs/trustless.md §9, §10)
SEAT_RULES = ("absent_after", "max_away", "bot_turns")
_PART = r"(\d+(?:\.\d+)?)([smhd])"  # (re compiles it the first time a span is read)


_LONGEST = 9999 * 366 * 86400.0


def parse_duration(text: str, what: str, *, off: tuple[str, ...] = ()) -> float:
    """The one reading of a span of time, for every option that takes one (`--deadline`,
    `--grace`, `--max-away`, `--remind`, `--until`, `--digest`, `agent start --timeout`):
    `48h`, `90m`, `1d12h`, `2.5s` -> seconds (units s/m/h/d, any case, spaces ignored).
    `off`: the option's own words for "no span" (`--deadline none`, `--digest every`) -> 0.0.
    Anything else is one `error:` line naming the option (`what`)."""
    spec = str(text).strip().lower().replace(" ", "")
    if spec in off:
        return 0.0
    parts = re.findall(_PART, spec)
    if not spec or "".join(n + u for n, u in parts) != spec:
        hint = (msg("write a number and a unit s, m, h or d, e.g. 48h, 90m, 1d12h, or {word}", word=off[0]) if off
                else msg("write a number and a unit s, m, h or d, e.g. 48h, 90m, 1d12h"))
        raise UsageError(msg("bad {what} {text}", what=what, text=repr(text)), hint=hint)
    seconds = sum(float(n) * UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise UsageError(msg("{what} {text} must be longer than nothing", what=what, text=repr(text)))
    if seconds >= _LONGEST:  # a span no date can be that far from now (years 1-9999)
        raise UsageError(msg("{what} {text} is too long", what=what, text=repr(text)))
    return seconds


def parse_days(text: str) -> list[int]:
    """`mon-fri`, `mon,wed,fri`, `sat-sun` -> weekday numbers (Monday 0), sorted."""
    days: set[int] = set()
    for item in str(text).lower().replace(" ", "").split(","):
        lo, sep, hi = item.partition("-")
        if lo not in DAY_NAMES or (sep and hi not in DAY_NAMES):
            raise UsageError(msg("bad {what} {text}", what="--days", text=repr(text)),
                             hint=msg("write day names like mon-fri or mon,wed,fri"))
        a, b = DAY_NAMES.index(lo), DAY_NAMES.index(hi) if sep else DAY_NAMES.index(lo)
        days.update(range(a, b + 1) if a <= b else [*range(a, 7), *range(0, b + 1)])
    return sorted(days)


def parse_reminder(text: str) -> str:
    """`50%` (of the time allowed) or `2h` (before the deadline); kept as written, checked."""
    spec = str(text).strip().lower()
    if spec.endswith("%"):
        try:
            pct = float(spec[:-1])
        except ValueError:
            pct = -1
        if not 0 < pct < 100:
            raise UsageError(msg("bad {what} {text}", what="--remind", text=repr(text)),
                             hint=msg("a share of the time between 0% and 100%, e.g. 50%"))
        return spec
    parse_duration(spec, "--remind")
    return spec


def parse_when(text: str, now: datetime) -> datetime:
    """An absolute time for `--until`: a date (2026-12-10, meaning its start, UTC), an ISO time,
    or a duration from now (3d). A time not after `now` is refused."""
    spec = str(text).strip()
    try:
        when = now + timedelta(seconds=parse_duration(spec, "--until"))
    except OverflowError:  # past the year 9999
        raise UsageError(msg("{what} {text} is too long", what="--until", text=repr(text))) from None
    except UsageError:
        try:
            when = parse_time(spec)
        except Exception:
            raise UsageError(msg("bad {what} {text}", what="--until", text=repr(text)),
                             hint=msg("write a date like 2026-12-10, a time like 2026-12-10T18:00Z, or a duration like 3d")) from None
    if when <= now:
        raise UsageError(msg("{text} is in the past", text=repr(text)),
                         hint=msg("it is now {now} UTC", now=now.strftime("%Y-%m-%d %H:%M")))
    return when


class Timing(msgspec.Struct):
    """A game's deadline rules. `deadline` None: no deadlines (the game waits for ever)."""

    deadline: float | None = None  # seconds a seat has to answer a packet
    grace: float = 0.0  # after the deadline, before the timeout policy acts
    days: list[int] | None = None  # weekdays that count (None: all)
    on_timeout: str = "wait"
    absent_after: int = 2  # missed deadlines in a row that make a seat absent
    reminders: list[str] = msgspec.field(default_factory=lambda: list(DEFAULT_REMINDERS))
    max_away: float = DEFAULT_MAX_AWAY  # the longest away request taken, from the time it arrives
    bot_turns: int = TAKEOVER_TURNS  # policy bot: the search bot's budget a move, in simulated turns

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any] | None) -> "Timing":
        """Rules as `to_config` wrote them (fields it does not know are ignored)."""
        return cls(**{k: v for k, v in (raw or {}).items() if k in cls.__struct_fields__})

    def to_config(self) -> dict[str, Any]:
        """Its fields in order, each a value of its own (a list not shared with this Timing)."""
        return msgspec.to_builtins(self)

    def shown(self, *, trustless: bool) -> dict[str, Any]:
        """The rules as `game config --json` and `status --json` show them: a trustless game's
        without those its blind host does not apply (SEAT_RULES)."""
        config = self.to_config()
        return {k: v for k, v in config.items() if k not in SEAT_RULES} if trustless else config

    def check(self) -> "Timing":
        if self.on_timeout not in POLICIES:
            raise UsageError(msg("bad {what} {text}", what="--on-timeout", text=repr(self.on_timeout)),
                             hint=msg("use one of: {choices}", choices=", ".join(POLICIES)))
        if self.absent_after < 1:
            raise UsageError(msg("bad {what} {text}", what="--absent-after", text=self.absent_after),
                             hint=msg("at least 1 missed deadline"))
        if self.days is not None and not self.days:
            raise UsageError(msg("--days names no day"))
        if not budget_allowed(self.bot_turns):
            raise UsageError(msg("bad {what} {text}", what="--bot-turns", text=self.bot_turns),
                             hint=msg("a whole number of simulated turns from 1 to {most}", most=MAX_TAKEOVER_TURNS))
        return self

    def add(self, start: datetime, seconds: float) -> datetime:
        """`start` plus `seconds` of counted time (only the allowed weekdays count, UTC)."""
        if not self.days or len(self.days) == 7:
            return start + timedelta(seconds=seconds)
        cursor, left = start.astimezone(UTC), timedelta(seconds=seconds)
        while left > timedelta(0):
            midnight = (cursor + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
            if cursor.weekday() in self.days:
                step = min(left, midnight - cursor)
                left -= step
                cursor += step
            else:
                cursor = midnight
        return cursor

    def due(self, start: datetime) -> datetime | None:
        """When a packet published at `start` must be answered (None without deadlines)."""
        return None if self.deadline is None else self.add(start, self.deadline)

    def give_up(self, due: datetime) -> datetime:
        """When the timeout policy acts on a packet due at `due`."""
        return self.add(due, self.grace) if self.grace else due

    def reminder_times(self, start: datetime, due: datetime) -> list[datetime]:
        """The configured reminders for a packet (in order, only those after `start`)."""
        out = []
        span = (due - start).total_seconds()
        for spec in self.reminders:
            if spec.endswith("%"):
                when = start + timedelta(seconds=span * float(spec[:-1]) / 100)
            else:
                when = due - timedelta(seconds=parse_duration(spec, "--remind"))
            if start < when < due:
                out.append(when)
        return sorted(set(out))
