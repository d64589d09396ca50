"""Mail transport: compose, send (SMTP), store and read messages carrying armoured packets.

A packet travels twice in each mail: as an attachment (survives clients that
mangle bodies) and as armoured text in the body (survives clients and
forwarders that drop attachments). Readers try both and dedupe.
"""

from __future__ import annotations

import functools
import html
import mailbox
import re
import smtplib
import ssl
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from email import policy
from email.headerregistry import BaseHeader, HeaderRegistry
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.utils import formatdate, make_msgid, parseaddr
from pathlib import Path
from typing import Any, Literal, get_args

from pbem.atomic import read_bounded, write_new
from pbem.errors import BadPacket, CannotRead, PbemError, UsageError
from pbem.mail import tls
from pbem.protocol import armor
from pbem.protocol.limits import KIB, MAX_MAIL, MAX_MAIL_NESTING, MAX_MAIL_PARTS
from pbem.ui import failures
from pbem.ui.words import t

Security = Literal["starttls", "ssl", "none"]
ATTACHMENT_TYPE = ("application", "x-pbem")
MAX_LINE = 998  # RFC 5322 section 2.1.1, excluding CRLF
_DEFAULT_PORTS: dict[str, int] = {"starttls": 587, "ssl": 465, "none": 25}
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}


class _KnownHeaders(HeaderRegistry):
    """The email package's header parser, each (name, value) parsed once: with policy.default a
    header is parsed again at each look (the parser itself looks at Content-Type about ten times
    a part), which made parsing a pbem mail cost six times what it does with this. The parsed
    headers are immutable, so a mail can share them; a bounded number is kept."""

    @functools.lru_cache(maxsize=1024)  # noqa: B019 (one registry for the process: POLICY's)
    def __call__(self, name: str, value: str) -> BaseHeader:
        return super().__call__(name, value)


POLICY = policy.default.clone(header_factory=_KnownHeaders())  # every mail pbem reads or writes


class Mail(EmailMessage):
    """A mail as read, with its bytes (`raw`) as they came."""

    raw = b""


class RefusedMail(Mail):
    """A mail over a limit: only its headers were read; `why` says which limit."""

    why = ""


# Counted on the raw bytes before the email package parses anything: its cost per part is high
# (a 20,000-part mail took minutes) and it recurses once per nesting level.
_CONTAINER_RE = re.compile(rb"^content-type[ \t]*:[ \t\r\n]*(?:multipart|message)/", re.I | re.M)
_BOUNDARY_RE = re.compile(rb'\bboundary[ \t]*=[ \t]*(?:"([^"\r\n]{1,200})"|([^\s;"]{1,200}))', re.I)


def mail_over_limit(data: bytes) -> str | None:
    """Why this raw mail is not parsed (size, nesting, parts), or None. Linear in its size."""
    if len(data) > MAX_MAIL:
        return t("the mail is {size} bytes, over the limit of {limit}", size=f"{len(data):,}", limit=f"{MAX_MAIL:,}")
    containers = len(_CONTAINER_RE.findall(data))
    boundaries = {a or b for a, b in _BOUNDARY_RE.findall(data)}
    if max(containers, len(boundaries)) > MAX_MAIL_NESTING:
        return t("the mail nests more than {limit} multipart or message parts", limit=MAX_MAIL_NESTING)
    delimiters = sum(data.count(b"\n--" + b) for b in boundaries)
    if delimiters > MAX_MAIL_PARTS + len(boundaries):  # each container's closing line is no part
        return t("the mail has more than {limit} parts", limit=MAX_MAIL_PARTS)
    return None


def read_mail(data: bytes) -> EmailMessage:
    """One mail from its raw bytes. A mail over a limit is not parsed: its headers alone come
    back as a `RefusedMail`, which `extract_blocks` refuses with the reason."""
    why = mail_over_limit(data)
    try:
        if why is None:
            msg = BytesParser(_class=Mail, policy=POLICY).parsebytes(data)
            assert isinstance(msg, Mail)
            msg.raw = data
            return msg
        head = data[: 64 * KIB]  # the headers (the rest of it stays one unread payload)
        refused = BytesParser(_class=RefusedMail, policy=POLICY).parsebytes(head, headersonly=True)
    except RecursionError:  # e.g. a header of thousands of nested comments: "((((...))))"
        refused, why = RefusedMail(), t("the mail has a header nested too deeply to read")
    assert isinstance(refused, RefusedMail)
    refused.why, refused.raw = why, data
    return refused


# -- composing ---------------------------------------------------------------


def _header_value(name: str, value: str) -> str:
    # policy.default would raise a bare ValueError; say which field is wrong.
    if "\r" in value or "\n" in value:
        raise UsageError(t("{field} must be a single line", field=name))
    return value


def compose(
    *,
    sender: str,
    to: str,
    subject: str,
    body_text: str,
    attachment_name: str | None,
    attachment: bytes | None,
    in_reply_to: str | None = None,
    body_html: str | None = None,
) -> EmailMessage:
    """Plain-text mail whose body holds the armoured text, with the packet attached too (no
    attachment: a mail of words only, such as the host's answer to a refused mail). With
    `body_html`, the text and that HTML are the two alternatives of one body
    (multipart/alternative, the text first: the armour stays where it is)."""
    if attachment is not None and (not attachment_name or re.search(r"[/\\\r\n]", attachment_name)):
        raise UsageError(t("bad attachment name {name}", name=repr(attachment_name)))
    msg = EmailMessage(policy=POLICY)
    msg["From"] = _header_value(t("the sender"), sender)
    msg["To"] = _header_value(t("the recipient"), to)
    msg["Subject"] = _header_value("subject", subject)
    msg["Date"] = formatdate(localtime=True)
    # Without a domain, make_msgid does a (slow, revealing) FQDN lookup.
    addr = parseaddr(sender)[1]
    domain = addr.rpartition("@")[2] if "@" in addr else "pbem.invalid"
    msg["Message-ID"] = make_msgid(domain=domain)
    if in_reply_to:
        msg["In-Reply-To"] = _header_value("in_reply_to", in_reply_to)
        msg["References"] = in_reply_to
    # set_content picks quoted-printable or base64 for long or non-ASCII
    # lines, which keeps every wire line under MAX_LINE.
    msg.set_content(body_text)
    if body_html is not None:
        msg.add_alternative(body_html, subtype="html")
    if attachment is not None:
        msg.add_attachment(
            attachment, maintype=ATTACHMENT_TYPE[0], subtype=ATTACHMENT_TYPE[1], filename=attachment_name
        )
    return msg


def write_eml(msg: EmailMessage, dir: Path) -> Path:
    """Store a message as a .eml file (CRLF, atomic, never overwriting)."""
    data = msg.as_bytes(policy=msg.policy.clone(linesep="\r\n"))
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return write_new(Path(dir), f"pbem-{stamp}", ".eml", data)


# -- sending -----------------------------------------------------------------


@dataclass(frozen=True)
class SmtpSettings:
    """Where to send from. The password is deliberately not a field."""

    host: str
    port: int
    security: Security
    user: str | None
    from_addr: str
    ca_file: str | None = None  # a CA to trust besides the system's (the mail profile's --ca-file)

    def __post_init__(self) -> None:
        if self.security not in get_args(Security):
            raise UsageError(t("SMTP security must be one of {choices}, not {security}",
                               choices=", ".join(get_args(Security)), security=repr(self.security)))
        if isinstance(self.port, bool) or not isinstance(self.port, int) or not 0 < self.port < 65536:
            raise UsageError(t("bad SMTP port {port}", port=repr(self.port)))
        if not self.host:
            raise UsageError(t("SMTP host is empty"))

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "ca_file" or v}

    def in_words(self) -> str:
        """`SMTP: host:587 (starttls), from a@b, login me`."""
        line = t("SMTP: {server}:{port} ({security}), from {sender}", server=self.host, port=self.port,
                 security=self.security, sender=self.from_addr)
        return line + t(", login {user}", user=self.user) if self.user else line

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SmtpSettings:
        if "password" in d:
            raise UsageError(t("SMTP passwords are never stored in settings"),
                             hint=t("remove it and set PBEM_SMTP_PASSWORD or answer the prompt"))
        security = d.get("security", "starttls")
        try:
            return cls(
                host=d["host"],
                port=d.get("port", _DEFAULT_PORTS.get(security, 0)),
                security=security,
                user=d.get("user") or None,
                from_addr=d["from_addr"],
                ca_file=d.get("ca_file") or None,
            )
        except KeyError as e:
            raise UsageError(t("SMTP settings lack {field}", field=repr(e.args[0]))) from None


def send(msg: EmailMessage, settings: SmtpSettings, password: str | None, *, timeout: float = 30) -> None:
    """Deliver ``msg`` to the recipients in its To/Cc headers."""
    if settings.user and password is None:
        raise UsageError(t("SMTP login needs a password"), hint=t("set PBEM_SMTP_PASSWORD"))
    if settings.user and settings.security == "none" and settings.host not in _LOOPBACK:
        raise UsageError(t("refusing to send the SMTP password to {host} unencrypted", host=settings.host),
                         hint=t('use security "starttls" or "ssl"'))
    where = f"{settings.host}:{settings.port}"
    try:
        # Loading the CA store is slow: only when the connection is encrypted.
        ctx = tls.context(settings.ca_file) if settings.security != "none" else None
        smtp: smtplib.SMTP
        if settings.security == "ssl":
            smtp = smtplib.SMTP_SSL(settings.host, settings.port, timeout=timeout, context=ctx)
        else:
            smtp = smtplib.SMTP(settings.host, settings.port, timeout=timeout)
        with smtp:
            if settings.security == "starttls":
                smtp.starttls(context=ctx)
            if settings.user:
                smtp.login(settings.user, password or "")
            smtp.send_message(msg, from_addr=settings.from_addr)
    except smtplib.SMTPAuthenticationError as e:
        raise PbemError(t("SMTP login to {where} failed: {error}", where=where, error=_smtp_reason(e)),
                        hint=t("check the user and password")) from e
    except smtplib.SMTPRecipientsRefused as e:
        raise PbemError(t("{where} refused recipients {recipients}", where=where,
                          recipients=sorted(e.recipients))) from e
    except smtplib.SMTPNotSupportedError as e:
        raise PbemError(t("{where} does not support this: {error}", where=where, error=e),
                        hint=t('try security "ssl" or check the port')) from e
    except smtplib.SMTPException as e:
        raise PbemError(t("sending via {where} failed: {error}", where=where, error=_smtp_reason(e))) from e
    except (OSError, ssl.SSLError) as e:
        refused = tls.certificate_failure(e, where, settings.ca_file)
        if refused is not None:
            raise refused from None
        raise PbemError(t("cannot reach SMTP server {where}: {error}", where=where, error=e),
                        hint=t("check host, port and security")) from e


def _smtp_reason(e: smtplib.SMTPException) -> str:
    err = getattr(e, "smtp_error", None)
    if isinstance(err, bytes):
        return f"{getattr(e, 'smtp_code', '')} {err.decode('utf-8', 'replace')}".strip()
    return str(e)


# -- reading -----------------------------------------------------------------


def _is_maildir(path: Path) -> bool:
    return (path / "cur").is_dir() and (path / "new").is_dir()


def iter_messages(path: Path, skip: Callable[[str], bool] = lambda label: False) -> Iterator[tuple[str, EmailMessage]]:
    """Messages from a .eml file, an mbox file, a Maildir, or a directory of .eml files.

    Labels are the file path, or `<path>#<key>` for mbox and Maildir messages (a Maildir key
    stays the same when a mail client moves the file from new/ to cur/). A message whose
    label `skip` accepts is not parsed.
    """
    path = Path(path)
    if path.is_dir():
        if _is_maildir(path):
            md = mailbox.Maildir(path, factory=None, create=False)
            yield from _iter_mailbox(md, path, sorted(md.keys()), skip)
            return
        for p in sorted(path.iterdir()):
            if p.suffix.lower() == ".eml" and not p.name.startswith(".") and p.is_file() and not skip(str(p)):
                yield from _iter_eml(p)
        return
    if not path.is_file():
        raise UsageError(t("{path}: no such mail file or folder", path=path))
    try:
        head = read_bounded(path, 5, head=True)
    except CannotRead:
        head = b""  # _iter_eml says why, as the mail's own refusal
    if head == b"From ":
        mb = mailbox.mbox(path, factory=None, create=False)
        try:
            yield from _iter_mailbox(mb, path, list(mb.keys()), skip)
        finally:
            mb.close()
        return
    if not skip(str(path)):
        yield from _iter_eml(path)


def _iter_mailbox(box: mailbox.Mailbox, path: Path, keys: list[str], skip: Callable[[str], bool]
                  ) -> Iterator[tuple[str, EmailMessage]]:
    for key in keys:
        label = f"{path}#{key}"
        if skip(label):
            continue
        try:
            with box.get_file(key) as f:
                msg = read_mail(f.read(MAX_MAIL + 1))  # never more than the limit in memory
        except (KeyError, FileNotFoundError):
            continue  # moved to cur/ or removed by a mail client meanwhile
        yield label, msg


def _iter_eml(p: Path) -> Iterator[tuple[str, EmailMessage]]:
    try:  # a regular file, never through a link (one to /proc/self/mem stopped every reader)
        data = read_bounded(p, MAX_MAIL + 1, head=True)
    except CannotRead as exc:
        if not exc.missing:  # missing: removed meanwhile
            refused = RefusedMail()
            refused.why, refused.raw = failures.message(exc), b""
            yield str(p), refused
        return
    yield str(p), read_mail(data)


def _part_text(part: Message) -> str:
    # Decode the transfer encoding ourselves, then the charset, tolerating
    # unknown or lying charsets: armour is ASCII either way.
    raw = part.get_payload(decode=True)
    if not isinstance(raw, bytes):
        return ""
    charset = part.get_content_charset() or "utf-8"
    try:
        return raw.decode(charset, "replace")
    except (LookupError, UnicodeError):  # unknown, or a codec without "replace" (idna, punycode)
        return raw.decode("utf-8", "replace")


# What a browser does not show (comments, scripts, style sheets, the head), and <pre>, whose line
# ends are line breaks: each found by one scan for its opening and one for its end, so a mail of
# a thousand openings and no end costs one pass, not a thousand (a lazy regex rescans the rest).
_SECTION_RE = re.compile(r"<!--|<(script|style|head|pre)\b", re.I)
_BREAK_RE = re.compile(r"<br\s*/?>|</(p|div|li|tr|pre|blockquote|h[1-6])\s*>", re.I)
_TAG_RE = re.compile(r"<[^<>]*>")  # not '<' inside either: a thousand '<' and no '>' is one pass
_SOURCE_BREAK_RE = re.compile(r"[ \t]*\r?\n[ \t]*")


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _sections(s: str, tagged: bool) -> str:
    """`s` without its hidden sections; with `tagged`, a <pre>'s line ends made <br>."""
    low = s.translate(_ASCII_LOWER)  # str.lower() may change the length ('İ'): the indices must hold
    out: list[str] = []
    kept = pos = 0
    unclosed: set[str] = set()  # a section with no end after one opening has none after a later one
    while (m := _SECTION_RE.search(s, pos)) is not None:
        name = (m.group(1) or "").lower()
        pos = m.end()
        if name in unclosed:
            continue
        end = low.find("-->" if not name else f"</{name}", pos)
        if end < 0:
            unclosed.add(name)
            continue
        end = end + 3 if not name else (low.find(">", end) + 1 or len(s))
        out.append(s[kept:m.start()])
        if name == "pre":
            section = s[m.start():end]
            out.append(section.replace("\r\n", "<br>").replace("\n", "<br>") if tagged else section)
        kept = pos = end
    out.append(s[kept:])
    return "".join(out)


def html_to_text(s: str) -> str:
    """The text a browser shows of an HTML body, line by line. In HTML that breaks its lines
    with tags, a line end of the source is a space (Thunderbird writes `line<br>` and then a
    line end: kept both, every break doubled, and the armour's blank line after its header
    lines was lost among them); inside <pre> it is a line break. HTML with no break tag at all
    keeps its line ends: that is how a careless client writes plain text as HTML."""
    tagged = _BREAK_RE.search(s) is not None
    s = _sections(s, tagged)
    if tagged:
        s = _SOURCE_BREAK_RE.sub(" ", s)
    s = _BREAK_RE.sub("\n", s)
    s = _TAG_RE.sub("", s)
    return html.unescape(s).replace("\xa0", " ")


def _is_attachment(part: Message) -> bool:
    if part.get_content_disposition() == "attachment" or part.get_filename():
        return True
    return part.get_content_maintype() != "text"


def extract_blocks(msg: Message) -> list[tuple[str, bytes]]:
    """Armoured blocks in ``msg``: attachments, then text/plain, then text/html, deduped.

    A truncated block only raises BadPacket if nothing usable was found
    elsewhere; a reply that quotes half a packet under an intact attachment
    is fine.
    """
    if isinstance(msg, RefusedMail):
        raise BadPacket(msg.why, hint=t("a pbem mail has two parts, the text and the packet; this one was not made by pbem"))
    attachments: list[str] = []
    plain: list[str] = []
    htmls: list[str] = []
    for part in msg.walk():
        if part.is_multipart() or part.get_content_type() == "message/rfc822":
            continue  # walk() descends into these; forwarded mail is read part by part
        if _is_attachment(part):
            attachments.append(_part_text(part))
        elif part.get_content_subtype() == "html":
            htmls.append(html_to_text(_part_text(part)))
        elif part.get_content_subtype() == "plain":
            plain.append(_part_text(part))
    found: dict[tuple[str, bytes], None] = {}  # in order, each once
    first_error: BadPacket | None = None
    for text in attachments + plain + htmls:
        try:
            blocks = armor.dearmor_all(text)
        except BadPacket as e:
            first_error = first_error or e
            continue
        found.update(dict.fromkeys(blocks))
    if not found and first_error is not None:
        raise first_error
    return list(found)
