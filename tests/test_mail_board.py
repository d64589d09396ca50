"""The host's packet mails carry the public table as an HTML alternative: the maze drawn, the
moves, whose turn, each player's public cards; in the reader's language; for a mail client that
runs no script and fetches nothing. Checked on the bytes of the mails a real IMAP server
(pymap) holds after a real game: the armour stays in the text part, and nothing of the
reader's sealed part (their role, their hand) is said in the HTML."""

from __future__ import annotations

import imaplib
import re
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from html.parser import HTMLParser
from pathlib import Path

import pytest
from folder_games import SEATS
from mailservers import MailServers
from test_turn import _legal, dealt_mail_game

from engine.views import load_view
from pbem.host import referee as H
from pbem.mail.board import packet_html
from pbem.mail.incoming import message_blocks
from pbem.mail.texts import PacketWords
from pbem.protocol.documents import Packet, read_blocks
from pbem.seat import keys
from pbem.seat import player as P
from pbem.seat.home import latest_saved_packet
from pbem.ui import words

LANGS = {"ann": "en", "bob": "zh-Hans", "cat": "zh-Hant"}
HOSTILE = '<script>alert("x")</script><img src="http://evil.example/x.png"> & <b>bold</b>'
WHISPER = "the-secret-plan-is-map"
SHAPE = ["multipart/mixed", "multipart/alternative", "text/plain", "text/html", "application/x-pbem"]


class _Text(HTMLParser):
    """The words an HTML page shows (its text, entities decoded), and every tag and attribute."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> _Text:
    p = _Text()
    p.feed(html)
    p.close()
    return p


def _mails(s: MailServers, user: str) -> list[EmailMessage]:
    """Every message in `user`'s mailbox (read ones were moved to pbem/done), as the server holds its bytes."""
    conn = imaplib.IMAP4("127.0.0.1", s.imap.port)
    conn.login(user, f"pw-{user}")
    out = []
    try:
        for folder in ("INBOX", "pbem/done"):
            typ, _ = conn.select(f'"{folder}"', readonly=True)
            assert typ == "OK", folder
            typ, data = conn.uid("SEARCH", "ALL")
            for uid in data[0].split():
                typ, got = conn.uid("FETCH", uid, "(BODY.PEEK[])")
                raw = next(part[1] for part in got if isinstance(part, tuple))
                out.append(BytesParser(policy=policy.default).parsebytes(raw))
    finally:
        conn.logout()
    return out


def _check_no_remote_or_script(html: str, page: _Text) -> None:
    """No script, nothing fetched: no tag that runs or loads, no attribute that links, no CSS
    that fetches; an escaped `<script>` in a line is text, not a tag."""
    assert "<script" not in html.lower()
    for tag, attrs in page.tags:
        assert tag not in ("script", "img", "link", "iframe", "object", "embed", "form", "use", "style", "base",
                           "image", "foreignobject", "a"), tag
        for name, value in attrs:
            assert not name.startswith("on") and name not in ("src", "href", "xlink:href", "srcset", "id",
                                                               "http-equiv"), (tag, name)
            assert not any(bad in (value or "").lower() for bad in ("url(", "@import", "expression(", "javascript:"))


def test_packet_mails_show_the_public_table_and_nothing_sealed(mail_servers: MailServers, tmp_path: Path, here) -> None:
    s = mail_servers
    db, homes, host_pass = dealt_mail_game(here, s, tmp_path, {p: lang for p, lang in LANGS.items() if lang != "en"})
    game = next((homes["ann"] / "invitations").glob("*.pbem")).stem
    # table talk, written file by file and applied by the host, which mails it on: untrusted text
    # in every reader's mail, and a whisper sealed to bob, never in clear in a mail
    here("turn", "t", home=homes["cat"], ok=True)  # reads packet 1
    packet = latest_saved_packet(homes["cat"], game)
    for n, said in enumerate([[HOSTILE], [WHISPER, "--to", "bob"]]):
        out = tmp_path / f"talk-{n}.pbem"
        here("say", packet, *said, "-o", out, home=homes["cat"], ok=True)
        here("apply", "t", out, "--db", db, home=homes["host"], ok=True)
    for _ in range(4):  # four moves: last moves to show, and a turn for each seat
        mover = H.Host(db).status()["to_move"]
        here("turn", "t", home=homes[mover], ok=True)
        here("turn", "t", _legal(homes[mover], mover, game)[0], home=homes[mover], ok=True)
        host_pass()
        assert H.Host(db).status()["to_move"] != mover

    seen = talked = 0
    for seat in SEATS:
        lang = LANGS[seat]
        me = keys.load_identity(homes[seat], seat, None)
        for mail in _mails(s, seat):
            names = [a.get_filename() or "" for a in mail.iter_attachments()]
            if not any(n.startswith("packet-") for n in names):
                continue  # the invitation
            assert [part.get_content_type() for part in mail.walk()] == SHAPE, mail["Subject"]
            text = mail.get_body(("plain",)).get_content()
            html = mail.get_body(("html",)).get_content()
            armour = next(mail.iter_attachments()).get_content().decode()
            armoured = re.findall(r"-----BEGIN PBEM [A-Z]+-----.*?-----END PBEM [A-Z]+-----", armour, re.S)
            assert armoured and all(a in text for a in armoured)  # the armour where it always was (packet, talk)
            blocks, errors = message_blocks(mail)
            assert len(blocks) == len(armoured) and not errors  # the HTML adds no block and breaks none
            page = _parse(html)
            shown = "".join(page.text)
            _check_no_remote_or_script(html, page)
            assert WHISPER not in text and WHISPER not in html
            if HOSTILE in text:  # a mail with the talk line: its HTML shows it too, as text
                assert HOSTILE in shown and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html, shown
                talked += 1
            assert "<svg" in html and 'name="viewport"' in html

            packet = read_blocks(armour)[0].expect(Packet)
            doc = packet.doc
            sp = P.open_packet(packet, me, homes[seat], remember=False)
            with words.using(lang):
                assert f'lang="{lang}"' in html
                assert words.t("mail head", game=doc.game, round=doc.round, seq=doc.seq) in shown
                status = words.t("mail your turn") if doc.to_move == seat else words.t("mail now", player=doc.to_move)
                assert status in shown
                role = words.role_name(sp.view.roles.get(seat))
                hand = [words.card_name(c) for c in sp.view.hands[seat]]
                front = [words.card_name(c) for cards in sp.view.in_front.values() for c in cards]
            assert doc.phase == "playing" and role not in shown, (seat, role)
            public = text.split("-----BEGIN", 1)[0] + " ".join(front)  # the words before the armour, and the table
            for name in set(hand):  # a card of the hand is named only where a public line names it
                assert shown.count(name) <= public.count(name), (seat, name, shown)
            for card in sp.view.hands[seat]:
                assert card not in html  # no card id at all
            seen += 1
    assert seen >= 2 * len(SEATS) and talked >= 2, (seen, talked)


def test_the_hosts_own_copy_says_it_holds_no_seat(mail_servers: MailServers, tmp_path: Path, here) -> None:
    """The host's copy of a packet mail (its address given as host=...) is no seat's: in its
    language, both parts say the host holds no seat, none says "your role and your hand", and
    none tells it how to play."""
    from pbem.mail.texts import sealed_words
    from pbem.names import HOST

    s = mail_servers
    _, _, _ = dealt_mail_game(here, s, tmp_path, {"host": "zh-Hant"})
    copies = [m for m in _mails(s, "host")
              if any((a.get_filename() or "").startswith("packet-") for a in m.iter_attachments())]
    assert copies
    for mail in copies:
        text = mail.get_body(("plain",)).get_content().split("-----BEGIN", 1)[0]
        shown = "".join(_parse(mail.get_body(("html",)).get_content()).text)
        with words.using("zh-Hant"):
            host_copy, yours = sealed_words(HOST), sealed_words("ann")
            assert host_copy in text and host_copy in shown, (text, shown)
            for said in (yours, words.t("mail sealed"), words.t("mail to play"), "pbem turn", "pbem mail-move"):
                assert said not in text and said not in shown, said


def test_invitation_and_talk_mails_carry_an_html_part_too(mail_servers: MailServers, tmp_path: Path, here) -> None:
    """An invitation's mail and a mail of table talk alone have the same shape as a packet's
    (text and HTML alternatives, the block attached): the HTML says the text's words in the
    reader's language, escaped, with nothing that runs or loads; a whisper's text is in no part."""
    s = mail_servers
    db, homes, _ = dealt_mail_game(here, s, tmp_path, {p: lang for p, lang in LANGS.items() if lang != "en"})
    here("say", "t", HOSTILE, home=homes["ann"], ok=True)
    here("say", "t", WHISPER, "--to", "bob", home=homes["ann"], ok=True)
    relayed = here("host", "run", "t", "--db", db, "--once", "--no-idle", "--digest", "every", home=homes["host"], ok=True).stdout
    assert "mailed table talk to bob" in relayed, relayed
    game = next((homes["ann"] / "invitations").glob("*.pbem")).stem
    kinds = []
    talk: dict[str, str] = {}  # what each seat's mails of talk alone show
    sealed: dict[str, str] = {}
    for seat in SEATS:
        for mail in _mails(s, seat):
            names = [a.get_filename() or "" for a in mail.iter_attachments()]
            if names[0].startswith("packet-"):
                continue  # tests above
            kinds.append((seat, names[0].split("-")[0]))
            assert [part.get_content_type() for part in mail.walk()] == SHAPE, mail["Subject"]
            text = mail.get_body(("plain",)).get_content()
            html = mail.get_body(("html",)).get_content()
            page = _parse(html)
            shown = "".join(page.text)
            _check_no_remote_or_script(html, page)
            assert WHISPER not in text and WHISPER not in html
            assert f'lang="{LANGS.get(seat, "en")}"' in html and mail["Subject"] in shown
            with words.using(LANGS.get(seat, "en")):
                if names[0].startswith("invitation-"):
                    said = text.split("-----BEGIN", 1)[0]
                    fingerprint = next(line for line in said.splitlines() if "fingerprint" in line.lower()
                                       or "指纹" in line or "指紋" in line)
                    assert fingerprint.strip() in shown and f"pbem mail-join {game}" in shown
                    assert words.t("To join (with 'pbem mail setup' done once):") in shown
                else:
                    assert words.t("table talk") in shown
                    talk[seat] = talk.get(seat, "") + shown
                    sealed[seat] = words.t("(sealed: pbem turn {game} opens it)", game=game)
    assert set(kinds) == {(p, k) for p in SEATS for k in ("invitation", "talk")}, kinds
    assert all(HOSTILE in shown for shown in talk.values())  # text, not markup (the check above)
    assert [p for p in SEATS if sealed[p] in talk[p]] == ["bob"], talk  # the whisper's reader


def test_the_html_escapes_what_it_is_given() -> None:
    """A name or a line the host's words carry is text, never markup, whatever it holds."""
    bad = '<script>alert(1)</script><img src="http://x/y.png">&'
    w = PacketWords(head=bad, since=bad, moves=[bad], results=[[bad]], status=bad, news=[bad], sealed=bad,
                    commands=[bad], digest=bad)
    doc = _first_packet()
    html = packet_html(load_view(doc.public), doc.to_move, w, "ann")
    page = _parse(html)
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert "".join(page.text).count(bad) == 9
    _check_no_remote_or_script(html.replace("&lt;img src=&quot;http://x/y.png&quot;&gt;", ""), page)


def _first_packet() -> Packet:
    """Packet 1 of a 3-seat classic table, as a host signs it."""
    import tempfile

    from table_games import make_table

    with tempfile.TemporaryDirectory() as d:
        table = make_table(Path(d), ["ann", "bob", "cat"])
        doc = table.latest()[1].doc
        table.host.close()
    return doc


def test_a_wide_maze_still_fits_a_phone() -> None:
    """The maze is one <svg> that scales to the width it gets: width 100%, at most its own."""
    from pbem.ui.cards_svg import maze_svg

    svg = maze_svg([[0, 0, "c-start"], [-3, 4, "back"], [12, -5, "c-cross"]])
    m = re.match(r'<svg viewBox="-18 -18 (\d+) (\d+)" width="(\d+)" height="(\d+)" style="([^"]*)"', svg)
    assert m and m[1] == m[3] == str(16 * 50 + 18) and m[2] == m[4] == str(10 * 72 + 18)
    assert "width:100%" in m[5] and f"max-width:{m[1]}px" in m[5] and "height:auto" in m[5]


@pytest.mark.slow
def test_a_trustless_packet_mail_draws_the_blind_hosts_table(tmp_path: Path) -> None:
    """A trustless game's packet holds no public view: the blind host's own table (rebuilt from
    the chain) is drawn. Round 1 dealt and waiting for the first move: every seat's mail shows
    the maze and six cards in each hand, and names none of the reader's cards, nor its role."""
    from test_trustless_host import SEATS as TRUSTLESS_SEATS
    from test_trustless_host import Table

    from pbem.mail.host_mail import mails_for
    from pbem.mail.texts import sealed_words
    from pbem.names import HOST

    t = Table(tmp_path).joined().trusting(True)  # dealt, as test_trustless_host's dealt_once
    while (w := t.host.table()[0].waiting()).step != "move":
        for s in w.seats:
            t.send(t.seats[s].owed())
        t.sync()
    for s in [*TRUSTLESS_SEATS, HOST]:
        t.host.set_email(s, f"{s}@example.org")
    t.host.set_settings(languages={"bob": "zh-Hans"})
    seq = t.host.head()[0]
    mails = {o.name: o.message for o in mails_for(t.host, seq)}
    host_copy = mails.pop(HOST)  # no seat: no hand, no role, nothing to play
    assert sealed_words(HOST) in "".join(_parse(host_copy.get_body(("html",)).get_content()).text)
    assert "the host holds no seat" in host_copy.get_body(("plain",)).get_content()
    assert "pbem turn" not in host_copy.get_body(("plain",)).get_content()
    assert set(mails) == set(TRUSTLESS_SEATS)
    for seat, mail in mails.items():
        html = mail.get_body(("html",)).get_content()
        page = _parse(html)
        shown = "".join(page.text)
        _check_no_remote_or_script(html, page)
        assert html.count("<svg") == 1 + 4  # the maze, the start card and three goals face down
        role, hand = t.seats[seat].hand()
        assert len(hand) == 6 and role
        with words.using("zh-Hans" if seat == "bob" else "en"):
            assert words.t("hand") in shown and words.role_name(role) not in shown
            names = [words.card_name(c) for c in hand]
            first = t.host.table()[0].waiting().seats[0]
            assert (words.t("mail your turn") if seat == first else words.t("player")) in shown
        assert not [n for n in names if n in shown], (seat, names)
        assert shown.count("6") >= len(TRUSTLESS_SEATS)  # each hand's size
