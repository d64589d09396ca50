"""Start-up stays light: `import pbem.cli` loads nothing heavy, and each command loads only what
it uses (issue 16.1). Each case runs the real command line in a fresh interpreter on a real
game (key files, a SQLite store, packet files, a shared folder) and lists what it imported;
a heavy import that comes back to a command's path fails here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.bots import RandomBot
from pbem.auto.host_runner import FolderHost
from pbem.folder.play import FolderSeat, init_folder
from pbem.host import referee as H
from pbem.protocol import crypto
from pbem.protocol.documents import read_blocks
from pbem.seat import keys
from pbem.seat.home import key_path
from pbem.seat import player as P

SEATS = ["ann", "bob", "cat"]

# Runs pbem's real main() with the arguments given, then prints every module it imported (not a
# stand-in of pbem.cli.slim's that nothing needed the real module of).
PROBE = ("import sys\nimport pbem.cli\nsys.argv = ['pbem', *sys.argv[1:]]\ncode = 0\n"
         "try:\n    pbem.cli.main()\nexcept SystemExit as exc:\n    code = exc.code\n"
         "print('\\nLOADED', code, ' '.join(sorted(n for n, m in sys.modules.items() if type(m).__name__ != 'StandIn')))")

# What costs start-up time, and what no command needs unless it says so below.
SQL = ("sqlalchemy", "alembic")
RICH = ("rich", "typer.rich_utils")  # typer.rich_utils also loads markdown-it: a help page's alone
DOCUMENTS = ("msgspec", "pbem.protocol.documents")
CRYPTO = ("cryptography", "pbem.protocol.crypto")
RULES = ("engine.rules", "engine.bots")
CARDS = ("engine.catalog", "engine.moves")  # the card catalog and notation: for cards and moves put in words
BOTS = ("engine.bots",)  # only a game whose silent seats a bot plays for loads them
# cryptography's OpenSSL backend (RSA, EC, every cipher), which its X25519 classes import to ask
# about FIPS, and its ciphers package: pbem makes X25519 keys and a key file's ChaCha20-Poly1305
# through their binding (pbem.protocol.crypto), so no seat's command loads either
KEY_FILE = ("cryptography.hazmat.backends.openssl", "cryptography.hazmat.primitives.ciphers")
# hashlib loads OpenSSL's libcrypto (~2.5 ms): short inputs are hashed by engine.sha256, packets
# by cryptography's own OpenSSL (pbem.protocol.crypto.sha256_hex); hmac and secrets load hashlib
OPENSSL_HASHES = ("hashlib", "_hashlib", "hmac", "secrets")
# what SQLAlchemy imports at its top for its async engines and for dialects found by entry points
# (pbem.cli.play.slim_sqlalchemy), and what those two load: a store's command on SQLite needs none
SQL_UNUSED = ("asyncio", "importlib.metadata", "email", "zipfile", "ssl", "concurrent.futures")
PROMPT = ("getpass",)  # only to ask a person for a passphrase (none here: no terminal)
TRUSTLESS = ("rbcl", "pbem.protocol.mental", "pbem.protocol.trustless")  # a trustless game's only
ALWAYS = ("pydantic",  # Typer 0.27+ converts parameters through it (pyproject.toml pins below)
          *TRUSTLESS, "pbem.mail", "pbem.auto")
TURN_ALWAYS = (*[m for m in ALWAYS if m != "pbem.auto"], "pbem.auto.host_runner", "pbem.auto.seat_bot", "pbem.auto.demo",
               "pbem.auto.trustless_bot", "pbem.auto.polling")
# what typer.rich_utils would import for features pbem does not use (pbem.cli.helptext.rich_utils)
HELP_UNUSED = ("markdown_it", "rich.markdown", "rich.traceback", "rich.pretty", "attr",
               "fractions", "decimal", "pickle", "rich._emoji_codes")  # ... and what rich would import
# what Typer imports for launch(), shell completion, uuid parameters, its own tracebacks and "did
# you mean" (pbem.cli.slim); a seat's commands load uuid and platform with msgspec (its UUID
# type), and click's parser loads difflib to match a short option (move's -o)
TYPER_UNUSED = ("subprocess", "platform", "uuid", "traceback", "difflib", "shellingham")
NOT_A_SEATS = ("subprocess", "traceback", "shellingham",
               "uuid", "platform", "typing_extensions")  # what msgspec loads for UUIDs and hints (play.slim_msgspec)
# the command modules that add no seat's show nor move (pbem.cli.PARTS)
OTHER_COMMANDS = ("pbem.cli.transport", "pbem.cli.turn", "pbem.cli.replay", "pbem.cli.deadlines", "pbem.cli.options",
                  "pbem.cli.position", "pbem.cli.agent")
COMMAND_MODULES = (*OTHER_COMMANDS, "pbem.cli.play", "pbem.cli.keys")
# what a seat's show and move never need (the host's side, bots, hashlib, a prompt, other commands)
SEAT = (*NOT_A_SEATS, *SQL, *ALWAYS, "pbem.host.referee", "pbem.host.store", "engine.bots", *OPENSSL_HASHES, *PROMPT,
        *OTHER_COMMANDS, *KEY_FILE)
# what `pbem show` draws without: the rules (only a move is checked against them), and rich's table
# of emoji names (its markup path; pbem.ui.render gives tables their cells as Text)
SHOW_UNUSED = ("engine.rules", "rich._emoji_codes")
# a seat with no agent running opens no socket (pbem.seat.agent finds no socket file; pbem.atomic
# names its temp files by platform.node, not socket.gethostname): socket only to ask an agent
NO_AGENT = ("socket",)
IMPORT = (*SQL, *RICH, *DOCUMENTS, *CRYPTO, *RULES, *ALWAYS, "pbem.seat.keys", "pbem.seat.player", "pbem.host.referee", "pbem.ui.render",
          "engine.state")


def loaded(args: list[str], env: dict[str, str], cwd: Path) -> set[str]:
    if args[0] == "move":  # an earlier test's move file, from another key home, is another move: never written over
        (cwd / "out.pbem").unlink(missing_ok=True)
    run = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=cwd,
                         env={**os.environ, **env})
    assert "LOADED" in run.stdout, run.stdout + run.stderr
    code, *names = run.stdout.rsplit("LOADED", 1)[1].split()
    assert code in ("0", "None"), f"pbem {' '.join(args)} failed ({code}): {run.stderr}"
    return set(names)


def heavy(names: set[str], banned: tuple[str, ...]) -> list[str]:
    """The banned modules (or their submodules) among `names`."""
    return sorted(b for b in banned if any(n == b or n.startswith(b + ".") for n in names))


def test_importing_the_cli_loads_nothing_heavy() -> None:
    names = loaded(["--version"], {}, Path.cwd())  # --version runs before any command is converted
    code = "import sys, pbem.cli; print(' '.join(sys.modules))"
    names |= set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
    assert heavy(names, IMPORT) == []


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A dealt classic game of three in a store file, and the same table over a shared folder."""
    root = tmp_path_factory.mktemp("startup")
    homes = {n: root / f"home-{n}" for n in ["referee", *SEATS]}
    ids = {n: keys.create_identity(h, n, None) for n, h in homes.items()}
    db = root / "game.db"
    inv = H.create_game(db, "t", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS], [])
    with H.Host(db, ids["referee"], game="t") as host:
        for s in SEATS:
            host.accept(read_blocks(P.join(read_blocks(inv.armored())[0], ids[s], homes[s]).armored())[0])
        packet = read_blocks(host.packets()[-1][1])[0]
    (root / "packet.pbem").write_text(packet.armored())
    mover = packet.doc.to_move
    sp = P.open_packet(packet, ids[mover], homes[mover], remember=False)
    text = str(RandomBot(1).choose(sp.view))
    (root / "move.pbem").write_text(P.make_move(sp, text).armored())
    # the folder game: its own store file, dealt once every seat joined through the folder
    fdb = root / "folder.db"
    H.create_game(fdb, "f", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS], [])
    with H.Host(fdb, ids["referee"], game="f") as host:
        folder, _ = init_folder(root / "shared", host)
        for s in SEATS:
            FolderSeat.open(folder.dir, ids[s], homes[s]).join()
        FolderHost(host, folder.dir, lambda line: None).step()
    # the mover's home before any command of the tests answered the packet from it: the agent's
    # `move` must seal its move, not send again one an earlier test kept there
    shutil.copytree(homes[mover], root / "home-unanswered")
    return {"root": root, "homes": homes, "mover": mover, "text": text}


# (command line, whose key home, banned modules); {mover} and {text}: the seat to move and a legal move
COMMANDS = [
    ("key list", "ann", (*TYPER_UNUSED, "shutil", *SQL, *RICH, *DOCUMENTS, *RULES, *ALWAYS, *OPENSSL_HASHES, *PROMPT, *CARDS)),
    # a help page writes no file (pbem.atomic's socket) and asks no agent (the runtime folder's tempfile)
    # the root page lists the commands from what pbem.cli.listing keeps: no command module loads
    ("--help", "ann", (*TYPER_UNUSED, *COMMAND_MODULES, *SQL, *DOCUMENTS, *CRYPTO, *RULES, *ALWAYS, "pbem.seat.keys", *HELP_UNUSED, *OPENSSL_HASHES,
                       "socket", "tempfile", *CARDS)),
    ("--lang zh-Hans key list", "ann", (*SQL, *RICH, *DOCUMENTS, *RULES, *ALWAYS)),  # help words only for help
    ("show packet.pbem --as {mover}", "{mover}", (*SEAT, "typer.rich_utils", *NO_AGENT, *SHOW_UNUSED)),
    ("show packet.pbem --as {mover} --json", "{mover}", (*SEAT, *RICH, *NO_AGENT, *SHOW_UNUSED)),
    ("move packet.pbem {text} --as {mover} -o out.pbem", "{mover}", (*SEAT, *RICH, *NO_AGENT)),
    # (pbem.auto.turn is the turn of every transport; the host's and the bots' runners stay out)
    ("turn shared --as {mover}", "{mover}", (*SQL, "typer.rich_utils", *TURN_ALWAYS, "pbem.host.referee", "pbem.host.store",
                                             "engine.bots")),
    # a status is read from the store alone (Store.status): no referee, engine, documents, nor
    # cryptography (a seat's fingerprint is read off its key's line: pbem.protocol.keyline); and its
    # columns of ASCII words are padded without rich's table of character widths
    ("status --db game.db", "referee", (*RICH, "pbem.ui.render", *ALWAYS, *BOTS, "pbem.seat.player", "pbem.host.referee",
                                        "pbem.host.timekeeper", "pbem.host.publish", *DOCUMENTS, *RULES, "engine.state",
                                        *CARDS, *CRYPTO, *SQL_UNUSED)),
    ("status --db game.db --json", "referee", (*RICH, "pbem.host.referee", *DOCUMENTS, *RULES, *CRYPTO, *SQL_UNUSED)),
    ("apply t --db copy.db move.pbem --out out", "referee", ("rich.console", "typer.rich_utils", "pbem.ui.render",
                                                            *ALWAYS, *BOTS, "pbem.seat.player", *SQL_UNUSED)),
]


@pytest.mark.parametrize("line,home,banned", COMMANDS, ids=[c[0].split(" {")[0].split(" -o")[0].replace("{mover} ", "") for c in COMMANDS])
def test_a_command_loads_only_what_it_uses(game: dict, line: str, home: str, banned: tuple[str, ...]) -> None:
    root = game["root"]
    (root / "copy.db").write_bytes((root / "game.db").read_bytes())  # apply changes its store: a fresh copy each time
    words = [w.format(mover=game["mover"], text=game["text"]) for w in line.split()]  # the move: one word
    env = {"PBEM_HOME": str(game["homes"][home.format(mover=game["mover"])]), "PBEM_PASSPHRASE": ""}
    if words == ["--help"]:  # the first root page after pbem/cli changed builds what pbem.cli.listing keeps
        env["PYTHONDONTWRITEBYTECODE"] = ""  # (kept as bytecode is: never where none is written)
        loaded(words, env, root)
    assert heavy(loaded(words, env, root), banned) == []


@pytest.fixture(scope="module")
def ended(game: dict) -> Path:
    """A store whose game of three played its first round to the end (random bots): what
    audit and replay read."""
    root = game["root"]
    ids = {n: keys.load_identity(h, n, None) for n, h in game["homes"].items()}
    db = root / "ended.db"
    inv = H.create_game(db, "e", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS], [])
    bots = {s: RandomBot(i) for i, s in enumerate(SEATS)}
    with H.Host(db, ids["referee"], game="e") as host:
        for s in SEATS:
            host.accept(read_blocks(P.join(read_blocks(inv.armored())[0], ids[s], game["homes"][s]).armored())[0])
        while not host.archives():
            packet = read_blocks(host.packets()[-1][1])[0]
            seat = packet.doc.to_move
            sp = P.open_packet(packet, ids[seat], game["homes"][seat], remember=False)
            host.accept(read_blocks(P.make_move(sp, str(bots[seat].choose(sp.view))).armored())[0])
    return db


# audit and replay of a round of a store's game: a trustless game's protocol (rbcl, which
# loads doctest and unittest) only for a trustless game; no table drawn for --json
READERS = [
    ("audit --db ended.db --round 1", ("rich.console", "typer.rich_utils", "pbem.ui.render", *ALWAYS, *BOTS,
                                       "pbem.seat.trustless", "pbem.replay.trustless", "unittest")),
    ("replay --db ended.db --round 1 --json", ("rich.console", "typer.rich_utils", "pbem.ui.render", *ALWAYS, *BOTS,
                                               "pbem.seat.trustless", "pbem.replay.trustless", "unittest")),
]


@pytest.mark.parametrize("line,banned", READERS, ids=[c[0].split(" --db")[0] for c in READERS])
def test_reading_a_round_loads_only_what_it_uses(game: dict, ended: Path, line: str, banned: tuple[str, ...]) -> None:
    env = {"PBEM_HOME": str(game["homes"]["referee"]), "PBEM_PASSPHRASE": ""}
    assert heavy(loaded(line.split(), env, game["root"]), banned) == []


# Runs pbem's entry point as the console script does; at the very end (atexit) prints how
# many collections ran after the command started and how many objects were frozen for the exit.
COLLECTOR_PROBE = ("import atexit, gc, sys\nfrom pbem.entry import main\nsys.argv = ['pbem', *sys.argv[1:]]\n"
                   "before = sum(s['collections'] for s in gc.get_stats())\n"
                   "atexit.register(lambda: print('\\nGC', sum(s['collections'] for s in gc.get_stats()) - before,"
                   " gc.get_freeze_count()))\nmain()")


def test_a_store_command_runs_without_the_collector_and_exits_frozen(game: dict) -> None:
    """Start-up's ~90,000 lasting objects are not gone through by the collector while they are
    imported, nor freed one by one at exit (pbem/entry.py): ~90 ms of a store's command."""
    run = subprocess.run([sys.executable, "-c", COLLECTOR_PROBE, "status", "--db", "game.db"], capture_output=True,
                         text=True, cwd=game["root"], env={**os.environ, "PBEM_HOME": str(game["homes"]["referee"])})
    assert run.returncode == 0 and "GC" in run.stdout, run.stdout + run.stderr
    collections, frozen = map(int, run.stdout.rsplit("GC", 1)[1].split())
    assert collections == 0 and frozen > 50_000


AGENT_PASSPHRASE = "startup test words"


@pytest.fixture(scope="module")
def agent(game: dict) -> Iterator[dict[str, str]]:
    """The mover's key protected by a passphrase, in a key home of its own, held by a running key
    agent (started and stopped by pbem's own commands): the environment of a command using it."""
    runtime = Path(tempfile.mkdtemp(prefix="pbem-run-", dir="/tmp"))  # a socket's path is limited to ~104 bytes
    runtime.chmod(0o700)
    home, mover = game["root"] / "home-agent", game["mover"]
    shutil.copytree(game["root"] / "home-unanswered", home)
    key_path(home, mover).write_bytes(crypto.identity_to_bytes(keys.load_identity(home, mover, None),
                                                               AGENT_PASSPHRASE.encode(), scrypt_n=1024))
    env = {"PBEM_HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}
    loaded(["agent", "start", "--as", mover], {**env, "PBEM_PASSPHRASE": AGENT_PASSPHRASE}, game["root"])
    try:
        yield env
    finally:
        loaded(["agent", "stop"], env, game["root"])
        shutil.rmtree(runtime, ignore_errors=True)


# (command line, banned modules) of a seat whose key the agent holds: no passphrase in the environment
AGENT_COMMANDS = [
    # with XDG_RUNTIME_DIR set, the agent's socket is found without tempfile (gettempdir), and so
    # without shutil (tempfile imports it; Typer loads it only for a page's or a prompt's width)
    ("show packet.pbem --as {mover}", (*SEAT, "typer.rich_utils", "tempfile", "shutil", *SHOW_UNUSED)),
    ("show packet.pbem --as {mover} --json", (*SEAT, *RICH, "tempfile", "shutil", *SHOW_UNUSED)),
    ("move packet.pbem {text} --as {mover} -o out.pbem", (*SEAT, *RICH, "tempfile", "shutil")),  # seals its text to the host
]


@pytest.mark.parametrize("line,banned", AGENT_COMMANDS, ids=[c[0].split(" {")[0].split(" -o")[0].replace("{mover} ", "")
                                                         for c in AGENT_COMMANDS])
def test_a_command_with_the_agent_loads_no_key_file_machinery(game: dict, agent: dict[str, str], line: str,
                                                              banned: tuple[str, ...]) -> None:
    words = [w.format(mover=game["mover"], text=game["text"]) for w in line.split()]
    names = loaded(words, agent, game["root"])
    assert "pbem.seat.agent" in names  # the agent answered: no passphrase was there to fall back on
    assert heavy(names, banned) == []


@pytest.mark.parametrize("line", ["show packet.pbem --as {mover} --json", "move packet.pbem {text} --as {mover} -o out.pbem"],
                         ids=["show --json", "move"])
def test_a_command_with_a_passphrase_loads_no_cipher_module(game: dict, line: str, tmp_path: Path) -> None:
    """The mover's key protected by a passphrase, and no agent: the key file opens, and the move
    seals its text to the host, without cryptography's backend or ciphers package."""
    home, mover = tmp_path / "home", game["mover"]
    shutil.copytree(game["root"] / "home-unanswered", home)
    key_path(home, mover).write_bytes(crypto.identity_to_bytes(keys.load_identity(home, mover, None),
                                                               AGENT_PASSPHRASE.encode(), scrypt_n=1024))
    words = [w.format(mover=mover, text=game["text"]) for w in line.split()]
    names = loaded(words, {"PBEM_HOME": str(home), "PBEM_PASSPHRASE": AGENT_PASSPHRASE}, game["root"])
    assert heavy(names, (*SEAT, *RICH, *NO_AGENT)) == []


@pytest.mark.parametrize("argv", [["--help"], [], ["--lang", "zh-Hans", "--help"], ["game", "--help"], ["key", "--help"],
                                  ["show", "--help"], ["mail", "--help"], ["host", "run", "--help"],
                                  ["--lang", "zh-Hant", "folder", "--help"]])
def test_a_help_page_from_the_branch_is_the_whole_trees(argv: list[str], monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """pbem.cli.branch converts only the command a line names, and a group's page lists its
    commands without converting their parameters; pbem.cli.tree_for loads only the modules that
    add that command; the root page is pbem.cli.listing's, from what it keeps: the page must not
    change."""
    import typer.main

    from pbem.cli import app, command_line
    from pbem.cli.helptext import localise
    from pbem.ui import words

    monkeypatch.setenv("COLUMNS", "100")
    pages = []
    for make in (lambda: typer.main.get_command(app), lambda: command_line(argv)):
        words.set_language(words.language_in(argv))
        cmd = localise(make(), argv)
        with pytest.raises(SystemExit) as done:
            cmd.main(argv, prog_name="pbem")
        assert done.value.code in (0, 2), argv  # 2: a group named without a command (no_args_is_help)
        pages.append(capsys.readouterr().out)
    words.set_language(None)
    assert pages[0] == pages[1] and ("Usage: pbem" in pages[0] or "用法：pbem" in pages[0])


def test_the_root_page_is_declared_in_pbem_cli() -> None:
    """What pbem.cli.listing keeps of the root page is stamped with pbem/cli's files: every
    top-level command (its function, whose docstring is its help) and group (its help) must be
    declared in them, or an edit elsewhere would leave the page stale."""
    from pbem.cli import whole

    cli = Path(__file__).resolve().parents[1] / "pbem" / "cli"
    source = "".join(f.read_text() for f in cli.glob("*.py"))
    for info in whole().registered_commands:
        assert info.callback is not None and info.callback.__module__.startswith("pbem.cli."), info.callback
    for group in whole().registered_groups:
        help = group.help or group.typer_instance.info.help  # type: ignore[union-attr]
        assert isinstance(help, str) and help[:25] in source, group.name


def test_each_command_module_adds_the_words_pbem_cli_lists() -> None:
    """pbem.cli.PARTS says which modules add each top-level command and group, so that a command
    line imports only the modules of its first word: each module adds the words listed for it
    (its own commands and groups, and the groups of others it adds commands to: `game`), and
    all together add no other."""
    import typer.main

    from pbem.cli import PARTS, tree, whole

    def words(app: typer.Typer) -> set[str]:
        return ({i.name or typer.main.get_command_name(i.callback.__name__)  # type: ignore[union-attr]
                 for i in app.registered_commands} | {g.name for g in app.registered_groups if g.name})

    for part, listed in PARTS.items():
        joined = {g.name for g in whole().registered_groups if g.name and any(
            i.callback.__module__ == f"pbem.cli.{part}" for i in g.typer_instance.registered_commands)}  # type: ignore[union-attr]
        assert words(tree([part])) | joined == set(listed), part
    assert words(whole()) == {w for listed in PARTS.values() for w in listed}


def test_what_a_help_page_loads_later_is_the_real_thing() -> None:
    """The modules pbem.cli.slim stands in while Typer and rich load for a help page are the real
    ones when asked for more than their stand-ins hold: an emoji code, a style's meta data
    (pickle), rich's ratios (fractions), a mistyped command's suggestion (difflib), subprocess."""
    code = ("import sys\nfrom pbem.cli import helptext\nhelptext.rich_utils()\n"
            "from rich.text import Text\nfrom rich.style import Style\nfrom rich._ratio import ratio_resolve\n"
            "import typer.core, typer.main\n"
            "print(Text.from_markup(':thumbs_up: ok').plain, Style(meta={'a': 1}).meta,\n"
            "      ratio_resolve(10, [type('E', (), {'size': None, 'ratio': 1, 'minimum_size': 1})()] * 2),\n"
            "      typer.core.get_close_matches('shw', ['show']), typer.main.subprocess.DEVNULL == -3)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.stdout.split("\n")[0] == "\U0001f44d ok {'a': 1} [5, 5] ['show'] True", run.stdout + run.stderr


def test_what_sqlalchemy_loads_later_is_the_real_thing() -> None:
    """The modules pbem.cli.slim stands in while SQLAlchemy loads (pbem.cli.play.slim_sqlalchemy)
    are the real ones when SQLAlchemy asks them for more: asyncio's exceptions (which it checks an
    error against), entry points (a dialect it does not know by name), and a store still works."""
    code = ("import sys\nfrom pbem.cli.play import slim_sqlalchemy\nslim_sqlalchemy()\n"
            "print('asyncio' in sys.modules, 'importlib.metadata' in sys.modules)\n"
            "import asyncio, importlib.metadata\nfrom sqlalchemy import create_engine, text\n"
            "from sqlalchemy.util import compat, concurrency\n"
            "print(concurrency.asyncio.CancelledError is asyncio.CancelledError,\n"
            "      compat.importlib_metadata.entry_points is importlib.metadata.entry_points,\n"
            "      concurrency.iscoroutine(None), create_engine('sqlite://').connect().execute(text('select 7')).scalar())")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.stdout.split("\n")[:2] == ["False False", "True True False 7"], run.stdout + run.stderr
