"""A refused mail's sender is told what was refused and why: a damaged, forged or unreadable
mail from a seat's own address gets one answer, in that seat's language, from the host's
outgoing mail; mail from any other address gets none; a restarted host reading the same mail
says nothing twice; a seat gets at most a few answers a day.

Real mail flow: the seats' mails go over SMTP (aiosmtpd) into the host's Maildir, the real
`pbem host run --once` process reads them and answers over the same SMTP server into the
seats' Maildirs."""

from __future__ import annotations

import mailbox
import smtplib
from collections.abc import Iterator
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from mailservers import _Deliver, _wait_listening
from process_tools import free_port
from processes import pbem
from table_games import PASS, make_table

from engine.rules import legal_moves
from pbem.host.settings import SmtpSetting
from pbem.mail.player_mail import block_mail
from pbem.mail.refusals import LIMIT
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import sign
from pbem.seat import player as P
from pbem.ui.words import t, using

SEATS = ["ann", "bob", "cat"]
HOST = "referee@example.org"
PEOPLE = {"referee": HOST, **{s: f"{s}@example.org" for s in SEATS}, "mallory": "mallory@example.net"}


@pytest.fixture
def smtp(tmp_path: Path) -> Iterator[tuple[int, dict[str, Path]]]:
    boxes = {name: tmp_path / "mail" / name for name in PEOPLE}
    for box in boxes.values():
        box.parent.mkdir(parents=True, exist_ok=True)
        mailbox.Maildir(box, create=True)
    port = free_port()
    controller = Controller(_Deliver({PEOPLE[n]: box for n, box in boxes.items()}), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        _wait_listening(port, None, None, "aiosmtpd")
        yield port, boxes
    finally:
        controller.stop()


def _send(port: int, msg: EmailMessage) -> None:
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as s:
        s.send_message(msg)


def _mails(box: Path) -> list[EmailMessage]:
    out = []
    for sub in ("new", "cur"):
        for p in sorted((box / sub).iterdir()):
            with p.open("rb") as f:
                msg = BytesParser(policy=policy.default).parse(f)
            assert isinstance(msg, EmailMessage)
            out.append(msg)
    return out


def _answers(box: Path, game: str, lang: str = "en") -> list[EmailMessage]:
    with using(lang):
        subject = t("[pbem {game}] your mail was refused", game=game)
    return [m for m in _mails(box) if m["Subject"] == subject]


def _damaged(armored: str, n: int) -> str:
    """The move's armour with one base64 character changed (line `n` of the body)."""
    lines = armored.splitlines()
    i = [k for k, line in enumerate(lines) if len(line) == 64][n]
    lines[i] = ("B" if lines[i][0] != "B" else "C") + lines[i][1:]
    return "\n".join(lines) + "\n"


def _text_mail(sender: str, subject: str, body: str, mid: str) -> EmailMessage:
    msg = EmailMessage(policy=policy.default)
    msg["From"], msg["To"], msg["Subject"], msg["Message-ID"] = sender, HOST, subject, mid
    msg.set_content(body)
    return msg


def test_a_seats_refused_mail_is_answered_once_in_its_language(tmp_path: Path, smtp) -> None:
    port, boxes = smtp
    table = make_table(tmp_path, SEATS)
    _, packet = table.latest()
    mover = packet.doc.to_move
    other = next(s for s in SEATS if s != mover)
    for who in SEATS:
        table.host.set_email(who, PEOPLE[who])
    table.host.set_settings(languages={mover: "zh-Hans"},
                            smtp=SmtpSetting(host="127.0.0.1", port=port, security="none", from_addr=HOST))
    game = table.host.game_id()
    sp = P.open_packet(packet, table.ids[mover], table.homes[mover])
    move = P.make_move(sp, str(legal_moves(sp.view)[0]))
    table.host.close()
    me = PEOPLE[mover]
    # damaged (one character changed in transit), forged (signed by another key), unreadable
    _send(port, _text_mail(me, "my move", _damaged(move.armored(), 0), "<damaged@client.example.org>"))
    forged = sign(move.doc, Identity.generate("mallory"))
    _send(port, block_mail(forged, sender=me, to=HOST))
    _send(port, _text_mail(me, "my move again", "-----BEGIN PBEM MOVE-----\nnot base64 at all\n-----END PBEM MOVE-----\n",
                           "<unreadable@client.example.org>"))
    # the same damaged move from a stranger's address: no answer
    _send(port, _text_mail(PEOPLE["mallory"], "a move", _damaged(move.armored(), 1), "<m@example.net>"))
    # the other seat mails more damaged moves than a day's answers
    for k in range(LIMIT + 2):
        _send(port, _text_mail(PEOPLE[other], f"try {k}", _damaged(move.armored(), k), f"<try{k}@client.example.org>"))

    def host_run() -> str:
        run = pbem("host", "run", "test", "--db", tmp_path / "game.db", "--maildir", boxes["referee"], "--send", "--once",
                   home=table.homes["referee"], env={"PBEM_PASSPHRASE": PASS.decode()})
        assert run.returncode == 0 and "Traceback" not in run.stderr, (run.returncode, run.stderr)
        return run.stdout + run.stderr

    said = host_run()
    answers = _answers(boxes[mover], game, "zh-Hans")
    # before: none (a refused mail's sender was told nothing)
    assert len(answers) == 3, said
    with using("zh-Hans"):
        head = t("The host of game {game} refused your mail {subject}:", game=game, subject=repr("my move"))
        nothing = t("Nothing in it was applied; the game goes on as before.")
    bodies = [str(a.get_body(("plain",)).get_content()) for a in answers]  # type: ignore[union-attr]
    assert any(b.startswith(head) for b in bodies) and all(nothing in b for b in bodies), bodies
    assert {str(a["In-Reply-To"]) for a in answers} >= {"<damaged@client.example.org>", "<unreadable@client.example.org>"}
    assert all(a["To"] == me and a["From"] == HOST and not list(a.iter_attachments()) for a in answers)
    assert _answers(boxes["mallory"], game) == [] and _mails(boxes["mallory"]) == []
    assert len(_answers(boxes[other], game)) == LIMIT, said  # then no more today
    assert said.count("not answering") == 2, said
    # a restarted host reads the same mail again: it says nothing twice
    said = host_run()
    assert len(_answers(boxes[mover], game, "zh-Hans")) == 3 and len(_answers(boxes[other], game)) == LIMIT, said
    assert "told " not in said, said


def test_a_trustless_games_blind_host_answers_once_too(tmp_path: Path) -> None:
    """The blind host keeps its own config: the note and the answer work there alike."""
    from folder_games import make_homes

    from pbem.auto.host_runner import MailHost
    from pbem.host import blind
    from pbem.mail.courier import Courier
    from pbem.mail.incoming import MailScanner
    from pbem.mail.message import write_eml
    from pbem.seat import keys

    homes = make_homes(tmp_path, ["referee", *SEATS])
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    db = tmp_path / "t.db"
    blind.create_game(db, "t", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS], [], host_mail=HOST)
    box, out = tmp_path / "box", tmp_path / "out"
    write_eml(_text_mail(PEOPLE["ann"], "join", "-----BEGIN PBEM JOIN-----\nnot base64\n-----END PBEM JOIN-----\n",
                         "<j@client.example.org>"), box)
    with blind.BlindHost(db) as h:
        for s in SEATS:
            h.set_email(s, PEOPLE[s])
    for _ in range(2):  # a restart reads the same mail again
        with blind.BlindHost(db) as h:
            h.identity = ids["referee"]
            MailHost(h, MailScanner([box]), Courier(to_dir=out), lambda line: None).step()  # type: ignore[arg-type]
        answers = [p for p in out.glob("*.eml") if b"your mail was refused" in p.read_bytes()]
        assert len(answers) == 1 and b"To: ann@example.org" in answers[0].read_bytes()
