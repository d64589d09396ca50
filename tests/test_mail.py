"""Mail transport against a real SMTP server (aiosmtpd) and real mailbox files."""

from __future__ import annotations

import mailbox
import textwrap
from collections.abc import Iterator
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Mailbox
from aiosmtpd.smtp import AuthResult, LoginPassword
from process_tools import free_port

from pbem.errors import BadPacket, PbemError, UsageError
from pbem.mail.message import (
    SmtpSettings,
    compose,
    extract_blocks,
    iter_messages,
    read_mail,
    send,
    write_eml,
)
from pbem.protocol.armor import armor

PAYLOAD = bytes(range(256)) * 2 + b"\x00tail"  # ~700 armoured chars, every byte value
OTHER = b"second packet " * 30


def make(body: str | None = None, attach: bool = True, payload: bytes = PAYLOAD, **kw: str) -> EmailMessage:
    text = armor("MOVE", payload)
    return compose(
        sender=kw.get("sender", "alice@example.org"),
        to=kw.get("to", "host@example.org"),
        subject=kw.get("subject", "[pbem g-1] move 3"),
        body_text=body if body is not None else f"My move.\n\n{text}",
        attachment_name="alice-000003.pbem",
        attachment=text.encode(),
    )


def plain(body: str, cte: str | None = None, subtype: str = "plain") -> EmailMessage:
    msg = EmailMessage(policy=policy.default)
    msg["From"] = "bob@example.org"
    msg["To"] = "host@example.org"
    msg["Subject"] = "Fwd: move"
    if cte:
        msg.set_content(body, subtype=subtype, cte=cte)
    else:
        msg.set_content(body, subtype=subtype)
    return msg


def roundtrip(msg: EmailMessage) -> EmailMessage:
    """What a reader sees: the message serialised to wire bytes and parsed again."""
    m = BytesParser(policy=policy.default).parsebytes(msg.as_bytes())
    assert isinstance(m, EmailMessage)
    return m


def quote(text: str, width: int = 60, prefix: str = "> ") -> str:
    # A mail client quoting a reply and re-wrapping the long quoted lines.
    out: list[str] = []
    for line in text.splitlines():
        out += textwrap.wrap(prefix + line, width, subsequent_indent=prefix, break_long_words=True) or [prefix]
    return "\n".join(out) + "\n"


# -- SMTP --------------------------------------------------------------------


class Auth:
    def __call__(self, server, session, envelope, mechanism, auth_data):  # type: ignore[no-untyped-def]
        ok = isinstance(auth_data, LoginPassword) and auth_data.login == b"alice" and auth_data.password == b"s3cret"
        return AuthResult(success=ok, handled=False)


@pytest.fixture
def smtp(tmp_path: Path) -> Iterator[tuple[SmtpSettings, Path]]:
    maildir = tmp_path / "maildir"
    port = free_port()
    controller = Controller(
        Mailbox(maildir),
        hostname="127.0.0.1",
        port=port,
        authenticator=Auth(),
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield SmtpSettings("127.0.0.1", port, "none", None, "alice@example.org"), maildir
    finally:
        controller.stop()


def test_send_and_read_back_from_maildir(smtp: tuple[SmtpSettings, Path]) -> None:
    settings, maildir = smtp
    send(make(), settings, None)
    send(make(payload=OTHER), settings, None)
    got = list(iter_messages(maildir))
    assert len(got) == 2
    blocks = sorted(b for _, m in got for b in extract_blocks(m))
    assert blocks == sorted([("MOVE", PAYLOAD), ("MOVE", OTHER)])
    labels = [label for label, _ in got]
    assert all(label.startswith(str(maildir)) for label in labels)


def test_send_with_login(smtp: tuple[SmtpSettings, Path]) -> None:
    settings, maildir = smtp
    with_user = SmtpSettings(settings.host, settings.port, "none", "alice", settings.from_addr)
    send(make(), with_user, "s3cret")
    with pytest.raises(PbemError):
        send(make(), with_user, "wrong")
    with pytest.raises(UsageError):
        send(make(), with_user, None)  # no password to log in with
    assert [extract_blocks(m) for _, m in iter_messages(maildir)] == [[("MOVE", PAYLOAD)]]


def test_refuses_cleartext_password_to_remote_host() -> None:
    settings = SmtpSettings("mail.example.org", 25, "none", "alice", "alice@example.org")
    with pytest.raises(UsageError):
        send(make(), settings, "s3cret")


def test_unreachable_server_is_a_clear_error() -> None:
    settings = SmtpSettings("127.0.0.1", free_port(), "none", None, "alice@example.org")
    with pytest.raises(PbemError) as e:
        send(make(), settings, None, timeout=5)
    assert "127.0.0.1" in str(e.value)


def test_tls_context_is_made_once_for_each_ca_and_a_replaced_ca_file_is_read_again(tmp_path: Path) -> None:
    """The system's CAs are loaded once a process, not for every mail a host sends; a CA file
    is read on each use, so a running host trusts the CA file that replaced it."""
    import shutil

    from realmail import private_ca

    from pbem.mail import tls

    assert tls.context() is tls.context(None)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    ca, other = private_ca(tmp_path / "a")[0], private_ca(tmp_path / "b")[0]
    first = tls.context(str(ca))
    assert tls.context(str(ca)) is first and first is not tls.context()
    shutil.copy(other, ca)
    second = tls.context(str(ca))
    assert second is not first
    system = {c["serialNumber"] for c in tls.context().get_ca_certs()}
    added = [{c["serialNumber"] for c in ctx.get_ca_certs()} - system for ctx in (first, second)]
    assert len(added[0]) == len(added[1]) == 1 and added[0] != added[1]  # the new CA, not the old
    ca.write_text("not a certificate\n")
    with pytest.raises(UsageError, match="holds no PEM certificate"):
        tls.context(str(ca))


def test_smtp_settings_dict_roundtrip() -> None:
    s = SmtpSettings("smtp.example.org", 587, "starttls", "alice", "alice@example.org")
    d = s.to_dict()
    assert "password" not in d
    assert SmtpSettings.from_dict(d) == s
    assert SmtpSettings.from_dict({"host": "h", "from_addr": "a@b", "security": "ssl"}).port == 465
    with pytest.raises(UsageError):
        SmtpSettings.from_dict({**d, "password": "x"})
    with pytest.raises(UsageError):
        SmtpSettings.from_dict({**d, "security": "tls-please"})
    with pytest.raises(UsageError):
        SmtpSettings.from_dict({"host": "h"})


# -- composing ---------------------------------------------------------------


def test_message_id_domain() -> None:
    assert make(sender="Alice <alice@mail.example.net>")["Message-ID"].endswith("@mail.example.net>")
    assert make(sender="alice")["Message-ID"].endswith("@pbem.invalid>")


def test_compose_shape() -> None:
    msg = compose(
        sender="Alice <alice@example.org>",
        to="host@example.org",
        subject="[pbem g-1] move 3",
        body_text="hi\n" + armor("MOVE", PAYLOAD),
        attachment_name="alice-000003.pbem",
        attachment=armor("MOVE", PAYLOAD).encode(),
        in_reply_to="<abc@example.org>",
    )
    m = roundtrip(msg)
    assert m["In-Reply-To"] == "<abc@example.org>"
    assert m["Message-ID"].endswith("@example.org>")
    body = m.get_body(preferencelist=("plain",))
    assert body is not None and "-----BEGIN PBEM MOVE-----" in body.get_content()
    (att,) = list(m.iter_attachments())
    assert att.get_content_type() == "application/x-pbem"
    assert att.get_filename() == "alice-000003.pbem"
    assert extract_blocks(m) == [("MOVE", PAYLOAD)]  # body and attachment dedupe


def test_mails_read_share_parsed_headers_and_read_as_the_standard_policy_reads_them() -> None:
    """read_mail parses each header (name, value) once for all mails (the email package parsed it
    at each look): the same header under another name stays that name's, and every mail reads as
    policy.default reads it."""
    mails = [compose(sender=a, to=b, subject=f"[pbem g-1] move {n}", body_text="hi\n" + armor("MOVE", PAYLOAD),
                     attachment_name=f"m-{n}.pbem", attachment=armor("MOVE", PAYLOAD).encode()).as_bytes()
             for n, (a, b) in enumerate([("ann@example.org", "host@example.org"), ("host@example.org", "ann@example.org"),
                                         ("ann@example.org", "ann@example.org")])]
    for data in mails + mails:
        ours, standard = read_mail(data), BytesParser(policy=policy.default).parsebytes(data)
        assert [(k, v, type(v).__name__) for k, v in ours.items()] == \
            [(k, v, type(v).__name__) for k, v in standard.items()]
        assert [h.name for _, h in ours.items()] == [k for k, _ in standard.items()]
        assert [(p.get_content_type(), p.get_filename()) for p in ours.walk()] == \
            [(p.get_content_type(), p.get_filename()) for p in standard.walk()]
        assert extract_blocks(ours) == extract_blocks(standard) == [("MOVE", PAYLOAD)]
    to_ann, from_ann = read_mail(mails[1])["To"], read_mail(mails[0])["From"]
    assert to_ann == from_ann == "ann@example.org" and (to_ann.name, from_ann.name) == ("To", "From")
    assert read_mail(mails[0])["From"] is from_ann  # parsed once


def test_long_lines_stay_under_998() -> None:
    msg = make(body="x" * 5000 + "\n" + armor("MOVE", PAYLOAD).replace("\n", ""))
    wire = msg.as_bytes()
    assert max(len(line) for line in wire.split(b"\n")) <= 998
    assert roundtrip(msg).get_body(preferencelist=("plain",)).get_content().startswith("x" * 5000)  # type: ignore[union-attr]


def test_compose_rejects_header_injection() -> None:
    with pytest.raises(UsageError):
        make(subject="hi\nBcc: everyone@example.org")
    with pytest.raises(UsageError):
        compose(sender="a@b", to="c@d", subject="s", body_text="", attachment_name="../x", attachment=b"")


# -- mangled bodies ----------------------------------------------------------


def test_quoted_and_rewrapped_body() -> None:
    body = "Here is my move again:\n\n" + quote("On Monday Alice wrote:\n" + armor("MOVE", PAYLOAD))
    assert max(len(line) for line in body.splitlines()) <= 60
    assert extract_blocks(roundtrip(plain(body))) == [("MOVE", PAYLOAD)]


def test_twice_quoted_body() -> None:
    body = quote(quote(armor("MOVE", PAYLOAD)), width=72)
    assert extract_blocks(roundtrip(plain(body))) == [("MOVE", PAYLOAD)]


def test_quoted_printable_body() -> None:
    body = "Moi =) voilà mon coup\n" + armor("MOVE", PAYLOAD).replace("\n", "\n\n", 3) + "x" * 200 + "\n"
    msg = plain(body, cte="quoted-printable")
    wire = msg.as_bytes()
    assert b"quoted-printable" in wire and b"=3D" in wire
    assert extract_blocks(roundtrip(msg)) == [("MOVE", PAYLOAD)]


def test_base64_body_with_crlf() -> None:
    body = armor("MOVE", PAYLOAD).replace("\n", "\r\n")
    assert extract_blocks(roundtrip(plain(body, cte="base64"))) == [("MOVE", PAYLOAD)]


def test_html_only_body() -> None:
    lines = armor("MOVE", PAYLOAD).splitlines()
    html_body = (
        "<html><head><style>p { color: red }</style></head><body><!--[if mso]><b>x</b><![endif]-->"
        "<p>Hi&nbsp;there, my <b>move</b>:</p><div>"
        + "<br>\n".join(line.replace("=", "&#61;").replace("+", "&#43;") for line in lines)
        + "</div></body></html>"
    )
    msg = plain(html_body, subtype="html", cte="quoted-printable")
    assert extract_blocks(roundtrip(msg)) == [("MOVE", PAYLOAD)]


def test_html_blockquote_with_nbsp() -> None:
    lines = armor("MOVE", PAYLOAD).splitlines()
    html_body = "<blockquote>" + "".join(f"<div>&nbsp;{line}</div>" for line in lines) + "</blockquote>"
    assert extract_blocks(roundtrip(plain(html_body, subtype="html"))) == [("MOVE", PAYLOAD)]


def test_forwarded_as_attachment() -> None:
    outer = plain("see attached")
    outer.add_attachment(make())
    assert extract_blocks(roundtrip(outer)) == [("MOVE", PAYLOAD)]


def test_two_different_blocks_keep_order() -> None:
    body = "mine:\n" + armor("MOVE", OTHER) + "\nyours:\n" + quote(armor("STATE", PAYLOAD))
    assert extract_blocks(roundtrip(make(body=body))) == [("MOVE", PAYLOAD), ("MOVE", OTHER), ("STATE", PAYLOAD)]


def test_not_ours() -> None:
    msg = plain("Lunch tomorrow?\n-----BEGIN PGP SIGNATURE-----\nabc\n-----END PGP SIGNATURE-----\n")
    msg.add_attachment(b"\x89PNG\r\n", maintype="image", subtype="png", filename="cat.png")
    assert extract_blocks(roundtrip(msg)) == []


def test_truncated_block() -> None:
    cut = armor("MOVE", PAYLOAD)[:300]
    with pytest.raises(BadPacket):
        extract_blocks(roundtrip(plain("oops\n" + cut)))
    # An intact attachment wins over a body the client cut short.
    assert extract_blocks(roundtrip(make(body="> " + cut))) == [("MOVE", PAYLOAD)]


# -- mail stores -------------------------------------------------------------


def test_mbox_with_three_messages(tmp_path: Path) -> None:
    path = tmp_path / "inbox.mbox"
    box = mailbox.mbox(path)
    box.add(make())
    box.add(plain("From here on, no packets.\nJust chat.\n"))
    box.add(plain(quote(armor("MOVE", OTHER))))
    box.close()
    assert path.read_bytes().startswith(b"From ")
    got = [(label, extract_blocks(m)) for label, m in iter_messages(path)]
    assert [blocks for _, blocks in got] == [[("MOVE", PAYLOAD)], [], [("MOVE", OTHER)]]
    assert all(label.startswith(str(path)) for label, _ in got)


def test_single_eml_and_eml_directory(tmp_path: Path) -> None:
    a = write_eml(make(), tmp_path)
    b = write_eml(make(payload=OTHER), tmp_path)
    assert a.suffix == ".eml" and a != b
    assert b"\r\n" in a.read_bytes()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    ((label, msg),) = list(iter_messages(a))
    assert label == str(a) and extract_blocks(msg) == [("MOVE", PAYLOAD)]
    (tmp_path / "notes.txt").write_text("not mail")
    found = [b for _, m in iter_messages(tmp_path) for b in extract_blocks(m)]
    assert sorted(set(found)) == sorted([("MOVE", PAYLOAD), ("MOVE", OTHER)])


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        list(iter_messages(tmp_path / "nope"))
