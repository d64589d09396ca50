"""Option groups, each written once (the way sqlite-utils shares its click options).

A command that needs, say, the SMTP settings takes one parameter `smtp: Smtp`; `@grouped`
shows Typer the group's fields as that command's options (--smtp-server, --smtp-port...)
and hands the command one `Smtp` object built from them. So the same options read the same
way, with the same help and defaults, on every command, and the code that turns them into a
mail courier or an unlocked key lives with them. Most of them are only needed once: the
mail profile ('pbem mail setup') fills in what is not given.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pbem.cli.keys import HomeOpt
from pbem.cli.play import AsOpt, PassOpt, identity_named
from pbem.seat.home import key_home

if TYPE_CHECKING:
    from pbem.mail.message import SmtpSettings
    from pbem.mail.outgoing import Courier
    from pbem.protocol.crypto import Identity

ServerOpt = Annotated[str | None, typer.Option("--smtp-server", help="SMTP server (default: your mail profile's).",
                                               show_default=False)]
PortOpt = Annotated[int | None, typer.Option("--smtp-port", help="SMTP port (default by security).", show_default=False)]
SecurityOpt = Annotated[str, typer.Option("--smtp-security", help="starttls, ssl or none.")]
UserOpt = Annotated[str | None, typer.Option("--smtp-user", help="SMTP login (password: $PBEM_SMTP_PASSWORD or a prompt).",
                                             show_default=False)]
FromOpt = Annotated[str | None, typer.Option("--from", help="Your mail address.", show_default=False)]
ToOpt = Annotated[str | None, typer.Option("--to", help="The host's mail address (default: the address the "
                                                      "game's host mails from).", show_default=False)]
SendOpt = Annotated[bool, typer.Option("--send", help="Send over SMTP instead of writing .eml files.")]
ToDirOpt = Annotated[Path | None, typer.Option("--to-dir", help="Write .eml files into this folder.", show_default=False)]
ImapOpt = Annotated[str | None, typer.Option(
    "--imap", help="Read mail over IMAP: imaps://USER@HOST[:PORT]/FOLDER (write @ in USER as %40).",
    show_default=False)]
PasswordCmdOpt = Annotated[str | None, typer.Option(
    "--password-command", help='A command printing the mail password, e.g. "pass show mail/pbem" (never stored; '
    "else $PBEM_IMAP_PASSWORD or a prompt).", show_default=False)]
OAuthCmdOpt = Annotated[str | None, typer.Option(
    "--oauth2-command", help="A command printing an OAuth2 access token (XOAUTH2 login), run at each login.",
    show_default=False)]
CaFileOpt = Annotated[str | None, typer.Option(
    "--ca-file", help="A CA certificate (PEM) to trust for the IMAP and SMTP servers besides the system's, e.g. "
    "your club's own CA (default: the mail profile's).", show_default=False)]


@dataclass
class KeyOptions:
    """Whose key signs: --as NAME in --home, unlocked with --passphrase-file (or $PBEM_PASSPHRASE)."""

    as_name: AsOpt = None
    home: HomeOpt = None
    passphrase_file: PassOpt = None

    @property
    def where(self) -> Path:
        return key_home(self.home)

    def identity(self, name: str | None = None) -> Identity:
        """The key --as names (or `name`, or the only one in the key home), unlocked."""
        return identity_named(self.home, name or self.as_name, self.passphrase_file)


@dataclass
class Smtp:
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
        from pbem.mail.outgoing import player_settings

        if base is not None and self.server and self.server != base.host:
            return player_settings(self.server, self.port, self.security, self.user, self.sender or base.from_addr)
        if base is None:
            return player_settings(self.server, self.port, self.security, self.user, self.sender)
        return player_settings(base.host, self.port or base.port, self.security if self.server else base.security,
                               self.user or base.user, self.sender or base.from_addr)


@dataclass
class Reply:
    """Where a player's join or move goes: --to the host over SMTP, or --to-dir as .eml files."""

    to: ToOpt = None
    to_dir: ToDirOpt = None
    send: SendOpt = False

    def courier(self, smtp: Smtp, home: Path, me: str) -> tuple[Courier, str]:
        """(Courier, from-address): SMTP from the options, else from the mail profile; .eml
        files with --to-dir (or when there is no SMTP setting at all)."""
        from pbem.mail.outgoing import Courier, smtp_password
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


@dataclass
class MailIn:
    """Where new mail is read: --imap URL with a password (or token) from a command."""

    imap: ImapOpt = None
    password_command: PasswordCmdOpt = None
    oauth2_command: OAuthCmdOpt = None
    ca_file: CaFileOpt = None

    def or_profile(self, home: Path) -> MailIn:
        """The options given, else the mail profile's IMAP URL, password command and CA file."""
        from pbem.mail.profile import ca_file_of, load_profile

        if self.imap:
            return dataclasses.replace(self, ca_file=ca_file_of(home, self.ca_file))
        profile = load_profile(home)
        if profile is None or not profile.imap:
            return self
        return dataclasses.replace(self, imap=profile.imap,
                                   password_command=self.password_command or profile.imap_password_command,
                                   oauth2_command=self.oauth2_command or profile.imap_oauth2_command,
                                   ca_file=self.ca_file or profile.ca_file)


GROUPS = (KeyOptions, Smtp, Reply, MailIn)


class _Grouped:
    """A command whose option group parameters Typer sees as the groups' options. Its signature
    is worked out when Typer first asks for it (evaluating the annotations is not free, and a
    command line converts only the command it runs: pbem.cli.tree_for)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.__wrapped__ = fn
        self.__name__, self.__qualname__ = fn.__name__, fn.__qualname__
        self.__module__, self.__doc__ = fn.__module__, fn.__doc__
        self._made: tuple[inspect.Signature, dict[str, tuple[type, list[tuple[str, str]]]]] | None = None

    def _make(self) -> tuple[inspect.Signature, dict[str, tuple[type, list[tuple[str, str]]]]]:
        if self._made is None:
            sig = inspect.signature(self.__wrapped__, eval_str=True)
            params: list[inspect.Parameter] = []
            groups: dict[str, tuple[type, list[tuple[str, str]]]] = {}
            for p in sig.parameters.values():
                if p.annotation not in GROUPS:
                    params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY))
                    continue
                hints = typing.get_type_hints(p.annotation, include_extras=True)
                flat = [(f"{p.name}__{f.name}", f.name) for f in dataclasses.fields(p.annotation)]
                groups[p.name] = (p.annotation, flat)
                params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                                             annotation=hints[f.name])
                           for (name, _), f in zip(flat, dataclasses.fields(p.annotation))]
            self._made = sig.replace(parameters=params), groups
        return self._made

    @property
    def __signature__(self) -> inspect.Signature:
        return self._make()[0]

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        return {p.name: p.annotation for p in self._make()[0].parameters.values()}

    def __call__(self, **kwargs: Any) -> Any:
        for name, (cls, flat) in self._make()[1].items():
            kwargs[name] = cls(**{field: kwargs.pop(option) for option, field in flat})
        return self.__wrapped__(**kwargs)


def grouped(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Show Typer each option group parameter of `fn` as the group's options; call `fn` with
    one group object per such parameter."""
    return _Grouped(fn)
