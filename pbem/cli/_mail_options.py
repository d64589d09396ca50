"""The mail options the mail commands share, defining no command: SMTP (`Smtp`), where a
player's mail goes (`Reply`), where new mail is read (`MailIn`), and the digest's and IDLE's
options. A module of their own beside cli/_common.py, so that a command that sends or reads no
mail (apply, show, move...) does not make them; option groups work as cli/_common.py says.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from pbem.cli._common import optional

if TYPE_CHECKING:
    from pbem.mail.courier import Courier
    from pbem.mail.message import SmtpSettings

ServerOpt = Annotated[str | None, optional("--smtp-server", help="SMTP server (default: your mail profile's).")]
PortOpt = Annotated[int | None, optional("--smtp-port", help="SMTP port (default by security).")]
SecurityOpt = Annotated[str, typer.Option("--smtp-security", help="starttls, ssl or none.")]
UserOpt = Annotated[str | None, optional("--smtp-user", help="SMTP login (password: $PBEM_SMTP_PASSWORD or a prompt).")]
FromOpt = Annotated[str | None, optional("--from", help="Your mail address.")]
ToOpt = Annotated[str | None, optional("--to", help="The host's mail address (default: the address the "
                                                    "game's host mails from).")]
SendOpt = Annotated[bool, typer.Option("--send", help="Send over SMTP instead of writing .eml files.")]
ToDirOpt = Annotated[Path | None, optional("--to-dir", help="Write .eml files into this folder.")]
ImapOpt = Annotated[str | None, optional(
    "--imap", help="Read mail over IMAP: imaps://USER@HOST[:PORT]/FOLDER (write @ in USER as %40).")]
PasswordCmdOpt = Annotated[str | None, optional(
    "--password-command", help='A command printing the mail password, e.g. "pass show mail/pbem" (never stored; '
    "else $PBEM_IMAP_PASSWORD or a prompt).")]
OAuthCmdOpt = Annotated[str | None, optional(
    "--oauth2-command", help="A command printing an OAuth2 access token (XOAUTH2 login), run at each login.")]
CaFileOpt = Annotated[str | None, optional(
    "--ca-file", help="A CA certificate (PEM) to trust for the IMAP and SMTP servers besides the system's, e.g. "
    "your club's own CA (default: the mail profile's).")]


class Smtp(msgspec.Struct):
    """A person's SMTP settings given on the command line (else their mail profile's)."""

    server: ServerOpt = None
    port: PortOpt = None
    security: SecurityOpt = "starttls"
    user: UserOpt = None
    sender: FromOpt = None

    def given(self) -> bool:
        return any([self.server, self.port, self.user, self.sender])

    def settings(self, base: SmtpSettings | None = None) -> SmtpSettings:
        """These options over `base` (the profile's). Another server than the profile's takes
        nothing from it but the from-address (its port, security and login belong to it)."""
        from pbem.mail.courier import player_settings

        if base is not None and self.server and self.server != base.host:
            return player_settings(self.server, self.port, self.security, self.user, self.sender or base.from_addr)
        if base is None:
            return player_settings(self.server, self.port, self.security, self.user, self.sender)
        return player_settings(base.host, self.port or base.port, self.security if self.server else base.security,
                               self.user or base.user, self.sender or base.from_addr)


class Reply(msgspec.Struct):
    """Where a player's join or move goes: --to the host over SMTP, or --to-dir as .eml files."""

    to: ToOpt = None
    to_dir: ToDirOpt = None
    send: SendOpt = False

    def courier(self, smtp: Smtp, home: Path, me: str) -> tuple[Courier, str]:
        """(Courier, from-address): SMTP from the options, else from the mail profile; .eml
        files with --to-dir (or when there is no SMTP setting at all)."""
        from pbem.mail.courier import Courier, smtp_password
        from pbem.mail.profile import load_profile

        profile = load_profile(home)
        stored = profile.smtp if profile else None
        if self.to_dir is None and (self.send or smtp.server or stored):
            settings = smtp.settings(stored) if smtp.given() or not stored else stored
            settings = (profile.sending(settings) or settings) if profile else settings
            same = stored is not None and settings.host == stored.host
            command = profile.smtp_password_command if profile and same else None
            return Courier(settings=settings, password=smtp_password(settings, command=command)), settings.from_addr
        return Courier(to_dir=self.to_dir or Path(".")), smtp.sender or (stored.from_addr if stored else f"{me}@localhost")

    def host(self, home: Path, game: str) -> str:
        """--to, else the address the game's host mails from (learnt by 'pbem inbox')."""
        from pbem.mail.profile import host_address

        return host_address(home, game, self.to)


class MailIn(msgspec.Struct):
    """Where new mail is read: --imap URL with a password (or token) from a command."""

    imap: ImapOpt = None
    password_command: PasswordCmdOpt = None
    oauth2_command: OAuthCmdOpt = None
    ca_file: CaFileOpt = None

    def or_profile(self, home: Path) -> MailIn:
        """The options given, else the mail profile's IMAP URL, password command and CA file."""
        from pbem.mail.profile import ca_file_of, load_profile

        if self.imap:
            return msgspec.structs.replace(self, ca_file=ca_file_of(home, self.ca_file))
        profile = load_profile(home)
        if profile is None or not profile.imap:
            return self
        return msgspec.structs.replace(self, imap=profile.imap,
                                       password_command=self.password_command or profile.imap_password_command,
                                       oauth2_command=self.oauth2_command or profile.imap_oauth2_command,
                                       ca_file=self.ca_file or profile.ca_file)

    def source(self, paths: list[Path], no_idle: bool, *, remember: Path | None = None, log=lambda line: None):
        """Files (.eml, Maildir, mbox) or this IMAP folder; with `remember` (a key home), only new mail."""
        from pbem.mail.sources import mail_source

        return mail_source(paths, self.imap, self.password_command, self.oauth2_command, no_idle,
                           remember=remember, log=log, ca_file=self.ca_file)


DigestOpt = Annotated[str | None, optional(
    "--digest", help='Mail a seat when it is their turn, else at most one summary per period: "12h" (the default), '
    '"30m", "1d", or "every" (each packet). Stored with the game.')]
NoIdleOpt = Annotated[bool, typer.Option("--no-idle", help="Poll the IMAP folder even when the server offers IDLE.")]
