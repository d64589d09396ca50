"""A player's commands that play: `turn` (every transport), `mail-move` (its mail alias) and
`mail-join`. The workflow is pbem.auto.turn's; here the options become a mail link, and the
turn is printed, asked for and said."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from pbem.cli._common import HintsOpt, JsonOpt, KeyOptions, argument, optional
from pbem.cli._grouped import grouped
from pbem.cli._mail_options import MailIn, Reply, Smtp, ToDirOpt
from pbem.cli.jsonout import json_text
from pbem.errors import UsageError, msg
from pbem.ui import failures, words
from pbem.ui.terminal import printable
from pbem.ui.words import t

if TYPE_CHECKING:
    from pbem.auto.turn import Send, Turn
    from pbem.mail.memory import MailSource
    from pbem.mail.sources import Credentials
    from pbem.watch import Watch

MaildirOpt = Annotated[list[Path], typer.Option("--maildir", help="A mail game: first read new mail from this "
                                                "Maildir, mbox or folder of .eml files (repeatable).")]


@dataclass
class CliMail:
    """A seat's mail as its options (else its mail profile) set it up (pbem.auto.turn.MailLink)."""

    where: Path
    me: str
    paths: list[Path]
    mail_in: MailIn
    reply: Reply
    smtp: Smtp
    _senders: dict[str, Send] = field(default_factory=dict)
    _login: Credentials | None = None

    def _reading(self) -> tuple[MailIn, Credentials | None]:
        """Where mail is read, and how to log in there (asked once for every read and the wait)."""
        mail_in = self.mail_in if self.paths else self.mail_in.or_profile(self.where)
        if mail_in.imap and self._login is None:
            from pbem.mail.imap import ImapUrl, credential_source

            self._login = credential_source(password_command=mail_in.password_command,
                                            oauth2_command=mail_in.oauth2_command, url=ImapUrl.parse(mail_in.imap))
        return mail_in, self._login

    def new_mail(self) -> MailSource | None:
        from pbem.mail.sources import mail_source

        mail_in, login = self._reading()
        if not (mail_in.imap or self.paths):
            return None
        return mail_source(self.paths, mail_in.imap, mail_in.password_command, mail_in.oauth2_command, True,
                           remember=self.where, ca_file=mail_in.ca_file, credential=login)

    def watch(self) -> Watch | None:
        from pbem.mail.sources import mail_watch

        mail_in, login = self._reading()
        if not (mail_in.imap or self.paths):
            return None
        return mail_watch(self.paths, mail_in.imap, login, ca_file=mail_in.ca_file)

    def sender(self, game: str) -> Send:
        if game not in self._senders:  # the courier (and its password) once per command
            from pbem.mail.player_mail import block_mail

            to = self.reply.host(self.where, game)
            courier, sender = self.reply.courier(self.smtp, self.where, self.me)
            self._senders[game] = lambda block: courier.deliver(block_mail(block, sender=sender, to=to))
        return self._senders[game]


def play_turn(target: str, move: str | None, keys: KeyOptions, maildir: list[Path], mail_in: MailIn, reply: Reply,
              smtp: Smtp, *, join: bool = False, as_json: bool = False, by_mail: bool = False, wait: bool = False,
              timeout: float | None = None, hints: bool = False) -> None:
    """Open the seat's turn at TARGET (`wait`: once it is the seat's, or the game is over), show
    it (or print it as JSON; `hints`: with where its cards go), ask for a move when it is the
    seat's and none was given (in a terminal), and send it."""
    unlocked = keys.unlocking()  # first: a passphrase's scrypt runs while what the turn needs loads
    from pbem.auto.turn import open_turn

    if not as_json:
        import pbem.seat.screen  # noqa: F401  # rich, loaded while the key is unlocked
    where = keys.where
    me = unlocked()
    link = CliMail(where, me.name, list(maildir), mail_in, reply, smtp)

    def say(line: str) -> None:  # with --json, stdout carries exactly one JSON document; the rest goes to stderr
        typer.echo(printable(line), err=as_json)

    def said(turn: Turn) -> None:
        for line in turn.said:
            say(line)
        for line in turn.refused:
            typer.echo(printable(t("error: {message}", message=line)), err=True)

    if wait:
        from pbem.auto.wait import wait_turn

        if move is not None:
            raise UsageError(msg("--wait shows your table when it is your turn: give your move after it"),
                             hint=msg("pbem turn TARGET --wait, then pbem turn TARGET MOVE"))
        lines: list[str] = []

        def told(turn: Turn | None, line: str) -> None:
            if turn is not None:
                said(turn)
            if not lines or lines[-1] != line:  # each change of what the wait is for, once
                lines.append(line)
                say(line)

        turn = wait_turn(target, me, where, link, timeout=timeout, told=told)
    else:
        turn = open_turn(target, me, where, link, join=join, by_mail=by_mail)
    said(turn)
    if as_json:
        typer.echo(json_text(turn.json()))
    elif not (by_mail and move is not None):  # mail-move MOVE says only what it sent
        show_turn(turn, hints)
    if move is None and not as_json and turn.asks() and sys.stdin is not None and sys.stdin.isatty():
        move = ask_move(turn)
    if move is None:
        waiting = None if as_json else turn.waiting()  # the JSON says it (answered, my_turn, to_move)
        if waiting:
            say(waiting)
        return
    played = turn.play(move)
    for line in played.lines:
        say(line)
    if played.refused is not None:
        raise played.refused


def show_turn(turn: Turn, hints: bool = False) -> None:
    """The seat's table on the terminal, as `pbem show` draws it (`hints`: and where its cards
    go), with the host's news and the table talk since the seat last looked."""
    from pbem.seat.screen import talk_lines
    from pbem.seat.talk import mark_heard, unheard
    from pbem.ui.terminal import console

    lines = turn.talk()
    fresh = unheard(turn.home, turn.game, turn.seat, lines)
    if turn.sp is not None:
        from pbem.seat.screen import show_packet

        show_packet(turn.sp, notices=turn.notices, answered=turn.answered(), hints=hints, talk=fresh)
    elif turn.client is not None:
        from pbem.seat.screen import trustless_screen

        console().print(trustless_screen(turn.client.ts, turn.followed, hints))
        if turn.notices:
            from datetime import datetime

            now = datetime.now(UTC)
            typer.echo(t("news") + ":")
            for n in turn.notices:
                typer.echo(f"  - {words.notice_text(n, now)}")
        for line in talk_lines(fresh):
            typer.echo(line)
    if fresh:
        mark_heard(turn.home, turn.game, turn.seat, lines)


def ask_move(turn: Turn) -> str | None:
    """The move, asked at the prompt until it is legal (empty: later, None)."""
    from engine.errors import MoveError

    while True:
        move = typer.prompt(t("your move (empty: later)"), default="", show_default=False).strip() or None
        if move is None:
            return None
        try:
            turn.check(move)
            return move
        except MoveError as exc:
            typer.echo(t("not legal: {why}", why=failures.message(exc)), err=True)


@grouped
def turn(
    target: Annotated[str, typer.Argument(help="A shared game folder, a packet file, or a mail game's name or id.")],
    move: Annotated[str | None, argument('Your move, e.g. "play cross at 1,0".')] = None,
    join_: Annotated[bool, typer.Option("--join", help="Write (again) your join file into the inbox.")] = False,
    maildir: MaildirOpt = [],
    mail_in: MailIn = MailIn(),
    reply: Reply = Reply(),
    smtp: Smtp = Smtp(),
    keys: KeyOptions = KeyOptions(),
    as_json: JsonOpt = False,
    wait: Annotated[bool, typer.Option("--wait", help="Wait until it is your turn (or the game is over), then show "
                                                      "your table.")] = False,
    timeout: Annotated[float | None, optional("--timeout", min=0.0, metavar="S",
                                              help="With --wait: give up after S seconds (exit 12).")] = None,
    hints: HintsOpt = False,
) -> None:
    """Your turn, however the game travels: read what came, show your table and, with MOVE (or
    at the prompt when it is your move), send it. Joins if needed.

    TARGET is a shared game folder (the move goes into its inbox); a packet file (the move is
    written to move-SEAT-SEQ.pbem, to send by hand); or a mail game's name or id: new mail is
    read first (--imap or --maildir, else your mail profile's IMAP folder) and the join or
    move is mailed to the host (SMTP from 'pbem mail setup' or --smtp-*; --to-dir writes .eml
    files). In a trustless game it also sends whatever else the table waits for from you
    (your shuffle, your tokens, your round key).
    """
    if timeout is not None and not wait:
        raise UsageError(msg("--timeout is for --wait"), hint=msg("pbem turn TARGET --wait --timeout S"))
    play_turn(target, move, keys, maildir, mail_in, reply, smtp, join=join_, as_json=as_json, wait=wait,
              timeout=timeout, hints=hints)


@grouped
def say(
    target: Annotated[str, typer.Argument(help="A shared game folder, a packet file, or a mail game's name or id.")],
    text: Annotated[str, typer.Argument(help='What you say, e.g. "cat broke my lamp".')],
    to: Annotated[list[str], typer.Option("--to", help="Whisper to this seat only, sealed to its key (repeatable); "
                                          "without it the whole table reads the line.")] = [],
    output: Annotated[Path | None, optional("-o", "--output", help="A packet file: write the talk file here "
                                            "(default talk-SEAT-SEQ-N.pbem).")] = None,
    to_dir: ToDirOpt = None,
    maildir: MaildirOpt = [],
    mail_in: MailIn = MailIn(),
    smtp: Smtp = Smtp(),
    keys: KeyOptions = KeyOptions(),
) -> None:
    """Say a line at the table, signed by your seat: to everyone, or whispered (--to SEAT), sealed
    so that only those seats (and you) can read it.

    TARGET is what 'pbem turn' takes: in a game folder the line goes into its inbox; in a mail
    game it is mailed to the host as 'pbem turn' mails a move (--to-dir: written as an .eml);
    at a packet file it is written to a talk file that the host applies with 'pbem apply GAME
    FILE'. The host relays it to every seat at once, without
    waiting for a move; each sees it under "table talk" in 'pbem turn' and 'pbem show'. At most
    500 characters a line and 5 lines at each packet.
    """
    unlocked = keys.unlocking()  # first: a passphrase's scrypt runs while what the turn needs loads
    from pbem.auto.turn import open_turn

    where = keys.where
    me = unlocked()
    link = CliMail(where, me.name, list(maildir), mail_in, Reply(to_dir=to_dir), smtp)
    turn = open_turn(target, me, where, link)
    for line in turn.said:
        typer.echo(printable(line), err=True)
    typer.echo(printable(turn.say(text, to, output)))


@grouped
def mail_move(
    packet: Annotated[str, typer.Argument(help="The packet you answer: a file, or a game's name or id (its latest "
                                               "packet).")],
    text: Annotated[str, typer.Argument(help='Your move, e.g. "play cross at 1,0".')],
    reply: Reply,
    smtp: Smtp,
    keys: KeyOptions,
    maildir: MaildirOpt = [],
    mail_in: MailIn = MailIn(),
) -> None:
    """Mail your signed move to the host (or write it as .eml with --to-dir): 'pbem turn' for
    a mail game, and for a packet file, mailed instead of written.

    With a mail profile ('pbem mail setup') and a game joined by mail, this is all it takes:
    pbem mail-move GAME "play cross at 1,0".
    """
    play_turn(packet, text, keys, maildir, mail_in, reply, smtp, by_mail=True)


@grouped
def mail_join(
    invitation: Annotated[Path, typer.Argument(help="The invitation (file or the mail holding it), or the game id "
                                                    "of one 'pbem inbox' saved.")],
    reply: Reply,
    smtp: Smtp,
    keys: KeyOptions,
) -> None:
    """Join a game by mail: your signed join, mailed to the host (or as .eml); or take a seat handed to your key."""
    from pbem.auto.turn import mail_join as join_by_mail
    from pbem.protocol.documents import read_one
    from pbem.seat import player
    from pbem.seat.home import game_named, received_invitation_path

    where = keys.where
    if not invitation.exists() and "/" not in str(invitation):
        invitation = received_invitation_path(where, game_named(where, str(invitation)))
    inv = read_one(invitation, "invitation")
    me = keys.identity()
    if inv.doc.seat_of_key(me.public.encode()) is None:  # perhaps a seat handed to this key: taken only when asked
        taken = player.take_handed_seat(where, inv.game, me)
        if taken is not None:
            seat, seq, now = taken
            if now:
                typer.echo(t("you took seat {seat} of {game}, handed to your key at packet {seq}: play it with pbem turn "
                             "{game}", seat=seat, game=inv.game, seq=seq))
            else:
                typer.echo(t("you hold seat {seat} of {game} already: play it with pbem turn {game}", seat=seat,
                             game=inv.game))
            return
    for line in join_by_mail(inv, me, where, CliMail(where, me.name, [], MailIn(), reply, smtp)):
        typer.echo(line)

