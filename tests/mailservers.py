"""Real mail servers on 127.0.0.1 for the tests: pymap (IMAP) and aiosmtpd (SMTP).

One mailbox per person. The SMTP server delivers each message into the recipient's Maildir
on disk, as a real MTA hands mail to the IMAP server's store, so mail still arrives while
the IMAP server is down (the restart tests rely on that). pymap serves those Maildirs over
IMAP with IDLE (telling an idling client of new mail within moments: tests/pymap_server.py),
MOVE and UIDPLUS. Either server failing to start fails the test loudly.

One pymap process and one aiosmtpd server serve every test of a pytest process that asks for
`mail_servers` (starting them cost more CPU than many a test that used them). Each test has
mailboxes of its own in its tmp_path under the same user names: pymap reads its users files
(with each user's Maildir) again at every login, and the SMTP server delivers into the mailboxes
of the test under way. A test may stop or restart the server; the next one finds it started.
"""

from __future__ import annotations

import mailbox
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.utils import parseaddr
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import Envelope
from process_tools import free_port
from processes import server

PYMAP = Path(sys.executable).parent / "pymap"
STARTUP = 30.0  # seconds; a busy 2-core machine can be slow to import pymap


def _wait_listening(port: int, proc: subprocess.Popen | None, log: Path | None, what: str) -> None:
    deadline = time.monotonic() + STARTUP
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            text = log.read_text(errors="replace")[-2000:] if log else ""
            raise RuntimeError(f"{what} exited with {proc.returncode} while starting:\n{text}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {STARTUP:.0f} s")


@dataclass
class ImapServer:
    """pymap's Maildir backend in `base` (its users files and log), one user (and Maildir) per
    person, each Maildir in `mail` (`base` unless given; `use` gives the server other ones)."""

    base: Path
    users: dict[str, str]  # user -> password
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None
    tls: tuple[Path, Path] | None = None  # (cert, key): offer STARTTLS
    xoauth2: bool = False  # offer XOAUTH2 too (tests/pymap_xoauth2.py): the token is checked as the password
    mail: Path | None = None

    def __post_init__(self) -> None:
        if not PYMAP.exists():
            raise RuntimeError(f"pymap is not installed in this venv ({PYMAP}); scripts/test installs it")
        self.base.mkdir(parents=True, exist_ok=True)
        self.use(self.mail or self.base, self.users)

    def use(self, mail: Path, users: dict[str, str]) -> None:
        """These users (user -> password) from now on, each with a new Maildir in `mail`: pymap
        reads its users files at each login, so a running server serves them at once."""
        from pysasl.hashing import BuiltinHash

        self.mail, self.users = mail, users
        hasher = BuiltinHash(rounds=1000)  # a cheap hash: logins in tests stay fast
        files = {"pymap-etc-passwd": "".join(f"{u}:x::::{self.maildir(u)}:\n" for u in users),
                 "pymap-etc-shadow": "".join(f"{u}:{hasher.hash(p)}:::::::\n" for u, p in users.items())}
        for name, text in files.items():  # whole at once: the server may be reading them
            (self.base / f"{name}.new").write_text(text)
            os.replace(self.base / f"{name}.new", self.base / name)
        for u in users:
            self.maildir(u).parent.mkdir(parents=True, exist_ok=True)
            mailbox.Maildir(self.maildir(u), create=True)

    def maildir(self, user: str) -> Path:
        return (self.mail or self.base) / user

    def folder(self, user: str, name: str) -> Path:
        """The Maildir++ folder pymap keeps an IMAP folder in ("pbem/done" -> .pbem.done)."""
        return self.maildir(user) / ("." + name.replace("/", "."))

    def count(self, user: str, name: str = "INBOX") -> int:
        d = self.maildir(user) if name == "INBOX" else self.folder(user, name)
        return sum(len([n for n in os.listdir(d / sub) if not n.startswith(".")])
                   for sub in ("new", "cur") if (d / sub).is_dir())

    def url(self, user: str, folder: str = "INBOX") -> str:
        return f"imap://{user}@127.0.0.1:{self.port}/{folder}"

    def start(self) -> None:
        log = self.base / "pymap.log"
        tls = ["--cert", str(self.tls[0]), "--key", str(self.tls[1])] if self.tls else ["--no-tls"]
        program = [sys.executable, str(Path(__file__).with_name("pymap_xoauth2.py" if self.xoauth2 else "pymap_server.py"))]
        self.proc = server(subprocess.Popen(
            [*program, "--host", "127.0.0.1", "--port", str(self.port), *tls, "maildir", str(self.base)],
            stdin=subprocess.DEVNULL, stdout=log.open("ab"), stderr=subprocess.STDOUT))
        _wait_listening(self.port, self.proc, log, "pymap")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self, down: float = 0.0) -> None:
        self.stop()
        time.sleep(down)
        self.start()


def self_signed(dir: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (PEM files), made with `cryptography`."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = dir / "cert.pem", dir / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class TlsFront:
    """TLS on its own port in front of a plain IMAP server (pymap speaks only STARTTLS), as
    stunnel or a provider's front end gives imaps:// on 993. A real TLS handshake with the
    given certificate; each connection's bytes are copied both ways unchanged."""

    def __init__(self, backend_port: int, cert: Path, key: Path) -> None:
        import ssl
        import threading

        self.backend_port = backend_port
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(str(cert), str(key))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.handshakes = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        import ssl
        import threading

        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return  # closed
            try:
                client = self.context.wrap_socket(raw, server_side=True)
            except (ssl.SSLError, OSError):
                raw.close()  # e.g. a client that refused our certificate
                continue
            self.handshakes += 1
            backend = socket.create_connection(("127.0.0.1", self.backend_port))
            for a, b in ((client, backend), (backend, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.listener.close()


class _Deliver:
    """aiosmtpd handler: each recipient's copy goes into that person's Maildir."""

    def __init__(self, boxes: dict[str, Path]) -> None:
        self.boxes = boxes  # address -> Maildir
        self.delivered = 0
        self.per_address: dict[str, int] = {a: 0 for a in boxes}

    async def handle_RCPT(self, server, session, envelope: Envelope, address: str, rcpt_options) -> str:
        if parseaddr(address)[1].lower() not in self.boxes:
            return f"550 no mailbox for {address}"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope: Envelope) -> str:
        data = envelope.original_content or b""
        for rcpt in envelope.rcpt_tos:
            addr = parseaddr(rcpt)[1].lower()
            mailbox.Maildir(self.boxes[addr], create=False).add(data)
            self.delivered += 1
            self.per_address[addr] += 1
        return "250 delivered"


@dataclass
class MailServers:
    imap: ImapServer
    smtp_port: int
    people: dict[str, str]  # user -> address
    handler: _Deliver

    def address(self, user: str) -> str:
        return self.people[user]

    @property
    def delivered(self) -> int:
        return self.handler.delivered


class _ToTheTest:
    """aiosmtpd handler of a server that outlives its tests: the test under way's `_Deliver`;
    between tests, every recipient is refused."""

    def __init__(self) -> None:
        self.to: _Deliver | None = None

    async def handle_RCPT(self, server, session, envelope: Envelope, address: str, rcpt_options) -> str:
        if self.to is None:
            return f"550 no mailbox for {address}"
        return await self.to.handle_RCPT(server, session, envelope, address, rcpt_options)

    async def handle_DATA(self, server, session, envelope: Envelope) -> str:
        if self.to is None:
            return "554 no test under way"
        return await self.to.handle_DATA(server, session, envelope)


@dataclass
class _Shared:
    imap: ImapServer
    smtp_port: int
    handler: _ToTheTest


@pytest.fixture(scope="session")
def _shared_mail_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Shared]:
    """pymap and aiosmtpd for every test of this pytest process that asks for `mail_servers`."""
    imap = ImapServer(tmp_path_factory.mktemp("pymap"), {})
    handler = _ToTheTest()
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    try:
        imap.start()
        controller.start()
        _wait_listening(port, None, None, "aiosmtpd")
        yield _Shared(imap, port, handler)
    finally:
        controller.stop()
        imap.stop()


@pytest.fixture
def mail_servers(request: pytest.FixtureRequest, tmp_path: Path,
                 _shared_mail_servers: _Shared) -> Iterator[MailServers]:
    """IMAP + SMTP on loopback for the people named by `@pytest.mark.people("ann", ...)`.

    Each person's IMAP user is their name and their password is "pw-NAME"; their address
    is NAME@example.org. Their mailboxes are this test's alone (in tmp_path / "imap").
    """
    marker = request.node.get_closest_marker("people")
    names = list(marker.args) if marker else ["host", "ann", "bob", "cat"]
    people = {n: f"{n}@example.org" for n in names}
    shared = _shared_mail_servers
    imap = shared.imap
    imap.use(tmp_path / "imap", {n: f"pw-{n}" for n in names})
    if imap.proc is None or imap.proc.poll() is not None:  # a test before stopped it, or it died
        imap.start()
    handler = _Deliver({addr: imap.maildir(n) for n, addr in people.items()})
    shared.handler.to = handler
    try:
        yield MailServers(imap, shared.smtp_port, people, handler)
    finally:
        shared.handler.to = None
        imap.use(imap.base, {})  # no login reaches this test's mailboxes any more
