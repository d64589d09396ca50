"""A bot on one seat, playing through the same files a person uses.

It holds only its own seat's key: it reads the packets (opening its sealed part, checking
the host's signature and the packet chain), joins if it has not, waits for its turn, and
writes signed, sealed moves into the folder's inbox or mails them to the host. Everything
it writes is also kept in the key home (pbem.folder.play.FolderSeat), so a restarted bot
re-submits the same move instead of choosing again. A mail bot restarted after its
invitation mail was settled takes its game and seat from the key home (the invitation it
joined, the packets it kept), as the same command started again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pbem.atomic import write_atomic
from pbem.auto import polling
from pbem.auto.polling import stamp_log
from pbem.auto.program_bot import ILLEGAL, Program, why_line
from pbem.errors import PbemError, UsageError, msg
from pbem.folder.play import FolderSeat
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Signed, read_blocks, read_file, read_text
from pbem.seat import answers, player
from pbem.seat.home import join_path, joined_games, latest_saved_packet, load_invitation
from pbem.ui import failures
from pbem.ui.words import labelled, t
from pbem.watch import Doorbell

if TYPE_CHECKING:  # the mail's modules load only for a seat played by mail (MailBot)
    from pbem.mail.courier import Courier
    from pbem.mail.incoming import Router
    from pbem.mail.memory import MailSource, Settlement

Log = Callable[[str], None]


def check_bot_kind(kind: str) -> None:
    """Refuse a bot kind the engine does not have (before any process or file is started)."""
    from engine.bots import KINDS

    if kind not in KINDS:
        raise UsageError(msg("unknown bot {kind}", kind=repr(kind)), hint=msg("use one of {kinds}", kinds=", ".join(KINDS)))


def make_bot(kind: str, seat: str, seed: int | str, think: float | None = None) -> Any:
    """The bot `kind` for `seat`; a search bot thinks `think` seconds a decision (None: its
    default) at most: the clock stops it on a slow machine, else the seeded count of simulated
    turns does (engine/bots/search.py)."""
    from engine import bots

    check_bot_kind(kind)
    return bots.make_bot(kind, seat, seed, bots.THINK if think is None else think, clock=time.monotonic)


class _Brain:
    """The bot plus what it has seen: it observes every public move once, in order."""

    def __init__(self, kind: str, seat: str, seed: int | str, think: float | None = None,
                 program: Program | None = None, log: Log | None = None) -> None:
        from engine.bots import THINK

        self.bot = make_bot(kind, seat, seed, think)
        self.kind = kind
        self.think = THINK if think is None else think
        self.program = program  # an outside bot (pbem/auto/program_bot.py); the built-in one stands in
        self.log = log
        self.seen = 0

    def observe(self, sp: player.SeatPacket) -> None:
        seq = sp.doc.seq
        if seq <= self.seen:
            return
        self.seen = seq
        watch = getattr(self.bot, "observe", None)
        if watch is None or sp.doc.result is not None or sp.doc.phase != "playing":
            return  # a round-over packet already shows the next deal
        for m in sp.doc.moves:
            try:
                watch(sp.view, m.text, m.seat)
            except Exception:  # learning is optional; a bot must still move
                pass

    def choose(self, sp: player.SeatPacket) -> str:
        if self.program is not None:
            doc = sp.summary()
            answer, why = self.program.ask(doc, self.think)
            if answer is not None and answer in doc["legal"]:
                return answer
            if self.log is not None:
                self.log(why_line(why or ILLEGAL, answer, sp.doc.seq, self.kind))
        return str(self.bot.choose(sp.view))


@dataclass
class FolderBot:
    dir: Path
    identity: Identity
    home: Path
    kind: str = "smart"
    seed: int | str = 0
    log: Log = field(default=stamp_log("bot"))
    client: FolderSeat | None = None
    brain: _Brain | None = None
    current: player.SeatPacket | None = None
    resent: set[int] = field(default_factory=set)
    waiting_said: bool = False
    said: set[str] = field(default_factory=set)  # skipped files said already: once each, not every poll
    think: float | None = None  # the search bot's seconds a decision
    program: Program | None = None  # an outside bot (--command)
    watch: Doorbell = field(init=False)  # says a packet may have come (pbem.watch), once the loop waits

    def __post_init__(self) -> None:
        self.watch = Doorbell([self.dir / "packets"], subfolders=True, safety=True)

    def wait(self, seconds: float) -> bool:
        """Until a packet may have come into the folder (the kernel says, where it can) or `seconds`
        passed. The watch is made at the first wait (a bot stepped by hand holds none), and that
        wait ends at once: a look after the watch exists misses nothing published meanwhile."""
        if self.client is None:  # no game folder yet
            time.sleep(seconds)
            return True
        return self.watch.wait(seconds)

    def _once(self, line: str) -> None:
        if line not in self.said:
            self.said.add(line)
            self.log(line)

    def _open(self) -> FolderSeat | None:
        if self.client is None:
            try:
                self.client = FolderSeat.open(self.dir, self.identity, self.home)
            except UsageError:
                if not self.waiting_said:
                    self.log(t("waiting for the game folder {dir}", dir=self.dir))
                    self.waiting_said = True
                return None
            self.brain = _Brain(self.kind, self.client.seat, self.seed, self.think, self.program, self.log)
            game, bot_kind = self.client.invitation.game, self.kind  # a bot's kind (smart...), no document's
            if self.program is not None:  # the built-in bot only stands in for the program
                self.log(t("playing seat {seat} of {game} with {command} (the {kind} bot when it does not "
                           "answer)", seat=self.client.seat, game=game, command=repr(self.program.command),
                           kind=bot_kind))
            else:
                self.log(t("playing seat {seat} of {game} as a {kind} bot", seat=self.client.seat, game=game,
                           kind=self.kind))
        return self.client

    def step(self) -> bool:
        """One look at the folder; True when the game is over."""
        c = self._open()
        if c is None:
            return False
        assert self.brain is not None
        if not c.joined() and not c.started():
            path, _ = c.join()
            self.log(t("joined: {file}", file=path.name))
        newest = c.latest()
        for line in c.skipped:
            self._once(line)
        if newest is None:
            return False
        if self.current is None or self.current.doc.seq != newest.doc.seq:
            if newest.doc.seq > self.brain.seen + 1:  # observe the packets in between, in order
                for seq, path in c.folder.packets(None):
                    if self.brain.seen < seq < newest.doc.seq:
                        try:
                            self.brain.observe(c.open_seq(seq, read_text(path).encode()))
                        except UsageError:
                            continue  # from before this key was handed the seat: not ours to read
                        except PbemError as exc:
                            self._once(t("skipped {file}: {error}", file=path.name, error=failures.message(exc)))
            self.current = newest
        sp = self.current
        self.brain.observe(sp)
        if sp.doc.phase == "game-over":
            gold = ", ".join(f"{p} {g}" for p, g in (sp.doc.standings.gold if sp.doc.standings else {}).items())
            self.log(t("game over: {gold}", gold=gold))
            self.watch.close()
            return True
        seq = sp.doc.seq
        if sp.doc.to_move != c.seat:
            return False
        if c.answered(sp):  # (at a renewal, the move made for the packet before)
            if seq not in self.resent:  # e.g. after a restart: the same file again, harmless
                self.resent.add(seq)
                c.move(sp, "")
            return False
        text = self.brain.choose(sp)
        path, _ = c.move(sp, text)
        self.resent.add(seq)
        self.log(t("packet {seq}: {move} -> {file}", seq=seq, move=text, file=path.name))
        return False


@dataclass
class MailBot:
    """A seat playing by mail: reads a mail source (files or IMAP), mails joins and moves. In a
    trustless game it keeps every packet in the key home and a TrustlessBot plays the seat
    from them, mailing each block the table waits for from it (pbem/auto/trustless_bot.py)."""

    source: MailSource
    identity: Identity
    home: Path
    to: str | None  # the host's address; None: the address its invitation came from
    courier: Courier
    sender: str
    kind: str = "smart"
    seed: int | str = 0
    game: str | None = None
    log: Log = field(default=stamp_log("bot"))
    router: Router = field(init=False)
    brain: _Brain | None = None
    seat: str | None = None
    resent: set[int] = field(default_factory=set)
    routed: set[str] = field(default_factory=set)
    current: tuple[Path, player.SeatPacket] | None = None
    trustless: Any = None  # a TrustlessBot once the invitation is a trustless game's
    resumed: bool = False  # the key home was looked at for a game this key already joined
    think: float | None = None  # the search bot's seconds a decision
    program: Program | None = None  # an outside bot (--command)

    def __post_init__(self) -> None:
        from pbem.mail.incoming import Router

        self.router = Router(Path(self.home))

    def _resume(self) -> None:
        """Play on a game this key joined before (its invitation mail is long settled): the one
        --game names, else the one joined game not over yet; none: wait for an invitation."""
        self.resumed = True
        found = []
        for game in joined_games(self.home):
            if self.game is not None and game != self.game:
                continue
            inv = load_invitation(self.home, game)
            try:
                player.seat_of(inv, self.identity)
            except UsageError:
                continue  # another key's game in the same home
            latest = latest_saved_packet(self.home, game)
            if latest is None or read_blocks(latest.read_text(encoding="utf-8"))[0].doc.phase != "game-over":
                found.append(inv)
        if len(found) > 1:
            raise UsageError(t("this key plays more than one game not over yet: {games}",
                               games=", ".join(i.game for i in found)), hint=t("name one with --game GAME"))
        if found:
            self.log(t("resuming {game}: joined before", game=found[0].game))
            self._invited(found[0])

    def wait(self, seconds: float) -> bool:
        return self.source.wait(seconds)

    def _mail(self, block, what: str) -> None:
        self.log(t("{what}: {where}", what=what, where=self._deliver(block)))

    def _deliver(self, block: Signed) -> str:
        if self.to is None:
            raise UsageError(t("no host address to mail to"), hint=t("pass --to HOST-ADDRESS"))
        from pbem.mail.player_mail import block_mail

        return self.courier.deliver(block_mail(block, sender=self.sender, to=self.to))

    def _invited(self, inv) -> None:
        try:
            seat = player.seat_of(inv, self.identity)
        except UsageError:
            return  # an invitation for someone else
        if self.game is not None and inv.game != self.game:
            return
        if self.seat is not None:
            return
        self.game, self.seat = inv.game, seat
        if self.to is None:
            from pbem.mail.profile import host_address, remember_host_address

            remember_host_address(self.home, inv.game, inv.doc.host.mail)  # signed by the host, never a header
            self.to = host_address(self.home, inv.game, None)
        self.brain = _Brain(self.kind, seat, self.seed, self.think, self.program, self.log)
        if inv.doc.trustless:  # the same seat as through a folder, its packets kept in the key home by read()
            from pbem.auto.trustless_bot import TrustlessBot
            from pbem.mail.trustless import mail_seat

            game = inv.game
            self.trustless = TrustlessBot(lambda: mail_seat(self.home, self.identity, game, self._deliver), self.log,
                                          self.kind, str(self.seed), think=self.think)
        join_file = join_path(self.home, inv.game, seat)
        if join_file.exists():
            if latest_saved_packet(self.home, inv.game) is None:
                self._mail(read_file(join_file)[0], t("join of {seat} mailed again", seat=seat))
            return
        signed = player.join(inv, self.identity, self.home)
        join_file.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(join_file, signed.armored().encode())
        self._mail(signed, t("joined {game} as {seat}", game=inv.game, seat=seat))

    def read(self) -> None:
        """Read new mail: join when invited, keep the game's packets in the key home.

        A message is settled (done, or rejected when a block is refused) once what it holds
        is kept; mail of other games or none is left where it is.
        """
        from pbem.mail.incoming import message_blocks, settle_outcome

        for label, mail in self.source.new_messages():
            blocks, errors = message_blocks(mail)
            for b in blocks:
                if b.kind == "invitation":
                    self._invited(b)
            if not blocks:
                self._settle(label, "rejected" if errors else None)
            elif self.game is None:
                continue  # a packet before our invitation: read it again once we joined
            elif not any(b.game == self.game for b in blocks):
                self.source.pass_over(label)  # another game's mail: another bot's business
            else:
                kinds = [self._keep(label, b) for b in blocks]
                self._settle(label, settle_outcome(["refused"] * bool(errors) + kinds))

    def _keep(self, label: str, b: Signed) -> str:
        if b.kind == "invitation":
            return "saved" if b.game == self.game else "ignored"
        if b.kind not in ("packet", "archive") or b.game != self.game:
            return "ignored"
        if b.hash in self.routed:  # every recipient's copy holds the same block
            return "have"
        kind, line = self.router.route(b)
        if kind == "refused":
            self.log(labelled(label, line))
        else:
            self.routed.add(b.hash)
            self.router.learn_sender(b, kind)
        return kind

    def _settle(self, label: str, outcome: Settlement | None) -> None:
        if outcome is None:
            self.source.leave(label)
        else:
            self.source.settle(label, outcome)

    def step(self) -> bool:
        if not self.resumed:
            self._resume()
        self.read()
        if self.game is None or self.seat is None:
            return False
        if self.trustless is not None:
            return bool(self.trustless.step())
        assert self.brain is not None
        latest = latest_saved_packet(self.home, self.game)
        if latest is None:
            return False
        if self.current is None or self.current[0] != latest:
            sp = player.open_packet(read_blocks(read_text(latest))[0], self.identity, self.home)
            self.current = (latest, sp)
        sp = self.current[1]
        self.brain.observe(sp)
        if sp.doc.phase == "game-over":
            self.log(t("game over"))
            return True
        seq = sp.doc.seq
        if sp.doc.to_move != self.seat or seq in self.resent:
            return False  # not our turn, or our move went out: the host's next packet is awaited
        before = answers.kept(sp, self.home)  # made before this run: sent again, once
        if before is not None:
            self._mail(before.signed, t("move for packet {seq} mailed again", seq=before.signed.doc.seq))
            self.resent.add(seq)  # after sending: a failed send is tried again next step
            return False
        text = self.brain.choose(sp)
        made = answers.keep(sp, self.home, text)
        self._mail(made.signed, t("packet {seq}: {move}", seq=seq, move=text))
        made.mark_sent()
        self.resent.add(seq)
        return False


def run(stepper: Any, *, poll: float = 1.0, once: bool = False, log: Log | None = None) -> None:
    """Play until the game is over (or once); a half-synced file or a flaky disk is retried."""
    polling.run(stepper, poll=poll, once=once, log=log or stamp_log("bot"), retry=(PbemError, OSError))
