"""The reader's time zone: TZ if set, else the key home profile's (`pbem mail setup --timezone`,
which the command line hands to `set_zone`), else the machine's. Dates are said in it
(pbem.ui.words.date), always with the zone named; what is stored and sent stays in UTC."""

from __future__ import annotations

import os
from datetime import UTC, datetime, tzinfo

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
    return f"{dt:%H:%M:%S} {zone_name(dt)}"


def zone_name(dt: datetime) -> str:
    """The zone's short name (CET, UTC), else its offset: UTC+05, UTC+05:30."""
    zone = dt.tzname() or ""
    if not zone or zone[0] in "+-":
        offset = dt.strftime("%z")
        zone = "UTC" + offset[:3] + (":" + offset[3:] if offset[3:] != "00" else "")
    return zone

_UNITS = (("span day", 86400), ("span hour", 3600), ("span minute", 60), ("span second", 1))
