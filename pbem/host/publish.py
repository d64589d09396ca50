"""One publisher interface for every way packets leave the host: an out-dir, a shared
folder (pbem.folder.play), the mail (pbem.mail.publisher).

A publisher has a `channel` (its name in the store's delivery marks), `deliver(release)`
(write or send one packet, or the invitation as seq 0), `kept()` (what it must remember of
that delivery, as config changes stored in the same transaction as the channel's mark: the
mail's book of who had which packet) and `notify(notice)` (write or send
one of the host's signed notices: reminders, late, absent, pause...) and `relay(line)` (write
or send, or keep for the next mail, one seat's line of table talk); each returns a line
saying where it went (a line per message; empty: nothing went out now). `idle()` is the publisher's own timed
work, asked on every publish (the mail's digests whose period ran out). `publish_pending` delivers only what the channel has not delivered
yet, in order, packets first, and raises the channel's mark after each one (notices have
their own mark, "CHANNEL notices", and so has table talk, "CHANNEL talk"): its cost does not grow with the game, and a crash
between the commit of a move and the delivery of its packet loses nothing (the next run
delivers it; at worst one packet or notice is delivered twice, which readers keep once).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pbem.atomic import same_content, write_atomic
from pbem.host.interface import GameHost, HostNotice, Outbox, Release, TalkRelease

if TYPE_CHECKING:
    from pbem.host.settings import MailMark

__all__ = ["HostNotice", "INVITATION", "OutDir", "Publisher", "Release", "TalkRelease", "notices_channel",
           "packet_name", "publish_pending", "talk_channel", "talk_name"]

INVITATION = "invitation.pbem"


class Publisher(Protocol):
    channel: str

    def deliver(self, release: Release) -> str: ...

    def kept(self) -> dict[str, MailMark] | None:
        """What the delivery changed of the mail's book, to store with the channel's mark."""

    def notify(self, notice: HostNotice) -> str: ...

    def idle(self) -> list[str]: ...

    def relay(self, line: TalkRelease) -> str: ...


def talk_name(line: TalkRelease) -> str:
    """A relayed line's file name stem in talk/ (the content's hash follows): packet, seat."""
    return f"{line.seq:06d}-{line.seat}"


def publish_pending(host: GameHost, publisher: Publisher, *, log: Callable[[str], None] | None = None,
                    latest_only: bool = False, owed: Outbox | None = None) -> list[tuple[int | None, str]]:
    """Deliver every release, then every notice, then every line of table talk, after the
    channel's marks (`owed`: as the caller just read them); [(seq, where)] for each (seq None
    for a notice or a line)."""
    if owed is None:
        owed = host.outbox(publisher.channel)  # one read, however little is owed
    todo = owed.releases[-1:] if latest_only else owed.releases
    done: list[tuple[int | None, str]] = []
    for rel in todo:
        where = publisher.deliver(rel)
        host.mark_delivered(publisher.channel, rel.seq, publisher.kept())
        done.append((rel.seq, where))
    for notice in owed.notices:
        done.append((None, publisher.notify(notice)))
        host.mark_delivered(notices_channel(publisher.channel), notice.id)
    for said in owed.talk:
        done.append((None, publisher.relay(said)))
        host.mark_delivered(talk_channel(publisher.channel), said.id, publisher.kept())
    done += [(None, where) for where in publisher.idle()]
    done = [(seq, where) for seq, where in done if where]
    if log is not None:
        for _, where in done:
            for line in where.splitlines():  # a mail publisher says a line per mail
                log(line)
    return done


def notices_channel(channel: str) -> str:
    return f"{channel} notices"


def talk_channel(channel: str) -> str:
    return f"{channel} talk"


def packet_name(seq: int) -> str:
    return f"packet-{seq:06d}.pbem"


class OutDir:
    """Packet files in a folder (`pbem apply`'s output): out/packet-NNNNNN.pbem, invitation.pbem."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.channel = f"dir:{self.path.resolve()}"

    def deliver(self, release: Release) -> str:
        self.path.mkdir(parents=True, exist_ok=True)
        target = self.path / (packet_name(release.seq) if release.seq else INVITATION)
        data = release.armored.encode()
        if not same_content(target, data):
            write_atomic(target, data)
        return str(target)

    def kept(self) -> dict[str, MailMark] | None:
        return None

    def idle(self) -> list[str]:
        return []

    def relay(self, line: TalkRelease) -> str:
        """talk/SEQ-SEAT-HASH.pbem, the seat's line as it came (content-addressed, as in a game folder)."""
        from pbem.atomic import write_new

        return str(write_new(self.path / "talk", talk_name(line), ".pbem", line.armored.encode()))

    def notify(self, notice: HostNotice) -> str:
        """notices/notice-NNNNNN-KIND-HASH.pbem (content-addressed, as in a game folder)."""
        from pbem.atomic import content_hash

        data = notice.armored.encode()
        target = self.path / "notices" / f"notice-{notice.seq:06d}-{notice.kind}-{content_hash(data)[:12]}.pbem"
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, data)
        return str(target)
