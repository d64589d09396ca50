"""The long-running commands: `pbem host run` (the automatic host) and `pbem bot run` (a bot
on a seat). They parse, then hand over to pbem.auto.serve and pbem.auto.seat_bot."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pbem.cli._common import HomeOpt, KeyOptions, PassOpt, StoreOptions, argument, identity_named, optional
from pbem.cli._grouped import grouped
from pbem.cli._mail_options import DigestOpt, MailIn, NoIdleOpt, Reply, SendOpt, Smtp, ToDirOpt
from pbem.errors import UsageError
from pbem.seat.home import key_home
from pbem.ui.words import t

host_app = typer.Typer(help="The automatic host.", no_args_is_help=True)
bot_app = typer.Typer(help="Bots on a seat.", no_args_is_help=True)

PollOpt = Annotated[float, typer.Option("--poll", help="Seconds between looks at the folder or mailbox.")]
OnceOpt = Annotated[bool, typer.Option("--once", help="Do one pass and stop.")]


def _one_source(folder: Path | None, maildir: list[Path], mail_in: MailIn) -> None:
    if (folder is not None) + bool(maildir) + bool(mail_in.imap) != 1:
        raise UsageError(t("pass one of --folder DIR, --maildir DIR or --imap URL"),
                         hint=t("or store an IMAP URL once with 'pbem mail setup --imap URL'"))


@grouped
def host_run(
    game: Annotated[str | None, argument("The game's name (or --all).")] = None,
    all_games: Annotated[bool, typer.Option("--all", help="Serve every game of the store over its own transport.")] = False,
    store: StoreOptions = StoreOptions(),
    folder: Annotated[Path | None, optional("--folder", help="Serve this shared game folder.")] = None,
    maildir: Annotated[list[Path], typer.Option("--maildir", help="Read joins and moves from this Maildir/mbox.")] = [],
    mail_in: MailIn = MailIn(),
    no_idle: NoIdleOpt = False,
    digest: DigestOpt = None,
    send: SendOpt = False,
    to_dir: ToDirOpt = None,
    poll: PollOpt = 1.0,
    lease: Annotated[float | None, optional("--lease", min=1.0, help="With --all: seconds a daemon's hold on a game "
                                            "lasts (default 30); a stopped daemon's games are served by the others "
                                            "within it.")] = None,
    once: OnceOpt = False,
    home: HomeOpt = None,
    passphrase_file: PassOpt = None,
) -> None:
    """Host automatically: apply joins and moves as they arrive, publish or mail packets.

    One game: runs until it is over (or one pass with --once); --folder, --maildir or --imap
    is remembered as the game's transport (without options: the remembered one, else the
    IMAP URL of 'pbem mail setup'). --all: every game of the store over its remembered
    transport, in one watch loop, until stopped; several --all daemons on one store (one
    machine or several) share its games, each game served by one of them at a time. Safe to
    kill and restart; two hosts at once on the same store still apply each move exactly once.
    """
    from pbem.auto import host_runner as autohost
    from pbem.auto.serve import serve_host, serve_store
    from pbem.host.leases import DEFAULT_PERIOD

    where = key_home(home)
    given = autohost.Transport.given(folder, list(maildir), mail_in.imap, send, to_dir)
    log = autohost.stamp_log()
    if all_games:
        if game is not None or given is not None or digest is not None or send or to_dir is not None:
            raise UsageError(t("--all serves every game over its own transport: name no game, --folder, --maildir, "
                               "--imap, --digest, --send or --to-dir"))
        serve_store(store.url(), lambda name: identity_named(home, name, passphrase_file), where, log,
                    poll=poll, once=once, lease=lease or DEFAULT_PERIOD)
        return
    if lease is not None:
        raise UsageError(t("--lease goes with --all"))
    if game is None:
        raise UsageError(t("name the game to serve, or pass --all"), hint=t("e.g. {example}", example="pbem host run GAME --folder DIR"))
    with store.unlocked_host(game, home, passphrase_file) as host:
        serve_host(host, given, where, log, mail_in, digest=digest, send=send, to_dir=to_dir, no_idle=no_idle,
                   poll=poll, once=once)


@grouped
def bot_run(
    folder: Annotated[Path | None, optional("--folder", help="Play through this shared game folder.")] = None,
    maildir: Annotated[list[Path], typer.Option("--maildir", help="Play by mail, reading this Maildir/mbox.")] = [],
    mail_in: MailIn = MailIn(),
    no_idle: NoIdleOpt = False,
    game: Annotated[str | None, optional("--game", help="Mail play: the game id (default: the first "
                                                        "invitation with a seat for this key).")] = None,
    bot: Annotated[str, typer.Option("--bot", help="smart, search or random.")] = "smart",
    seed: Annotated[str, typer.Option("--seed", help="The bot's seed (same seed, same choices).")] = "0",
    think: Annotated[float, typer.Option("--think", help="The search bot's seconds a decision, at most.",
                                         min=0.0, max=60.0)] = 0.1,
    command: Annotated[str | None, optional("--command", help="Your own bot: PROGRAM ARGS, one process that reads "
                                            "a JSON line per decision and answers a move (docs/bots.md); "
                                            "--bot plays when it does not.")] = None,
    reply: Reply = Reply(),
    smtp: Smtp = Smtp(),
    poll: PollOpt = 1.0,
    once: OnceOpt = False,
    keys: KeyOptions = KeyOptions(),
) -> None:
    """Let a bot play your seat, holding only your key, until the game is over."""
    from pbem.auto import seat_bot as seatbot

    where = keys.where
    if folder is None and not maildir:
        mail_in = mail_in.or_profile(where)
    _one_source(folder, maildir, mail_in)
    seatbot.check_bot_kind(bot)
    me = keys.identity()
    log = seatbot.stamp_log(f"bot {me.name}")
    if folder is not None:
        from pbem.folder.play import is_trustless

        if is_trustless(folder):  # only then the trustless protocol is loaded
            from pbem.auto.trustless_bot import folder_bot

            if command is not None:
                raise UsageError(t("--command does not play trustless games yet"), hint=t("use --bot"))
            seatbot.run(folder_bot(folder, me, where, log, bot, seed, think), poll=poll, once=once, log=log)
            return
    program = seatbot.Program(command) if command is not None else None
    try:
        if folder is not None:
            stepper = seatbot.FolderBot(folder, me, where, bot, seed, log, think=think, program=program)
            seatbot.run(stepper, poll=poll, once=once, log=log)
            return
        courier, sender = reply.courier(smtp, where, me.name)
        source = mail_in.source(maildir, no_idle, log=log)
        mail_bot = seatbot.MailBot(source, me, where, reply.to, courier, sender, bot, seed, game, log, think=think,
                                   program=program)
        try:
            seatbot.run(mail_bot, poll=poll, once=once, log=log)
        finally:
            source.close()
    finally:
        if program is not None:
            program.close()


host_app.command("run")(host_run)
bot_app.command("run")(bot_run)
