"""A malformed mail never blocks mail play: it is set aside with one line, the mail after it is
read, and no input makes the mail readers fail (exit 70). Real `pbem inbox` processes reading
real .eml files, and a fuzz of the readers' entry points."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from processes import pbem
from table_games import PASS, make_table

from pbem.mail.incoming import message_blocks, who
from pbem.mail.memory import message_keys
from pbem.mail.message import compose, read_mail, write_eml
from pbem.ui.words import render

# A multipart mail without a boundary around a byte that is no text: the email package reads
# it, then cannot write it back (what the inbox's memory hashed), UnicodeEncodeError.
NO_BOUNDARY = (b"From: mallory@example.net\r\nTo: ann@example.org\r\nSubject: hi\r\n"
               b"Message-ID: <x1@example.net>\r\nContent-Type: multipart/mixed\r\n\r\n\xff\r\n")


def _packet_mail(box: Path, name: str, armored: str) -> None:
    msg = compose(sender="referee@example.org", to="ann@example.org", subject="[pbem test] packet",
                  body_text="Your turn.\n\n" + armored, attachment_name="packet.pbem", attachment=armored.encode())
    write_eml(msg, box).rename(box / name)


def test_a_mail_without_a_boundary_no_longer_blocks_the_packets_behind_it(tmp_path: Path) -> None:
    table = make_table(tmp_path, ["ann", "bob", "cat"])
    _, packet = table.latest()
    table.host.close()
    box = tmp_path / "box"
    box.mkdir()
    (box / "a-broken.eml").write_bytes(NO_BOUNDARY)
    _packet_mail(box, "b-packet.eml", packet.armored())
    run = pbem("inbox", box, home=table.homes["ann"], env={"PBEM_PASSPHRASE": PASS.decode()})
    # before: exit 70 (UnicodeEncodeError in message_keys) on every run, the packet never kept
    assert run.returncode == 0, (run.returncode, run.stderr)
    assert "Traceback" not in run.stderr
    lines = run.stdout.splitlines()
    assert [line for line in lines if "a-broken.eml" in line] == [
        f"{box / 'a-broken.eml'}: not a pbem mail (from mallory@example.net, subject 'hi')"]
    assert any("b-packet.eml" in line and f"saved packet {packet.doc.seq}" in line for line in lines), run.stdout
    assert (table.homes["ann"] / "games" / packet.game / "packets" / f"packet-{packet.doc.seq:06d}.pbem").is_file()
    again = pbem("inbox", box, home=table.homes["ann"], env={"PBEM_PASSPHRASE": PASS.decode()})
    assert again.returncode == 0 and "skipped 2 messages read before" in again.stdout, (again.stdout, again.stderr)


_HEADERS = [
    b"Content-Type: multipart/mixed", b"Content-Type: multipart/mixed; boundary=XX",
    b'Content-Type: multipart/alternative; boundary="b"', b"Content-Type: multipart/mixed; boundary=",
    b"Content-Type: message/rfc822", b"Content-Type: text/plain; charset=gb2312", b"Content-Type: text/html; charset=\xff",
    b"Content-Type: text/plain; charset=idna", b'Content-Type: text/plain; charset="utf-7"',
    b"Content-Type: text/plain; format=flowed; delsp=yes", b'Content-Type: application/x-pbem; name="a.pbem"',
    b"Content-Transfer-Encoding: base64", b"Content-Transfer-Encoding: quoted-printable",
    b"Content-Transfer-Encoding: x-uue", b"Content-Disposition: attachment; filename*=x''%ff",
    b"Message-ID: <\xff@x>", b"Message-ID: ((((", b"From: a@b", b"From: =?utf-8?b?/w==?= <a@b>", b'From: "\\" <@>',
    b"Reply-To: \xff", b"Reply-To: <>", b"Subject: =?x?q?a?=", b"Date: \xff", b"To: undisclosed-recipients:;",
]
_PIECES = [
    b"--XX\r\n", b"--XX--\r\n", b"--b\r\n", b"\xff", b"=\r\n", b"=ZZ", b"-----BEGIN PBEM MOVE-----\r\n",
    b"-----END PBEM MOVE-----\r\n", b"AAAA\r\n", b"<br>", b"\r\n", b"Content-Type: text/plain\r\n", b"begin 644 x\r\n",
    b"\x00",
]


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_HEADERS), max_size=6),
       st.lists(st.one_of(st.sampled_from(_PIECES), st.binary(max_size=8)), max_size=12))
def test_fuzzed_mail_never_fails_a_reader(heads: list[bytes], pieces: list[bytes]) -> None:
    """Every entry point a mail reader calls on a message, for mails built of the shapes that
    broke readers before; each returns (a refusal at most), none raises."""
    msg = read_mail(b"\r\n".join(heads) + b"\r\n\r\n" + b"".join(pieces))
    assert message_keys(msg)
    blocks, errors = message_blocks(msg)
    assert not blocks and all(isinstance(render(e), str) and render(e) for e in errors)
    who(msg)


@pytest.mark.parametrize("piece", ["<pre>x", "<head>x", "<script>", "<!--", "<x", "İ<style>"])
def test_html_of_many_unclosed_sections_is_read_in_linear_time(piece: str) -> None:
    """An HTML body of thousands of openings with no end (a <head>, a comment, a tag): each
    lazy regex rescanned the rest of the mail from every opening (80,000: minutes)."""
    from pbem.mail.message import html_to_text

    def fastest(n: int) -> float:
        text = "<p>a</p>\n" + piece * n + "<br>\n"
        best = float("inf")
        for _ in range(3):
            t0 = time.process_time()
            html_to_text(text)
            best = min(best, time.process_time() - t0)
        return best

    t_small, t_big = fastest(5_000), fastest(80_000)
    assert t_big < 60 * max(t_small, 0.005), (t_small, t_big)  # linear ~16x; quadratic ~256x
    mail = (b"From: mallory@example.net\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
            + (piece * 80_000).encode())
    t0 = time.process_time()
    assert message_blocks(read_mail(mail)) == ([], [])
    assert time.process_time() - t0 < 5
