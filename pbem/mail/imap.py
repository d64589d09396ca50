"""Reading a mail folder over IMAP (stdlib imaplib): new messages, then done or rejected.

`ImapFolder` is a mail source like `incoming.MailScanner`: `new_messages()` yields each
message still in the folder, `settle()` marks one seen and moves it to `pbem/done` (or
`pbem/rejected`), `wait()` idles (IDLE where the server offers it, else sleeps). Processed
mail leaves the folder, so a restarted reader never processes it twice; a message whose
processing failed half-way stays and is read again (the host recognises a move it applied).

The two folders are written with the hierarchy separator the server reports (`LIST "" ""`):
`pbem/done` on a '/' server, `pbem.done` on Debian's stock Dovecot (Maildir++, '.'), under
the personal namespace's prefix when there is one (`INBOX.pbem.done` on Courier-style
servers). Every command that changes the mailbox has its answer checked: a server that
refuses what pbem needs is a `MailServerRefused` quoting its answer, not a retry loop.

Any network failure closes the connection and raises `MailboxDown`; the next call
reconnects. The password (or XOAUTH2 token) is asked for on each connect and never kept
on disk.
"""

from __future__ import annotations

import imaplib
import io
import re
import select
import ssl
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Literal
from urllib.parse import quote, unquote, urlsplit

from pbem.errors import MailServerRefused, PbemError, UsageError
from pbem.mail import tls
from pbem.mail.message import read_mail
from pbem.ui.words import t

DONE = "pbem/done"
REJECTED = "pbem/rejected"
ENV_IMAP_PASSWORD = "PBEM_IMAP_PASSWORD"
IDLE_MAX = 300.0  # seconds; RFC 2177 asks to re-IDLE before 29 minutes
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}
_FLAG = "$PbemRead"


class MailboxDown(PbemError):
    """The IMAP server could not be reached or dropped the connection: try again later."""


@dataclass(frozen=True)
class ImapUrl:
    """imaps://user@host[:port]/FOLDER (implicit TLS) or imap://... (STARTTLS; plain on loopback)."""

    secure: bool
    user: str
    host: str
    port: int
    folder: str = "INBOX"

    @classmethod
    def parse(cls, text: str) -> ImapUrl:
        try:
            parts = urlsplit(text.strip())
            port = parts.port
        except ValueError as exc:
            raise UsageError(t("bad IMAP URL {url}: {error}", url=repr(text), error=exc)) from None
        if parts.scheme not in ("imap", "imaps"):
            raise UsageError(t("bad IMAP URL {url}: it must start with imaps:// or imap://", url=repr(text)),
                             hint=t("e.g. {example}", example="imaps://me%40example.org@imap.example.org/INBOX"))
        if parts.password is not None:
            raise UsageError(t("an IMAP URL must not hold the password (it would be stored or shown)"),
                             hint=t("use ${env}, --password-command or the prompt", env=ENV_IMAP_PASSWORD))
        if not parts.username or not parts.hostname:
            raise UsageError(t("bad IMAP URL {url}: it needs a user and a host", url=repr(text)),
                             hint=t("imaps://USER@HOST[:PORT]/FOLDER (write @ in the user as %40)"))
        folder = unquote(parts.path.lstrip("/")) or "INBOX"
        if any(c in folder for c in '\r\n"\\'):
            raise UsageError(t("bad IMAP folder {folder}", folder=repr(folder)))
        secure = parts.scheme == "imaps"
        return cls(secure, unquote(parts.username), parts.hostname, port or (993 if secure else 143), folder)

    def __str__(self) -> str:
        scheme = "imaps" if self.secure else "imap"
        return f"{scheme}://{quote(self.user, safe='')}@{self.host}:{self.port}/{self.folder}"


Credential = tuple[Literal["password", "xoauth2"], str]


def _quoted(name: str) -> str:
    return '"' + name + '"'


@dataclass
class ImapFolder:
    url: ImapUrl
    credential: Callable[[], Credential]
    done: str = DONE
    rejected: str = REJECTED
    timeout: float = 30.0
    idle: bool = True  # use IDLE when the server offers it
    idle_max: float = IDLE_MAX
    log: Callable[[str], None] = lambda line: None
    conn: imaplib.IMAP4 | None = None
    caps: frozenset[str] = frozenset()
    uidvalidity: str = ""
    skipped: set[str] = field(default_factory=set)  # uidvalidity/uid of mail left in the folder
    known: Callable[[str], bool] = lambda label: False  # read before (pbem.mail.memory): not fetched
    ca_file: str | None = None  # a CA to trust besides the system's (the mail profile's)
    folders: dict[str, str] = field(default_factory=dict)  # "pbem/done" -> the server's name for it
    old: int = 0  # skipped as read before: none (MailSource; a Remembering source around it counts them)

    # --- connection ----------------------------------------------------------------------

    def _connect(self) -> imaplib.IMAP4:
        u = self.url
        where = f"{u.host}:{u.port}"
        try:
            conn: imaplib.IMAP4
            if u.secure:
                conn = imaplib.IMAP4_SSL(u.host, u.port, ssl_context=tls.context(self.ca_file), timeout=self.timeout)
            else:
                conn = imaplib.IMAP4(u.host, u.port, timeout=self.timeout)
                if "STARTTLS" in conn.capabilities:
                    try:
                        conn.starttls(tls.context(self.ca_file))
                    except BaseException:
                        _drop(conn)
                        raise
                elif u.host not in _LOOPBACK:
                    conn.shutdown()
                    raise UsageError(t("{where} offers no STARTTLS: refusing to send the password unencrypted",
                                       where=where), hint=t("use an imaps:// URL"))
        except (OSError, imaplib.IMAP4.error, EOFError) as exc:
            refused = tls.certificate_failure(exc, where, self.ca_file)
            if refused is not None:
                raise refused from None
            raise MailboxDown(t("cannot reach IMAP server {where}: {error}", where=where, error=exc),
                              hint=t("check the host and port")) from None
        try:
            kind, secret = self.credential()
            if kind == "xoauth2":
                auth = f"user={u.user}\x01auth=Bearer {secret}\x01\x01".encode()
                conn.authenticate("XOAUTH2", lambda _challenge: auth)
            else:
                conn.login(u.user, secret)
        except imaplib.IMAP4.abort as exc:
            raise MailboxDown(t("{where} closed the connection while logging in: {error}", where=where,
                                error=exc)) from None
        except imaplib.IMAP4.error as exc:
            conn.shutdown()
            raise UsageError(t("IMAP login of {user} to {where} failed: {error}", user=u.user, where=where,
                               error=_text(exc)),
                             hint=t("check the user, the password (an app password?) or the token")) from None
        except BaseException:
            conn.shutdown()
            raise
        return conn

    def _open(self) -> imaplib.IMAP4:
        if self.conn is not None:
            return self.conn
        conn = self._connect()
        try:
            typ, data = conn.capability()
            self.caps = frozenset(_text(data[-1]).upper().split()) if typ == "OK" and data else frozenset()
            self._make_folders(conn)
            typ, data = conn.select(_quoted(self.url.folder))
            if typ != "OK":
                conn.logout()
                raise UsageError(t("no IMAP folder {folder} for {user}: {error}", folder=repr(self.url.folder),
                                   user=self.url.user, error=_text(data[-1])))
            validity = conn.response("UIDVALIDITY")[1]
            self.uidvalidity = _text(validity[-1]) if validity and validity[-1] else ""
        except (OSError, imaplib.IMAP4.abort, EOFError) as exc:
            raise MailboxDown(t("lost the IMAP connection to {host}: {error}", host=self.url.host, error=exc)) from None
        except MailServerRefused:
            _drop(conn)
            raise
        self.conn = conn
        return conn

    def _make_folders(self, conn: imaplib.IMAP4) -> None:
        """pbem's two folders, named with the server's separator, created where missing."""
        prefix, sep = _personal_namespace(conn) if "NAMESPACE" in self.caps else ("", None)
        sep = _separator(conn) or sep
        have = _folder_names(conn)
        for logical in (self.done, self.rejected):
            name = prefix + (logical.replace("/", sep) if sep else logical.replace("/", "-"))
            self.folders[logical] = name
            if name in have:
                continue
            try:
                typ, data = conn.create(_quoted(name))
            except imaplib.IMAP4.abort:
                raise
            except imaplib.IMAP4.error as exc:  # BAD: imaplib raises rather than answers
                raise self._refused("CREATE " + name, exc) from None
            if typ != "OK" and not _says(data, "ALREADYEXISTS") and name not in _folder_names(conn):
                raise self._refused("CREATE " + name, data)

    def _refused(self, command: str, data: object) -> MailServerRefused:
        answer = _text(data[-1] if isinstance(data, list) and data else data)
        return MailServerRefused(
            t("the IMAP server {host} refuses {command}: {answer}", host=f"{self.url.host}:{self.url.port}",
              command=command, answer=answer),
            hint=t("pbem needs to create and fill the folders {folders} beside {folder}",
                   folders=", ".join(self.folders.values() or (self.done, self.rejected)), folder=self.url.folder))

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.logout()
            except (OSError, imaplib.IMAP4.error, EOFError):
                pass
            self.conn = None

    def _lost(self, exc: BaseException) -> MailboxDown:
        if self.conn is not None:
            try:
                self.conn.shutdown()
            except OSError:
                pass
        self.conn = None
        return MailboxDown(t("lost the IMAP connection to {host}: {error}", host=f"{self.url.host}:{self.url.port}",
                             error=exc), hint=t("it is retried"))

    def _call(self, *args: str) -> list:
        conn = self._open()
        try:
            typ, data = conn.uid(*args)
        except (OSError, imaplib.IMAP4.abort, EOFError) as exc:
            raise self._lost(exc) from None
        except imaplib.IMAP4.error as exc:
            raise self._refused("UID " + " ".join(args), exc) from None
        if typ != "OK":
            raise self._refused("UID " + " ".join(args), data)
        return data

    # --- a mail source ---------------------------------------------------------------------

    def label(self, uid: str) -> str:
        return f"{self.url};UIDVALIDITY={self.uidvalidity};UID={uid}"

    def new_messages(self) -> Iterator[tuple[str, EmailMessage]]:
        """Every message in the folder not left there on purpose, oldest first."""
        self._told_of_news(self._open())  # this look finds whatever they told of
        data = self._call("SEARCH", "ALL")
        uids = [u for u in _text(data[0] if data else "").split() if f"{self.uidvalidity}/{u}" not in self.skipped]
        for uid in sorted(uids, key=int):
            if self.known(self.label(uid)):
                self.leave(self.label(uid))
                continue
            found = self._call("FETCH", uid, "(BODY.PEEK[])")
            raw = next((part[1] for part in found if isinstance(part, tuple)), None)
            if raw is None:
                continue  # moved away meanwhile (another reader)
            yield self.label(uid), read_mail(raw)

    def _uid(self, label: str) -> str:
        return label.rpartition(";UID=")[2]

    def leave(self, label: str) -> None:
        """Not ours (or not now): leave it in the folder and do not read it again this session."""
        self.skipped.add(f"{self.uidvalidity}/{self._uid(label)}")

    def pass_over(self, label: str) -> None:
        self.leave(label)

    def settle(self, label: str, outcome: Literal["done", "rejected"]) -> None:
        """Mark a processed message read and move it to the done (or rejected) folder."""
        uid = self._uid(label)
        self._open()
        logical = self.done if outcome == "done" else self.rejected
        target = _quoted(self.folders.get(logical, logical))
        try:
            self._call("STORE", uid, "+FLAGS", f"(\\Seen {_FLAG})")
        except MailServerRefused:
            self._call("STORE", uid, "+FLAGS", "(\\Seen)")  # the server keeps no keywords
        if "MOVE" in self.caps:
            self._call("MOVE", uid, target)
            return
        self._call("COPY", uid, target)
        self._call("STORE", uid, "+FLAGS", "(\\Deleted)")
        if "UIDPLUS" in self.caps:
            self._call("EXPUNGE", uid)
            return
        conn = self._open()
        try:
            typ, data = conn.expunge()
        except (OSError, imaplib.IMAP4.abort, EOFError) as exc:
            raise self._lost(exc) from None
        except imaplib.IMAP4.error as exc:
            raise self._refused("EXPUNGE", exc) from None
        if typ != "OK":
            raise self._refused("EXPUNGE", data)

    def wait(self, seconds: float, longest: float | None = None) -> bool:
        """Until new mail may have come (IDLE, for at most `idle_max` seconds, and `longest`
        when given) or `seconds` passed (polling); True if it did."""
        conn = self._open()
        if not (self.idle and "IDLE" in self.caps):
            time.sleep(seconds if longest is None else min(seconds, longest))
            return False
        if self._told_of_news(conn):  # mail came during the last step: IDLE would not tell of it again
            return True
        if longest is not None and longest <= 0:
            return False
        try:
            return self._idle(conn, self.idle_max if longest is None else min(self.idle_max, longest))
        except (OSError, imaplib.IMAP4.abort, EOFError) as exc:
            raise self._lost(exc) from None

    @staticmethod
    def _told_of_news(conn: imaplib.IMAP4) -> bool:
        """Whether the server's answers since the last look told of new mail (EXISTS, RECENT);
        forgets that they did."""
        return any([conn.untagged_responses.pop(kind, None) for kind in ("EXISTS", "RECENT")])

    def _idle(self, conn: imaplib.IMAP4, seconds: float) -> bool:
        tag = f"PBEM{int(time.monotonic() * 1000) % 10**9}".encode()
        conn.send(tag + b" IDLE\r\n")
        first = conn.readline()
        if not first.startswith(b"+"):
            raise imaplib.IMAP4.abort(f"IDLE refused: {first!r}")
        news = False
        deadline = time.monotonic() + seconds
        while not news and (left := deadline - time.monotonic()) > 0:
            if not self._buffered(conn):
                ready, _, _ = select.select([conn.sock], [], [], left)
                if not ready:
                    break
            line = conn.readline()
            if not line or line.startswith(b"* BYE"):
                raise imaplib.IMAP4.abort(t("the server ended the session: {line}", line=repr(line)))
            news = _is_news(line)
        conn.send(b"DONE\r\n")
        while True:
            line = conn.readline()
            if not line:
                raise imaplib.IMAP4.abort("the connection closed after IDLE")
            if line.startswith(tag):
                return news
            news = news or _is_news(line)

    @staticmethod
    def _buffered(conn: imaplib.IMAP4) -> bool:
        """Whether imaplib's reader already holds bytes (select cannot see those)."""
        sock = conn.sock
        before = sock.gettimeout()
        sock.setblocking(False)
        try:
            return isinstance(conn.file, io.BufferedReader) and bool(conn.file.peek(1))  # socket.makefile's
        except (BlockingIOError, ssl.SSLWantReadError):
            return False
        finally:
            sock.settimeout(before)


@dataclass
class ImapWatch:
    """Waiting for new mail in an IMAP folder (pbem.watch.Watch), on a connection of its own:
    IDLE (RFC 2177) where the server offers it, else a look every `poll` seconds."""

    folder: ImapFolder
    poll: float = 20.0
    _waiting: bool = False

    def wait(self, seconds: float) -> bool:
        self.folder.idle_max = max(min(seconds, IDLE_MAX), 0.0)
        self._waiting = True
        woke = self.folder.wait(max(min(seconds, self.poll), 0.0))
        self._waiting = False
        return woke

    def close(self) -> None:
        """Log out; a wait stopped half-way (Ctrl-C in IDLE) just drops the connection, since
        the server would answer a LOGOUT only after a DONE."""
        conn = self.folder.conn
        if self._waiting and conn is not None:
            self.folder.conn = None
            try:
                conn.shutdown()
            except OSError:
                pass
        self.folder.close()


_LISTED = re.compile(rb'^\([^)]*\) (?:"[^"]*"|NIL) (?:"((?:[^"\\]|\\.)*)"|(\S+))$')
_DELIMITER = re.compile(rb'^\([^)]*\) (?:"((?:[^"\\]|\\.)*)"|NIL) ')
_PERSONAL = re.compile(rb'^\(\("((?:[^"\\]|\\.)*)" (?:"((?:[^"\\]|\\.)*)"|NIL)\)')


def _unquote(raw: bytes) -> str:
    return re.sub(rb"\\(.)", rb"\1", raw).decode("utf-8", "replace")


def _separator(conn: imaplib.IMAP4) -> str | None:
    """The hierarchy separator the server reports for its root (`LIST "" ""`), None if flat."""
    typ, data = conn.list('""', '""')
    for line in data if typ == "OK" else []:
        m = _DELIMITER.match(line) if isinstance(line, bytes) else None
        if m and m[1]:
            return _unquote(m[1])
    return None


def _personal_namespace(conn: imaplib.IMAP4) -> tuple[str, str | None]:
    """The personal namespace's prefix and separator (RFC 2342), e.g. ("INBOX.", ".")."""
    try:
        typ, data = conn.namespace()
    except imaplib.IMAP4.error:
        return "", None
    m = _PERSONAL.match(data[0]) if typ == "OK" and data and isinstance(data[0], bytes) else None
    if not m:
        return "", None
    return _unquote(m[1]), (_unquote(m[2]) if m[2] else None)


def _says(data: object, code: str) -> bool:
    """Whether a tagged answer carries the response code [CODE] (RFC 5530)."""
    return f"[{code}]" in _text(data[-1] if isinstance(data, list) and data else data).upper()


def _folder_names(conn: imaplib.IMAP4) -> set[str]:
    typ, data = conn.list()
    names = set()
    for line in data if typ == "OK" else []:
        m = _LISTED.match(line) if isinstance(line, bytes) else None
        if m:
            names.add((m[1] or m[2]).decode("utf-8", "replace"))
    return names


_NEWS = re.compile(rb"^\* \d+ (EXISTS|RECENT)\b", re.I)


def _is_news(line: bytes) -> bool:
    return bool(_NEWS.match(line))


def _drop(conn: imaplib.IMAP4) -> None:
    """Close a connection whose TLS handshake failed (its socket may be half gone)."""
    try:
        conn.shutdown()
    except OSError:
        pass


def _text(x: object) -> str:
    if isinstance(x, bytes):
        return x.decode("utf-8", "replace")
    if isinstance(x, BaseException) and x.args:
        return _text(x.args[0])
    return str(x)


def credential_source(*, password_command: str | None = None, oauth2_command: str | None = None,
                      url: ImapUrl | None = None) -> Callable[[], Credential]:
    """How to log in, asked for again on every connect (a token may have expired)."""
    from pbem.mail.secrets import obtain, run_command

    if password_command and oauth2_command:
        raise UsageError(t("pass --password-command or --oauth2-command, not both"))
    if oauth2_command:
        return lambda: ("xoauth2", run_command(oauth2_command, t("OAuth2 token")))
    cached: list[str] = []  # a prompt is answered once per process, never written anywhere

    def password() -> Credential:
        if password_command:
            return "password", run_command(password_command, t("IMAP password"))
        if not cached:
            who = f"{url.user}@{url.host}" if url else t("the IMAP account")
            cached.append(obtain(t("IMAP password"), env=ENV_IMAP_PASSWORD,
                                 prompt=t("IMAP password for {who}: ", who=who)))
        return "password", cached[0]

    return password
