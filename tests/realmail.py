"""Debian's own Dovecot and Postfix on 127.0.0.1 for the tests, private instances.

`scripts/test` installs them as root (`dovecot-imapd dovecot-lmtpd postfix`); the packages' system
services are never what a test uses. Each test gets its own instances with their own
configuration in a temporary folder:

- a private CA and a server certificate for 127.0.0.1 signed by it (`ca.pem`);
- Dovecot (run by `dovecot -F -c FILE`): IMAP with STARTTLS, IMAPS, IDLE, LMTP and an
  authentication socket for Postfix, its Maildirs in either hierarchy-separator layout:
  `sep="."` is Debian's stock Maildir++ (folders `.pbem.done`), `sep="/"` the `LAYOUT=fs`
  one with `separator = /`;
- Postfix (`postfix -c DIR start-fg`, its own config, queue and data directories):
  submission with STARTTLS and AUTH (Dovecot SASL), delivering every `@example.org`
  address into that Dovecot over LMTP.

A server that does not start fails the test with its log, never skips it. Each person's
login is their name, the password "pw-NAME", the address NAME@example.org.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from mailservers import _wait_listening
from process_tools import free_port
from processes import server

DOVECOT = shutil.which("dovecot", path="/usr/sbin:/usr/bin")
POSTFIX = shutil.which("postfix", path="/usr/sbin:/usr/bin")
MAIL_USER = "mail"  # Debian's own uid 8: Dovecot refuses root as the owner of mail


def _need(program: str | None, name: str) -> str:
    if program is None:
        raise RuntimeError(f"{name} is not installed: scripts/test installs it as root "
                           "(apt-get install -y dovecot-imapd dovecot-lmtpd postfix)")
    if os.geteuid() != 0:
        raise RuntimeError(f"a private {name} instance needs root (it switches to its own users)")
    return program


def private_ca(dir: Path) -> tuple[Path, Path, Path]:
    """A CA certificate, and a certificate for 127.0.0.1/localhost signed by it with its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pbem test club CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=2))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                        x509.DNSName("localhost")]), False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    ca_path, cert_path, key_path = dir / "ca.pem", dir / "server.pem", dir / "server.key"
    ca_path.write_bytes(ca.public_bytes(pem))
    cert_path.write_bytes(cert.public_bytes(pem) + ca.public_bytes(pem))  # the chain, as servers send it
    key_path.write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    key_path.chmod(0o600)
    return ca_path, cert_path, key_path


class _Server:
    """Started in the foreground (its own session), its output in BASE/NAME.out, its log in
    BASE/NAME.log; `start()` returns once every port listens, else stops it and raises
    RuntimeError with both logs."""

    name = ""
    base: Path
    proc: subprocess.Popen | None

    def argv(self) -> list[str]:
        raise NotImplementedError

    def ports(self) -> list[int]:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def start(self) -> None:
        out = self.base / f"{self.name}.out"
        self.proc = server(subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL, stdout=out.open("ab"),
                                            stderr=subprocess.STDOUT, start_new_session=True))
        try:
            for port in self.ports():
                _wait_listening(port, self.proc, out, self.name)
        except RuntimeError as exc:
            self.stop()
            log = self.base / f"{self.name}.log"
            raise RuntimeError(f"{exc}\n{log.read_text(errors='replace')[-2000:] if log.exists() else ''}") from None


def _end(proc: subprocess.Popen | None, graceful: bool = True) -> None:
    """End a server started in a session of its own: SIGTERM and its own shutdown (Dovecot's
    takes a second: its master sleeps one after telling its log process to quit), or at once,
    SIGKILL to its whole process group, where nothing it would still do matters (a test's end;
    every mail it took is on disk already). A shutdown that hangs ends so too."""
    if proc is None or proc.poll() is not None:
        return
    if graceful:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
            return
        except subprocess.TimeoutExpired:
            pass
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@dataclass
class Dovecot(_Server):
    """A private Dovecot: IMAP (STARTTLS) `port`, IMAPS `imaps_port`, LMTP, and SASL for Postfix."""

    base: Path  # world-traversable: Dovecot's mail processes run as MAIL_USER
    users: dict[str, str]  # user -> password
    sep: str = "."
    cert: tuple[Path, Path] | None = None
    no_create: bool = False  # an ACL that grants no right to create folders (CREATE: NO [NOPERM])
    prefix: str = ""  # the personal namespace's prefix, e.g. "INBOX." as Courier and Cyrus keep folders
    port: int = field(default_factory=free_port)
    imaps_port: int = field(default_factory=free_port)
    lmtp_port: int = field(default_factory=free_port)
    auth_port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None

    def __post_init__(self) -> None:
        assert self.sep in "./" and self.cert is not None
        mail = pwd.getpwnam(MAIL_USER)
        self.conf = self.base / "dovecot.conf"
        for sub in ("run", "state", "mail"):
            (self.base / sub).mkdir(parents=True, exist_ok=True)
        os.chown(self.base / "mail", mail.pw_uid, mail.pw_gid)
        (self.base / "passwd").write_text("".join(
            f"{u}:{{PLAIN}}{p}:{mail.pw_uid}:{mail.pw_gid}::{self.maildir(u)}::\n" for u, p in self.users.items()))
        layout = ":LAYOUT=fs" if self.sep == "/" else ""
        acl = ""
        if self.no_create:
            (self.base / "acl").write_text("* owner lrwstipe\n")
            acl = f"mail_plugins = acl\nplugin {{\n  acl = vfile:{self.base}/acl\n}}\n"
        self.conf.write_text(f"""\
base_dir = {self.base}/run
state_dir = {self.base}/state
instance_name = pbem-test-{self.port}
log_path = {self.base}/dovecot.log
protocols = imap lmtp
listen = 127.0.0.1
ssl = yes
ssl_cert = <{self.cert[0]}
ssl_key = <{self.cert[1]}
ssl_min_protocol = TLSv1.2
disable_plaintext_auth = yes
auth_mechanisms = plain login
auth_username_format = %Ln
first_valid_uid = {mail.pw_uid}
first_valid_gid = {mail.pw_gid}
mail_location = maildir:~/Maildir{layout}
{acl}namespace inbox {{
  inbox = yes
  separator = {self.sep}
  prefix = {self.prefix}
}}
passdb {{
  driver = passwd-file
  args = {self.base}/passwd
}}
userdb {{
  driver = passwd-file
  args = {self.base}/passwd
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {self.port}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {self.imaps_port}
    ssl = yes
  }}
}}
service lmtp {{
  inet_listener lmtp {{
    address = 127.0.0.1
    port = {self.lmtp_port}
  }}
}}
service auth {{
  inet_listener {{
    address = 127.0.0.1
    port = {self.auth_port}
  }}
}}
protocol imap {{
  imap_idle_notify_interval = 1 secs
}}
""")

    def maildir(self, user: str) -> Path:
        return self.base / "mail" / user

    def folder(self, user: str, name: str) -> Path:
        """The Maildir an IMAP folder is kept in: `.pbem.done` ('.'), `pbem/done` ('/')."""
        root = self.maildir(user) / "Maildir"
        if name == "INBOX":
            return root
        return root / ("." + name.replace("/", ".")) if self.sep == "." else root / name

    def count(self, user: str, name: str = "INBOX") -> int:
        d = self.folder(user, name)
        return sum(len([n for n in os.listdir(d / sub) if not n.startswith(".")])
                   for sub in ("new", "cur") if (d / sub).is_dir())

    def url(self, user: str, folder: str = "INBOX", *, imaps: bool = False) -> str:
        return (f"imaps://{user}@127.0.0.1:{self.imaps_port}/{folder}" if imaps
                else f"imap://{user}@127.0.0.1:{self.port}/{folder}")

    name = "dovecot"

    def argv(self) -> list[str]:
        return [_need(DOVECOT, "Dovecot"), "-F", "-c", str(self.conf)]

    def ports(self) -> list[int]:
        return [self.port, self.imaps_port, self.lmtp_port, self.auth_port]

    def stop(self, graceful: bool = True) -> None:
        _end(self.proc, graceful)
        self.proc = None

    def restart(self, down: float = 0.0) -> None:
        self.stop()
        time.sleep(down)
        self.start()


_QUEUE_LAYOUT: list[tuple[str, int, int, int]] = []  # Postfix's queue folders: name, mode, owner, group


@dataclass
class Postfix(_Server):
    """A private Postfix: submission (STARTTLS + AUTH) on `port`, delivering into Dovecot by LMTP."""

    base: Path
    dovecot: Dovecot
    cert: tuple[Path, Path]
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None

    def __post_init__(self) -> None:
        self.conf = self.base / "etc"
        for sub in ("etc", "queue", "data"):
            (self.base / sub).mkdir(parents=True, exist_ok=True)
        postfix = pwd.getpwnam("postfix")
        os.chown(self.base / "data", postfix.pw_uid, postfix.pw_gid)
        users = "".join(f"{u}@example.org OK\n" for u in self.dovecot.users)
        (self.conf / "vmailbox").write_text(users)
        d = self.dovecot
        (self.conf / "main.cf").write_text(f"""\
compatibility_level = 3.6
queue_directory = {self.base}/queue
data_directory = {self.base}/data
mail_owner = postfix
setgid_group = postdrop
myhostname = mail.example.org
mydomain = example.org
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
maillog_file = {self.base}/postfix.log
maillog_file_prefixes = {self.base}
smtputf8_enable = no
biff = no
append_dot_mydomain = no
virtual_mailbox_domains = example.org
virtual_mailbox_maps = texthash:{self.conf}/vmailbox
virtual_transport = lmtp:inet:127.0.0.1:{d.lmtp_port}
smtpd_tls_cert_file = {self.cert[0]}
smtpd_tls_key_file = {self.cert[1]}
smtpd_tls_security_level = may
smtpd_sasl_type = dovecot
smtpd_sasl_path = inet:127.0.0.1:{d.auth_port}
smtpd_relay_restrictions = permit_sasl_authenticated, reject_unauth_destination
smtpd_recipient_restrictions = permit_sasl_authenticated, reject
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 2s
in_flow_delay = 0
service_throttle_time = 1s
# A delivery that connects while Dovecot restarts waits for a greeting that never comes: 300 s
# by default (lmtp_lhlo_timeout), which stalled a whole game for 4 minutes; a few seconds, then
# the queue's 1 s retry.
lmtp_connect_timeout = 5s
lmtp_lhlo_timeout = 5s
""")
        # qmgr is woken every second (300 s as shipped) to look at the incoming queue: a mail whose
        # delivery failed while Dovecot restarted can be left there ("skipped, still being
        # delivered"), and waited for the next wake-up, which stalled a whole game for minutes.
        (self.conf / "master.cf").write_text(f"""\
127.0.0.1:{self.port} inet n - n - - smtpd
  -o syslog_name=postfix/submission
  -o smtpd_tls_security_level=encrypt
  -o smtpd_sasl_auth_enable=yes
  -o smtpd_tls_auth_only=yes
postlog   unix-dgram n  -       n       -       1       postlogd
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       1       1       qmgr
tlsmgr    unix  -       -       n       1000?   1       tlsmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
proxywrite unix -       -       n       -       1       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
""")
        # Postfix reads a table or main.cf changed within the last second or two again and again,
        # 0.3 s apart, until it has "cooled down" (it may be being edited): every postconf of
        # `postfix start`'s checks waited so, 2 s a start. Written whole just now, they are dated
        # back a minute.
        cooled = time.time() - 60
        for name in ("main.cf", "master.cf", "vmailbox"):
            os.utime(self.conf / name, (cooled, cooled))

    name = "postfix"

    def argv(self) -> list[str]:
        return [_need(POSTFIX, "Postfix"), "-c", str(self.conf), "start-fg"]

    def start(self) -> None:
        """`postfix start-fg`. Its first start in a process runs Postfix's own checks, which lay
        out the queue (`post-install create-missing`, `postsuper`: some 100 short commands, 0.25 s
        of CPU); the queue's folders are noted then, and a later instance's are made the same
        (owner, group, mode) with `quick-start`, Postfix's own mark that skips the checks once."""
        queue = self.base / "queue"
        for name, mode, uid, gid in _QUEUE_LAYOUT:
            made = queue / name
            made.mkdir(exist_ok=True)
            os.chown(made, uid, gid)
            made.chmod(mode)
        if _QUEUE_LAYOUT:
            (queue / "quick-start").touch()
        super().start()
        if not _QUEUE_LAYOUT:
            for made in sorted(queue.iterdir()):
                if made.is_dir() and not made.is_symlink():
                    st = made.stat()
                    _QUEUE_LAYOUT.append((made.name, stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid))

    def ports(self) -> list[int]:
        return [self.port]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            subprocess.run([POSTFIX or "postfix", "-c", str(self.conf), "stop"], stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=30)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None


@dataclass
class RealMail:
    dovecot: Dovecot
    postfix: Postfix
    ca: Path
    people: dict[str, str]  # user -> address

    def address(self, user: str) -> str:
        return self.people[user]

    def smtp_args(self, user: str) -> list[str]:
        """`pbem mail setup` options for this person: submission, STARTTLS, login."""
        return ["--smtp-server", "127.0.0.1", "--smtp-port", str(self.postfix.port), "--smtp-security", "starttls",
                "--smtp-user", user, "--from", self.address(user)]


def start_real_mail(root: Path, names: list[str], sep: str, *, no_create: bool = False, prefix: str = "") -> RealMail:
    """Both servers up, or RuntimeError with their logs. The caller stops them (stop_real_mail)."""
    # Dovecot's mail processes (uid mail) and Postfix's (uid postfix) must reach these folders,
    # which a test's own tmp_path (mode 0700 above it) does not allow.
    base = Path(tempfile.mkdtemp(prefix="pbem-mailsrv-", dir=root))
    dovecot = None
    try:
        base.chmod(0o755)
        ca, cert, key = private_ca(base)
        for p in (cert, key):
            os.chown(p, 0, 0)
        dovecot = Dovecot(base / "dovecot", {n: f"pw-{n}" for n in names}, sep, (cert, key), no_create, prefix)
        dovecot.start()
        postfix = Postfix(base / "postfix", dovecot, (cert, key))
        postfix.start()
    except BaseException:
        if dovecot is not None:
            dovecot.stop()
        shutil.rmtree(base, ignore_errors=True)
        raise
    return RealMail(dovecot, postfix, ca, {n: f"{n}@example.org" for n in names})


def stop_real_mail(servers: RealMail, keep_logs: Path | None = None) -> None:
    """Both servers down and their folder gone; their logs copied into `keep_logs` first."""
    try:
        servers.postfix.stop()
    finally:
        servers.dovecot.stop(graceful=False)
        for log in (servers.dovecot.base / "dovecot.log", servers.postfix.base / "postfix.log"):
            if keep_logs is not None and log.exists():
                shutil.copy(log, keep_logs / log.name)
        shutil.rmtree(servers.dovecot.base.parent, ignore_errors=True)


@pytest.fixture(params=[".", "/"], ids=["sep-dot", "sep-slash"])
def real_mail(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RealMail]:
    """Dovecot (either separator) + Postfix for the people of `@pytest.mark.people(...)`."""
    marker = request.node.get_closest_marker("people")
    names = list(marker.args) if marker else ["host", "ann", "bob", "cat"]
    servers = start_real_mail(Path(tempfile.gettempdir()), names, request.param)
    try:
        yield servers
    finally:
        stop_real_mail(servers, tmp_path)
