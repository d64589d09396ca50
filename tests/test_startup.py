"""Start-up stays light where it matters to a person: each command loads the parts of pbem its
work needs and not the others (a seat's `show` and `move` no database, no mail, no trustless
protocol, no bots; a help page none of the protocol), and pbem gets there plainly: nothing in
pbem/ replaces modules in `sys.modules`, reaches into another library's private modules, or
writes into its own package folder. Each case runs the real command line in a fresh interpreter
on a real game (key files, a SQLite store, packet files, a shared folder) and lists what it
imported. How long commands take is measured by scripts/bench (ratios to a bare interpreter,
with their aims), not here."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
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
from pbem.seat import player as P
from pbem.seat.home import key_path

SEATS = ["ann", "bob", "cat"]
PBEM = Path(__file__).resolve().parents[1] / "pbem"

# Runs pbem's real main() with the arguments given, then prints every module it imported.
PROBE = ("import sys\nimport pbem.cli\nsys.argv = ['pbem', *sys.argv[1:]]\ncode = 0\n"
         "try:\n    pbem.cli.main()\nexcept SystemExit as exc:\n    code = exc.code\n"
         "print('\\nLOADED', code, ' '.join(sorted(sys.modules)))")

# The parts of pbem (and the libraries they bring) a command loads only if its work needs them.
STORE = ("sqlalchemy", "alembic", "pbem.host.store", "pbem.host.referee")  # the host's database
MAIL = ("pbem.mail", "smtplib", "imaplib", "mailbox")  # reading and sending mail
TRUSTLESS = ("rbcl", "pbem.protocol.mental", "pbem.protocol.trustless", "pbem.seat.trustless")  # mental poker
# the bots and the automatic host (pbem.auto.turn is every transport's `turn`: a seat's)
ROBOTS = ("engine.bots", "pbem.auto.host_runner", "pbem.auto.seat_bot", "pbem.auto.trustless_bot", "pbem.auto.demo",
          "pbem.auto.polling")
HELP = ("typer.rich_utils",)  # drawing a help page
PROTOCOL = ("cryptography", "msgspec", "pbem.protocol.documents", "pbem.protocol.crypto")  # keys, packets
RULES = ("engine.rules",)  # checking a move
# what none of a seat's commands on a classic game loads
SEAT = (*STORE, *MAIL, *TRUSTLESS, *ROBOTS, *HELP)


def loaded(args: list[str], env: dict[str, str], cwd: Path) -> set[str]:
    run = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=cwd,
                         env={**os.environ, **env})
    assert "LOADED" in run.stdout, run.stdout + run.stderr
    code, *names = run.stdout.rsplit("LOADED", 1)[1].split()
    assert code in ("0", "None"), f"pbem {' '.join(args)} failed ({code}): {run.stderr}"
    return set(names)


def heavy(names: set[str], banned: tuple[str, ...]) -> list[str]:
    """The banned modules (or their submodules) among `names`."""
    return sorted(b for b in banned if any(n == b or n.startswith(b + ".") for n in names))


def test_importing_the_cli_loads_no_part_of_pbem_a_command_brings() -> None:
    names = loaded(["--version"], {}, Path.cwd())
    code = "import sys, pbem.cli; print(' '.join(sys.modules))"
    names |= set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
    assert heavy(names, (*SEAT, *PROTOCOL, *RULES, "rich")) == []


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


# (command line, whose key home, what it must not load); {mover}, {text} and {out}: the seat to
# move, a legal move and a fresh file for it
COMMANDS = [
    ("--help", "ann", (*STORE, *MAIL, *TRUSTLESS, *ROBOTS, *PROTOCOL, *RULES)),
    ("--lang zh-Hans --help", "ann", (*STORE, *MAIL, *TRUSTLESS, *ROBOTS, *PROTOCOL, *RULES)),
    ("key list", "ann", (*SEAT, *RULES)),
    ("--lang zh-Hans key list", "ann", (*SEAT, *RULES)),
    ("show packet.pbem --as {mover}", "{mover}", SEAT),
    ("show packet.pbem --as {mover} --json", "{mover}", (*SEAT, "rich")),  # nothing drawn
    ("move packet.pbem {text} --as {mover} -o {out}", "{mover}", (*SEAT, "rich")),
    ("turn shared --as {mover}", "{mover}", SEAT),
    # a status is read from the store alone: no referee, no rules, no cryptography
    ("status --db game.db", "referee", (*MAIL, *TRUSTLESS, *ROBOTS, *HELP, *RULES, "pbem.host.referee",
                                        "cryptography")),
    ("status --db game.db --json", "referee", (*MAIL, *TRUSTLESS, *ROBOTS, *HELP, *RULES, "pbem.host.referee",
                                               "cryptography", "rich")),
    ("apply t --db copy.db move.pbem --out out", "referee", (*MAIL, *TRUSTLESS, *ROBOTS, *HELP, "rich")),
]


def command(line: str, game: dict, out: Path) -> list[str]:
    """The words of `line` for this game (the move: one word)."""
    return [w.format(mover=game["mover"], text=game["text"], out=out) for w in line.split()]


@pytest.mark.parametrize("line,home,banned", COMMANDS, ids=[c[0].split(" {")[0].split(" -o")[0].replace("{mover} ", "") for c in COMMANDS])
def test_a_command_loads_only_the_parts_it_uses(game: dict, line: str, home: str, banned: tuple[str, ...],
                                                 tmp_path: Path) -> None:
    root = game["root"]
    (root / "copy.db").write_bytes((root / "game.db").read_bytes())  # apply changes its store: a fresh copy each time
    env = {"PBEM_HOME": str(game["homes"][home.format(mover=game["mover"])]), "PBEM_PASSPHRASE": ""}
    assert heavy(loaded(command(line, game, tmp_path / "move.pbem"), env, root), banned) == []


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


# audit and replay of a classic round: no trustless protocol, nothing drawn for --json
READERS = [
    ("audit --db ended.db --round 1", (*MAIL, *TRUSTLESS, *ROBOTS, *HELP)),
    ("replay --db ended.db --round 1 --json", (*MAIL, *TRUSTLESS, *ROBOTS, *HELP, "rich")),
]


@pytest.mark.parametrize("line,banned", READERS, ids=[c[0].split(" --db")[0] for c in READERS])
def test_reading_a_round_loads_only_what_it_uses(game: dict, ended: Path, line: str, banned: tuple[str, ...]) -> None:
    env = {"PBEM_HOME": str(game["homes"]["referee"]), "PBEM_PASSPHRASE": ""}
    assert heavy(loaded(line.split(), env, game["root"]), banned) == []


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


# a seat whose key the agent holds: no passphrase in the environment, none asked for
AGENT_COMMANDS = [
    "show packet.pbem --as {mover}",
    "show packet.pbem --as {mover} --json",
    "move packet.pbem {text} --as {mover} -o {out}",  # seals its text to the host
]


@pytest.mark.parametrize("line", AGENT_COMMANDS, ids=["show", "show --json", "move"])
def test_a_command_with_the_agent_loads_only_the_parts_it_uses(game: dict, agent: dict[str, str], line: str,
                                                               tmp_path: Path) -> None:
    names = loaded(command(line, game, tmp_path / "move.pbem"), agent, game["root"])
    assert "pbem.seat.agent" in names  # the agent answered: no passphrase was there to fall back on
    assert heavy(names, (*SEAT, "getpass")) == []


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


def test_a_command_line_converts_only_the_command_it_names() -> None:
    """Typer converts the parameters of every command it is given: a command line is given the
    command or group its first word names, and a word that names none (a typo) the whole tree,
    so that click can suggest the command meant."""
    from pbem.cli import command_line

    assert list(command_line(["show", "packet.pbem"]).commands) == ["show"]
    assert list(command_line(["game", "new", "--help"]).commands) == ["game"]
    game = command_line(["game", "new"]).commands["game"]
    assert {"new", "email", "config"} <= set(game.commands)  # gathered from play, transport and deadlines
    assert {"show", "turn", "key", "game"} <= set(command_line(["shw"]).commands)


def _python_files(*packages: Path) -> list[tuple[Path, ast.Module]]:
    with warnings.catch_warnings():  # a module's own warnings (an escape in a string) are its tests' to report
        warnings.simplefilter("ignore")
        return [(path, ast.parse(path.read_text(), str(path))) for package in packages or (PBEM,)
                for path in sorted(package.rglob("*.py"))]


def test_nothing_in_pbem_replaces_a_module_in_sys_modules() -> None:
    """No stand-ins while a library loads: pbem never assigns into, deletes from or updates
    `sys.modules` (it reads it nowhere either: no code path depends on what is loaded)."""
    found = []
    for path, tree in _python_files():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "modules" and \
                    isinstance(node.value, ast.Name) and node.value.id == "sys":
                found.append(f"{path.relative_to(PBEM.parent)}:{node.lineno}")
    assert found == []


# The private modules of other libraries pbem imports, each for what it does, not for speed.
PRIVATE_ALLOWED = {
    "typer._click": "Typer vendors click: its exception and help-formatter classes",
    "rich._wrap": "a help page's line breaking between Chinese characters (pbem.cli.helptext)",
}


def test_pbem_imports_no_other_private_module_of_a_library() -> None:
    """pbem and its engine use libraries, the standard library too, through their public modules
    (cryptography's binding, say, or the interpreter's _sha256, are theirs to move): an import of
    a module path with a part starting with `_` is one of PRIVATE_ALLOWED."""
    found = []
    for path, tree in _python_files(PBEM, PBEM.parent / "engine"):
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            for name in names:
                if not name.startswith(("pbem", "engine", "__future__")) and any(p.startswith("_") for p in name.split(".")) \
                        and name not in PRIVATE_ALLOWED:
                    found.append(f"{path.relative_to(PBEM.parent)}:{node.lineno} {name}")
    assert found == []


def test_a_command_writes_nothing_into_pbems_own_folder(game: dict, tmp_path: Path) -> None:
    """What pbem reads of its own files (the message catalogs, the command modules) it reads as
    they are: run from a copy of the package, commands leave nothing in its folder but Python's
    own compiled modules."""
    copy = tmp_path / "src" / "pbem"
    shutil.copytree(PBEM, copy, ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PBEM_HOME": str(game["homes"]["ann"]), "PYTHONDONTWRITEBYTECODE": "",
           "PYTHONPATH": os.pathsep.join([str(copy.parent), str(PBEM.parent)])}
    for line in ("--lang zh-Hans --help", "--lang zh-Hant key list", "key list"):
        assert "pbem" in loaded(line.split(), env, tmp_path)
    added = {p.relative_to(copy) for p in copy.rglob("*") if p.is_file() and p.suffix != ".pyc"} - \
        {p.relative_to(PBEM) for p in PBEM.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert sorted(map(str, added)) == []
