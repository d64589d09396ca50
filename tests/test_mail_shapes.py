"""A move mail as real mail clients reshape it: forwarded, quoted, re-encoded, re-wrapped, in a
Chinese charset, as Outlook's, Thunderbird's, Apple Mail's or Gmail's HTML, from mutt or
s-nail. Each mail is built the way that client builds it, handed to a real mail server and
read by the host's mail loop (MailHost, as `pbem host run` runs it) against a real SQLite
store: every intact shape is applied; a damaged one is refused with its reason.

Two carriers: aiosmtpd delivering byte for byte into the host's Maildir (the quick loop), and
Debian's own Postfix (submission, STARTTLS, AUTH) delivering into Dovecot (Maildir++, '.'),
the host reading it over IMAP with STARTTLS (tests/realmail.py; slow: servers start once)."""

from __future__ import annotations

import base64
import mailbox
import quopri
import smtplib
import sqlite3
import ssl
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email import policy
from email.header import Header
from email.message import EmailMessage
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from mailservers import _Deliver, _wait_listening
from process_tools import free_port
from realmail import start_real_mail, stop_real_mail
from table_games import make_table

from engine.rules import legal_moves
from pbem.auto.host_runner import MailHost
from pbem.host import referee as H
from pbem.mail.courier import Courier
from pbem.mail.imap import ImapFolder, ImapUrl
from pbem.mail.incoming import MailScanner
from pbem.mail.memory import MailSource
from pbem.mail.player_mail import block_mail
from pbem.seat import player as P

HOST = "referee@example.org"


@dataclass
class World:
    db: Path  # the store with the move still owed (copied for each case)
    referee: object  # the host's identity
    game: str
    seq: int  # the packet the move answers
    mover: str
    sender: str  # the mover's address
    mail: EmailMessage  # the move mail as pbem sends it
    armored: str  # the move's armour


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    table = make_table(tmp_path_factory.mktemp("shapes"), ["ann", "bob", "cat"])
    _, packet = table.latest()
    mover = packet.doc.to_move
    for seat in table.seats:
        table.host.set_email(seat, f"{seat}@example.org")
    table.host.set_email("host", HOST)
    sp = P.open_packet(packet, table.ids[mover], table.homes[mover])
    move = P.make_move(sp, str(legal_moves(sp.view)[0]))
    table.host.close()
    sender = f"{mover}@example.org"
    return World(table.root / "game.db", table.ids["referee"], packet.game, packet.doc.seq, mover, sender,
                 block_mail(move, sender=sender, to=HOST), move.armored())


class Maildir:
    """aiosmtpd handing each mail, byte for byte, to the host's Maildir (as an MTA hands it to
    the IMAP server's store); a new Maildir for every case."""

    def __init__(self) -> None:
        self.handler = _Deliver({})
        self.port = free_port()
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=self.port)
        self.controller.start()
        _wait_listening(self.port, None, None, "aiosmtpd")

    def deliver(self, w: World, data: bytes, tmp_path: Path) -> MailSource:
        maildir = tmp_path / "Maildir"
        mailbox.Maildir(maildir, create=True)
        self.handler.boxes[HOST] = maildir
        self.handler.per_address[HOST] = 0
        with smtplib.SMTP("127.0.0.1", self.port, timeout=30) as s:
            s.sendmail(w.sender, [HOST], data)
        assert self.handler.per_address[HOST] == 1
        return MailScanner([maildir])

    def close(self) -> None:
        self.controller.stop()


class PostfixDovecot:
    """The mover submits to Postfix (STARTTLS, AUTH), which delivers into Dovecot over LMTP;
    the host reads its INBOX over IMAP with STARTTLS. Each case's mail leaves the INBOX when
    the host settles it (pbem.done or pbem.rejected)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.servers = start_real_mail(Path(tempfile.gettempdir()), ["referee", "ann", "bob", "cat"], ".")

    def deliver(self, w: World, data: bytes, tmp_path: Path) -> MailSource:
        s = self.servers
        assert s.dovecot.count("referee") == 0
        with smtplib.SMTP("127.0.0.1", s.postfix.port, timeout=30) as smtp:
            smtp.starttls(context=ssl.create_default_context(cafile=str(s.ca)))
            smtp.login(w.mover, f"pw-{w.mover}")
            smtp.sendmail(w.sender, [HOST], data)
        deadline = time.monotonic() + 20
        while s.dovecot.count("referee") < 1:
            assert time.monotonic() < deadline, (s.postfix.base / "postfix.log").read_text()[-3000:]
            time.sleep(0.05)
        return ImapFolder(ImapUrl.parse(s.dovecot.url("referee")), lambda: ("password", "pw-referee"), idle=False,
                          ca_file=str(s.ca))

    def close(self) -> None:
        stop_real_mail(self.servers, self.root)


@pytest.fixture(scope="module", params=["aiosmtpd", pytest.param("postfix-dovecot", marks=pytest.mark.slow)])
def carrier(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Maildir | PostfixDovecot]:
    made = Maildir() if request.param == "aiosmtpd" else PostfixDovecot(tmp_path_factory.mktemp("servers"))
    try:
        yield made
    finally:
        made.close()


# --- the shapes -------------------------------------------------------------------------------

CRLF = "\r\n"


def _head(w: World, content_type: str, cte: str | None = None, *, subject: str = "Re: move", extra: str = "") -> str:
    lines = [f"From: {w.mover.title()} <{w.sender}>", f"To: {HOST}", f"Subject: {subject}",
             "Date: Fri, 04 Dec 2026 21:00:00 +0000", f"Message-ID: <{subject.replace(' ', '.')}@client.example.org>",
             "MIME-Version: 1.0", f"Content-Type: {content_type}"]
    if cte:
        lines.append(f"Content-Transfer-Encoding: {cte}")
    return CRLF.join(lines) + CRLF + extra


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", CRLF)


def _qp(text: str, charset: str = "utf-8") -> str:
    return _crlf(quopri.encodestring(text.replace("\r\n", "\n").encode(charset)).decode("ascii"))


def _b64(data: bytes) -> str:
    return "\r\n".join(textwrap.wrap(base64.b64encode(data).decode(), 76)) + "\r\n"


def _quote(text: str, prefix: str = "> ") -> str:
    return "".join(f"{prefix}{line}".rstrip() + "\n" if line else prefix.rstrip() + "\n" for line in text.splitlines())


def _body(w: World) -> str:
    """The text a person sees in the move mail pbem sent."""
    part = w.mail.get_body(("plain",))
    assert part is not None
    return str(part.get_content())


def _wrap(text: str, width: int) -> str:
    """A client that hard-wraps what it sends at `width` columns, breaking words too long."""
    out: list[str] = []
    for line in text.splitlines():
        out += textwrap.wrap(line, width, break_long_words=True, break_on_hyphens=False) or [""]
    return "\n".join(out) + "\n"


def _flowed(text: str, width: int, delsp: bool) -> str:
    """RFC 3676 format=flowed: a line longer than `width` ends in a space where it continues
    (with DelSp=yes the client may cut anywhere, and that space is not text)."""
    out: list[str] = []
    for line in text.splitlines():
        if delsp:
            while len(line) > width:
                out.append(line[:width] + " ")
                line = line[width:]
            out.append(line)
        else:
            words = line.split(" ")
            cur = ""
            for word in words:
                if cur and len(cur) + len(word) >= width:
                    out.append(cur + " ")
                    cur = word
                else:
                    cur = f"{cur} {word}" if cur else word
            out.append(cur)
    return "\n".join(out) + "\n"


def forwarded_as_attachment(w: World) -> str:
    """Thunderbird's 'Forward As Attachment': the sent mail as a message/rfc822 part."""
    inner = w.mail.as_string(policy=policy.SMTP)
    return (_head(w, 'multipart/mixed; boundary="fwd1"', subject="Fwd: move") + CRLF + "--fwd1" + CRLF
            + "Content-Type: text/plain; charset=UTF-8" + CRLF + CRLF + "Here it is again." + CRLF + "--fwd1" + CRLF
            + 'Content-Type: message/rfc822; name="move.eml"' + CRLF
            + 'Content-Disposition: attachment; filename="move.eml"' + CRLF + CRLF + inner + CRLF + "--fwd1--" + CRLF)


def nested_twice(w: World) -> str:
    once = forwarded_as_attachment(w)
    return (_head(w, 'multipart/mixed; boundary="fwd2"', subject="Fwd: Fwd: move") + CRLF + "--fwd2" + CRLF
            + "Content-Type: text/plain; charset=UTF-8" + CRLF + CRLF + "See the forward below." + CRLF + "--fwd2" + CRLF
            + "Content-Type: message/rfc822" + CRLF + "Content-Disposition: attachment" + CRLF + CRLF + once + CRLF
            + "--fwd2--" + CRLF)


def _plain_reply(w: World, body: str, *, content_type: str = "text/plain; charset=UTF-8", cte: str = "7bit",
                 encode: Callable[[str], str] = _crlf, subject: str = "Re: move") -> str:
    return _head(w, content_type, cte, subject=subject) + CRLF + encode(body)


def quoted(w: World) -> str:
    """An inline reply quoting the whole mail under '> ' (the attachment left behind)."""
    return _plain_reply(w, f"On Friday {w.mover} wrote:\n" + _quote(_body(w)) + "\nResent, sorry.\n")


def quoted_twice(w: World) -> str:
    return _plain_reply(w, "Once more:\n" + _quote(_quote(_body(w))), subject="Re: Re: move")


def quoted_printable(w: World) -> str:
    return _plain_reply(w, "Voilà mon coup =)\n\n" + _body(w), cte="quoted-printable", encode=_qp)


def base64_body(w: World) -> str:
    return _plain_reply(w, _body(w), cte="base64", encode=lambda s: _b64(_crlf(s).encode()))


def wrapped_40(w: World) -> str:
    return _plain_reply(w, _wrap(_body(w), 40))


def wrapped_72(w: World) -> str:
    return _plain_reply(w, _wrap("Here you go, with a long line that the client wraps for me: " + _body(w), 72))


def flowed(w: World) -> str:
    return _plain_reply(w, _flowed(_body(w), 40, False), content_type="text/plain; charset=UTF-8; format=flowed")


def flowed_delsp(w: World) -> str:
    return _plain_reply(w, _flowed(_body(w), 30, True),
                        content_type="text/plain; charset=UTF-8; format=flowed; delsp=yes")


def _chinese(charset: str, words: str, cte: str) -> Callable[[World], str]:
    def shape(w: World) -> str:
        text = _crlf(words + "\n\n" + _body(w))
        data = text.encode(charset)
        body = _b64(data) if cte == "base64" else (_qp(text, charset) if cte == "quoted-printable"
                                                 else data.decode("latin-1"))
        subject = Header("回复: move", charset).encode()  # RFC 2047, as the client writes it
        return _head(w, f'text/plain; charset="{charset}"', cte, subject=subject) + CRLF + body

    shape.__name__ = f"{charset}_{cte}"
    return shape


def _html_mail(w: World, html: str, *, plain: str | None = None, charset: str = "utf-8") -> str:
    """HTML as a client sends it: quoted-printable, alone or after its plain text twin."""
    html_part = (f'Content-Type: text/html; charset="{charset}"' + CRLF + "Content-Transfer-Encoding: quoted-printable"
                 + CRLF + CRLF + _qp(html, charset))
    if plain is None:
        return _head(w, f'text/html; charset="{charset}"', "quoted-printable") + CRLF + _qp(html, charset)
    return (_head(w, 'multipart/alternative; boundary="alt"') + CRLF + "--alt" + CRLF
            + f'Content-Type: text/plain; charset="{charset}"' + CRLF + "Content-Transfer-Encoding: quoted-printable"
            + CRLF + CRLF + _qp(plain, charset) + CRLF + "--alt" + CRLF + html_part + CRLF + "--alt--" + CRLF)


def _lines(w: World) -> list[str]:
    return _body(w).splitlines()


def _esc(line: str) -> str:
    return line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def outlook_msonormal(w: World) -> str:
    """Outlook's HTML: one <p class=MsoNormal> a line, <o:p>&nbsp;</o:p> for a blank one,
    conditional comments and a style sheet in the head; HTML only."""
    paras = "\n".join(f"<p class=MsoNormal>{_esc(line) or '<o:p>&nbsp;</o:p>'}<o:p></o:p></p>" for line in _lines(w))
    html = ('<html xmlns:o="urn:schemas-microsoft-com:office:office"><head><meta http-equiv=Content-Type '
            'content="text/html; charset=utf-8"><!--[if gte mso 9]><xml><o:OfficeDocumentSettings></xml><![endif]-->'
            "<style><!-- p.MsoNormal {margin:0cm; font-family:\"Calibri\",sans-serif;} --></style></head>\n"
            f'<body lang=EN-GB link="#0563C1"><div class=WordSection1>\n{paras}\n</div></body></html>\n')
    return _html_mail(w, html)


def thunderbird_html(w: World) -> str:
    """Thunderbird's HTML compose: each line ends in <br> and a line end; HTML only."""
    html = ('<html>\n  <head>\n    <meta http-equiv="content-type" content="text/html; charset=UTF-8">\n  </head>\n'
            '  <body>\n    <p>My move:<br>\n      <br>\n' + "".join(f"      {_esc(line)}<br>\n" for line in _lines(w))
            + "    </p>\n  </body>\n</html>\n")
    return _html_mail(w, html)


def thunderbird_html_pre(w: World) -> str:
    """Thunderbird quoting a plain-text mail in HTML: the quote is a <pre class="moz-quote-pre">."""
    html = ('<html><head></head><body>\n    <p>Resent:<br>\n    </p>\n    <blockquote type="cite">\n'
            f'      <pre class="moz-quote-pre" wrap="">{_esc(_body(w))}</pre>\n    </blockquote>\n  </body>\n</html>\n')
    return _html_mail(w, html)


def apple_mail(w: World) -> str:
    """Apple Mail: multipart/alternative, the HTML a <div class=""> a line, <br class=""> for a
    blank one; the plain twin quoted-printable."""
    blank = '<br class="">'
    divs = "".join(f'<div class="">{_esc(line) or blank}</div>' for line in _lines(w))
    html = ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=us-ascii"></head>'
            '<body style="word-wrap: break-word; -webkit-nbsp-mode: space; line-break: after-white-space;" class="">'
            f"{divs}</body></html>")
    return _html_mail(w, html, plain=_body(w), charset="us-ascii")


def gmail_web(w: World) -> str:
    """Gmail on the web: multipart/alternative, each line a <div>, <div><br></div> for a blank
    one; the plain twin wrapped at 76 columns... and here left out of sync (Gmail sends what the
    composer held; this one lost the armour's blank line), so the HTML is what must be read."""
    divs = "".join(f"<div>{_esc(line) or '<br>'}</div>" for line in _lines(w))
    html = f'<div dir="ltr">{divs}</div>\n'
    return _html_mail(w, html, plain="See the HTML part.\n")


def mutt(w: World) -> str:
    """mutt: text/plain inline, a signature, the .pbem file attached as application/octet-stream
    in base64 (mutt knows no type for it)."""
    body = "Here is my move.\n\n" + _body(w) + "\n-- \nsent with mutt\n"
    return (_head(w, 'multipart/mixed; boundary="mutt"', subject="move", extra="User-Agent: NeoMutt/20220429" + CRLF)
            + CRLF + "--mutt" + CRLF + "Content-Type: text/plain; charset=us-ascii" + CRLF + "Content-Disposition: inline"
            + CRLF + CRLF + _crlf(body) + CRLF + "--mutt" + CRLF + "Content-Type: application/octet-stream" + CRLF
            + 'Content-Disposition: attachment; filename="move.pbem"' + CRLF + "Content-Transfer-Encoding: base64"
            + CRLF + CRLF + _b64(w.armored.encode()) + "--mutt--" + CRLF)


def s_nail(w: World) -> str:
    """s-nail (mail -a move.pbem): the body 7bit, the attachment text/plain by its content."""
    return (_head(w, 'multipart/mixed; boundary="=-=nail=-="', subject="move",
                  extra="User-Agent: s-nail v14.9.22" + CRLF) + CRLF + "--=-=nail=-=" + CRLF
            + "Content-Type: text/plain; charset=us-ascii" + CRLF + "Content-Transfer-Encoding: 7bit" + CRLF
            + "Content-Disposition: inline" + CRLF + CRLF + "my move, attached" + CRLF + CRLF + "--=-=nail=-=" + CRLF
            + "Content-Type: text/plain; charset=us-ascii" + CRLF + "Content-Transfer-Encoding: 7bit" + CRLF
            + 'Content-Disposition: attachment; filename="move.pbem"' + CRLF + CRLF + _crlf(w.armored) + CRLF
            + "--=-=nail=-=--" + CRLF)


def s_nail_body(w: World) -> str:
    """s-nail with the armour pasted into the body, no MIME headers beyond the basics."""
    return _plain_reply(w, _body(w), content_type="text/plain; charset=us-ascii")


def truncated(w: World) -> str:
    """A client that cut the mail short (and dropped the attachment): damaged."""
    body = _body(w)
    return _plain_reply(w, body[: len(body) * 2 // 3])


def altered(w: World) -> str:
    """One base64 character changed in transit (and no attachment): damaged, its signature fails."""
    lines = _body(w).splitlines()
    i = next(i for i, line in enumerate(lines) if len(line) == 64)
    lines[i] = ("B" if lines[i][0] != "B" else "C") + lines[i][1:]
    return _plain_reply(w, "\n".join(lines) + "\n")


APPLIED = [forwarded_as_attachment, nested_twice, quoted, quoted_twice, quoted_printable, base64_body, wrapped_40,
           wrapped_72, flowed, flowed_delsp,
           _chinese("gb2312", "这是我的行动。", "base64"), _chinese("gbk", "这是我的行动，请查收。", "8bit"),
           _chinese("big5", "這是我的行動。", "quoted-printable"), _chinese("gb18030", "这是我的行动 ✓。", "base64"),
           outlook_msonormal, thunderbird_html, thunderbird_html_pre, apple_mail, gmail_web, mutt, s_nail, s_nail_body]
REFUSED = {truncated: "no END line", altered: "signature"}


def _host_reads(w: World, tmp_path: Path, raw: str, carrier: Maildir | PostfixDovecot) -> tuple[int, list[str]]:
    """The case's store (a copy of the world's), the mail carried to the host, one step of the
    host's mail loop: (the packet number after it, the host's log)."""
    db = tmp_path / "game.db"
    with sqlite3.connect(w.db) as src, sqlite3.connect(db) as dst:
        src.backup(dst)
    source = carrier.deliver(w, _crlf(raw).encode("latin-1"), tmp_path)  # CRLF on the wire; 8-bit: a char a byte
    host = H.Host(db, w.referee, game="test")  # type: ignore[arg-type]
    log: list[str] = []
    try:
        MailHost(host, source, Courier(to_dir=tmp_path / "out"), log.append).step()
        return int(host.head()[0]), log
    finally:
        source.close()
        host.close()


@pytest.mark.parametrize("shape", APPLIED, ids=lambda f: f.__name__)
def test_a_reshaped_move_mail_is_applied(world: World, tmp_path: Path, carrier, shape) -> None:
    seq, log = _host_reads(world, tmp_path, shape(world), carrier)
    assert seq == world.seq + 1, log
    assert any(f"applied {world.mover}'s move" in line for line in log), log


@pytest.mark.parametrize("shape", list(REFUSED), ids=lambda f: f.__name__)
def test_a_damaged_move_mail_is_refused_with_its_reason(world: World, tmp_path: Path, carrier, shape) -> None:
    seq, log = _host_reads(world, tmp_path, shape(world), carrier)
    assert seq == world.seq, log
    rejected = [line for line in log if line.startswith("rejected ")]
    assert len(rejected) == 1 and REFUSED[shape] in rejected[0], log
