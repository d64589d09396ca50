"""What a command touches is what its work needs, as a person sees it: a seat's `show`, `move`
and `turn` on a shared folder open no store, reach no network or mail server and start no
process, and write nowhere but the seat's own key home and the file asked for; a help page and
--version touch nothing at all, and the help lists every command in every language; `status`
needs no key and leaves the store as it was; a command whose key an agent holds asks no
passphrase and talks to the agent alone. Each case runs the real command line in a fresh
interpreter on a real game (key files, a SQLite store, packet files, a shared folder) and
records, through Python's audit events, every file it opens, every store it connects to, every
socket, mail server and process.

And pbem gets there plainly: nothing in pbem/ replaces modules in `sys.modules`, reaches into
another library's private modules, or writes into its own package folder; a command line
converts only the command it names. How long commands take is measured by scripts/bench
(ratios to a bare interpreter, with their aims), not here."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from source_trees import nodes, sources

from engine.bots import RandomBot
from pbem.auto.host_runner import FolderHost
from pbem.cli import PARTS
from pbem.folder.play import FolderSeat, init_folder
from pbem.host import referee as H
from pbem.protocol import crypto
from pbem.protocol.documents import read_blocks
from pbem.seat import keys
from pbem.seat import player as P
from pbem.seat.home import key_path

SEATS = ["ann", "bob", "cat"]
PBEM = Path(__file__).resolve().parents[1] / "pbem"

# Runs pbem's real entry point with the arguments given, watching Python's audit events: each
# file opened (read or written), store connected to, socket connected or bound, name looked up,
# mail server opened and process started; then prints its exit code and what it saw, and the
# modules the command loaded (sys.modules as it ends, read).
PROBE = """
import json, os, sys
seen = []
WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT
def watch(event, args):
    if event == "open" and not isinstance(args[0], int):
        mode, flags = args[1], args[2] or 0
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool(flags & WRITE)
        seen.append(["write" if writes else "read", os.fsdecode(os.fspath(args[0]))])
    elif event == "sqlite3.connect":
        seen.append(["store", str(args[0])])
    elif event in ("socket.connect", "socket.bind"):
        seen.append(["socket" if isinstance(args[1], (str, bytes)) else "network", repr(args[1])])
    elif event == "socket.getaddrinfo":
        seen.append(["network", str(args[0])])
    elif event in ("smtplib.connect", "imaplib.open"):
        seen.append(["mail", str(args[1])])
    elif event in ("subprocess.Popen", "os.exec", "os.posix_spawn", "os.fork"):
        seen.append(["process", str(args[0]) if args else event])
sys.addaudithook(watch)
import pbem.entry
sys.argv = ["pbem", *sys.argv[1:]]
code = 0
try:
    pbem.entry.main()
except SystemExit as exc:
    code = exc.code
print("\\nWATCHED", code, json.dumps(seen))
print("LOADED", json.dumps(sorted(sys.modules)))
"""


class Seen:
    """What one command did (the PROBE's record), and its output."""

    def __init__(self, args: list[str], env: dict[str, str | None], cwd: Path, stdin: int | None = None,
                 codes: tuple[str, ...] = ("0", "None")) -> None:
        full = {**os.environ, **env}  # None: a variable unset
        run = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=cwd,
                             env={k: v for k, v in full.items() if v is not None}, stdin=stdin)
        assert "WATCHED" in run.stdout, run.stdout + run.stderr
        self.out, record = run.stdout.rsplit("WATCHED", 1)
        record, loaded = record.split("\nLOADED ")
        code, events = record.split(" ", 2)[1:]
        self.modules: set[str] = set(json.loads(loaded))
        assert code in codes, f"pbem {' '.join(args)} failed ({code}): {run.stderr}"
        self.events: list[tuple[str, str]] = [tuple(e) for e in json.loads(events)]  # type: ignore[misc]

    def of(self, *kinds: str) -> list[str]:
        return [what for kind, what in self.events if kind in kinds]

    def written(self) -> list[Path]:
        """The files written, but Python's own compiled modules."""
        return [Path(w) for w in self.of("write") if "__pycache__" not in Path(w).parts]

    def opened(self) -> list[Path]:
        return [Path(w) for w in self.of("read", "write")]


def touches_no_store_network_or_mail(seen: Seen) -> None:
    assert seen.of("store") == [] and [p for p in seen.opened() if p.suffix == ".db"] == []
    assert seen.of("network", "mail", "process") == []


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


def command(line: str, game: dict, out: Path) -> list[str]:
    """The words of `line` for this game (the move: one word); {mover}, {text} and {out}: the
    seat to move, a legal move and a fresh file for it."""
    return [w.format(mover=game["mover"], text=game["text"], out=out) for w in line.split()]


# A seat's commands on a classic game, run from its key home: what each may write besides it.
SEAT_COMMANDS = [
    ("show packet.pbem --as {mover}", False),
    ("show packet.pbem --as {mover} --json", False),
    ("move packet.pbem {text} --as {mover} -o {out}", True),
    ("turn shared --as {mover}", False),
    ("key list", False),
    ("--lang zh-Hans key list", False),
]


@pytest.mark.parametrize("line,writes_out", SEAT_COMMANDS,
                         ids=["show", "show --json", "move", "turn", "key list", "key list zh-Hans"])
def test_a_seats_command_touches_no_store_network_or_mail(game: dict, line: str, writes_out: bool,
                                                          tmp_path: Path) -> None:
    """A seat reads its packet or its folder with its own key: it opens no store (not the
    host's, lying next to the packet), reaches no network or mail server, starts no process, and
    writes only into its own key home and, for `move`, the move file asked for."""
    home = game["homes"][game["mover"]]
    seen = Seen(command(line, game, tmp_path / "move.pbem"), {"PBEM_HOME": str(home), "PBEM_PASSPHRASE": ""},
                game["root"])
    touches_no_store_network_or_mail(seen)
    elsewhere = [p for p in seen.written() if not p.is_relative_to(home)]
    assert len(elsewhere) == writes_out and all(p.parent == tmp_path for p in elsewhere), elsewhere
    if writes_out:
        assert (tmp_path / "move.pbem").is_file()


@pytest.mark.parametrize("lang", ["en", "zh-Hans", "zh-Hant"])
def test_help_and_version_touch_nothing_and_the_help_lists_every_command(game: dict, lang: str) -> None:
    """`pbem --help`, `pbem` alone and `pbem --version` read no key, open no store, reach no
    network and write nothing; the help lists every command and group, in every language."""
    home = game["homes"]["ann"]
    for args in (["--lang", lang, "--help"], ["--lang", lang, "--version"], []):
        seen = Seen(args, {"PBEM_HOME": str(home), "PBEM_LANG": lang}, game["root"], codes=("0", "2" if not args else "0"))
        touches_no_store_network_or_mail(seen)
        assert seen.written() == [] and [p for p in seen.opened() if p.is_relative_to(game["root"])] == []
        if "--version" not in args:
            listed = {line.split()[1] for line in seen.out.splitlines() if line.startswith("│ ") and line.split()[1:]}
            assert {word for words in PARTS.values() for word in words} <= listed, seen.out


def test_status_needs_no_key_and_leaves_the_store_as_it_was(game: dict) -> None:
    """`status` reads the store: with no key home at all, no key is read, the store's file is
    unchanged, and nothing goes to the network."""
    store = game["root"] / "game.db"
    before = store.read_bytes()
    for args in (["status", "--db", "game.db"], ["status", "--db", "game.db", "--json"]):
        seen = Seen(args, {"PBEM_HOME": str(game["root"] / "no-home")}, game["root"])
        assert seen.of("store") and seen.of("network", "mail", "process") == []
        assert [p for p in seen.opened() if "no-home" in p.parts] == [] and seen.written() == []
    assert store.read_bytes() == before


def test_apply_touches_no_network_or_mail_and_loads_only_its_work(game: dict, tmp_path: Path) -> None:
    """The host applying a move file: its store changes and the next packets are written, and
    nothing goes to a network or a mail server. It loads what that work needs, and neither
    Alembic (the migrations: only a store of an older schema needs them), nor SQLAlchemy's ORM
    (the store is SQLAlchemy Core), nor the module of any other command."""
    from pbem.cli import PARTS, whole

    root = game["root"]
    shutil.copyfile(root / "game.db", tmp_path / "copy.db")
    seen = Seen(["apply", "t", "--db", str(tmp_path / "copy.db"), "move.pbem", "--out", str(tmp_path / "out")],
                {"PBEM_HOME": str(game["homes"]["referee"]), "PBEM_PASSPHRASE": ""}, root)
    assert seen.of("network", "mail", "process") == [] and list((tmp_path / "out").glob("*.pbem"))
    app = whole()
    commands = [*app.registered_commands, *(c for g in app.registered_groups for c in g.typer_instance.registered_commands)]  # type: ignore[union-attr]
    others = {c.callback.__module__ for c in commands if c.callback is not None} | {f"pbem.cli.{part}" for part in PARTS}
    others.discard(next(c.callback.__module__ for c in app.registered_commands if c.name == "apply"))
    assert "pbem.cli.games" in others
    assert seen.modules & {"alembic", "sqlalchemy.orm", *others} == set() and "sqlalchemy" in seen.modules


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


@pytest.mark.parametrize("line", ["audit --db ended.db --round 1", "replay --db ended.db --round 1 --json"],
                         ids=["audit", "replay"])
def test_reading_a_round_writes_nothing_and_stays_local(game: dict, ended: Path, line: str) -> None:
    """audit and replay read a finished round from the store: the store is unchanged, nothing is
    written, nothing goes to a network or a mail server."""
    before = ended.read_bytes()
    seen = Seen(line.split(), {"PBEM_HOME": str(game["homes"]["referee"]), "PBEM_PASSPHRASE": ""}, game["root"])
    assert seen.of("network", "mail", "process") == [] and seen.written() == []
    assert ended.read_bytes() == before


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
    Seen(["agent", "start", "--as", mover], {**env, "PBEM_PASSPHRASE": AGENT_PASSPHRASE}, game["root"])
    try:
        yield env
    finally:
        Seen(["agent", "stop"], env, game["root"])
        shutil.rmtree(runtime, ignore_errors=True)


# a seat whose key the agent holds: no passphrase in the environment, none asked for
AGENT_COMMANDS = [
    "show packet.pbem --as {mover}",
    "show packet.pbem --as {mover} --json",
    "move packet.pbem {text} --as {mover} -o {out}",  # seals its text to the host
]


@pytest.mark.parametrize("line", AGENT_COMMANDS, ids=["show", "show --json", "move"])
def test_a_command_with_the_agent_asks_no_passphrase_and_talks_to_the_agent_alone(
        game: dict, agent: dict[str, str], line: str, tmp_path: Path) -> None:
    """With no passphrase anywhere and nothing to read one from (stdin closed), the command works:
    the agent answered, over its socket in the runtime folder, the one socket it used."""
    seen = Seen(command(line, game, tmp_path / "move.pbem"), {**agent, "PBEM_PASSPHRASE": None}, game["root"],
                stdin=subprocess.DEVNULL)
    touches_no_store_network_or_mail(seen)
    sockets = seen.of("socket")
    assert sockets and all(agent["XDG_RUNTIME_DIR"] in s for s in sockets), sockets


@pytest.mark.parametrize("line,work", [("turn shared --as {mover}", "auto/turn"), ("show packet.pbem --as {mover}", "seat/screen"),
                                       ("move packet.pbem {text} --as {mover} -o {out}", "seat/player")],
                         ids=["turn", "show", "move"])
def test_a_passphrases_unlock_begins_before_the_command_loads_its_work(game: dict, line: str, work: str,
                                                                        tmp_path: Path) -> None:
    """With a passphrase at hand, a seat's key file is read and its scrypt begun (on a thread of
    its own, which cryptography runs without the GIL) before the command loads the protocol's
    cryptography (msgspec, signing, sealing) and what its work needs, so that those load
    meanwhile on another core: the key file is opened before either module."""
    home, mover = tmp_path / "home", game["mover"]
    shutil.copytree(game["root"] / "home-unanswered", home)
    key_path(home, mover).write_bytes(crypto.identity_to_bytes(keys.load_identity(home, mover, None),
                                                               AGENT_PASSPHRASE.encode(), scrypt_n=1024))
    seen = Seen(command(line, game, tmp_path / "move.pbem"),
                {"PBEM_HOME": str(home), "PBEM_PASSPHRASE": AGENT_PASSPHRASE, "XDG_RUNTIME_DIR": str(tmp_path)},
                game["root"])
    opened = [str(p) for p in seen.opened()]
    key = opened.index(str(key_path(home, mover)))
    for module in ("protocol/crypto", work):
        folder, name = module.split("/")  # its source or its compiled form
        loaded = next(i for i, p in enumerate(opened) if f"pbem/{folder}/" in p and Path(p).name.startswith(f"{name}."))
        assert key < loaded, module


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


def test_nothing_in_pbem_replaces_a_module_in_sys_modules() -> None:
    """No stand-ins while a library loads: pbem never assigns into, deletes from or updates
    `sys.modules` (it reads it nowhere either: no code path depends on what is loaded)."""
    found = []
    for path in sources("pbem"):
        for node in nodes(path):
            if isinstance(node, ast.Attribute) and node.attr == "modules" and \
                    isinstance(node.value, ast.Name) and node.value.id == "sys":
                found.append(f"{path.relative_to(PBEM.parent)}:{node.lineno}")
    assert found == []


# The private modules of other libraries pbem imports, each for what it does, not for speed.
PRIVATE_ALLOWED = {
    "typer._click": "Typer vendors click: its exception classes",
}


def _imported(node: ast.AST) -> list[str]:
    """The dotted names a node imports, in each way a module can be imported: `import a._b`,
    `from a import _b` (a._b, a module or a private name of a's), `from a._b import c`, and
    `importlib.import_module("a._b")` or `__import__("a._b")` with the name written out."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return [node.module, *(f"{node.module}.{a.name}" for a in node.names if a.name != "*")]
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if called in ("import_module", "__import__"):
            return [node.args[0].value]
    return []


def _private(name: str) -> bool:
    return any(p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in name.split("."))


def test_pbem_imports_no_other_private_module_of_a_library() -> None:
    """pbem and its engine use libraries, the standard library too, through their public modules
    (cryptography's binding, say, or the interpreter's _sha256, are theirs to move): an import of
    a module path with a part starting with `_`, anywhere in a module (inside a function too) and
    in any form (`from rich import _wrap`, importlib), is one of PRIVATE_ALLOWED."""
    found = []
    for path in sources("pbem", "engine"):
        for node in nodes(path):
            for name in _imported(node):
                if not name.startswith(("pbem", "engine", "__future__")) and _private(name) \
                        and not any(name == a or name.startswith(f"{a}.") for a in PRIVATE_ALLOWED):
                    found.append(f"{path.relative_to(PBEM.parent)}:{node.lineno} {name}")
    assert found == []


def test_the_private_import_check_sees_every_form(tmp_path: Path) -> None:
    """The check above reads each way of importing a private module (rich's _wrap, say, whose
    word pattern help pages once replaced), and passes the public ones."""
    code = ("import rich._wrap\nfrom rich import _wrap\nfrom rich._wrap import divide_line\n"
            "def f():\n    import importlib\n    return importlib.import_module('rich._wrap'), __import__('rich._wrap')\n"
            "from rich.text import Text\nfrom rich import __version__\n")
    got = [name for node in ast.walk(ast.parse(code)) for name in _imported(node) if _private(name)]
    assert sorted(got) == ["rich._wrap"] * 5 + ["rich._wrap.divide_line"]


def test_a_command_writes_nothing_into_pbems_own_folder(game: dict, tmp_path: Path) -> None:
    """What pbem reads of its own files (the message catalogs, the command modules) it reads as
    they are: run from a copy of the package, commands leave nothing in its folder but Python's
    own compiled modules."""
    copy = tmp_path / "src" / "pbem"
    shutil.copytree(PBEM, copy, ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PBEM_HOME": str(game["homes"]["ann"]), "PYTHONDONTWRITEBYTECODE": "",
           "PYTHONPATH": os.pathsep.join([str(copy.parent), str(PBEM.parent)])}
    for line in ("--lang zh-Hans --help", "--lang zh-Hant key list", "key list"):
        assert any(p.is_relative_to(copy) for p in Seen(line.split(), env, tmp_path).opened())  # the copy ran
    added = {p.relative_to(copy) for p in copy.rglob("*") if p.is_file() and p.suffix != ".pyc"} - \
        {p.relative_to(PBEM) for p in PBEM.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert sorted(map(str, added)) == []
