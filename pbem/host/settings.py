"""A game's settings, what its host remembers between changes, and each seat's standing: typed,
decoded once per change and encoded once when it commits.

- `Settings` (games.settings): how the game is run — its deadline rules, the host's mail
  address, the seats' languages, SMTP, the transport it is served over, the digest period,
  the mail's book and the refused mails answered. Set by `pbem game ...` commands.
- `Memo` (games.memo): what the timekeeper remembers — the clock of the packet waiting,
  since when the game is paused, every seat handed over, and the requests answered that a
  replay could still change.
- `Standing` (columns of the seats table): deadlines missed in a row, absent since which
  packet, resigned, away until when and the away notices of the last day.

A seat's mail address lives in seats.email only; a trustless game, which has no seats table,
keeps every address in its settings' `emails`.

The annotations are evaluated as the classes are made (no `from __future__ import annotations`):
msgspec reads them when it makes the decoders below, at every start of a host's command, and a
string annotation would be compiled from source there, one by one.
"""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import msgspec

from pbem.host.clock import parse_time
from pbem.host.deadlines import ClockStatus, DeadlineStatus, Timing
from pbem.protocol.shapes import Deadline
from pbem.protocol.timeout import named_for, not_before, takeovers


class MailMark(msgspec.Struct, omit_defaults=True):
    """The last packet mailed to a reader, when, and to which address."""

    seq: int = 0
    at: float = 0.0
    to: str | None = None
    talk: int = 0  # the last line of table talk it was mailed


class Refusal(msgspec.Struct):
    """A refused mail of a seat, by its key (Message-ID), and whether it was answered."""

    key: str
    at: float
    told: bool


class SmtpSetting(msgspec.Struct, omit_defaults=True):
    """Where the host sends mail from (never a password: pbem.mail.message.SmtpSettings)."""

    host: str
    from_addr: str
    port: int | None = None
    security: str = "starttls"
    user: str | None = None
    ca_file: str | None = None


class TransportSetting(msgspec.Struct, omit_defaults=True):
    """How the game is served (pbem.auto.host_runner.Transport): a folder, or mail."""

    folder: str | None = None
    maildir: list[str] = []
    imap: str | None = None
    send: bool = False
    to_dir: str | None = None

    def kind(self) -> str | None:
        """"folder", "mail" (files or IMAP) or None."""
        if self.folder:
            return "folder"
        return "mail" if self.maildir or self.imap else None


class WebhookSetting(msgspec.Struct, omit_defaults=True):
    """Where the host POSTs its notices (pbem.host.webhooks) and in which form."""

    url: str
    format: str = "json"  # json discord slack


class Settings(msgspec.Struct, kw_only=True, omit_defaults=True):
    """How a game is run (see the module's docstring)."""

    timing: Timing | None = None
    emails: dict[str, str] = {}  # the host's ("host"); a trustless game's seats' too
    languages: dict[str, str] = {}  # seat or host -> the language of their mail
    smtp: SmtpSetting | None = None
    transport: TransportSetting | None = None
    digest: str | None = None
    mail_book: dict[str, MailMark] = {}
    refusals: dict[str, list[Refusal]] = {}
    delivered: dict[str, int] = {}  # a trustless game's publishers' marks (a store has its deliveries table)
    webhook: WebhookSetting | None = None

    def rules(self) -> Timing:
        """The deadline rules (none set: a game that waits for ever)."""
        return self.timing if self.timing is not None else Timing()


class PacketClock(msgspec.Struct, omit_defaults=True):
    """The clock of the packet (or trustless step) waiting now: its seat, start and due time,
    and the notices sent for it ("remind-N", "late")."""

    seq: int | None = None
    seat: str | None = None
    start: str | None = None
    due: str | None = None
    sent: list[str] = []
    absent: bool = False  # its seat was absent when it was published: the policy plays at once
    stage: int | None = None  # a trustless table's: the packet that opened the step
    # The deadline the packet names, the promise the host keeps (pbem.protocol.timeout.takeovers);
    # `named` False: a clock kept before the host recorded it, so the packet itself is read.
    deadline: Deadline | None = None
    named: bool = False


class Answered(msgspec.Struct, omit_defaults=True):
    """A request (or a move that said its seat is back) applied: its replay is a duplicate
    while `until` (an away request's end) has not passed; None: for the rest of the game."""

    hash: str
    until: str | None = None


class HandedOver(msgspec.Struct):
    """A seat handed to a new key (as packets and archives list it: documents.HandoverRecord)."""

    seat: str
    key: str
    old: str
    at: int  # the first packet sealed to the new key
    by: str  # "host" or the seat's name
    document: str  # the signed handover block's payload, base64


class Memo(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What the host remembers of a game between changes (see the module's docstring)."""

    clock: PacketClock = msgspec.field(default_factory=PacketClock)
    paused: str | None = None
    handovers: list[HandedOver] = []
    requests: list[Answered] = []
    renewed: list[int] = []  # packets published to name a deadline the packet before did not


class Standing(msgspec.Struct, omit_defaults=True):
    """A seat's standing with the clock (columns of the seats table)."""

    missed: int = 0  # deadlines missed in a row
    absent: int | None = None  # absent since this packet (the host plays for it)
    resigned: bool = False
    away_until: str | None = None
    away_sent: list[str] = []  # when it sent its away notices of the last day


STANDING_COLUMNS = ("missed", "absent", "resigned", "away_until", "away_sent")

_SETTINGS = msgspec.json.Decoder(Settings)
_MEMO = msgspec.json.Decoder(Memo)
_ENCODER = msgspec.json.Encoder(order="sorted")


def settings_of(text: str | None) -> Settings:
    return _SETTINGS.decode(text) if text else Settings()


def memo_of(text: str | None) -> Memo:
    return _MEMO.decode(text) if text else Memo()


def encode(value: Settings | Memo) -> str:
    return _ENCODER.encode(value).decode()


def standing_of(row: Any) -> Standing:
    """A seat's standing from its row of the seats table."""
    import json

    return Standing(row.missed, row.absent, bool(row.resigned), row.away_until,
                    list(json.loads(row.away_sent)) if row.away_sent else [])


def standing_row(st: Standing) -> dict[str, Any]:
    """The seats table's columns of a standing."""
    import json

    return {"missed": st.missed, "absent": st.absent, "resigned": st.resigned, "away_until": st.away_until,
            "away_sent": json.dumps(st.away_sent) if st.away_sent else None}


def replaced(settings: Settings, **changes: Any) -> Settings:
    """`settings` with `changes` (None: back to the default)."""
    fields = {f: (getattr(Settings(), f) if v is None else v) for f, v in changes.items()}
    return msgspec.structs.replace(settings, **fields)


def clock_says(timing: Timing, clock: PacketClock, now: datetime) -> list[str]:
    """What the clock of the packet waiting now has to say by `now`, each thing once (marked in
    `clock.sent`): "reminder" (several reminder times passed at once, as for a host that was
    down: one reminder, not a burst; none once the deadline is past), then "late"."""
    assert clock.due is not None and clock.start is not None
    due, start = parse_time(clock.due), parse_time(clock.start)
    sent = clock.sent
    out = []
    passed = [f"remind-{i}" for i, when in enumerate(timing.reminder_times(start, due)) if now >= when]
    fresh = [k for k in passed if k not in sent]
    if fresh:
        sent.extend(fresh)
        if now < due:
            out.append("reminder")
    if now >= due and "late" not in sent:
        sent.append("late")
        out.append("late")
    return out


def clock_next(timing: Timing, clock: PacketClock, now: datetime, *, plays: bool) -> datetime | None:
    """When the clock of the packet waiting now next has something to say after `now` (as
    `clock_says` would: a reminder, then "late"), or, `plays` (a referee under a timeout
    policy), the timeout move is due; None: nothing more."""
    if clock.due is None or clock.start is None:
        return None
    due, start = parse_time(clock.due), parse_time(clock.start)
    times = [when for i, when in enumerate(timing.reminder_times(start, due)) if f"remind-{i}" not in clock.sent]
    times += [due] if "late" not in clock.sent else []
    give_up = give_up_at(timing, clock) if plays else None
    times += [give_up] if give_up is not None else []
    return min((when for when in times if when > now), default=None)


def give_up_at(timing: Timing, clock: PacketClock) -> datetime | None:
    """When the host may play for the seat of the packet waiting for lack of time: past the
    clock's due time and the grace, and never before the due time and grace the packet names
    (pbem.protocol.timeout.not_before); None: never (no due time, no deadline named, or the
    policy named is wait). A clock kept before it recorded the packet's deadline: the rules'."""
    if clock.due is None:
        return None
    after = timing.give_up(parse_time(clock.due))
    if not clock.named:
        return after if timing.on_timeout != "wait" else None
    named = named_for(clock.deadline, clock.seat) if clock.seat else None
    if named is None or not takeovers(named):
        return None
    return max(after, parse_time(not_before(named)))


def deadline_of(memo: Memo, seq: int) -> DeadlineStatus | None:
    """The deadline of packet `seq` as the host remembers it ({seat, due}; the timekeeper
    keeps it), or None: no deadline, or `seq` is not the packet waiting."""
    clock = memo.clock
    if clock.due and clock.seat and clock.seq == seq:
        return {"seat": clock.seat, "due": clock.due}
    return None


def status_extras(timing: Timing | None, memo: Memo, standings: Mapping[str, Standing], seq: int) -> ClockStatus:
    """What a game's status says of its clock and its seats' standing."""
    return {
        "timing": None if timing is None else timing.to_config(),
        "deadline": deadline_of(memo, seq),
        "paused": bool(memo.paused),
        "absent": sorted(n for n, st in standings.items() if st.absent is not None or st.resigned),
        "away": {n: st.away_until for n, st in standings.items() if st.away_until},
        "handovers": [{"seat": h.seat, "key": h.key, "old": h.old, "at": h.at, "by": h.by} for h in memo.handovers],
    }
