"""What every host of one game answers, whichever kind it is: the referee of a store's game
(pbem.host.referee.Host) or the blind host of a trustless game (pbem.host.blind.BlindHost).

`GameHost` is the one interface the commands, the automatic host, the publishers and the
mail use; `GameStatus` is what `pbem status` says of a game and `GameOverview` its row in
`pbem games`, built from its status by `overview_of` alone, so the two never tell a different
round, packet, step or transport. The records are the JSON documents the commands print, so
they are typed dicts. Light on purpose: `pbem status` imports this and nothing of the referee.

The annotations are evaluated as the classes are made (no `from __future__ import annotations`):
the typed dicts are made at every start of a host's command, and typing would compile each
string annotation from source there; the names imported only for the type checker are quoted.
"""

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, Self, TypedDict, TypeVar

import msgspec

from pbem.errors import Text
from pbem.host.deadlines import ClockStatus, Timing

if TYPE_CHECKING:
    from engine.state import RoundState
    from pbem.host.clock import Clock
    from pbem.host.settings import MailMark, Settings
    from pbem.protocol.crypto import Identity
    from pbem.protocol.documents import Signed

_Said = TypeVar("_Said")


class Release(msgspec.Struct, frozen=True):
    """A packet (seq >= 1) or the invitation (seq 0), as a publisher delivers it."""

    seq: int
    armored: str  # a round's last packet carries the round's archive after it
    archive: tuple[int, str] | None = None  # (round, armoured archive) when this packet ends a round


class HostNotice(msgspec.Struct, frozen=True):
    """One of the host's signed notices to the table (pbem/host/timekeeper.py)."""

    id: int  # increasing within the store
    seq: int  # the packet it is about
    kind: str  # reminder, late, absent, back, away, due, paused, resumed, resigned, handover
    seat: str | None
    armored: str


class TalkRelease(msgspec.Struct, frozen=True):
    """A seat's line of table talk as the host keeps and relays it (pbem/host/talk.py)."""

    id: int  # increasing within the store (or the trustless game's file)
    seq: int  # the packet it answers
    seat: str
    armored: str  # the seat's signed block, as it came


class Outbox(msgspec.Struct, frozen=True):
    """What one channel has not delivered yet, each oldest first (pbem.host.publish)."""

    releases: list[Release]  # after the channel's mark (the invitation first when it has none)
    notices: list[HostNotice]  # after the mark of "CHANNEL notices"
    talk: list[TalkRelease]  # after the mark of "CHANNEL talk"
    head: tuple[int, str]  # the game's latest packet and status, as read with the rest


class Outcome(msgspec.Struct):
    """What happened to one input block, in a line a person can read."""

    kind: str  # joined, dealt, applied, duplicate, notice, talk
    message: Text  # said by the edge that shows it (pbem.ui.words.render)
    seq: int | None = None


class SeatStatus(TypedDict):
    name: str
    joined: bool
    last_activity: str | None
    email: str | None
    fingerprint: str


class WaitingStatus(TypedDict):
    """What a trustless table waits for: a step, from these seats (by `due`, with deadlines)."""

    step: str
    seats: list[str]
    due: NotRequired[str]


class GameStatus(ClockStatus):
    """A game as `pbem status` says it (and `--json` prints it)."""

    game: str
    name: str
    ruleset: str
    options: list[str]
    status: str  # joining, playing, over
    round: int
    seq: int  # the latest packet (0: none yet)
    to_move: str | None
    gold: dict[str, int]
    seats: list[SeatStatus]
    trustless: bool
    waiting: WaitingStatus | None  # a trustless table's step (None: a classic game)
    since: str | None  # the latest packet's time (before the first: the game's creation)


class GameOverview(TypedDict):
    """A game's row in `pbem games` (and `--json`)."""

    name: str
    game: str
    ruleset: str
    status: str
    round: int
    seq: int
    to_move: str | None
    since: str | None
    due: str | None
    paused: bool
    joined: int
    seats: int
    transport: str | None  # folder, mail, or None: not served yet
    host_key: str
    trustless: bool
    waiting: WaitingStatus | None  # a trustless table's step, while it plays


def overview_of(st: GameStatus, settings: "Settings", host_key: str) -> GameOverview:
    """A game's row in `pbem games`, from its status and its settings (the transport)."""
    deadline = st["deadline"] if st["status"] == "playing" else None
    waiting = st["waiting"]
    due = deadline["due"] if deadline else waiting.get("due") if waiting else None
    return {"name": st["name"], "game": st["game"], "ruleset": st["ruleset"], "status": st["status"],
            "round": st["round"], "seq": st["seq"], "to_move": st["to_move"], "since": st["since"], "due": due,
            "paused": st["paused"], "joined": sum(s["joined"] for s in st["seats"]), "seats": len(st["seats"]),
            "transport": settings.transport.kind() if settings.transport else None, "host_key": host_key, "trustless": st["trustless"],
            "waiting": None if st["status"] == "over" else waiting}


class Closing:
    """What `with` does for a host or a store: gives it, then calls its close()."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class GameHost(Protocol):
    """One game's host, as every caller uses it. `identity` is the host's key, set before a
    change (None: a host that only answers queries); every time it stamps comes from `clock`."""

    identity: "Identity | None"
    clock: "Clock"

    @property
    def name(self) -> str:
        """The game's name."""

    @property
    def url(self) -> str:
        """Where the game is kept (a store's URL, or a trustless game's own file)."""

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...

    def close(self) -> None: ...

    # queries (no key needed)

    def game_id(self) -> str: ...

    def host_name(self) -> str:
        """The name of the host's key."""

    def head(self) -> tuple[int, str]:
        """(latest packet number, status): the cheap question a watch loop asks."""

    def status(self) -> GameStatus: ...

    def seat_emails(self) -> list[tuple[str, str | None]]:
        """(seat, its mail address or None) in seat order."""

    def invitation(self) -> str: ...

    def packets(self, since: int = 0, until: int | None = None) -> list[tuple[int, str]]: ...

    def packet(self, seq: int) -> str | None: ...

    def public_view(self, seq: int) -> "RoundState | None":
        """The table as every seat sees it at packet `seq` (the maze, the hands' sizes, the
        cards in front, the gold), for the mail's drawing; None when the host cannot say (a
        trustless host keeps only its newest table, and none before the deal)."""

    def archives(self) -> dict[int, str]:
        """Each ended round's armoured archive (none for a trustless game: its chain is audited)."""

    def notices(self, after: int = 0) -> list[HostNotice]: ...

    def talk(self, after: int = 0) -> list[TalkRelease]:
        """The seats' lines of table talk after line `after`, in the order the host took them."""

    def settings(self) -> "Settings":
        """How the game is run: deadline rules, languages, SMTP, transport, digest, mail book."""

    # settings

    def set_settings(self, **changes: Any) -> "Settings":
        """Change settings in one transaction (None: back to the default)."""

    def change_settings(self, change: Callable[["Settings"], tuple["Settings", _Said]]) -> _Said:
        """Read the settings and write `change`'s new ones back in one transaction:
        `change(old) -> (new, what to return)`."""

    def set_email(self, name: str, address: str | None) -> None:
        """A seat's mail address, or the host's ('host'); None removes it."""

    def set_timing(self, timing: Timing) -> Timing:
        """Change the deadline rules; the step waiting now restarts its clock. Returns them."""

    # publishing (pbem.host.publish)

    def delivered(self, channel: str) -> int: ...

    def releases(self, after: int) -> list[Release]: ...

    def outbox(self, channel: str) -> Outbox:
        """What `channel` has not delivered yet: releases, notices and table talk after its marks."""

    def mark_delivered(self, channel: str, seq: int, book: "dict[str, MailMark] | None" = None) -> None:
        """Raise `channel`'s mark to `seq`, and store the mail's `book` with it (one transaction)."""

    # changes (the host's key needed), one transaction each

    def accept(self, block: "Signed[Any]") -> Outcome: ...

    def tick(self) -> list[Outcome]:
        """What the clock asks now: reminders, late notices, timeouts."""

    def next_tick(self) -> datetime | None:
        """When `tick` next has something to do (None: nothing on the clock): a watch loop that
        waits for mail wakes by then."""

    def version(self) -> int | None:
        """A number that changes with every change committed to where the game is kept, by
        anyone (None: not known, read every time): a watch loop that finds it as it was, and the
        clock not yet at `next_tick`, has nothing to read again."""
