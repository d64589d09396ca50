"""Mail as a publisher: who gets which packet's mail and when (their turn, a round's end,
a digest per period), the book of what each reader has had, and the host's notices."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from msgspec.structs import replace

from pbem.errors import BadPacket
from pbem.host.deadlines import parse_duration
from pbem.host.publish import HostNotice, Release, TalkRelease
from pbem.host.settings import MailMark, Settings
from pbem.mail import talk_mail
from pbem.mail.courier import Courier
from pbem.mail.host_mail import (
    PacketTable,
    host_now,
    invitation_mail,
    mails_for,
    notice_mails,
    packet_mail,
    packet_table,
    recipients,
    sender_address,
    talk_only_mail,
)
from pbem.mail.texts import mail_kind
from pbem.names import HOST
from pbem.protocol.documents import Packet, read_blocks
from pbem.ui import when, words
from pbem.ui.words import t

if TYPE_CHECKING:  # players' commands must not import the host's store
    from pbem.host.interface import GameHost

DEFAULT_DIGEST = "12h"


def digest_seconds(text: str) -> float:
    """The settings' or `--digest`'s period: "every" -> 0 (a mail per packet), else a span of time."""
    return parse_duration(text, "--digest", off=("every",))


def note_mailed(host: GameHost, names: list[str], seq: int, now: Callable[[], float] | None = None) -> None:
    """Record mails sent by hand ('pbem mail'), so digests count from them: the book and the
    channel's mark change in one transaction, as a publisher's delivery does."""
    now = now or (lambda: host_now(host).timestamp())
    book = dict(host.settings().mail_book)
    addresses = dict(recipients(host))
    for name in names:
        if seq > book.get(name, MailMark()).seq:
            book[name] = MailMark(seq, now(), addresses.get(name))
    host.mark_delivered(MailPublisher.channel, seq, book)  # one transaction


class MailPublisher:
    """Mail as a publisher (pbem.host.publish, channel "mail"): the invitation goes to
    everyone; then for each packet a seat gets it when it is their turn, and everyone when a
    round or the game ends; otherwise a seat gets at most one digest per period (settings
    "digest", default 12h; "every": each packet). Each mail lists every move since that
    seat's last mail (settings "mail_book": seat -> last packet mailed and when), so the book
    is written with each packet; a crash between the mails and the marks resends at most one
    packet's mails (harmless: readers keep one copy per packet number). `idle` mails the
    digests whose period ran out while no new packet came. Digest periods run on the host's
    clock (`now`: seconds, for tests without one). The host's notices (reminders, late
    notices) go out whatever the digest."""

    channel = "mail"

    def __init__(self, host: GameHost, courier: Courier, now: Callable[[], float] | None = None) -> None:
        self.host = host
        self.courier = courier
        self.now: Callable[[], float] = now or (lambda: host_now(host).timestamp())
        self._docs: dict[int, Packet] = {}  # packets read so far, for the digests' "since"
        self._book_kept: dict[str, MailMark] | None = None  # the book as the last delivery left it
        self.due: float | None = None  # when `idle` may next mail a digest (see there)

    def deliver(self, release: Release) -> str:
        settings = self.host.settings()
        book, period, label = self._book(settings)
        if release.seq == 0:
            outs = mails_for(self.host, 0)
            lines = [f"{out.name} <{out.address}>: {self.courier.deliver(out.message)}" for out in outs]
            for out in outs:  # who has the invitation at which address (see _new_reader)
                book[out.name] = replace(book.get(out.name) or MailMark(), to=out.address)
            self.host.set_settings(mail_book=book)
            return t("mailed invitation to {list}", list=words.clauses(lines))
        doc = self._docs[release.seq] = read_blocks(release.armored)[0].expect(Packet).doc
        lines = []
        tables: dict[int, PacketTable] = {}
        for name, address in recipients(self.host, settings):
            why = self._kind(doc, name) or ("every" if period == 0 else None)
            if _new_reader(book, name, address):
                why = "new reader"
            if why is None and self.now() - book.get(name, MailMark()).at >= period:
                why = "digest"
            if why is not None:
                lines.append(self._mail(settings, book, label, name, address, release.seq, release.armored, why,
                                        tables))
        self._book_kept = book
        self._forget(book)
        return "\n".join(lines)  # a line per mail; none: everyone waits for a digest

    def kept(self) -> dict[str, MailMark] | None:
        """The book as the last delivery left it, stored with the channel's mark in one
        transaction (pbem.host.publish)."""
        book, self._book_kept = self._book_kept, None
        return book

    def idle(self) -> list[str]:
        """The digests whose period ran out while no new packet came. Leaves `due`: when, by
        `now`, the next one may be (None: none until the game's store changes)."""
        settings = self.host.settings()
        book, period, label = self._book(settings)
        seq = self.host.delivered(self.channel)
        self.due = None
        if seq < 0:
            return []
        lines = []
        tables: dict[int, PacketTable] = {}
        to = recipients(self.host, settings)
        for n, a in to:  # an address given since the last mail: the game so far
            if _new_reader(book, n, a):
                lines.append(self._mail(settings, book, label, n, a, seq, self._packet(seq), "new reader", tables)
                             if seq > 0
                             else self._invite(settings, book, n, a))
        if period > 0 and seq > 0:
            due = [(n, a) for n, a in to if book.get(n, MailMark()).seq < seq
                   and self.now() - book.get(n, MailMark()).at >= period]
            lines += [self._mail(settings, book, label, n, a, seq, self._packet(seq), "digest", tables) for n, a in due]
            lines += [self._talk(settings, book, n, a) for n, a in to if (n, a) not in due
                      and self.now() - book.get(n, MailMark()).at >= period]
            lines = [line for line in lines if line]
            # past due and not mailed now: nothing owed them until the store changes
            marks, now = [book.get(n, MailMark()) for n, _ in to], self.now()
            self.due = min((m.at + period for m in marks if m.at + period > now), default=None)
        if not lines:
            return []
        self.host.set_settings(mail_book=book)
        return ["\n".join(lines)]

    def _keep(self, seq: int, armored: str) -> Packet:
        """Packet `seq`, read once (the packet being delivered is cached as it is read, in `deliver`)."""
        doc = self._docs.get(seq)
        if doc is None:
            doc = self._docs[seq] = read_blocks(armored)[0].expect(Packet).doc
        return doc

    def _since(self, first: int, last: int) -> list[Packet]:
        """Packets first..last, those not read yet read from the store in one query."""
        gap = next((s for s in range(first, last + 1) if s not in self._docs), None)
        if gap is not None:
            for s, text in self.host.packets(gap - 1, last):
                self._keep(s, text)
        return [self._docs[s] for s in range(first, last + 1) if s in self._docs]

    def _forget(self, book: dict[str, MailMark]) -> None:
        """Drop the packets every reader has had: a long game does not pile them up."""
        had = min((entry.seq for entry in book.values()), default=0)
        for s in [s for s in self._docs if s < had]:
            del self._docs[s]

    def _packet(self, seq: int) -> str:
        armored = self.host.packet(seq) or ""
        self._keep(seq, armored)
        return armored

    def _invite(self, settings: Settings, book: dict[str, MailMark], name: str, address: str) -> str:
        """The invitation to an address given before the first packet."""
        out = invitation_mail(settings, sender_address(settings), name, address, self.host.invitation())
        book[name] = replace(book.get(name) or MailMark(), to=address)
        return t("mailed invitation to {list}", list=f"{name} <{address}>: {self.courier.deliver(out.message)}")

    def notify(self, notice: HostNotice) -> str:
        try:
            mails = notice_mails(self.host, notice.armored)
        except BadPacket as exc:  # a stored notice no reader takes: said once, marked, never retried
            return t("not mailed: {notice} (packet {seq}) cannot be read: {error}", notice=when.notice_name(notice.kind),
                     seq=notice.seq, error=exc)
        lines = [f"{out.name} <{out.address}>: {self.courier.deliver(out.message)}" for out in mails]
        return t("mailed {notice} (packet {seq}) to {list}", notice=when.notice_name(notice.kind), seq=notice.seq,
                 list=words.clauses(lines) or t("nobody"))

    def relay(self, line: TalkRelease) -> str:
        """A line of table talk: mailed at once to whoever gets a mail per packet ("every");
        under a digest it goes with the reader's next packet mail or digest (`idle`)."""
        settings = self.host.settings()
        book, period, _ = self._book(settings)
        if period > 0:
            return ""
        lines = [self._talk(settings, book, n, a) for n, a in recipients(self.host, settings)]
        self._book_kept = book
        return "\n".join(line for line in lines if line)

    def _talk(self, settings: Settings, book: dict[str, MailMark], name: str, address: str) -> str:
        """The lines `name` has not had, in a mail of their own (nothing to mail: "")."""
        lines = talk_mail.take(self.host, book, name)
        if not lines:
            return ""
        out = talk_only_mail(self.host, settings, name, address, lines)
        book[name] = replace(book.get(name) or MailMark(), at=self.now(), to=address)
        return t("mailed table talk to {name} <{address}>: {how}", name=name, address=address,
                 how=self.courier.deliver(out.message))

    def _kind(self, doc: Packet, name: str) -> str | None:
        if doc.waiting is None:
            return mail_kind(doc, name)
        from pbem.mail import trustless

        before = self._since(doc.seq - 1, doc.seq - 1) if doc.seq > 1 else []
        return trustless.mail_kind(doc, before[0] if before else None, name)

    def _book(self, settings: Settings) -> tuple[dict[str, MailMark], float, str]:
        label = settings.digest or DEFAULT_DIGEST
        return dict(settings.mail_book), digest_seconds(label), label

    def _mail(self, settings: Settings, book: dict[str, MailMark], label: str, name: str, address: str,
              seq: int, armored: str, why: str, tables: dict[int, PacketTable]) -> str:
        """Packet `seq`'s mail to one reader (`tables`: the packet's table, read for the first
        reader of this delivery and shown to the others as it is: nothing stored changes between)."""
        # from the first packet this reader has not had; a new reader who had the newest one at
        # their old address gets it again at the new one
        first = min(book.get(name, MailMark()).seq + 1, seq)
        since = self._since(first, seq)
        if since[-1].waiting is not None and name != HOST:  # a trustless seat follows every packet of the chain
            armored = "".join(text for _, text in self.host.packets(first - 1, seq))
        # A new reader (a seat handed to a new player, an address changed or first given mid-game)
        # gets the invitation in the same mail, before the packet: their key home checks the
        # packet against it (a second mail could be read first).
        talk = talk_mail.take(self.host, book, name)
        if seq not in tables:
            tables[seq] = packet_table(self.host, since[-1])
        out = packet_mail(self.host, settings, name, address, armored, since, None if label == "every" else label,
                           self.host.invitation() if why == "new reader" else None, talk, tables[seq])
        book[name] = replace(book.get(name) or MailMark(), seq=seq, at=self.now(), to=address)
        return t("mailed packet {seq} to {name} <{address}> ({why}): {how}", seq=seq, name=name, address=address,
                 why=_why_words(why), how=self.courier.deliver(out.message))


def _new_reader(book: dict[str, MailMark], name: str, address: str) -> bool:
    """Whether `address` has not had this game's invitation: never mailed at all, or mailed at
    another address (books written before addresses were kept say nothing: not new)."""
    entry = book.get(name)
    return entry is None or (entry.to is not None and entry.to != address)


def _why_words(why: str) -> str:
    """Why a seat got this packet's mail, for the host's log."""
    return {"turn": t("their turn"), "round": t("round over"), "over": t("game over"),
            "every": t("a mail per packet"), "digest": t("digest"), "new reader": t("a new reader")}.get(why, why)
