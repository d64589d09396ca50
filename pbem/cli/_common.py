"""What the command modules share, defining no command (as borg's archiver/_common.py): the
options that read the same on every command, each written once, the option groups, and the
helpers that open a game's host or unlock a key.

Option groups (the way sqlite-utils shares its click options): a command that needs, say, the
SMTP settings takes one parameter `smtp: Smtp`; `@grouped` (cli/_grouped.py) shows Typer the
group's fields as that command's options (--smtp-server, --smtp-port...) and hands the command
one `Smtp` object built from them. So the same options read the same way, with the same help
and defaults, on every command, and the code that turns them into a mail courier, an unlocked
key or an open store lives with them. Most of them are only needed once: the mail profile
('pbem mail setup') fills in what is not given. The mail options (Smtp, Reply, MailIn...) live
in cli/_mail_options.py, which only the commands that mail import, and the deadline and webhook
options in cli/_game_options.py, which only `game new` and `game config` import.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import msgspec
import typer

from pbem.errors import UsageError
from pbem.host.paths import out_dir, store_url
from pbem.names import check_game_name
from pbem.seat.home import key_home
from pbem.ui import words
from pbem.ui.words import t

if TYPE_CHECKING:
    from pbem.host.interface import GameHost, GameStatus
    from pbem.protocol.crypto import Identity

HOME_HELP = "Key home (default: $PBEM_HOME or the platform config dir)."


def optional(*flags: str, **settings: Any) -> Any:
    """An option that may be left out: typer.Option(*flags, ...) that shows no default (None
    would be shown as none)."""
    return typer.Option(*flags, show_default=False, **settings)


def argument(help: str, **settings: Any) -> Any:
    """A command's argument, said in `help`: typer.Argument that shows no default."""
    return typer.Argument(help=help, show_default=False, **settings)


def reader_zone(home: Path | None) -> Path | None:
    """The key home of the run (--home, else $PBEM_HOME, else the platform's) is known: when TZ
    is not set, dates are shown in the time zone its profile names (pbem.ui.when)."""
    import os

    from pbem.ui import zone

    if not os.environ.get("TZ"):
        from pbem.seat.home import key_home, profile_zone

        zone.set_zone(profile_zone(key_home(home)))
    return home


HomeOpt = Annotated[Path | None, optional("--home", help=HOME_HELP, callback=reader_zone)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
HintsOpt = Annotated[bool, typer.Option("--hints", help="On your turn: mark on the maze where each path card of "
                                        "your hand fits (by its number) and list every card's legal targets.")]


def home_everywhere(command: Any) -> Any:
    """`command` with --home on every command of its tree, as docs/playing.md promises: one
    that does not declare it (it reads no key itself: status, replay, game email...) takes it
    as the key home of the run, $PBEM_HOME, which whatever it calls that reads a key home
    (pbem.seat.home.key_home) then finds."""
    import os

    import typer.core

    from pbem.seat.home import ENV_HOME

    def chosen(ctx: Any, param: Any, value: str | None) -> None:
        if value is not None:
            os.environ[ENV_HOME] = value
        reader_zone(None)

    for sub in getattr(command, "commands", {}).values():
        home_everywhere(sub)
    if not hasattr(command, "commands") and not any("--home" in getattr(p, "opts", ()) for p in command.params):
        command.params.append(typer.core.TyperOption(param_decls=["--home"], help=HOME_HELP, expose_value=False,
                                                     callback=chosen, is_eager=True, metavar="PATH"))
    return command


def only_identity(where: Path, question: str) -> str:
    """The one identity in key home `where`; with none or several, `question` and their names."""
    from pbem.seat import keys

    names = [n for n, _ in keys.list_identities(where)]
    if len(names) != 1:
        raise UsageError(question, hint=t("identities in {where}: {names}", where=where,
                                          names=words.listing(names) or t("none (pbem key new NAME)")))
    return names[0]

PassOpt = Annotated[Path | None, optional("--passphrase-file", help="Read the key's passphrase from this file (or set "
                                                                    "PBEM_PASSPHRASE).")]
GameArg = Annotated[str, argument("The game's name (as given to 'pbem game new'; 'pbem games' lists them).")]
StoreOpt = Annotated[str | None, optional(
    "--store", help="The host's store: a SQLite file or a URL such as postgresql+psycopg://USER@HOST/DB. "
                    "Default: $PBEM_STORE, else saves/GAME.db if it exists, else saves/pbem.db.")]
OptGameArg = Annotated[str | None, argument(
    "The game's name; may be left out when the store holds one game ('pbem games' lists them).")]
DbOpt = Annotated[Path | None, optional("--db", help="A store file (the same as --store FILE).")]
OutOpt = Annotated[Path | None, optional("-o", "--output", help="Write the file here.")]
AsOpt = Annotated[str | None, optional("--as", help="Your identity (key name); default: the only one in the key home.")]


game_app = typer.Typer(help="Create and configure games (host side).", no_args_is_help=True)


def first_time(group: typer.Typer, tag: str) -> bool:
    """True the first time `tag` adds its commands to `group`, False after: `game` gathers commands
    from three modules, and the app and `game_app` outlive one register(app)."""
    added: set[str] = group.__dict__.setdefault("_pbem_added", set())
    if tag in added:
        return False
    added.add(tag)
    return True


def open_host(game: str | None, store: str | None, db: Path | None) -> GameHost:
    """The game called GAME in the chosen store (refused if the store has no such game; with
    no name, the store's only game): its referee, or a trustless game's blind host; a trustless
    game's file beside the store (GAME.db, made apart) is found too."""
    url, _ = _where(game, store, db)
    return _open_host(url, game)


def open_unlocked_host(game: str | None, store: str | None, db: Path | None, home: Path | None,
                       passphrase_file: Path | None) -> GameHost:
    """open_host's host, holding its key. When the store's file names the host's key (a SQLite
    file: pbem.host.paths.probe), its
    unlock begins first, so that a passphrase's scrypt runs while the store's layer is imported
    and the store opened (pbem.seat.keys.unlocking); the key unlocked is the one the
    store names (another name, unlocked as before), and errors come in the same order as when it
    was unlocked after the store was open: the store's and the game's first, then the key's."""
    url, named = _where(game, store, db, host_key=True)
    early = identity_later(home, named, passphrase_file) if named is not None else None
    host = _open_host(url, game)
    try:
        name = host.host_name()
        host.identity = (early if early is not None and name == named else identity_later(home, name, passphrase_file))()
    except BaseException:
        host.close()
        raise
    return host


def _open_host(url: str, game: str | None) -> GameHost:
    from pbem.host.games import open_game

    return open_game(url, game)


def _where(game: str | None, store: str | None, db: Path | None, host_key: bool = False) -> tuple[str, str | None]:
    """The chosen store's URL (or that of a trustless game's file beside it, GAME.db), and with
    `host_key`, the name of the game's host key as a SQLite file says (pbem.host.paths.probe)."""
    from pbem.host.paths import as_url, probe, sqlite_file, store_folder

    if game is not None:
        check_game_name(game)
    url = store_url(store, db, game)
    path = sqlite_file(url)
    beside = store_folder(url) / f"{game}.db" if game is not None and db is None else None
    if beside is not None and beside != path and beside.is_file() and probe(beside)[0]:
        path, url = beside, as_url(beside)  # a trustless game made apart: a file of its own beside the store
    elif path is None:
        return url, None
    return url, probe(path, game)[1] if host_key else None


def game_status(game: str | None, store: str | None, db: Path | None) -> GameStatus:
    """`pbem status`'s facts: a classic game's from the store alone (pbem.host.store.Store.status),
    without the referee, whose engine and documents a status does not need."""
    url, _ = _where(game, store, db)
    from pbem.host.store import Store

    with Store(url) as st:
        found = st.locate(game)
        if found.trustless:
            from pbem.host.blind import BlindHost

            with BlindHost(st, game=found) as b:
                return b.status()
        return st.status(found.id)


class StoreOptions(msgspec.Struct):
    """Which store holds the game: --store (a SQLite file or a database URL) or --db FILE; else
    $PBEM_STORE, else saves/GAME.db if it exists, else saves/pbem.db (pbem.host.paths.store_url)."""

    store: StoreOpt = None
    db: DbOpt = None

    def given(self) -> bool:
        """Whether a store was named."""
        return bool(self.store or self.db)

    def url(self, game: str | None = None) -> str:
        return store_url(self.store, self.db, game)

    def host(self, game: str | None) -> GameHost:
        """open_host's host of GAME in this store."""
        return open_host(game, self.store, self.db)

    def unlocked_host(self, game: str | None, home: Path | None, passphrase_file: Path | None) -> GameHost:
        """open_unlocked_host's host of GAME in this store, holding its key."""
        return open_unlocked_host(game, self.store, self.db, home, passphrase_file)

    def status(self, game: str | None) -> GameStatus:
        """game_status's facts of GAME in this store."""
        return game_status(game, self.store, self.db)


def host_out_dir(host: GameHost) -> Path:
    """Where a host's packet files go by default: GAME/out/ beside its store (or its own file)."""
    return out_dir(host.name, host.url)


def identity_named(home: Path | None, name: str | None, passphrase_file: Path | None,
                   question: str | None = None) -> Identity:
    """The key `name` (else the only one in the key home; with several, `question`), unlocked."""
    return identity_later(home, name, passphrase_file, question)()


def identity_later(home: Path | None, name: str | None, passphrase_file: Path | None,
                   question: str | None = None) -> Callable[[], Identity]:
    """identity_named, begun now: the call it returns gives the identity or raises what
    identity_named would have (pbem.seat.keys.unlocking: a passphrase's scrypt runs meanwhile)."""
    from pbem.seat import keys

    where = key_home(home)
    return keys.unlocking(where, lambda: name or only_identity(where, question or t("which identity? pass --as NAME")),
                          passphrase_file)


def write_packets(host: GameHost, out: Path) -> list[Path]:
    """Write the packets not yet written to `out` as packet-NNNNNN.pbem; return the new files.

    Only packets after the folder's delivery mark are read, so the cost does not grow with
    the game; a packet committed but not written (a crash in between) is written now.
    """
    from pbem.host.publish import OutDir, publish_pending

    return [Path(where) for seq, where in publish_pending(host, OutDir(out)) if seq]


class KeyOptions(msgspec.Struct):
    """Whose key signs: --as NAME in --home, unlocked with --passphrase-file (or $PBEM_PASSPHRASE)."""

    as_name: AsOpt = None
    home: HomeOpt = None
    passphrase_file: PassOpt = None

    @property
    def where(self) -> Path:
        return key_home(self.home)

    def identity(self, name: str | None = None) -> Identity:
        """The key --as names (or `name`, or the only one in the key home), unlocked."""
        return self.unlocking(name)()

    def unlocking(self, name: str | None = None) -> Callable[[], Identity]:
        """identity(name), begun now (identity_later): the call it returns gives it."""
        return identity_later(self.home, name or self.as_name, self.passphrase_file)


