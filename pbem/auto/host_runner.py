"""The automatic host: watch a shared folder or a mailbox, apply joins and moves, publish.

Each step:
1. publish (folder) or mail (mail) every packet not yet out, so a host killed between
   committing a move and publishing its packet catches up on restart;
2. read the new inbox files / messages, apply each join and move with `Host.accept` (one
   BEGIN IMMEDIATE transaction each, with duplicate detection by content hash, so two hosts
   on the same game apply every move exactly once);
3. move each processed inbox file to `inbox/done/`, or to `inbox/rejected/` when it is
   refused for good (stale, illegal, forged, not ours); an unexpected error (e.g. a locked
   database) leaves the file in place to retry, and never stops the loop;
4. publish again.

One log line per event. The loop ends when the game is over and everything is out, or
after one step with `once`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import MoveError
from pbem import errors as E
from pbem.atomic import content_hash, read_bounded, write_atomic
from pbem.auto import polling
from pbem.auto.polling import Log, stamp_log
from pbem.errors import BadPacket, CannotRead, PbemError, Text, UsageError, kind_word, listed, ranges
from pbem.folder.layout import GameFolder
from pbem.folder.play import FolderPublisher, init_folder
from pbem.host.interface import GameHost
from pbem.host.paths import mail_dir
from pbem.host.publish import publish_pending
from pbem.host.settings import TransportSetting
from pbem.protocol.documents import SEAT_SENDS_KINDS, Signed, read_blocks
from pbem.protocol.limits import MAX_FILE
from pbem.ui import failures, words
from pbem.ui.terminal import printable
from pbem.ui.words import kind_name, labelled, t
from pbem.watch import Doorbell

if TYPE_CHECKING:  # the mail's modules load only for a game served by mail (MailHost)
    from pbem.mail.courier import Courier
    from pbem.mail.memory import MailSource, Settlement
    from pbem.mail.publisher import MailPublisher

REFUSED = (PbemError, MoveError)


def game_over_line(host: GameHost) -> str:
    st = host.status()
    gold = words.listing(f"{p} {g}" for p, g in st["gold"].items())
    best = max(st["gold"].values(), default=0)
    winners = words.listing(p for p, g in st["gold"].items() if g == best)
    return t("game {game} is over after packet {seq}: gold {gold}; won by {winners}", game=st["game"], seq=st["seq"],
             gold=gold, winners=winners)


@dataclass
class FolderHost:
    host: GameHost
    dir: Path
    log: Log = field(default=stamp_log())
    folder: GameFolder = field(init=False)
    publisher: FolderPublisher = field(init=False)
    retrying: set[str] = field(default_factory=set)
    # inbox files settled but not moved (inbox/done or inbox/rejected is a link or a file, or the
    # system refused): content hash -> where it goes and why; moved again each pass, said once
    stuck: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    grace: float = 10.0  # seconds an unreadable inbox file may still be being written
    unpublished: bool = False  # a block was taken that made no packet (a line of talk): publish after the pass
    head: tuple[int, str] = (0, "")  # (latest packet, status) as the last publishing read them
    bell: Doorbell = field(init=False)  # rings when a file arrives in the inbox

    def __post_init__(self) -> None:
        self.folder, filled = init_folder(self.dir, self.host)
        self.publisher = FolderPublisher(self.folder)
        self.bell = Doorbell([self.folder.inbox_dir])
        gap = sorted(seq for seq, _ in filled if seq)
        if gap:
            self.log(t("published packets {ranges} (not yet in the folder)", ranges=ranges(gap)))

    def _publish(self) -> tuple[int, str]:
        """Publish what is owed; the game's (latest packet, status), as read with what was owed."""
        owed = self.host.outbox(self.publisher.channel)
        for _, where in publish_pending(self.host, self.publisher, owed=owed):
            self.log(t("published {where}", where=where))
        self.head = owed.head
        return owed.head

    def wait(self, seconds: float) -> bool:
        """Until a file may have arrived in the inbox or `seconds` passed: a seat's file is taken
        at once, and the clock (deadlines, reminders) is looked at once a poll period."""
        return self.bell.wait(seconds)

    def step(self) -> bool:
        """One pass; True when the game is over and everything is published."""
        current, _ = self._publish()
        groups: dict[str, list[Path]] = {}  # content hash -> its copies (the bytes are read again: many files, one at a time)
        for p in self.folder.inbox():
            try:  # bounded, a regular file only: a link, a FIFO or a huge file is set aside unread
                data = read_bounded(p, MAX_FILE)
            except CannotRead as exc:
                if not exc.missing:  # missing: another host took it
                    key = f"unread:{p.name}"
                    sub, line = self.stuck.get(key) or ("rejected", t("rejected {name}: {why}", name=p.name,
                                                                      why=failures.message(exc)))
                    self._aside([p], sub, line, key=key)
                continue
            groups.setdefault(content_hash(data), []).append(p)
        for h, paths in groups.items():
            if h in self.stuck:  # settled before; only its move is left
                self._aside(paths, *self.stuck[h], key=h, digest=h)
                continue
            try:
                data = read_bounded(paths[0], MAX_FILE)
            except CannotRead:
                continue  # taken by another host, or changed: the next pass sees what it is now
            if content_hash(data) == h:
                current = self._process(h, data, paths, current)
        ticked = self.host.tick()  # reminders, late notices, timeouts
        for out in ticked:
            self.log(words.render(out.message))
        if self.unpublished or ticked:  # a pass that published each packet as it made it asks no more
            self._publish()
            self.unpublished = False
        if self.head[1] == "over":  # as the last publishing read it: after the last change of this pass
            self.log(game_over_line(self.host))
            return True
        return False

    def _process(self, h: str, data: bytes, paths: list[Path], current: int) -> int:
        name = paths[0].name
        # the same file dropped more than once (a resend, a second host's copy) is one line
        named = t("{name} (+{n} identical copy)", name=name, n=len(paths) - 1) if len(paths) > 1 else name
        try:
            blocks = read_blocks(data.decode("utf-8", errors="replace"))
            if not blocks:
                raise BadPacket(t("holds no pbem block"))
        except REFUSED as exc:
            if self._young(paths[0]):
                return current  # maybe still being written (a plain copy on NFS): look again later
            self._aside(paths, "rejected", t("rejected {name}: {why}", name=named, why=failures.message(exc)), key=h, digest=h)
            return current
        # A move ahead of us waits for its packet; one of another game is refused below.
        ours = self.host.game_id()
        future = [b for b in blocks if b.kind == "move" and b.game == ours and b.doc.seq > current]
        if future:
            current, _ = self.host.head()  # another host may have moved on
            if any(b.doc.seq > current for b in future):
                return current  # answers a packet not published yet: wait
        for b in blocks:
            try:
                out = self.host.accept(b)
            except REFUSED as exc:
                self._aside(paths, "rejected", t("rejected {name}: {why}", name=named, why=failures.message(exc)),
                            key=h, digest=h)
                return current
            except Exception as exc:  # e.g. a locked database: keep the file, try again
                if h not in self.retrying:
                    self.retrying.add(h)
                    self.log(t("could not process {name} ({why}); will retry", name=name, why=f"{type(exc).__name__}: {exc}"))
                return current
            self.log(labelled(named, out.message))
            if out.seq:
                current = out.seq
                self._publish()  # players see the packet before we tidy the inbox
            else:  # a join before the deal, a line of talk: published at the end of the pass
                self.unpublished = True
        self.retrying.discard(h)
        self._aside(paths, "done", None, key=h, digest=h)
        return current

    def _young(self, path: Path) -> bool:
        try:
            return time.time() - path.stat().st_mtime < self.grace
        except FileNotFoundError:
            return True

    def _aside(self, paths: list[Path], sub: str, line: str | None, *, key: str, digest: str | None = None) -> None:
        """Move inbox files into inbox/<sub>/ unread, with the reason in a `.why` file beside each
        (its name and words made safe: a stranger named the file). A move the folder refuses
        is said once and tried again each pass; it never stops the files beside it."""
        first = key not in self.stuck
        if line and first:
            self.log(line)
        for p in paths:
            try:
                target = self.folder.move_aside(p, sub, digest)
                if line:  # the reason, beside the file, for whoever looks into rejected/
                    write_atomic(target.with_name(target.name + ".why"), (printable(line) + "\n").encode())
            except FileNotFoundError:
                continue  # another host moved it first
            except (OSError, PbemError) as exc:
                why = failures.message(exc) if isinstance(exc, PbemError) else failures.os_reason(exc)
                if key not in self.stuck and first:
                    self.log(t("cannot move {name} to {where}: {why}", name=p.name, where=f"inbox/{sub}", why=why))
                self.stuck[key] = (sub, line)
                continue
            self.stuck.pop(key, None)


@dataclass(frozen=True)
class Quiet:
    """What a mail host's whole pass left: the store's version (None: not known), when the
    clock next has something to do (`GameHost.next_tick`) and when a digest may be due (by the
    publisher's `now`). While the store keeps that version and neither moment has come, a pass
    has nothing to mail and nothing to tick; it still makes a whole pass every `QUIET_MAX`
    seconds, whatever it finds."""

    version: int | None
    tick: datetime | None
    digest: float | None
    at: float  # time.monotonic()

    def holds(self, version: int | None, host: GameHost, publisher: MailPublisher) -> bool:
        if version is None or version != self.version or time.monotonic() - self.at >= QUIET_MAX:
            return False
        if self.tick is not None and host.clock.now() >= self.tick:
            return False
        return self.digest is None or publisher.now() < self.digest


QUIET_MAX = 5.0


@dataclass
class MailHost:
    """The host reading a mail source (files or an IMAP folder), mailing packets via a Courier.

    Each message is settled once its blocks are handled: done (applied, or seen before) or
    rejected (refused, with the reason logged); mail that is not for this game is left
    alone; a message that failed for an unexpected reason (a locked database) is read again
    at the next step. Packets go out before a message is settled, so a host stopped between
    the two mails what it owes and finds the move again as a duplicate.
    """

    host: GameHost
    source: MailSource
    courier: Courier
    log: Log = field(default=stamp_log())
    publisher: MailPublisher = field(init=False)
    game: str = field(init=False)
    head: tuple[int, str] = (0, "")  # (latest packet, status) as the last mailing read them
    quiet: Quiet | None = None  # what the last whole pass left

    def __post_init__(self) -> None:
        from pbem.mail.publisher import MailPublisher

        self.publisher = MailPublisher(self.host, self.courier)
        self.game = self.host.game_id()

    def _mail(self) -> None:
        owed = self.host.outbox(self.publisher.channel)
        publish_pending(self.host, self.publisher, log=self.log, owed=owed)
        self.head = owed.head

    def wait(self, seconds: float) -> bool:
        """Until new mail may have come, or `seconds`; a mailbox that says when mail comes (IMAP
        IDLE) is waited on no longer than until the clock's next reminder, late notice or
        timeout (as the last pass read it)."""
        due = self.quiet.tick if self.quiet is not None else self.host.next_tick()
        longest = None if due is None else max((due - self.host.clock.now()).total_seconds(), 0.0)
        return self.source.wait(seconds, longest)

    def step(self) -> bool:
        """One pass; True when the game is over and everything is mailed. A pass that read no
        mail and found nothing due on the clock mails once, first. One that finds the store as
        the last whole pass left it (its version) and nothing due yet on the clock looks only
        at the mailbox: a poll every moment asks the store nothing then."""
        version = self.host.version()
        quiet = self.quiet is not None and self.quiet.holds(version, self.host, self.publisher)
        if not quiet:
            self._mail()
        read = False
        for label, msg in self.source.new_messages():
            self._message(label, msg)
            read = True
        old = self.source.old
        if old:
            self.log(t("skipped {n} message(s) read before", n=old))
            self.source.old = 0
        if quiet and not read:
            return False
        ticked = self.host.tick()  # reminders, late notices, timeouts
        for out in ticked:
            self.log(words.render(out.message))
        if read or ticked:
            self._mail()
        if self.head[1] == "over":  # as the last mailing read it: after the last change of this pass
            self.log(game_over_line(self.host))
            return True
        self.quiet = Quiet(version, self.host.next_tick(), self.publisher.due, time.monotonic())
        return False

    def _message(self, label: str, msg: Any) -> None:
        """Route one message's blocks and settle it; a refused mail from a seat's own address is
        answered (pbem.mail.refusals), its reasons said in that seat's language."""
        from pbem.mail.refusals import seat_of_sender

        sender = seat_of_sender(self.host, msg)
        reasons: list[Text] = []  # said in the seat's language when it is told (pbem.mail.refusals)
        outcome = self._route(label, msg, reasons)
        if outcome is None:
            return
        if outcome == "rejected" and sender is not None:
            self._tell(sender, msg, reasons)
        self.source.settle(label, outcome)

    def _route(self, label: str, msg: Any, reasons: list[Text]) -> Settlement | None:
        """How to settle the message ("done", "rejected"; None: left, passed over or to retry,
        already said to the source); each refusal's reason is added to `reasons`."""
        from pbem.mail.incoming import message_blocks, who
        from pbem.mail.memory import shown_label

        blocks, errors = message_blocks(msg)
        if not blocks:
            if errors:
                self.log(t("rejected {name}: {why}", name=shown_label(label), why=listed(errors, how="clauses")))
                reasons += errors
                return "rejected"
            self.log(t("ignored {name}: not a pbem mail ({sender})", name=shown_label(label), sender=who(msg)))
            self.source.leave(label)
            return None
        ours = [b for b in blocks if b.kind in SEAT_SENDS_KINDS and b.game == self.game]
        if not ours:
            if any(b.game != self.game for b in blocks):
                self.log(t("ignored {name}: for game {other}, not {game}", name=shown_label(label), other=blocks[0].game,
                           game=self.game))
                self.source.pass_over(label)  # another game's host may want it
                return None
            return "done"  # our own packets and invitations coming back
        outcome: Settlement = "done"
        for b in ours:
            result = self._accept(label, b, reasons)
            if result == "retry":
                return None  # neither settled nor left: read again next time
            if result == "refused":
                outcome = "rejected"
        self._mail()
        return outcome

    def _tell(self, sender: tuple[str, str], msg: Any, reasons: list[Text]) -> None:
        """Answer a seat's refused mail: noted first (at most one answer a mail, a few a day)."""
        from pbem.mail.host_mail import host_now
        from pbem.mail.refusals import note_refusal, refusal_mail

        seat, address = sender
        if not note_refusal(self.host, seat, msg, host_now(self.host).timestamp()):
            self.log(t("not answering {seat}'s refused mail: answered before, or enough answers today", seat=seat))
            return
        try:
            how = self.courier.deliver(refusal_mail(self.host, seat, address, msg, reasons))
        except PbemError as exc:  # noted already: never sent twice, even when sending failed
            self.log(t("could not tell {seat} why their mail was refused: {error}", seat=seat, error=exc))
            return
        self.log(t("told {seat} <{address}> why their mail was refused: {how}", seat=seat, address=address, how=how))

    def _accept(self, label: str, block: Signed, reasons: list[Text]) -> str:
        from pbem.mail.memory import shown_label

        try:
            out = self.host.accept(block)
        except REFUSED as exc:
            why = failures.message(exc)
            self.log(t("rejected {kind} by {seat} in {name}: {why}", kind=kind_name(block.kind), seat=getattr(block.doc, "seat", "?"),
                        name=shown_label(label), why=why))
            reasons.append(E.msg("{kind} for {game}: {error}", kind=kind_word(block.kind), game=block.game, error=exc))
            return "refused"
        except Exception as exc:
            self.log(t("could not process {name} ({why}); will retry", name=shown_label(label), why=f"{type(exc).__name__}: {exc}"))
            return "retry"
        self.log(labelled(shown_label(label), out.message))
        return out.kind


@dataclass(frozen=True)
class Transport:
    """How one game's joins and moves arrive and its packets leave: a shared folder, or mail
    read from files or an IMAP folder and a courier (SMTP, or .eml files into a folder). Kept
    in the game's settings (no password: that comes from a command, the environment or a
    prompt each time), so `pbem host run --all` serves each game the way it was set up."""

    folder: str | None = None
    maildir: tuple[str, ...] = ()
    imap: str | None = None
    send: bool = False
    to_dir: str | None = None

    @classmethod
    def given(cls, folder: Path | None, maildir: list[Path], imap: str | None, send: bool,
              to_dir: Path | None) -> Transport | None:
        if (folder is not None) + bool(maildir) + bool(imap) > 1:
            raise UsageError(t("pass one of --folder DIR, --maildir DIR or --imap URL"))
        if folder is not None and (send or to_dir is not None):
            raise UsageError(t("--send and --to-dir go with --maildir DIR or --imap URL"))
        if folder is None and not maildir and not imap:
            return None  # the remembered transport, or the mail profile's IMAP (with --send, --to-dir)
        return cls(str(folder.resolve()) if folder is not None else None, tuple(str(m.resolve()) for m in maildir),
                   imap, send, str(to_dir.resolve()) if to_dir is not None else None)

    @classmethod
    def of(cls, host: GameHost) -> Transport | None:
        kept = host.settings().transport
        if kept is None or kept.kind() is None:
            return None
        return cls(kept.folder, tuple(kept.maildir), kept.imap, kept.send, kept.to_dir)

    def setting(self) -> TransportSetting:
        """As the game's settings keep it."""
        if self.folder:
            return TransportSetting(folder=self.folder)
        return TransportSetting(maildir=list(self.maildir), imap=self.imap, send=self.send, to_dir=self.to_dir)

    def stepper(self, host: GameHost, log: Log, home: Path, *, password_command: str | None = None,
                oauth2_command: str | None = None, no_idle: bool = False,
                ca_file: str | None = None) -> FolderHost | MailHost:
        if self.folder:
            log(t("serving {game} in {where}", game=host.game_id(), where=self.folder))
            return FolderHost(host, Path(self.folder), log)
        from pbem.mail.profile import ca_file_of, load_profile
        from pbem.mail.sources import host_courier, mail_source

        profile = load_profile(home) if self.imap and password_command is None and oauth2_command is None else None
        if profile is not None:  # the mail profile's, as when the transport was set
            password_command, oauth2_command = profile.imap_password_command, profile.imap_oauth2_command
        to_dir = Path(self.to_dir) if self.to_dir else None
        courier = host_courier(host.settings(), self.send, to_dir, home, default_mail_dir(host))
        # remembering where it read what (the key home's memory): mail that is not pbem's, left
        # in the folder, is said once, not again at every start
        source = mail_source([Path(m) for m in self.maildir], self.imap, password_command, oauth2_command, no_idle,
                             log=log, ca_file=ca_file_of(home, ca_file), remember=home, by_content=False)
        log(t("serving {game} from {where}", game=host.game_id(), where=self.imap or ", ".join(self.maildir)))
        return MailHost(host, source, courier, log)


def default_mail_dir(host: GameHost) -> Path:
    """Where a game's .eml files go without --to-dir: GAME/mail/ beside its store (a blind
    host's: beside its own file)."""
    return mail_dir(host.name, host.url)


def no_transport(name: str) -> UsageError:
    return UsageError(t("game {game} has no transport yet", game=name),
                      hint=t("{init}, or {run} (or --maildir DIR, --imap URL, or an IMAP URL in 'pbem mail setup')",
                             init=f"pbem folder init {name} DIR", run=f"pbem host run {name} --folder DIR"))


def run(stepper: Any, *, poll: float = 1.0, once: bool = False, log: Log | None = None) -> None:
    """Step until the game is over (or once). Errors of one step are logged, never fatal:
    SMTP down, a flaky disk, a bug: say so and keep serving the game."""
    polling.run(stepper, poll=poll, once=once, log=log or stamp_log())
