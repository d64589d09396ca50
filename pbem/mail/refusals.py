"""The host's answer to a refused mail: its sender is told what was refused and why.

Only mail from a seat's own address (the one the game has for that seat) is answered, in that
seat's language, from the host's outgoing mail path; mail from any other address gets nothing
(an answer would make the host a reflector). Each refusal is noted in the game's settings
(`refusals`: seat -> the last refused mails, by Message-ID or body hash) in one transaction
that also decides whether an answer is owed: at most one per mail, so a restarted host that
reads the mail again says nothing twice, and at most `LIMIT` per seat in `WINDOW` seconds, so
mail forged in a seat's name cannot make the host flood that seat. The note is made before
the answer is sent: a crash between the two loses that answer, never repeats it.
"""

from __future__ import annotations

import re
from email.message import EmailMessage
from email.utils import parseaddr
from typing import TYPE_CHECKING

from pbem.errors import Text
from pbem.host.settings import Refusal, Settings, replaced
from pbem.mail.host_mail import language_of, sender_address
from pbem.mail.memory import message_keys
from pbem.mail.message import compose
from pbem.names import HOST
from pbem.ui.terminal import printable
from pbem.ui.words import in_language, render, t

if TYPE_CHECKING:
    from pbem.host.interface import GameHost

LIMIT = 5  # answers per seat...
WINDOW = 24 * 3600.0  # ...in this many seconds
KEEP = 200  # refused mails remembered per seat (the newest)
_MESSAGE_ID_RE = re.compile(r"<[!-;=?-~]{1,250}>")  # printable, no '<' or '>' inside


def seat_of_sender(host: GameHost, msg: EmailMessage) -> tuple[str, str] | None:
    """(seat, its address) when the mail's From is a seat's own address in this game, else None."""
    try:
        sender = parseaddr(str(msg.get("From", "")))[1].strip().lower()
    except (ValueError, TypeError, IndexError, RecursionError):  # a From the email package cannot parse
        return None
    if "@" not in sender:
        return None
    for seat, address in host.seat_emails():
        if seat != HOST and address and parseaddr(address)[1].strip().lower() == sender:
            return seat, address
    return None


def note_refusal(host: GameHost, seat: str, msg: EmailMessage, now: float) -> bool:
    """Note that this mail of `seat` was refused; whether an answer is owed now (one
    transaction: the note and the decision are one)."""
    key = message_keys(msg)[0]

    def change(settings: Settings) -> tuple[Settings, bool]:
        noted = settings.refusals.get(seat, [])
        if any(e.key == key for e in noted):
            return settings, False  # read again (a restart, a second copy): said once already
        recent = sum(1 for e in noted if e.told and now - e.at < WINDOW)
        owed = recent < LIMIT
        book = {**settings.refusals, seat: [*noted, Refusal(key, now, owed)][-KEEP:]}
        return replaced(settings, refusals=book), owed

    return host.change_settings(change)


def refusal_mail(host: GameHost, seat: str, address: str, msg: EmailMessage, reasons: list[Text]) -> EmailMessage:
    """The answer to `seat`'s refused mail, in the seat's language: what was refused and why."""
    settings = host.settings()
    game = host.game_id()
    subject = _said(msg, "Subject")[:120]
    lines, reply_subject = in_language(language_of(settings, seat), _refusal_words, game, subject, reasons)
    mid = _said(msg, "Message-ID").strip()
    return compose(sender=sender_address(settings), to=address, subject=reply_subject, body_text="\n".join(lines) + "\n",
                   attachment_name=None, attachment=None,
                   in_reply_to=mid if _MESSAGE_ID_RE.fullmatch(mid) else None)


def _refusal_words(game: str, subject: str, reasons: list[Text]) -> tuple[list[str], str]:
    """The answer's lines and subject, in the language of the call."""
    lines = [t("The host of game {game} refused your mail {subject}:", game=game, subject=repr(subject)), ""]
    lines += [f"  - {printable(render(r))}" for r in reasons]
    lines += ["", t("Nothing in it was applied; the game goes on as before."),
              t("To answer a packet, send your move with: {command}", command=f'pbem mail-move {game} "MOVE"'),
              t("(pbem answers refused mail at most {n} times a day per seat.)", n=LIMIT)]
    return lines, t("[pbem {game}] your mail was refused", game=game)


def _said(msg: EmailMessage, header: str) -> str:
    """A header of the refused mail as one printable line ('' when it cannot be read)."""
    try:
        value = str(msg.get(header, ""))
    except (ValueError, TypeError, IndexError, RecursionError):
        return ""
    return printable(" ".join(value.split()))
