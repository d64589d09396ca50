"""Table talk by mail: which relayed lines a reader has not had yet (the mail's book keeps the
last line mailed to each reader, `talk`) and their words in a mail body (a mail of talk alone:
pbem.mail.host_mail.talk_only_mail; docs/protocol.md, "Table talk"). A packet mail carries the lines since the reader's last mail;
between packets the lines go out at the reader's mail pace (each at once under "every", else
with the next digest)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from pbem.errors import PbemError
from pbem.host.settings import MailMark
from pbem.names import HOST
from pbem.protocol.documents import Talk, read_blocks
from pbem.ui import talk_words
from pbem.ui.words import t

if TYPE_CHECKING:

    from pbem.host.interface import GameHost, TalkRelease


def for_reader(line: TalkRelease, name: str) -> Talk | None:
    """The line as `name` gets it: public lines and whispers to `name` (the host's copy: all)."""
    try:
        doc = read_blocks(line.armored)[0].expect(Talk).doc
    except PbemError:
        return None
    if doc.to is None or name == HOST or name in doc.to:
        return doc
    return None


def take(host: GameHost, book: dict[str, MailMark], name: str) -> list[TalkRelease]:
    """The lines relayed since the last one mailed to `name` that `name` gets; the book then
    says `name` has had every line relayed so far (those not for it too)."""
    lines = host.talk(book[name].talk if name in book else 0)
    if lines:
        book[name] = msgspec.structs.replace(book.get(name) or MailMark(), talk=max(ln.id for ln in lines))
    return [ln for ln in lines if for_reader(ln, name) is not None]


def body(lines: list[TalkRelease], name: str) -> str:
    """The lines in words, for a mail body (a whisper's text is sealed: `pbem turn` opens it)."""
    out = said(lines, name)
    return "\n".join([talk_words.heading(), *out]) if out else ""


def said(lines: list[TalkRelease], name: str) -> list[str]:
    """Each line `name` gets, in words: who said it at which packet (whispered to whom), and
    the public text (a whisper's text is sealed: `pbem turn` opens it)."""
    out = []
    for ln in lines:
        doc = for_reader(ln, name)
        if doc is not None:
            text = doc.text if doc.text is not None else t("(sealed: pbem turn {game} opens it)", game=doc.game)
            out.append(talk_words.line(doc.seat, doc.seq, doc.to, text))
    return out


def armour(lines: list[TalkRelease]) -> str:
    return "".join(ln.armored for ln in lines)
