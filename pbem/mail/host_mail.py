"""The host's mails: which address each seat reads, and a packet, the invitation or a
notice as a mail to one reader, in that reader's language, the signed block attached."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from typing import TYPE_CHECKING

from pbem.errors import UsageError, msg, notice_word
from pbem.mail import talk_mail
from pbem.mail.message import compose
from pbem.mail.texts import (
    invitation_parts,
    invitation_subject,
    invitation_summary,
    packet_subject,
    packet_words,
    tag,
    words_text,
)
from pbem.names import HOST
from pbem.protocol.documents import Invitation, Notice, Packet, read_blocks
from pbem.ui.words import in_language, render, t

if TYPE_CHECKING:  # players' commands must not import the host's store
    from engine.state import RoundState
    from pbem.host.interface import GameHost, TalkRelease
    from pbem.host.settings import Settings

DEFAULT_SENDER = "pbem@localhost"


@dataclass
class Outgoing:
    name: str  # seat name or "host"
    address: str
    seq: int  # 0 for the invitation
    message: EmailMessage


def recipients(host: GameHost, settings: Settings | None = None) -> list[tuple[str, str]]:
    """(name, address) for every seat with an address, in seat order, then the host's
    (`settings`: the game's, if read already)."""
    mine = (settings if settings is not None else host.settings()).emails.get(HOST)
    out = [(name, email) for name, email in host.seat_emails() if email]
    return out + [(HOST, mine)] if mine else out


def sender_address(settings: Settings) -> str:
    return (settings.smtp.from_addr if settings.smtp else None) or settings.emails.get(HOST) or DEFAULT_SENDER


def host_now(host: GameHost) -> datetime:
    """The host's clock (a fake one in tests)."""
    return host.clock.now()


@dataclass(frozen=True)
class PacketTable:
    """What a packet's mail shows every reader alike, read from the host once for all of them:
    the table every seat sees (None: words only) and, in a trustless game, the gold so far."""

    view: RoundState | None
    gold: dict[str, int]


def packet_table(host: GameHost, doc: Packet) -> PacketTable:
    """The table of packet `doc` as its mails show it, as the host stands now."""
    from engine.views import load_view

    if doc.waiting is None:
        return PacketTable(load_view(doc.public), {})
    # the blind host's table (a trustless packet holds no public view)
    return PacketTable(host.public_view(doc.seq), host.status()["gold"])


def packet_mail(host: GameHost, settings: Settings, name: str, address: str, armored: str, docs: list[Packet],
                 digest: str | None, invitation: str | None = None, talk: list[TalkRelease] | None = None,
                 table: PacketTable | None = None) -> Outgoing:
    """A packet's mail to one recipient, the armour in the body and attached. In a trustless
    game `armored` holds every packet a seat has not had (it follows the whole chain), the
    words come from pbem.mail.trustless, and the armour is attached only: a seat's first mails
    carry every shuffle, about 120 KiB a seat, which the body would carry twice. With
    `invitation` (armoured; a new reader of a classic game) that goes first in the body.
    `talk`: the lines of table talk since the reader's last mail, after the packet. `table`:
    `packet_table` of the last packet, if read already for another reader of it."""
    lang = language_of(settings, name)
    subject, text, attachment, board = in_language(lang, _packet_words, host, name, armored, docs, digest,
                                                   invitation, talk or [], table or packet_table(host, docs[-1]))
    if talk:
        text += "\n" + in_language(lang, talk_mail.body, talk, name) + "\n" + talk_mail.armour(talk)
        armored += talk_mail.armour(talk)
    return Outgoing(name, address, docs[-1].seq, compose(sender=sender_address(settings), to=address, subject=subject,
                                                         body_text=text, attachment_name=attachment,
                                                         attachment=armored.encode(), body_html=board))


def _packet_words(host: GameHost, name: str, armored: str, docs: list[Packet], digest: str | None,
                  invitation: str | None, talk: list[TalkRelease], table: PacketTable) -> tuple[str, str, str, str]:
    """A packet mail's subject, body (the armour last), attachment name and the table in HTML,
    in the call's language."""
    from pbem.mail.board import packet_html

    doc = docs[-1]
    seq = doc.seq
    attachment = f"packet-{seq:06d}.pbem"
    if doc.waiting is not None:
        from pbem.mail import trustless

        subject = trustless.subject(doc, name, len(docs), table.gold, tag(doc.game))
        said = trustless.packet_words(docs, name, digest, table.gold)
        waits = doc.waiting
        to_move = waits.seats[0] if waits.step == "move" and waits.seats else None
        first = read_blocks(armored)[0].expect(Packet).doc.seq
        if first != seq:
            attachment = f"packets-{first:06d}-{seq:06d}.pbem"
        return subject, words_text(said), attachment, packet_html(table.view, to_move, said, name,
                                                                     talk_mail.said(talk, name))
    subject = packet_subject(doc, name, sum(len(d.moves) for d in docs))
    said = packet_words(docs, name, digest, host_now(host))
    text = words_text(said)
    board = packet_html(table.view, doc.to_move, said, name, talk_mail.said(talk, name))
    if invitation is not None:
        text += "\n" + t("You hold a seat of {game} now: the game's invitation comes first below, then the "
                         "packet (pbem inbox keeps both).", game=doc.game) + "\n" + invitation
    return subject, text + "\n" + armored, attachment, board


def language_of(settings: Settings, name: str) -> str:
    """The language a seat (or the host) reads its mail in ('pbem game email ... --lang')."""
    return settings.languages.get(name) or "en"


def invitation_mail(settings: Settings, sender: str, name: str, address: str, armored: str) -> Outgoing:
    """The invitation as a mail to `name`, in their language, the invitation attached."""
    doc = read_blocks(armored)[0].expect(Invitation).doc
    lang = language_of(settings, name)
    subject = in_language(lang, invitation_subject, doc, name)
    return Outgoing(name, address, 0, compose(sender=sender, to=address, subject=subject,
                                              body_text=in_language(lang, invitation_summary, doc, name) + "\n" + armored,
                                              attachment_name=f"invitation-{doc.game}.pbem",
                                              attachment=armored.encode(),
                                              body_html=in_language(lang, _invitation_html, subject, doc, name)))


def _invitation_html(subject: str, doc: Invitation, name: str) -> str:
    from pbem.mail.board import invitation_html

    return invitation_html(subject, *invitation_parts(doc, name))


def mails_for(host: GameHost, seq: int) -> list[Outgoing]:
    """The mails for packet `seq` (0: the invitation), one per recipient, whatever the digest."""
    settings = host.settings()
    sender = sender_address(settings)
    to = recipients(host, settings)
    if not to:
        raise UsageError(t("nobody in this game has a mail address"),
                         hint=t("pbem game email GAME NAME=ADDRESS (and host=ADDRESS for a copy)"))
    if seq == 0:
        invitation = host.invitation()
        return [invitation_mail(settings, sender, n, a, invitation) for n, a in to]
    armored = host.packet(seq)
    if armored is None:
        raise UsageError(t("no packet {seq} in this game", seq=seq))
    packet = read_blocks(armored)[0].expect(Packet).doc
    table = packet_table(host, packet)
    return [packet_mail(host, settings, n, a, armored, [packet], None, table=table) for n, a in to]


def notice_mails(host: GameHost, armored: str) -> list[Outgoing]:
    """A host's notice as short mails, each in its reader's language: a reminder to the seat it
    reminds (and the host's copy), anything else to everyone; the signed notice is attached
    for `pbem inbox`."""
    doc = read_blocks(armored)[0].expect(Notice).doc
    settings = host.settings()
    sender = sender_address(settings)
    name = f"notice-{doc.seq:06d}-{doc.notice}.pbem"
    out = []
    for n, a in recipients(host):
        if doc.notice == "reminder" and n not in (doc.seat, HOST):
            continue
        lang = language_of(settings, n)
        line = render(notice_word(doc, host.clock.now()), lang)
        subject = render(msg("{tag} packet {seq}: {line}", tag=tag(doc.game), seq=doc.seq, line=line), lang)
        out.append(Outgoing(n, a, doc.seq, compose(sender=sender, to=a, subject=subject, body_text=f"{line}\n\n{armored}",
                                                   attachment_name=name, attachment=armored.encode(),
                                                   body_html=in_language(lang, _notice_html, host, doc.seq, line, n))))
    return out


def _notice_html(host: GameHost, seq: int, line: str, reader: str) -> str | None:
    """A notice's HTML part: its line over the table of packet `seq` (the one it is about) as
    every seat sees it (None: the host has no such packet)."""
    from engine.views import load_view
    from pbem.mail.board import packet_html
    from pbem.mail.texts import PacketWords, play_commands
    from pbem.ui import when

    armored = host.packet(seq)
    if armored is None:
        return None
    doc = read_blocks(armored)[0].expect(Packet).doc
    view: RoundState | None = None
    if doc.waiting is None:
        view, to_move, news = load_view(doc.public), doc.to_move, when.packet_news(doc, reader, host_now(host))
    else:
        view, to_move, news = host.public_view(seq), None, []
    said = PacketWords(head=t("mail head", game=doc.game, round=doc.round, seq=seq), since=None, moves=[], results=[],
                       status=line, news=news, sealed="", commands=play_commands(doc.game, reader), digest=None)
    return packet_html(view, to_move, said, reader)


def talk_only_mail(host: GameHost, settings: Settings, name: str, address: str, lines: list[TalkRelease]) -> Outgoing:
    """A mail of table talk alone, in the reader's language, the lines attached for `pbem inbox`."""
    game = host.game_id()
    armored = talk_mail.armour(lines)
    lang = language_of(settings, name)
    seq = max(ln.seq for ln in lines)
    subject = render(msg("{tag} table talk at packet {seq}", tag=tag(game), seq=seq), lang)
    text = in_language(lang, talk_mail.body, lines, name) + "\n\n" + armored
    return Outgoing(name, address, seq, compose(sender=sender_address(settings), to=address, subject=subject,
                                                body_text=text, attachment_name=f"talk-{seq:06d}.pbem",
                                                attachment=armored.encode(),
                                                body_html=in_language(lang, _talk_html, subject, lines, name)))


def _talk_html(subject: str, lines: list[TalkRelease], name: str) -> str:
    from pbem.mail.board import talk_html

    return talk_html(subject, talk_mail.said(lines, name))
