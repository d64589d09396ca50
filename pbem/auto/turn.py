"""A seat's turn, whatever carries its game (`pbem turn`, `pbem mail-move`; docs/playing.md).

One workflow for every transport: read what has come (a shared folder's packets and notices; new
mail, over IMAP or from a Maildir, into the key home; or one packet file), join when the seat has
not yet, say whether the table waits for this seat's move, someone else's or the host's, and send
the move: into the folder's inbox, mailed to the host, or written to a file to send by hand.
`open_turn` reads and joins and returns a `Turn`; the command shows it, asks for a move when it is
the seat's and none was given, and hands the move to `Turn.play`, which returns what to say.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pbem.errors import PbemError, StaleMove, UsageError
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Notice, Signed, Talk
from pbem.protocol.table_docs import CHOICES
from pbem.seat import answers, player
from pbem.ui import words
from pbem.ui.words import t

if TYPE_CHECKING:
    from pbem.mail.memory import MailSource
    from pbem.protocol.talk import Line
    from pbem.seat.talk import AtTable
    from pbem.seat.trustless_client import TrustlessClient
    from pbem.watch import Watch

Transport = Literal["folder", "mail", "file"]
Send = Callable[[Signed[Any]], str]  # mails one block to the game's host; says where it went
SendTalk = Callable[[Signed[Talk], Path | None], str]  # sends a line to the host (or writes it to a file); says where


class MailLink(Protocol):
    """A seat's mail, as its options and mail profile set it up."""

    def new_mail(self) -> MailSource | None:
        """Where new mail is read first (None: no IMAP folder or Maildir is set up)."""

    def sender(self, game: str) -> Send:
        """Mails a block to `game`'s host. The host's address and the courier are settled when
        this is called (a missing address is refused before any move is made)."""

    def watch(self) -> Watch | None:
        """Waiting for new mail where `new_mail` reads it (None: nowhere is set up)."""


@dataclass
class Played:
    """What `Turn.play` did, in words; `refused` is raised after they are said (a different
    move for a packet answered already: the first one went again)."""

    lines: list[str]
    refused: PbemError | None = None


@dataclass
class Turn:
    """A seat at its table now, over one transport."""

    game: str
    seat: str
    transport: Transport
    play_hint: str  # the command that plays a move, e.g. pbem turn DIR --as ann "MOVE"
    said: list[str] = field(default_factory=list)  # what reading and joining did
    refused: list[str] = field(default_factory=list)  # why blocks of the new mail were refused
    followed: list[str] = field(default_factory=list)  # a trustless table's news since the seat last looked
    sp: player.SeatPacket | None = None  # a classic game's latest packet (None: not started)
    notices: list[Notice] = field(default_factory=list)
    client: TrustlessClient[Any] | None = None  # a trustless game's seat
    home: Path = Path(".")
    submit: Callable[[player.SeatPacket, str], Played] | None = None
    send_talk: SendTalk | None = None
    talk_files: list[Path] = field(default_factory=list)  # where relayed lines are besides the key home (a folder's talk/)

    @property
    def started(self) -> bool:
        return self.client is not None or self.sp is not None

    @property
    def over(self) -> bool:
        return self.sp is not None and self.sp.doc.phase == "game-over"  # a trustless table says its own state

    def ended(self) -> bool:
        """Whether the game is over (a classic packet says so; a trustless table waits for nothing more)."""
        if self.client is not None:
            return self.client.ts.table.waiting().step == "over"
        return self.over

    def mine(self) -> bool:
        """Whether the table waits for this seat's move."""
        if self.client is not None:
            return self.client.my_turn()
        sp = self.sp
        return sp is not None and not sp.old and sp.doc.phase != "game-over" and sp.doc.to_move == self.seat

    def answer(self) -> answers.Answer | None:
        """A classic seat's move kept for the latest packet."""
        return answers.kept(self.sp, self.home) if self.sp is not None else None

    def answered(self) -> bool:
        """Whether this seat sent what the table waits for from it: the host's turn now."""
        if self.client is not None:
            return self.client.answered()
        return self.mine() and self.answer() is not None

    def asks(self) -> bool:
        """Whether a move is wanted now (its turn, not answered yet)."""
        return self.mine() and not self.answered()

    def check(self, move: str) -> None:
        """MoveError unless `move` is legal on this seat's view."""
        from pbem.ui.card_names import check_typed  # cards named as `pbem show` names them, too

        if self.client is not None:
            check_typed(self.client.ts.view(), move)
        elif self.sp is not None:
            check_typed(self.sp.view, move)

    def json(self) -> dict[str, Any]:
        """`pbem show --json`'s object (trustless: its summary, `your_turn`) and the fields docs/playing.md lists."""
        import msgspec

        notices = [msgspec.to_builtins(n) for n in self.notices]
        made = self.answer() if self.mine() else None  # read once for both fields (a trustless table: None)
        answered = self.client.answered() if self.client is not None else made is not None
        extra = {"transport": self.transport, "answered": answered, "notices": notices,
                 "answered_seq": made.signed.doc.seq if made is not None else None}
        if self.client is not None:
            from pbem.seat.trustless_said import summary

            return {**summary(self.client.ts), "your_turn": self.mine(), "news": self.followed,
                    "talk": [ln.json() for ln in self.talk()], **extra}
        if self.sp is None:
            return {"game": self.game, "me": self.seat, "phase": "joining", "talk": [], **extra}
        return {**self.sp.summary(), "talk": [ln.json() for ln in self.talk()], **extra}

    def waiting(self) -> str | None:
        """The line after the table when no move was given: whose turn, or that the host has
        this seat's move, or the command that plays one."""
        if not self.started:
            return t("the game has not started: waiting for every seat to join")
        if self.over:
            return None
        if self.client is not None:
            return t("your turn: {example}", example=self.play_hint) if self.asks() else None
        sp = self.sp
        assert sp is not None
        if not self.mine():
            return None if sp.old else t("waiting for {player}", player=sp.doc.to_move)
        made = self.answer()
        if made is not None:
            return made.waiting(sp)
        return t("your turn: {example}", example=self.play_hint)

    def _at_table(self) -> AtTable | None:
        """This seat at its newest packet, as table talk needs it (None: no packet yet)."""
        from pbem.seat.talk import at_chain, at_packet

        c = self.client
        if c is not None:
            return at_chain(c.inv, c.seat, c.ts.head, c.identity) if c.ts.head[0] > 0 else None
        return at_packet(self.sp) if self.sp is not None else None

    def talk(self) -> list[Line]:
        """Every line of table talk this seat may read, oldest first (pbem.seat.talk)."""
        from pbem.seat.talk import heard

        me = self._at_table()
        return [] if me is None else heard(me, self.home, self.talk_files)

    def say(self, text: str, to: list[str], output: Path | None = None) -> str:
        """Say a line at the table (to `to`'s seats only, sealed, when given), checked, kept and
        sent as this transport sends moves; what was done, in words."""
        from datetime import UTC, datetime

        from pbem.seat.talk import mark_sent, say, unsent

        me = self._at_table()
        if me is None or self.send_talk is None:
            raise StaleMove(t("the game has not started: there is no packet to talk at yet"))
        if output is not None and os.path.lexists(output):  # before the line is made: a refusal keeps nothing
            raise UsageError(t("{path} exists already: refusing to write over it", path=output),
                             hint=t("pass -o FILE with a new name"))
        block = say(me, self.home, text, to, datetime.now(UTC).isoformat(timespec="seconds"))
        said = []
        for before in unsent(me, self.home):  # a line kept but never sent (a send that failed): first, as it was
            if before.hash != block.hash:
                said.append(t("line {n} at packet {seq}, not sent before: {how}", n=before.doc.n, seq=before.doc.seq,
                              how=self.send_talk(before, None)))
                mark_sent(self.home, before)
        where = self.send_talk(block, output)
        mark_sent(self.home, block)
        return "\n".join([*said, self._said(block, where)])

    @staticmethod
    def _said(block: Signed[Talk], where: str) -> str:
        if block.doc.to:
            return t("whisper to {seats} at packet {seq}: {how}", seats=words.join(block.doc.to), seq=block.doc.seq,
                     how=where)
        return t("line to the table at packet {seq}: {how}", seq=block.doc.seq, how=where)

    def play(self, move: str) -> Played:
        """Send `move` (checked on this seat's view first): a move sent before for this packet
        goes again as it was; a different one is refused, after the first is sent again."""
        if self.client is not None:
            seq = self.client.ts.head[0]
            where, new = self.client.play(move)
            if self.transport == "mail":
                return Played([t("move for packet {seq}: {how}", seq=seq, how=where) if new else
                               t("move for packet {seq} sent again (the one made before): {how}", seq=seq, how=where)])
            return Played([t("move for packet {seq} submitted: {path}", seq=seq, path=where) if new else
                           t("move for packet {seq} submitted again: {path}", seq=seq, path=where)])
        if self.sp is None:
            raise StaleMove(t("the game has not started: waiting for every seat to join"))
        assert self.submit is not None
        return self.submit(self.sp, move)


def open_turn(target: str, me: Identity, home: Path, mail: MailLink, *, join: bool = False,
              by_mail: bool = False) -> Turn:
    """The seat of `me` at TARGET: a shared game folder, a packet file, or a game joined (or
    invited to) by mail, by its id or name. A mail game reads new mail first and joins by
    mail when it has only the invitation; a folder game joins through the folder. `by_mail`:
    a packet file's move is mailed to the host (`pbem mail-move FILE`), not written to a file,
    and a trustless table's news wait for a command that shows the table."""
    path = Path(target)
    if (path / "pbem-folder.json").exists():
        return _folder_turn(path, target, me, home, join)
    if path.is_dir():
        raise UsageError(t("{dir} is not a pbem game folder", dir=target),
                         hint=t("the host runs 'pbem folder init DIR GAME'"))
    if path.is_file():
        return _file_turn(path, me, home, mail if by_mail else None)
    if join:
        raise UsageError(t("--join is for a game folder: {dir} is none", dir=target),
                         hint=t("a mail game joins by itself the first time: pbem turn GAME"))
    return _mail_turn(target, me, home, mail, look=not by_mail)


# --- a shared folder ------------------------------------------------------------------------


def _folder_turn(dir: Path, target: str, me: Identity, home: Path, join: bool) -> Turn:
    from pbem.folder.play import FolderSeat, is_trustless

    hint = f'pbem turn {target} --as {me.name} "MOVE"'
    if is_trustless(dir):
        from pbem.folder.layout import GameFolder
        from pbem.folder.trustless import folder_seat

        return _trustless_turn(folder_seat(dir, me, home), "folder", hint, home, talk_files=GameFolder.open(dir).talk())
    seat = FolderSeat.open(dir, me, home)
    said = []
    if join or (not seat.joined() and not seat.started()):
        path, new = seat.join()
        if new:  # as `pbem join` does: the player can compare it with the host's own words
            said += [_joined_line(seat.invitation, seat.seat), t("join file: {path}", path=path)]
        else:
            said.append(t("join submitted again as {seat}: {path}", seat=seat.seat, path=path))
    sp = seat.latest()
    said += seat.skipped

    def submit(sp: player.SeatPacket, text: str) -> Played:
        path, made = seat.move(sp, text)
        if made.new:
            return Played([t("move for packet {seq} submitted: {path}", seq=sp.doc.seq, path=path)])
        return Played([made.before() + t("; submitted that move again: {path}", path=path)], _other(made, sp, text))

    def send_talk(block: Signed[Talk], _output: Path | None) -> str:
        return str(seat.folder.submit_move(seat.seat, block.doc.seq, block.armored().encode()))

    return Turn(seat.folder.game_id, seat.seat, "folder", hint, said, sp=sp, notices=seat.notices() if sp else [],
                home=home, submit=submit, send_talk=send_talk, talk_files=seat.talk_files())


def _joined_line(inv: Signed[Any], seat: str) -> str:
    from pbem.protocol.crypto import PublicKey

    fingerprint = PublicKey.decode(inv.doc.host.key).fingerprint()
    return t("joined {game} as seat {seat}; host key fingerprint {fingerprint}", game=inv.game, seat=seat,
             fingerprint=fingerprint)


def _other(made: answers.Answer, sp: player.SeatPacket, text: str) -> PbemError | None:
    try:
        made.refuse_other(sp, text)
    except PbemError as exc:
        return exc
    return None


# --- a trustless table (a folder's, or one followed by mail) --------------------------------------


def _trustless_turn(c: TrustlessClient[Any], transport: Transport, hint: str, home: Path, said: list[str] | None = None,
                    *, look: bool = True, talk_files: list[Path] | None = None) -> Turn:
    """Join, follow and check the chain, and send whatever the table waits for from this seat
    other than its move (its shuffle, tokens, goal tokens, round key)."""
    said = list(said or [])
    if not c.joined():
        where, _ = c.join()
        said.append(t("joined {game} as seat {seat} with your key shares: {path}", game=c.inv.game, seat=c.seat,
                      path=where))
    # what is new since this seat last looked, not the whole chain again (`look`: the table is
    # shown; mail-move shows none, so the news waits for the next look)
    followed = c.catch_up() if look else []
    if not look:
        c.sync()
    w = c.ts.table.waiting()
    extra = c.ts.out_of_turn()  # a complaint about its dealt shares, or a seat declared gone coming back
    if extra or (c.seat in w.seats and w.step not in ("join", *CHOICES)):
        out = c.answer()
        if out is not None:  # the packet that opened the step, which the block answers (its file says it too)
            step, seq = words.step_name(extra or w.step), c.step_key()
            said.append(t("sent your {step} block for packet {seq}: {path}", step=step, seq=seq, path=out[0]) if out[1]
                        else t("sent your {step} block for packet {seq} again: {path}", step=step, seq=seq, path=out[0]))
    def send_talk(block: Signed[Talk], _output: Path | None) -> str:
        return str(c.send(block.doc.seq, block.armored().encode()))

    return Turn(c.inv.game, c.seat, transport, hint, said, followed=followed, client=c, notices=c.news(), home=home,
                send_talk=send_talk, talk_files=talk_files or [])


# --- mail ---------------------------------------------------------------------------------------


def read_new_mail(home: Path, source: MailSource) -> tuple[str, list[str]]:
    """A seat's new mail, routed into the key home: one line that sums it up, and why each
    refused block was refused."""
    from pbem.mail.incoming import Router, route_new

    router = Router(home)
    kinds: list[str] = []
    refused: list[str] = []
    try:
        for kind, line, _code in route_new(source, router):
            kinds.append(kind)
            if kind == "refused":
                refused.append(line)
    finally:
        router.close()
        source.close()
    saved = sum(k in ("saved", "invitation") for k in kinds)
    if refused:
        return t("read {n} new block of mail: {saved} new, {refused} refused", n=len(kinds), saved=saved,
                 refused=len(refused)), refused
    return t("read {n} new block of mail: {saved} new", n=len(kinds), saved=saved), refused


def _mail_turn(target: str, me: Identity, home: Path, mail: MailLink, *, look: bool = True) -> Turn:
    from pbem.mail.trustless import mail_seat
    from pbem.seat.home import game_named, invitation_path, latest_saved_packet, received_invitation_path

    source = mail.new_mail()
    said: list[str] = []
    refused: list[str] = []
    if source is not None:
        line, refused = read_new_mail(home, source)
        said.append(line)
    game = game_named(home, target)
    hint = f'pbem turn {target} --as {me.name} "MOVE"'
    try:
        anchored = invitation_path(home, game).is_file()
        invited = received_invitation_path(home, game).is_file()
    except PbemError:  # not a game id at all
        anchored = invited = False
    if not anchored and not invited:
        raise UsageError(t("no game {game} in {home}: no folder, no packet file, no mail game", game=repr(target),
                           home=home),
                         hint=_no_mail_hint(source is not None))
    inv = _invitation(home, game, anchored)
    if inv.doc.trustless:
        c = mail_seat(home, me, game, lambda block: mail.sender(game)(block), inv)
        turn = _trustless_turn(c, "mail", hint, home, said, look=look)
    else:
        if not anchored and inv.doc.seat_of_key(me.public.encode()) is None:
            # a seat a packet 'pbem inbox' kept hands to this key: taken now that its player asks for the game
            taken = player.take_handed_seat(home, game, me)
            if taken is not None:
                anchored = True
                said.append(t("took seat {seat} of {game}, handed to your key at packet {seq}", seat=taken[0], game=game,
                              seq=taken[1]))
        if not anchored:
            said += mail_join(inv, me, home, mail)
        latest = latest_saved_packet(home, game)  # its seat may be one handed to this key since the invitation
        turn = Turn(game, player.seat_of(inv, me), "mail", hint, said, home=home) if latest is None else \
            _classic_mail(latest, me, home, mail, hint, said)
    turn.refused = refused
    return turn


def _no_mail_hint(reads_mail: bool) -> str:
    if reads_mail:
        return t("none of your mail is about it yet: check the game's name ('pbem games' lists yours)")
    return t("pass a game folder or a packet file; for a mail game, set up your mail once with "
             "'pbem mail setup --imap URL' (or pass --maildir DIR)")


def _invitation(home: Path, game: str, anchored: bool) -> Signed[Any]:
    from pbem.protocol.documents import Invitation, read_one
    from pbem.seat.home import load_invitation, received_invitation_path

    if anchored:
        return load_invitation(home, game)
    return read_one(received_invitation_path(home, game), "invitation").expect(Invitation)


def mail_join(inv: Signed[Any], me: Identity, home: Path, mail: MailLink) -> list[str]:
    """Join a game by mail (`pbem mail-join`, or `pbem turn GAME` with only its invitation):
    the join is kept in the key home, and asking again mails the same join."""
    from pbem.seat.home import join_path

    seat = player.seat_of(inv, me)
    send = mail.sender(inv.game)  # the host's address and the courier first: a refusal keeps nothing
    signed, again = once_kept(join_path(home, inv.game, seat), lambda: player.join(inv, me, home))
    said = [t("you joined {game} before; mailing the same join again", game=inv.game)] if again else []
    return said + [t("join of {seat} for {game}: {how}", seat=seat, game=inv.game, how=send(signed))]


def once_kept(saved: Path, make: Callable[[], Signed[Any]]) -> tuple[Signed[Any], bool]:
    """The signed file kept at `saved`, made now if it is not there yet; and whether it was.
    Asking twice sends the same signed file again instead of a second, different one."""
    from pbem.atomic import write_atomic
    from pbem.protocol.documents import read_file

    if saved.exists():
        return read_file(saved)[0], True
    signed = make()
    write_atomic(saved, signed.armored().encode())
    return signed, False


def _classic_mail(packet_file: Path, me: Identity, home: Path, mail: MailLink, hint: str, said: list[str],
                  signed: Signed[Any] | None = None) -> Turn:
    from pbem.protocol.documents import read_one
    from pbem.seat.home import saved_notices

    sp = player.open_packet(signed or read_one(packet_file, "packet"), me, home)

    def submit(sp: player.SeatPacket, text: str) -> Played:
        send = mail.sender(sp.packet.game)  # the host's address and the courier first: a refusal keeps nothing
        made = answers.answer(sp, home, text)
        again = t("; mailing that move again (the host takes one move per packet)")
        lines = [] if made.new else [made.before() + again]
        how = send(made.signed)
        made.mark_sent()
        seq = made.signed.doc.seq  # the packet it was made for (at a renewal: the packet before)
        return Played(lines + [t("move for packet {seq}: {how}", seq=seq, how=how)], _other(made, sp, text))

    def send_talk(block: Signed[Talk], _output: Path | None) -> str:
        return mail.sender(block.game)(block)

    return Turn(sp.packet.game, sp.seat, "mail", hint, said, sp=sp, notices=saved_notices(home, sp.invitation.game),
                home=home, submit=submit, send_talk=send_talk)


# --- one packet file ------------------------------------------------------------------------------


def _file_turn(path: Path, me: Identity, home: Path, mail: MailLink | None) -> Turn:
    """A packet file: shown, and its move written to move-SEAT-SEQ.pbem beside the command
    (as `pbem move` writes it), or mailed to the host (`mail`)."""
    from pbem.protocol.documents import read_one

    signed = read_one(path, "packet")
    if signed.doc.waiting is not None:
        if mail is not None:
            raise UsageError(t("{packet} is a packet of trustless game {game}: mail-move takes the game's name",
                               packet=path, game=signed.game),
                             hint=t("for a mail game: {example}", example=f'pbem mail-move {signed.game} "MOVE"'))
        raise UsageError(t("{packet} is a packet of trustless game {game}: play it with its folder or its name",
                           packet=path, game=signed.game),
                         hint=t("file by file: {example}", example=f'pbem move {path} "MOVE"'))
    hint = f'pbem turn {path} --as {me.name} "MOVE"'
    if mail is not None:
        return _classic_mail(path, me, home, mail, hint, [], signed)
    sp = player.open_packet(signed, me, home)

    def submit(sp: player.SeatPacket, text: str) -> Played:
        target = Path(f"move-{sp.seat}-{sp.doc.seq:06d}.pbem")
        answers.write_move_file(sp, home, text, target, replace=False, packet=path)
        return Played([t("move file: {path} (send it to the host)", path=target)])

    def send_talk(block: Signed[Talk], output: Path | None) -> str:
        from pbem.atomic import write_atomic

        target = output or Path(f"talk-{block.doc.seat}-{block.doc.seq:06d}-{block.doc.n}.pbem")
        write_atomic(target, block.armored().encode())
        return t("talk file: {path} (send it to the host)", path=target)

    from pbem.seat.talk import beside

    return Turn(signed.game, sp.seat, "file", hint, sp=sp, home=home, submit=submit, send_talk=send_talk,
                talk_files=beside(path))
