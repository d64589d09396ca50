"""`pbem host run`: one game served over its transport until it is over, or every game of a
store in one watch loop (pbem.auto.host_runner has the steppers and the loop). The command
picks the transport from its options and the mail profile; this keeps the game's choice,
starts the stepper and runs it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from pbem.auto.club_host import ClubHost
from pbem.auto.host_runner import MailHost, Transport, no_transport, run
from pbem.auto.polling import Log
from pbem.auto.webhooks import sending
from pbem.host.interface import GameHost
from pbem.host.leases import DEFAULT_PERIOD, Leases
from pbem.protocol.crypto import Identity


class MailReading(Protocol):
    """Where new mail is read when a game has no transport of its own (the CLI's --imap options)."""

    imap: str | None
    password_command: str | None
    oauth2_command: str | None
    ca_file: str | None

    def or_profile(self, home: Path) -> MailReading: ...


def set_digest(host: GameHost, digest: str | None) -> None:
    """Store how often a seat is mailed ("12h", "every"...), checked first; None: leave it."""
    if digest is not None:
        from pbem.mail.publisher import digest_seconds

        digest_seconds(digest)  # checked before it is stored
        host.set_settings(digest=digest.strip().lower())


def serve_host(host: GameHost, given: Transport | None, home: Path, log: Log, mail_in: MailReading, *,
               digest: str | None = None, send: bool = False, to_dir: Path | None = None, no_idle: bool = False,
               poll: float = 1.0, once: bool = False) -> None:
    """Serve one game over the transport given, else its remembered one, else the IMAP folder
    of `mail_in` (or of the mail profile), until it is over (or one pass, `once`)."""
    set_digest(host, digest)  # a trustless game's blind host serves the same way, by folder or mail
    transport = chosen_transport(host, given, send, to_dir)
    if transport is None:
        mail_in = mail_in.or_profile(home)
        if mail_in.imap is None:
            raise no_transport(host.name)
        transport = Transport(imap=mail_in.imap, send=send, to_dir=str(to_dir.resolve()) if to_dir is not None else None)
    serve_game(host, transport, home, log, password_command=mail_in.password_command,
               oauth2_command=mail_in.oauth2_command, ca_file=mail_in.ca_file, no_idle=no_idle, poll=poll, once=once)


def chosen_transport(host: GameHost, given: Transport | None, send: bool, to_dir: Path | None) -> Transport | None:
    """The transport given, else the one the game remembers (a mail one with --send and
    --to-dir as given now), else None: the caller falls back to the mail profile's IMAP."""
    if given is not None:
        return given
    kept = Transport.of(host)
    if kept is not None and not kept.folder and (send or to_dir is not None):
        kept = replace(kept, send=send, to_dir=str(to_dir.resolve()) if to_dir else None)
    return kept


def serve_game(host: GameHost, transport: Transport, home: Path, log: Log, *, password_command: str | None = None,
               oauth2_command: str | None = None, ca_file: str | None = None, no_idle: bool = False,
               poll: float = 1.0, once: bool = False) -> None:
    """Remember `transport` as the game's and serve the game over it until it is over (or one
    pass, `once`)."""
    host.set_settings(transport=transport.setting())
    stepper = transport.stepper(host, log, home, password_command=password_command, oauth2_command=oauth2_command,
                                no_idle=no_idle, ca_file=ca_file)
    from pbem.host.referee import Host

    try:  # a trustless game's blind host keeps no webhook outbox
        with sending(host.store.url if isinstance(host, Host) else None, log, poll):
            run(stepper, poll=poll, once=once, log=log)
    finally:
        if isinstance(stepper, MailHost):
            stepper.source.close()


def serve_store(url: str, unlock: Callable[[str], Identity], home: Path, log: Log, *, poll: float = 1.0,
                once: bool = False, lease: float = DEFAULT_PERIOD) -> None:
    """Every game of the store at `url` this daemon holds a lease on (all of them when it runs
    alone, its share beside other daemons), each over its own transport, its host's key
    unlocked by `unlock(name)`, in one watch loop until stopped (or one pass, `once`). A lease
    lasts `lease` seconds: a stopped daemon's games are served again within that."""
    from pbem.host.paths import beside, store_folder
    from pbem.host.store import Store

    with Store(url, create=bool(beside(store_folder(url)))) as st:  # a host of trustless games only has none yet
        club = ClubHost(st, unlock, home, log, leases=Leases(st, lease))
        try:
            with sending(url, log, poll):
                run(club, poll=poll, once=once, log=log)
        finally:
            club.close()
