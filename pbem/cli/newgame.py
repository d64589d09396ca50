"""`pbem game new`: create a game in the host's store and write its invitation. A module of its
own (its deadline and webhook options with it, cli/_game_options.py), so that the play
commands (apply, show, move...) do not make them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from pbem.cli._common import (
    HomeOpt,
    OutOpt,
    PassOpt,
    StoreOptions,
    game_app,
    identity_named,
    optional,
)
from pbem.cli._game_options import TimingOptions, WebhookOptions
from pbem.cli._grouped import grouped
from pbem.errors import UsageError
from pbem.names import HOST, check_game_name
from pbem.seat.home import key_home, mail_profile_path
from pbem.ui import words
from pbem.ui.words import t

if TYPE_CHECKING:
    from pbem.auto.newgame import NewGame
    from pbem.protocol.crypto import PublicKey


def parse_seat(text: str, home: Path | None) -> tuple[str, PublicKey]:
    """A --player: NAME (the contact of that name), NAME=pbem1..., or NAME=KEYNAME (a contact
    or an identity of the key home)."""
    from pbem.protocol.crypto import PublicKey
    from pbem.seat.contacts import public_key_named

    name, sep, key = text.partition("=")
    if not name or (sep and not key):
        raise UsageError(t("bad --player {text}", text=repr(text)),
                         hint=t("write NAME for a contact ('pbem key add NAME pbem1...'), NAME=pbem1..., or "
                                "NAME=KEYNAME for a key in your key home"))
    if key.startswith("pbem1"):
        return name.lower(), PublicKey.decode(key)
    return name.lower(), public_key_named(key_home(home), key or name.lower())


def _profile_sender(home: Path | None) -> str | None:
    """The address of the host's mail profile ('pbem mail setup --from'), if it has one."""
    where = key_home(home)
    if not mail_profile_path(where).exists():  # none: the mail's modules (IMAP, TLS) stay unloaded
        return None
    from email.utils import parseaddr

    from pbem.mail.profile import load_profile

    try:
        profile = load_profile(where)
    except UsageError:
        return None  # a profile it cannot read: 'pbem mail setup' says why
    return (parseaddr(profile.smtp.from_addr)[1] or None) if profile and profile.smtp else None


@game_app.command("new")
@grouped
def game_new(
    game: Annotated[str, typer.Argument(help="A short name for the game (letters, digits, - _).")],
    player: Annotated[list[str], typer.Option("--player", "-p", help="NAME (a contact: 'pbem key add'), NAME=PUBKEY or "
                                              "NAME=KEYNAME, in seat order; repeat per seat.")],
    host_name: Annotated[str | None, optional("--host", help="The host's identity (key name in your key home; "
                                              "default: the only one there).")] = None,
    ruleset: Annotated[str, typer.Option("--ruleset", help="classic (3-10 players) or expansion (2-12).")] = "classic",
    option: Annotated[list[str], typer.Option("--option", help="max-saboteurs, broken-tools-forfeit.")] = [],
    email: Annotated[list[str], typer.Option("--email", help="NAME=ADDRESS for mail; 'host' for the host.")] = [],
    timing: TimingOptions = TimingOptions(),
    webhook: WebhookOptions = WebhookOptions(),
    trustless: Annotated[bool, typer.Option("--trustless", help="The seats shuffle and deal among themselves; "
                                            "the host holds no secret (docs/trustless.md). Such a game has a file "
                                            "of its own: saves/GAME.db or --db FILE.")] = False,
    threshold: Annotated[int | None, optional("--threshold", help="With --trustless: how many of the other seats "
                                              "together can do a vanished seat's part (and could read its cards); "
                                              "default all of them (docs/trustless.md §11).")] = None,
    store: StoreOptions = StoreOptions(),
    output: OutOpt = None,
    home: HomeOpt = None,
    passphrase_file: PassOpt = None,
) -> None:
    """Create a game in the host's store and write the invitation to send to every player.

    With --deadline, every packet carries the time its seat must answer by; the automatic
    host reminds, sends late notices and follows --on-timeout (docs/playing.md). With
    --trustless nobody, host included, sees a card that is not theirs.
    """
    from pbem.auto.newgame import new_game, parse_emails
    check_game_name(game)
    hook = webhook.setting(None) or None
    seats = [parse_seat(p, home) for p in player]
    emails = parse_emails(email)
    rules = None
    if timing.given():
        if timing.deadline is None:
            raise UsageError(t("--grace, --days, --on-timeout, --absent-after, --bot-turns, --max-away and --remind need "
                                 "--deadline"))
        rules = timing.timing(None).to_config()
    host = identity_named(home, host_name, passphrase_file, t("which identity hosts the game? pass --host NAME"))
    made = new_game(game, host, seats, ruleset=ruleset, options=option, emails=emails, timing=rules,
                    absent_after=timing.absent_after, bot_turns=timing.bot_turns, trustless=trustless,
                    threshold=threshold, store=store.store, db=store.db, output=output, webhook=hook,
                    host_mail=emails.get(HOST) or _profile_sender(home))  # signed into the invitation: where seats mail
    _say_made(made, game, ruleset, output)

def _say_made(made: NewGame, game: str, ruleset: str, output: Path | None) -> None:
    """What `game new` made, where, and what the players do next (by mail or by hand)."""
    from pbem.host.paths import sqlite_file
    from pbem.host.store import shown

    typer.echo(t("created game {game} ({ruleset}, {n} seats) in {path}", game=made.game, ruleset=t(ruleset),
                 n=len(made.seats), path=shown(made.url)))
    typer.echo(t("invitation: {path}", path=made.invitation.resolve()))
    if sqlite_file(made.url) is None and output is None:  # a database server: its games' files are kept here
        typer.echo(t("the store is a database server: the files of game {game} (out/, mail/) are kept in {dir}",
                     game=game, dir=made.invitation.resolve().parent.parent), err=True)
    if not made.mailed:
        typer.echo(t("send it to every player; each answers with: pbem join INVITATION --as NAME"), err=True)
    elif len(made.mailed) == len(made.seats):
        typer.echo(t("'pbem host run {game}' mails it to every player; each joins with: pbem turn {game}", game=game),
                   err=True)
    else:
        typer.echo(t("'pbem host run {game}' mails it to {mailed}; send it yourself to {others} (each answers "
                     "with: pbem join INVITATION --as NAME)", game=game, mailed=words.join(made.mailed),
                     others=words.join([n for n in made.seats if n not in made.mailed])), err=True)


def register(app: typer.Typer, only: str | None = None) -> None:
    """Add the `game` group, with `game new`, to `app` (all, or only the command or group called
    `only`): transport and deadlines add their `game` commands to the same group."""
    if only in (None, "game"):
        app.add_typer(game_app, name="game")
