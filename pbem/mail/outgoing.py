"""Game-level outgoing mail: which mail goes to whom and what it says.

The transport (`pbem.mail.message`) only composes, sends and reads messages. This module
knows about games: a packet mail's subject names the game, round, packet number and whose
turn it is; its body says in words what happened since the last packet; it goes to every seat
with an address and to the host's own address. Incoming mail is `pbem.mail.incoming`'s business.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from email.message import EmailMessage
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pbem.errors import BadPacket, UsageError
from pbem.host.deadlines import parse_duration
from pbem.host.publish import HostNotice, Release
from pbem.mail.message import SmtpSettings, compose, send, write_eml
from pbem.names import HOST
from pbem.protocol.crypto import PublicKey
from pbem.protocol.documents import Handover, Invitation, Join, Mental, Move, Notice, Packet, Request, Signed, read_blocks
from pbem.ui import when, words
from pbem.ui.words import t

if TYPE_CHECKING:  # players' commands must not import the host's store
    from pbem.host.interface import GameHost

ENV_SMTP_PASSWORD = "PBEM_SMTP_PASSWORD"
DEFAULT_SENDER = "pbem@localhost"


# --- words ----------------------------------------------------------------------------------


def _tag(game: str) -> str:
    return f"[pbem {game}]"


Kind = Literal["turn", "digest", "round", "over"]


def mail_kind(doc: Packet, recipient: str) -> Kind | None:
    """Why `recipient` gets a mail for this packet regardless of digests (None: only a digest)."""
    if doc.phase == "game-over":
        return "over"
    if doc.result is not None:
        return "round"
    if doc.to_move == recipient:
        return "turn"
    return None


def packet_subject(doc: Packet, recipient: str | None = None, moves: int = 0) -> str:
    """E.g. "[pbem friday-1a2b] your turn, ann: round 2, packet 41" (words.py, 3 languages)."""
    game, seq, rnd = doc.game, doc.seq, doc.round
    kind = mail_kind(doc, recipient or "")
    if kind == "over":
        winners = words.listing(doc.standings.winners if doc.standings else []) or t("nobody")
        return t("mail over subject", tag=_tag(game), winners=winners)
    if kind == "round" and doc.result is not None:
        return t("mail round subject", tag=_tag(game), done=doc.result.round, round=rnd, seq=seq, player=doc.to_move)
    if kind == "turn":
        return t("mail turn subject", tag=_tag(game), seat=recipient, round=rnd, seq=seq)
    return t("mail digest subject", tag=_tag(game), n=max(moves, 1), player=doc.to_move, round=rnd, seq=seq)


def invitation_subject(doc: Invitation, seat: str | None) -> str:
    if seat and seat != HOST:
        return t("{tag} invitation to {name} ({ruleset}): you are seat {seat}", tag=_tag(doc.game), name=doc.name,
                 ruleset=t(doc.ruleset), seat=seat)
    return t("{tag} invitation to {name} ({ruleset})", tag=_tag(doc.game), name=doc.name, ruleset=t(doc.ruleset))


def move_subject(doc: Move) -> str:
    return t("{tag} packet {seq}: move by {seat}", tag=_tag(doc.game), seq=doc.seq, seat=doc.seat)


def join_subject(doc: Join) -> str:
    return t("{tag} join: {seat}", tag=_tag(doc.game), seat=doc.seat)


def describe_moves(docs: list[Packet]) -> list[str]:
    """The packets' moves and public events in words, oldest first; a move the host made for a
    silent seat says so."""
    from pbem.ui.when import by_host
    from pbem.ui.words import describe_event, describe_move

    lines = []
    for doc in docs:
        for m in doc.moves:
            try:
                line = describe_move(m.text, m.seat)
            except Exception:  # a sentence is a nicety; never fail a mail on it
                line = f"{m.seat}: {m.text}"
            lines.append(by_host(line, m.why) if m.by == HOST else line)
        for e in doc.events:
            try:
                said = describe_event(e)
            except Exception:
                said = None
            if said:
                lines.append(said)
    return lines


def _gold(gold: dict[str, int]) -> str:
    return words.listing(f"{p} {g}" for p, g in gold.items()) or "-"


def packet_summary(docs: list[Packet], recipient: str | None = None, digest: str | None = None,
                   now: datetime | None = None) -> str:
    """What a person reads before the armour: every move since their last mail (the host's
    moves for a silent seat marked so), the round's result, whose turn it is and by when, how
    to answer. `docs`: the packets since that mail, oldest first; `now`: the host's clock."""
    doc = docs[-1]
    out = [t("mail head", game=doc.game, round=doc.round, seq=doc.seq), ""]
    said = describe_moves(docs)
    if said:
        out.append(t("mail since", n=sum(len(d.moves) for d in docs)))
        out += [f"  - {s}" for s in said]
        out.append("")
    for d in docs:
        result = d.result
        if result is not None:
            out.append(t("mail round over", n=result.round, winners=words.listing(result.winners) or t("nobody")))
            if result.finder:
                out.append(t("mail finder", player=result.finder))
            paid = {p: g for p, g in result.payout.items() if g}
            if paid:
                out.append(t("mail payout", list=_gold(paid)))
            out.append(t("mail gold so far", list=_gold(result.gold)))
            out.append("")
    game = doc.game
    if doc.phase == "game-over":
        st = doc.standings
        out.append(t("mail game over", list=_gold(st.gold if st else {}),
                     winners=words.listing(st.winners if st else []) or t("nobody")))
    else:
        to_move = doc.to_move
        out.append(t("mail your turn") if recipient == to_move else t("mail now", player=to_move))
    out += doc.news(recipient, now or datetime.now(timezone.utc))
    out += ["", t("mail sealed"), t("mail to play"), f"  pbem turn {game}", f'  pbem mail-move {game} "MOVE"']
    if digest:
        out += ["", t("mail digest note", period=digest)]
    return "\n".join(out) + "\n"


def invitation_summary(doc: Invitation, seat: str | None) -> str:
    host = doc.host
    fp = PublicKey.decode(host.key).fingerprint()
    seats = words.listing(doc.seat_names())
    game = doc.game
    yours = seat if seat and seat != HOST else None
    return "\n".join([
        t("{host} invites you to a game of {title}: {name} ({ruleset}), game id {game}.", host=host.name,
          title=t("title"), name=doc.name, ruleset=t(doc.ruleset), game=game),
        t("Seats: {seats}. Yours: {seat}.", seats=seats, seat=yours) if yours else t("Seats: {seats}.", seats=seats),
        t("Host key fingerprint: {fingerprint} (check it with the host by another channel).", fingerprint=fp),
        "",
        t("To join (with 'pbem mail setup' done once):"),
        "  pbem inbox                    " + t("(or: pbem inbox THIS-MAIL.eml)"),
        f"  pbem mail-join {game}",
        "",
    ])


# --- outgoing mail (host side) ----------------------------------------------------------------


@dataclass
class Outgoing:
    name: str  # seat name or "host"
    address: str
    seq: int  # 0 for the invitation
    message: EmailMessage


def recipients(host: GameHost, config: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    """(name, address) for every seat with an address, in seat order, then the host's
    (`config`: the game's config, if read already)."""
    emails = dict((config if config is not None else host.config()).get("emails") or {})
    out = []
    for name, email in host.seat_emails():
        addr = email or emails.get(name)
        if addr:
            out.append((name, addr))
    if emails.get(HOST):
        out.append((HOST, emails[HOST]))
    return out


def smtp_settings(config: dict[str, Any]) -> SmtpSettings | None:
    raw = config.get("smtp")
    return SmtpSettings.from_dict(raw) if raw else None


def sender_address(config: dict[str, Any]) -> str:
    smtp = config.get("smtp") or {}
    return smtp.get("from_addr") or (config.get("emails") or {}).get(HOST) or DEFAULT_SENDER


def host_now(host: GameHost) -> datetime:
    """The host's clock (a fake one in tests)."""
    return host.clock.now()


def _packet_mail(host: GameHost, config: dict[str, Any], name: str, address: str, armored: str, docs: list[Packet],
                 digest: str | None, invitation: str | None = None) -> Outgoing:
    """A packet's mail to one recipient, the armour in the body and attached. In a trustless
    game `armored` holds every packet a seat has not had (it follows the whole chain), the
    words come from pbem.mail.trustless, and the armour is attached only: a seat's first mails
    carry every shuffle, about 120 KiB a seat, which the body would carry twice. With
    `invitation` (armoured; a new reader of a classic game) that goes first in the body."""
    from pbem.ui.words import using

    doc = docs[-1]
    seq = doc.seq
    attachment = f"packet-{seq:06d}.pbem"
    with using(language_of(config, name)):
        if doc.waiting is not None:
            from pbem.mail import trustless

            gold = host.status()["gold"]
            subject = trustless.subject(doc, name, len(docs), gold, _tag(doc.game))
            text = trustless.summary(docs, name, digest, gold)
            first = read_blocks(armored)[0].expect(Packet).doc.seq
            if first != seq:
                attachment = f"packets-{first:06d}-{seq:06d}.pbem"
        else:
            moves = sum(len(d.moves) for d in docs)
            subject = packet_subject(doc, name, moves)
            text = packet_summary(docs, name, digest, host_now(host))
            if invitation is not None:
                text += "\n" + t("You hold a seat of {game} now: the game's invitation comes first below, then the "
                                 "packet (pbem inbox keeps both).", game=doc.game) + "\n" + invitation
            text += "\n" + armored
    return Outgoing(name, address, seq, compose(sender=sender_address(config), to=address, subject=subject,
                                                body_text=text, attachment_name=attachment, attachment=armored.encode()))


def language_of(config: dict[str, Any], name: str) -> str:
    """The language a seat (or the host) reads its mail in ('pbem game email ... --lang')."""
    return str((config.get("languages") or {}).get(name) or "en")


def invitation_mail(config: dict[str, Any], sender: str, name: str, address: str, armored: str) -> Outgoing:
    """The invitation as a mail to `name`, in their language, the invitation attached."""
    from pbem.ui.words import using

    doc = read_blocks(armored)[0].expect(Invitation).doc
    with using(language_of(config, name)):
        return Outgoing(name, address, 0, compose(sender=sender, to=address, subject=invitation_subject(doc, name),
                                                  body_text=invitation_summary(doc, name) + "\n" + armored,
                                                  attachment_name=f"invitation-{doc.game}.pbem",
                                                  attachment=armored.encode()))


def mails_for(host: GameHost, seq: int) -> list[Outgoing]:
    """The mails for packet `seq` (0: the invitation), one per recipient, whatever the digest."""
    config = host.config()
    sender = sender_address(config)
    to = recipients(host, config)
    if not to:
        raise UsageError(t("nobody in this game has a mail address"),
                         hint=t("pbem game email GAME NAME=ADDRESS (and host=ADDRESS for a copy)"))
    if seq == 0:
        invitation = host.invitation()
        return [invitation_mail(config, sender, n, a, invitation) for n, a in to]
    armored = host.packet(seq)
    if armored is None:
        raise UsageError(t("no packet {seq} in this game", seq=seq))
    packet = read_blocks(armored)[0].expect(Packet).doc
    return [_packet_mail(host, config, n, a, armored, [packet], None) for n, a in to]


def note_mailed(host: GameHost, names: list[str], seq: int, now: Callable[[], float] | None = None) -> None:
    """Record mails sent by hand ('pbem mail'), so digests count from them: the book and the
    channel's mark change in one transaction, as a publisher's delivery does."""
    now = now or (lambda: host_now(host).timestamp())
    book = dict(host.config().get("mail_book") or {})
    addresses = dict(recipients(host))
    for name in names:
        if seq > int(book.get(name, {}).get("seq", 0)):
            book[name] = {"seq": seq, "at": now(), "to": addresses.get(name)}
    host.mark_delivered(MailPublisher.channel, seq, config={"mail_book": book})  # one transaction


# --- digests ------------------------------------------------------------------------------------

DEFAULT_DIGEST = "12h"


def digest_seconds(text: str) -> float:
    """The config's or `--digest`'s period: "every" -> 0 (a mail per packet), else a span of time."""
    return parse_duration(text, "--digest", off=("every",))


class MailPublisher:
    """Mail as a publisher (pbem.host.publish, channel "mail"): the invitation goes to
    everyone; then for each packet a seat gets it when it is their turn, and everyone when a
    round or the game ends; otherwise a seat gets at most one digest per period (config
    "digest", default 12h; "every": each packet). Each mail lists every move since that
    seat's last mail (config "mail_book": seat -> last packet mailed and when), so the book
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
        self._book_kept: dict[str, dict[str, Any]] | None = None  # the book as the last delivery left it

    def deliver(self, release: Release) -> str:
        config = self.host.config()
        book, period, label = self._book(config)
        if release.seq == 0:
            outs = mails_for(self.host, 0)
            lines = [f"{out.name} <{out.address}>: {self.courier.deliver(out.message)}" for out in outs]
            for out in outs:  # who has the invitation at which address (see _new_reader)
                book[out.name] = {**book.get(out.name, {}), "to": out.address}
            self.host.set_config(mail_book=book)
            return t("mailed invitation to {list}", list=words.clauses(lines))
        doc = self._docs[release.seq] = read_blocks(release.armored)[0].expect(Packet).doc
        lines = []
        for name, address in recipients(self.host, config):
            why = self._kind(doc, name) or ("every" if period == 0 else None)
            if _new_reader(book, name, address):
                why = "new reader"
            if why is None and self.now() - float(book.get(name, {}).get("at", 0)) >= period:
                why = "digest"
            if why is not None:
                lines.append(self._mail(config, book, label, name, address, release.seq, release.armored, why))
        self._book_kept = book
        self._forget(book)
        return "\n".join(lines)  # a line per mail; none: everyone waits for a digest

    def kept(self) -> dict[str, Any]:
        """The book as the last delivery left it, stored with the channel's mark in one
        transaction (pbem.host.publish)."""
        book, self._book_kept = self._book_kept, None
        return {} if book is None else {"mail_book": book}

    def idle(self) -> list[str]:
        """The digests whose period ran out while no new packet came."""
        config = self.host.config()
        book, period, label = self._book(config)
        seq = self.host.delivered(self.channel)
        if seq < 0:
            return []
        lines = []
        to = recipients(self.host, config)
        for n, a in to:  # an address given since the last mail: the game so far
            if _new_reader(book, n, a):
                lines.append(self._mail(config, book, label, n, a, seq, self._packet(seq), "new reader") if seq > 0
                             else self._invite(config, book, n, a))
        if period > 0 and seq > 0:
            due = [(n, a) for n, a in to if int(book.get(n, {}).get("seq", 0)) < seq
                   and self.now() - float(book.get(n, {}).get("at", 0)) >= period]
            lines += [self._mail(config, book, label, n, a, seq, self._packet(seq), "digest") for n, a in due]
        if not lines:
            return []
        self.host.set_config(mail_book=book)
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

    def _forget(self, book: dict[str, dict[str, Any]]) -> None:
        """Drop the packets every reader has had: a long game does not pile them up."""
        had = min((int(entry.get("seq", 0)) for entry in book.values()), default=0)
        for s in [s for s in self._docs if s < had]:
            del self._docs[s]

    def _packet(self, seq: int) -> str:
        armored = self.host.packet(seq) or ""
        self._keep(seq, armored)
        return armored

    def _invite(self, config: dict[str, Any], book: dict[str, dict[str, Any]], name: str, address: str) -> str:
        """The invitation to an address given before the first packet."""
        out = invitation_mail(config, sender_address(config), name, address, self.host.invitation())
        book[name] = {**book.get(name, {}), "to": address}
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

    def _kind(self, doc: Packet, name: str) -> str | None:
        if doc.waiting is None:
            return mail_kind(doc, name)
        from pbem.mail import trustless

        before = self._since(doc.seq - 1, doc.seq - 1) if doc.seq > 1 else []
        return trustless.mail_kind(doc, before[0] if before else None, name)

    def _book(self, config: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], float, str]:
        label = str(config.get("digest") or DEFAULT_DIGEST)
        return dict(config.get("mail_book") or {}), digest_seconds(label), label

    def _mail(self, config: dict[str, Any], book: dict[str, dict[str, Any]], label: str, name: str, address: str,
              seq: int, armored: str, why: str) -> str:
        last = int(book.get(name, {}).get("seq", 0))
        since = self._since(last + 1, seq)
        if since[-1].waiting is not None and name != HOST:  # a trustless seat follows every packet of the chain
            armored = "".join(text for _, text in self.host.packets(last, seq))
        # A new reader (a seat handed to a new player, an address changed or first given mid-game)
        # gets the invitation in the same mail, before the packet: their key home checks the
        # packet against it (a second mail could be read first).
        out = _packet_mail(self.host, config, name, address, armored, since, None if label == "every" else label,
                           self.host.invitation() if why == "new reader" else None)
        book[name] = {**book.get(name, {}), "seq": seq, "at": self.now(), "to": address}
        return t("mailed packet {seq} to {name} <{address}> ({why}): {how}", seq=seq, name=name, address=address,
                 why=_why_words(why), how=self.courier.deliver(out.message))


def _new_reader(book: dict[str, dict[str, Any]], name: str, address: str) -> bool:
    """Whether `address` has not had this game's invitation: never mailed at all, or mailed at
    another address (books written before addresses were kept say nothing: not new)."""
    entry = book.get(name)
    return entry is None or entry.get("to", address) != address


def _why_words(why: str) -> str:
    """Why a seat got this packet's mail, for the host's log."""
    return {"turn": t("their turn"), "round": t("round over"), "over": t("game over"),
            "every": t("a mail per packet"), "digest": t("digest"), "new reader": t("a new reader")}.get(why, why)


def _asks_words(what: str) -> str:
    return {"away": t("away"), "resign": t("resign"), "handover": t("handover")}.get(what, what)


def smtp_password(settings: SmtpSettings | None, *, prompt: bool = True, command: str | None = None) -> str | None:
    """From `command`, else $PBEM_SMTP_PASSWORD, else a prompt on a terminal; None when no login is needed."""
    from pbem.mail.secrets import obtain

    if settings is None or not settings.user:
        return None
    return obtain(t("SMTP password"), env=ENV_SMTP_PASSWORD, command=command,
                  prompt=t("SMTP password for {who}: ", who=f"{settings.user}@{settings.host}") if prompt else None)


@dataclass
class Courier:
    """Delivers messages: over SMTP (settings + password) or as .eml files into a folder."""

    settings: SmtpSettings | None = None
    password: str | None = None
    to_dir: Path | None = None

    def __post_init__(self) -> None:
        if self.settings is None and self.to_dir is None:
            raise UsageError(t("nowhere to deliver mail"), hint=t("pass --to-dir DIR, or --send with SMTP settings"))

    def deliver(self, msg: EmailMessage) -> str:
        if self.settings is not None:
            send(msg, self.settings, self.password)
            return t("sent to {address}", address=msg["To"])
        assert self.to_dir is not None
        return t("wrote {path}", path=write_eml(msg, self.to_dir))


def notice_mails(host: GameHost, armored: str) -> list[Outgoing]:
    """A host's notice as short mails, each in its reader's language: a reminder to the seat it
    reminds (and the host's copy), anything else to everyone; the signed notice is attached
    for `pbem inbox`."""
    from pbem.ui.words import using

    doc = read_blocks(armored)[0].expect(Notice).doc
    config = host.config()
    sender = sender_address(config)
    name = f"notice-{doc.seq:06d}-{doc.notice}.pbem"
    out = []
    for n, a in recipients(host):
        if doc.notice == "reminder" and n not in (doc.seat, HOST):
            continue
        with using(language_of(config, n)):
            line = doc.line(host.clock.now())
        out.append(Outgoing(n, a, doc.seq, compose(
            sender=sender, to=a, subject=t("{tag} packet {seq}: {line}", tag=_tag(doc.game), seq=doc.seq, line=line),
            body_text=f"{line}\n\n{armored}", attachment_name=name, attachment=armored.encode())))
    return out


# --- outgoing mail (player side) ------------------------------------------------------------


def block_mail(block: Signed[Any], *, sender: str, to: str, in_reply_to: str | None = None) -> EmailMessage:
    """A seat's block (join, move, request, handover) as a mail to the host (armour in the
    body and attached)."""
    armored = block.armored()
    doc = block.doc
    if isinstance(doc, Move):
        subject = move_subject(doc)
        name = f"move-{doc.seat}-{doc.seq:06d}.pbem"
        text = t("{seat}'s move answering packet {seq} (sealed to the host).", seat=doc.seat, seq=doc.seq) + "\n"
    elif isinstance(doc, Join):
        subject = join_subject(doc)
        name = f"join-{doc.seat}.pbem"
        text = t("{seat} joins game {game}.", seat=doc.seat, game=doc.game) + "\n"
    elif isinstance(doc, Mental):  # a trustless seat's shuffle, tokens, move or round key
        subject = t("{tag} packet {seq}: {step} by {seat}", tag=_tag(doc.game), seq=doc.seq, step=words.step_name(doc.step),
                    seat=doc.seat)
        name = f"{doc.step}-{doc.seat}-{doc.seq:06d}.pbem"
        text = t("{seat}'s {step} answering packet {seq} (a trustless game: every seat checks it).", seat=doc.seat,
                 step=words.step_name(doc.step), seq=doc.seq) + "\n"
    elif isinstance(doc, (Request, Handover)):  # away, resign; a seat handed to another key
        what = doc.action if isinstance(doc, Request) else "handover"
        subject = t("{tag} {what}: {seat}", tag=_tag(doc.game), what=_asks_words(what), seat=doc.seat)
        name = f"{block.kind}-{doc.seat}-{what}.pbem"
        text = t("{seat} asks the host of game {game}: {what}.", seat=doc.seat, game=doc.game,
                 what=_asks_words(what)) + "\n"
    else:
        raise UsageError(t("players mail joins, moves, mental blocks, requests and handovers, not a {kind}",
                           kind=words.kind_name(block.kind)))
    if not isinstance(doc, Mental):  # a mental block is attached only: a shuffle is 90 KiB of armour
        text = f"{text}\n{armored}"
    return compose(sender=sender, to=to, subject=subject, body_text=text,
                   attachment_name=name, attachment=armored.encode(), in_reply_to=in_reply_to)


def player_settings(server: str | None, port: int | None, security: str, user: str | None,
                    sender: str | None) -> SmtpSettings:
    if not server:
        raise UsageError(t("--send needs --smtp-server"), hint=t("or write the mail with --to-dir DIR"))
    if not sender:
        raise UsageError(t("--send needs --from ADDRESS"))
    d: dict[str, Any] = {"host": server, "security": security, "user": user, "from_addr": sender}
    if port:
        d["port"] = port
    return SmtpSettings.from_dict(d)
