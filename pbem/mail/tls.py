"""TLS to the mail servers (IMAP and SMTP): one way to make the context, one way to say why a
certificate was refused.

The context trusts the system's CAs, or, when the mail profile (or --ca-file) names one, that
CA file as well: clubs and schools often run their own CA. A certificate that does not verify
is a `CertificateFailure` naming OpenSSL's reason and the server, never "check the host and
port".
"""

from __future__ import annotations

import functools
import os
import ssl
import stat
from pathlib import Path

from pbem.errors import CertificateFailure, UsageError
from pbem.ui.words import t

MAX_CA_FILE = 1024 * 1024  # bytes; a bundle of every public CA is ~220 KiB


def read_ca_file(path: str | Path) -> str:
    """The PEM text of a CA file: a regular file of bounded size holding at least one certificate."""
    p = Path(path).expanduser()
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise UsageError(t("cannot read the CA file {path}: {error}", path=str(p), error=exc.strerror or exc)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UsageError(t("the CA file {path} is not a regular file", path=str(p)))
        data = os.read(fd, MAX_CA_FILE + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_CA_FILE:
        raise UsageError(t("the CA file {path} is over {limit} bytes", path=str(p), limit=f"{MAX_CA_FILE:,}"))
    text = data.decode("ascii", "replace")
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise UsageError(t("the CA file {path} holds no PEM certificate", path=str(p)),
                         hint=t("give the CA's certificate in PEM form (-----BEGIN CERTIFICATE-----)"))
    return text


def context(ca_file: str | None = None) -> ssl.SSLContext:
    """The system's CAs, plus `ca_file`'s when given.

    Made once a process for each CA file's content and each place the system's CAs are said to
    be (SSL_CERT_FILE, SSL_CERT_DIR): loading the system's CAs takes tens of milliseconds of
    CPU, which a host that mails every packet paid for every mail. The CA file itself is read
    each time, so a running host trusts a CA file that was replaced."""
    cadata = read_ca_file(ca_file) if ca_file else None
    try:
        return _context(cadata, ssl.get_default_verify_paths())
    except ssl.SSLError as exc:
        raise UsageError(t("the CA file {path} cannot be used: {error}", path=ca_file, error=exc.reason or exc)) from None


@functools.lru_cache(maxsize=4)
def _context(cadata: str | None, system: ssl.DefaultVerifyPaths) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    if cadata is not None:
        ctx.load_verify_locations(cadata=cadata)
    return ctx


def certificate_failure(exc: BaseException, where: str, ca_file: str | None) -> CertificateFailure | None:
    """The words for a refused certificate, or None when `exc` is not one."""
    if not isinstance(exc, ssl.SSLCertVerificationError):
        return None
    reason = exc.verify_message or exc.reason or str(exc)
    hint = (t("the CA file {path} does not vouch for it either", path=ca_file) if ca_file else
            t("if the server's CA is your club's own, name it: {command}", command="pbem mail setup --ca-file CA.pem"))
    return CertificateFailure(t("certificate verify failed: {reason} for {where}", reason=reason, where=where), hint=hint)
