"""Commands for playing by mail and through a shared folder, the automatic host and seat bots.

`register(app)` adds: game email, game smtp, mail, inbox, mail-join, mail-move, turn,
folder init, host run, bot run. See docs/playing.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from typer.core import TyperGroup

from pbem.cli._common import (
    GameArg,
    HomeOpt,
    JsonOpt,
    PassOpt,
    StoreOptions,
    argument,
    first_time,
    game_app,
    identity_named,
    optional,
)
from pbem.cli._grouped import grouped
from pbem.cli._mail_options import DigestOpt, MailIn, SendOpt, Smtp, ToDirOpt
from pbem.cli.jsonout import json_text
from pbem.errors import UsageError
from pbem.seat.home import key_home
from pbem.ui.terminal import printable
from pbem.ui.words import t

if TYPE_CHECKING:
    pass

folder_app = typer.Typer(help="Shared game folders (Syncthing, Dropbox, NFS...).", no_args_is_help=True)

# --- host: addresses and SMTP settings --------------------------------------------------------


@grouped
def game_email(
    game: GameArg,
    address: Annotated[list[str] | None, argument("NAME=ADDRESS (NAME= removes it); 'host' is you.")] = None,
    lang: Annotated[list[str], typer.Option("--lang", help="NAME=LANG: the language NAME's mail is written in "
                                            "(en, zh-Hans, zh-Hant); repeatable.")] = [],
    store: StoreOptions = StoreOptions(),
) -> None:
    """Set the players' (and your own) mail addresses, and the language of their mail."""
    from pbem.ui.words import LANGUAGES, _normalise

    with store.host(game) as host:
        languages = dict(host.settings().languages)
        for item in lang:
            name, sep, code = item.partition("=")
            norm = _normalise(code) if sep and name else None
            if norm is None:
                raise UsageError(t("bad --lang {item}", item=repr(item)),
                                 hint=t("write NAME=LANG, LANG one of {choices}", choices=", ".join(LANGUAGES)))
            languages[name.lower()] = norm
        if lang:
            host.set_settings(languages=languages)
        address = address or []
        for item in address:
            name, sep, addr = item.partition("=")
            if not sep or not name or (addr and "@" not in addr):
                raise UsageError(t("bad address {item}", item=repr(item)), hint=t("write NAME=user@example.org, or NAME= to remove"))
            host.set_email(name.lower(), addr or None)
        emails = {**{n: a for n, a in host.seat_emails() if a}, **host.settings().emails}
    for name, addr in sorted(emails.items()):
        typer.echo(f"{name}: {addr}" + (f" ({languages[name]})" if name in languages else ""))


@grouped
def game_smtp(
    game: GameArg,
    server: Annotated[str | None, optional("--server", help="SMTP server host name.")] = None,
    port: Annotated[int | None, optional("--port", help="Default: 587 starttls, 465 ssl, 25 none.")] = None,
    security: Annotated[str, typer.Option("--security", help="starttls, ssl or none.")] = "starttls",
    user: Annotated[str | None, optional("--user", help="SMTP login name.")] = None,
    sender: Annotated[str | None, optional("--from", help="The address packets come from.")] = None,
    store: StoreOptions = StoreOptions(),
) -> None:
    """Store the SMTP settings for 'pbem mail --send'; without --server, show them.

    The password is never stored: it comes from $PBEM_SMTP_PASSWORD or a prompt.
    """
    from pbem.mail.courier import keep_smtp, smtp_settings
    from pbem.mail.message import SmtpSettings

    with store.host(game) as host:
        if server is None:
            settings = smtp_settings(host.settings())
            if settings is None:
                typer.echo(t("no SMTP settings (pbem game smtp GAME --server ...)"))
                return
        else:
            if not sender:
                raise UsageError(t("--from ADDRESS is needed with --server"))
            d: dict[str, str | int | None] = {"host": server, "security": security, "user": user, "from_addr": sender}
            if port:
                d["port"] = port
            settings = SmtpSettings.from_dict(d)
            host.set_settings(smtp=keep_smtp(settings))
    typer.echo(smtp_in_words(settings))


def smtp_in_words(settings) -> str:
    return settings.in_words() + t("; the password comes from $PBEM_SMTP_PASSWORD or a prompt")


@grouped
def mail(
    game: GameArg,
    store: StoreOptions = StoreOptions(),
    to_dir: ToDirOpt = None,
    send: SendOpt = False,
    seq: Annotated[int | None, optional("--seq", help="Mail this packet (0: the invitation).")] = None,
    pending: Annotated[bool, typer.Option("--pending", help="Mail what is owed: turns, round ends, digests.")] = False,
    digest: DigestOpt = None,
) -> None:
    """Host: mail the latest packet (or the invitation) to every seat with an address.

    (Your own mail settings, for every mail command: 'pbem mail setup --help'.)

    One mail per recipient (the host's own address gets a copy): the packet attached and
    armoured in the body. Written as .eml files into --to-dir (default saves/GAME/mail/),
    or sent over SMTP with --send (settings: 'pbem game smtp').
    """
    from pbem.auto.host_runner import default_mail_dir
    from pbem.auto.serve import set_digest
    from pbem.host.publish import publish_pending
    from pbem.mail.host_mail import mails_for
    from pbem.mail.publisher import MailPublisher, note_mailed
    from pbem.mail.sources import host_courier

    with store.host(game) as host:
        set_digest(host, digest)
        courier = host_courier(host.settings(), send, to_dir, key_home(None), default_mail_dir(host))
        if pending:
            if not publish_pending(host, MailPublisher(host, courier), log=typer.echo):
                typer.echo(t("nothing new to mail"))
            return
        if seq is None:
            seq = host.head()[0]
        names = []
        for out in mails_for(host, seq):
            how = courier.deliver(out.message)
            if seq == 0:
                typer.echo(t("invitation to {name} <{address}>: {how}", name=out.name, address=out.address, how=how))
            else:
                typer.echo(t("packet {seq} to {name} <{address}>: {how}", seq=seq, name=out.name, address=out.address,
                             how=how))
            names.append(out.name)
        note_mailed(host, names if seq else [], seq)


@grouped
def mail_setup(
    smtp: Smtp,
    mail_in: MailIn,
    smtp_password_command: Annotated[str | None, optional(
        "--smtp-password-command", help="A command printing the SMTP password (default: the same as "
        "--password-command).")] = None,
    timezone: Annotated[str | None, optional(
        "--timezone", help="Show dates and deadlines in this time zone (an IANA name: Europe/Berlin) when TZ is "
        "not set; 'none' for the machine's.")] = None,
    home: HomeOpt = None,
) -> None:
    """Store your mail settings once in your key home (no password); without options, show them.

    mail-join, mail-move, turn, inbox, bot run and host run use them when their own options
    are not given. Passwords come from the command given here, $PBEM_SMTP_PASSWORD /
    $PBEM_IMAP_PASSWORD, or a prompt, and are never written anywhere.
    """
    from pbem.mail.profile import MailProfile, check_zone, load_profile, save_profile

    where = key_home(home)
    old = load_profile(where) or MailProfile()
    password_command = mail_in.password_command
    if not (smtp.given() or mail_in.imap or password_command or mail_in.oauth2_command or smtp_password_command
            or mail_in.ca_file or timezone):
        for line in old.describe():
            typer.echo(line)
        return
    settings = smtp.settings(old.smtp) if smtp.given() else old.smtp
    ca_file = old.ca_file
    if mail_in.ca_file:
        from pbem.mail.tls import read_ca_file

        read_ca_file(mail_in.ca_file)  # a file that is there and holds a certificate
        ca_file = str(Path(mail_in.ca_file).expanduser().resolve())
    profile = MailProfile(settings, mail_in.imap or old.imap, password_command or old.imap_password_command,
                          smtp_password_command or password_command or old.smtp_password_command,
                          mail_in.oauth2_command or old.imap_oauth2_command, ca_file,
                          old.timezone if timezone is None else None if timezone == "none" else check_zone(timezone))
    path = save_profile(where, profile)
    for line in profile.describe():
        typer.echo(line)
    typer.echo(t("saved in {path} (no password)", path=path))


# --- both sides: reading mail ----------------------------------------------------------------


@grouped
def inbox(
    paths: Annotated[list[Path] | None, argument(".eml files, Maildirs, mbox files or folders of .eml.")] = None,
    mail_in: MailIn = MailIn(),
    again: Annotated[bool, typer.Option("--again", help="Read every message again, also those read before.")] = False,
    db: Annotated[list[str], typer.Option("--db", "--store", help="A host store (a SQLite file or a URL); repeatable. "
                                                                "Default: $PBEM_STORE and every saves/*.db.")] = [],
    saves: Annotated[Path, typer.Option("--saves", help="Where host games are looked for.")] = Path("saves"),
    home: HomeOpt = None,
    passphrase_file: PassOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Read new mail (.eml, Maildir, mbox, or an IMAP folder) and route every pbem block in it.

    Joins and moves go to your host games (saves/*.db or --db); packets of games you
    joined are saved in your key home (for 'pbem turn GAME'); invitations go to
    <home>/invitations/. Mail that is not ours is ignored, one line each. Mail read before
    by this key home is skipped (one line says how many); over IMAP, pbem mail is then
    moved to pbem/done (or pbem/rejected).
    """
    from pbem.mail.incoming import Router, discover_dbs

    dbs = discover_dbs(list(db), saves)
    where = key_home(home)
    source = (mail_in if paths else mail_in.or_profile(where)).source(list(paths or []), True,
                                                                     remember=None if again else where)
    router = Router(where, dbs, unlock=lambda name: identity_named(home, name, passphrase_file))
    results: list[dict] = []
    refused: list[int] = []  # the exit code of each refused block
    try:
        read_mail(source, router, results, refused, None if as_json else typer.echo)
    finally:
        router.close()
        source.close()
    old = source.old
    if as_json:
        typer.echo(json_text(results))
    elif not results:
        typer.echo(t("no new mail"))
    if old and not as_json:
        typer.echo(t("skipped {n} message read before (--again reads it again)", n=old))
    if refused:
        # One `error:` line per refused block is already on stderr; the exit code is the
        # first refusal's (3 bad packet, 5 stale, 6 illegal...), after everything else was routed.
        raise typer.Exit(refused[0])


def read_mail(source, router, results: list[dict], refused: list[int], echo) -> None:
    """Route every new message of `source` (pbem.mail.incoming.route_new). Each refused block
    is one `error:` line on stderr, its exit code kept in `refused`."""
    from pbem.mail.incoming import route_new

    for kind, line, code in route_new(source, router):
        results.append({"outcome": kind, "message": line, **({"exit_code": code} if code else {})})
        if kind == "refused":
            refused.append(code)
            typer.echo(printable(t("error: {message}", message=line)), err=True)
        elif echo is not None:
            echo(printable(line))


def packet_for(target: str, home: Path):
    """A packet file, or the latest packet saved of a game joined by mail."""
    from pbem.mail.profile import load_profile
    from pbem.protocol.documents import read_one
    from pbem.seat.home import latest_saved_packet

    p = Path(target)
    if p.is_file():
        return read_one(p, "packet")
    latest = latest_saved_packet(home, target)
    if latest is None:
        profile = load_profile(home)
        hint = (t("pass a packet file, or read your mail first with 'pbem turn GAME' (it reads your IMAP folder)")
                if profile is not None and profile.imap else
                t("pass a packet file, or read your mail first with 'pbem inbox MAILDIR'"))
        raise UsageError(t("no packet of game {game} in {home}", game=repr(target), home=home), hint=hint)
    return read_one(latest, "packet")


@grouped
def folder_init(
    game: GameArg,
    dir: Annotated[Path, typer.Argument(help="The shared folder (created if needed).")],
    store: StoreOptions = StoreOptions(),
) -> None:
    """Host: lay out a game folder and publish the invitation and every packet so far.

    The folder is remembered as the game's transport, for 'pbem host run GAME' and
    'pbem host run --all'.
    """
    from pbem.folder.play import init_folder
    from pbem.host.settings import TransportSetting

    with store.host(game) as host:
        folder, _ = init_folder(dir, host)
        host.set_settings(transport=TransportSetting(folder=str(folder.dir.resolve())))
        seq = host.head()[0]
    typer.echo(t("game folder for {game} in {dir}: invitation.pbem and {n} packet", game=folder.game_id, dir=folder.dir,
                 n=seq))
    typer.echo(t("players: {example}   (joins, then shows the table)", example=f"pbem turn {folder.dir} --as NAME"),
               err=True)


class _MailGroup(TyperGroup):
    """`pbem mail setup ...` is the profile; `pbem mail GAME ...` is `pbem mail send GAME ...`;
    `pbem mail` and `pbem mail --help` are the group's page, which lists both."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["send", *args]
        return super().parse_args(ctx, args)


def register(app: typer.Typer, only: str | None = None) -> None:
    """Add this module's commands to the main app (idempotent): all, or only those of the word
    `only` (a command line converts only the command it runs)."""
    if not first_time(app, "transport"):
        return
    if only in (None, "game") and first_time(game_app, "transport"):
        game_app.command("email")(game_email)
        game_app.command("smtp")(game_smtp)
    if only in (None, "mail"):
        mail_app = typer.Typer(cls=_MailGroup, no_args_is_help=True,
                               help="Mail packets (host): 'pbem mail GAME' is 'pbem mail send GAME'. "
                                    "'pbem mail setup': your own mail settings.")
        mail_app.command("send")(mail)
        mail_app.command("setup")(mail_setup)
        app.add_typer(mail_app, name="mail")
    from pbem.cli.daemons import bot_app, host_app
    from pbem.cli.turn import mail_join, mail_move, say, turn

    for name, fn in (("inbox", inbox), ("mail-join", mail_join), ("mail-move", mail_move), ("turn", turn),
                     ("say", say)):
        if only in (None, name):
            app.command(name)(fn)
    for name, group in (("folder", folder_app), ("host", host_app), ("bot", bot_app)):
        if only in (None, name):
            app.add_typer(group, name=name)


folder_app.command("init")(folder_init)
