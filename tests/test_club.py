"""A club host: many games in one store, one daemon (`pbem host run --all`), `pbem games`.

Real processes, real key files, real folders; real SQLite files and a real PostgreSQL server
(tests/pg_server.py). The kill test SIGKILLs one of two daemons on one store mid-game; where the
daemons are the point, the players' bots play in threads of this process (cli_games.BotHere).
"""

from __future__ import annotations

import json
import os
import random
import select as io
import signal
import subprocess
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cli_games import BotHere, bots_here
from process_tools import wait_all
from processes import PBEM, cli_env, pbem, start
from sqlalchemy import create_engine, func, select

from engine.position import dump, load
from engine.rules import apply
from pbem.auto.newgame import new_game
from pbem.folder.layout import GameFolder
from pbem.folder.play import FolderSeat, init_folder
from pbem.host import referee as H
from pbem.host.clock import parse_time
from pbem.host.settings import TransportSetting
from pbem.host.tables import moves
from pbem.protocol.documents import read_blocks
from pbem.seat import keys
from pbem.ui import words

SEATS = ["ann", "bob", "cat"]
GAMES = ["oak", "elm", "ash"]


def run(root: Path, home: Path, *args: object, ok: bool = True) -> subprocess.CompletedProcess:
    return pbem(*args, home=home, cwd=root, ok=ok)


def in_process(here, root: Path):
    """`run` through the command line's own entry in this process (the `here` fixture): for the
    commands a test runs after its one real `pbem` process of them."""
    def cmd(home: Path, *args: object, ok: bool = True) -> subprocess.CompletedProcess:
        return here(*args, home=home, cwd=root, ok=ok)
    return cmd


def club(root: Path, games: list[str], store: str | None = None) -> dict[str, Path]:
    """Keys for a host and three players; `games` created in one store (the default one the
    commands find in `root` when `store` is None), each with its own shared folder, by the library
    `pbem game new` and `pbem folder init` call: what the tests that use it test is the daemons
    serving the games (the docs' club test runs the commands themselves)."""
    homes = {n: root / f"home-{n}" for n in ["referee", *SEATS]}
    ids = {n: keys.create_identity(h, n, None) for n, h in homes.items()}
    store = store or str(root / "saves" / "pbem.db")
    for g in games:
        new_game(g, ids["referee"], [(s, ids[s].public) for s in SEATS], store=store,
                 output=root / g / "out" / "invitation.pbem")
        with H.Host(store, game=g) as host:
            folder, _ = init_folder(root / "shared" / g, host)
            host.set_settings(transport=TransportSetting(folder=str(folder.dir.resolve())))
    return homes


@pytest.mark.slow
def test_a_newcomer_hosts_three_games_with_one_daemon(tmp_path: Path, here) -> None:
    # the commands run in this process: the docs' club below runs each of them, the daemon's pass
    # too, as a process of its own
    cmd = in_process(here, tmp_path)
    # the games are made in the store the commands below find by default, as `pbem game new` and
    # `pbem folder init` make them (those two as commands: the docs' club below)
    homes = club(tmp_path, GAMES)
    assert (tmp_path / "saves" / "pbem.db").is_file() and len(list((tmp_path / "saves").glob("*.db"))) == 1
    # oak has deadlines: an hour per packet, a reminder a second after each packet
    cmd(homes["referee"], "game", "config", "oak", "--deadline", "1h", "--remind", "3599s")
    ids = {s: keys.load_identity(homes[s], s, None) for s in SEATS}
    for g in GAMES:
        for s in SEATS:
            FolderSeat.open(tmp_path / "shared" / g, ids[s], homes[s]).join()
    # bad input in one game's inbox must not stop the others
    garbage = tmp_path / "shared" / "elm" / "inbox" / "garbage.pbem"
    garbage.write_text("not a pbem file\n")
    os.utime(garbage, (time.time() - 60, time.time() - 60))  # not a file still being written
    out = cmd(homes["referee"], "host", "run", "--all", "--once").stdout
    for g in GAMES:
        folder = GameFolder.open(tmp_path / "shared" / g)
        assert [seq for seq, _ in folder.packets(None)] == [1], out  # everyone joined: dealt, published
    assert "rejected garbage.pbem" in out
    listed = json.loads(cmd(homes["referee"], "games", "--json").stdout)
    hosting = {g["name"]: g for g in listed["hosting"]}
    assert sorted(hosting) == sorted(GAMES)
    for g in hosting.values():
        assert g["status"] == "playing" and g["round"] == 1 and g["seq"] == 1 and g["to_move"] in SEATS
        assert g["joined"] == g["seats"] == 3 and g["transport"] == "folder" and g["since"]
    oak = read_blocks(GameFolder.open(tmp_path / "shared" / "oak").packets(None)[0][1].read_text())[0].doc
    assert oak.deadline is not None and hosting["oak"]["due"] == oak.deadline.due and hosting["elm"]["due"] is None
    text = cmd(homes["referee"], "games", "--host").stdout
    assert all(f"{g['to_move']} to move" in text for g in hosting.values())
    assert f"due {words.date(oak.deadline.due)} (in " in text
    played = json.loads(cmd(homes["ann"], "games", "--player", "--json").stdout)["playing"]
    assert sorted(p["name"] for p in played) == sorted(GAMES) and all(p["seat"] == "ann" for p in played)
    # a second pass changes nothing: every join is applied once
    # (and the one loop keeps every game's clock: oak's reminder is due a second after its packet)
    reminded = parse_time(oak.deadline.due) - timedelta(seconds=3599)
    time.sleep(max(0.0, (reminded - datetime.now(UTC)).total_seconds()) + 0.2)  # often past already
    again = cmd(homes["referee"], "host", "run", "--all", "--once").stdout
    assert "applied" not in again and "dealt" not in again
    assert again.count("notice: reminder") == 1, again
    assert [len(GameFolder.open(tmp_path / "shared" / g).notices()) for g in GAMES] == [1, 0, 0]
    # the game is named uniformly, and a name the store does not hold is refused
    bad = cmd(homes["referee"], "status", "pine", ok=False)
    assert bad.returncode == 2 and bad.stderr.startswith("error: no game 'pine' in store")
    players = [a for s in SEATS for a in ("--player", f"{s}={keys.load_public(homes[s], s).encode()}")]
    taken = cmd(homes["referee"], "game", "new", "oak", "--host", "referee", *players, ok=False)
    assert taken.returncode == 2 and "already has a game called 'oak'" in taken.stderr


def _docs_block(marker: str) -> str:
    """The ```sh block after `<!-- try: MARKER -->` in docs/playing.md, as the reader sees it."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "playing.md").read_text(encoding="utf-8")
    after = text.split(f"<!-- try: {marker} -->\n", 1)[1]
    assert after.startswith("```sh\n"), after[:40]
    return after[len("```sh\n"):].split("\n```", 1)[0]


# bash's `pbem` in a try-it block: each call asks the test (a FIFO) whether to start the real
# command, or takes what the test ran in its own process (exit code, stdout, stderr in files).
_ASKING = """pbem() {
  printf '%s\\0' "$#" "$PWD" "$@" > "$PBEM_ASK/call"
  local answer
  read -r answer < "$PBEM_ASK/answer"
  if [ "$answer" = real ]; then "$PBEM_PYTHON" -m pbem.cli "$@"; return; fi
  cat "$PBEM_ASK/out"; cat "$PBEM_ASK/err" >&2
  return "$answer"
}
"""


def _kind(args: list[str]) -> tuple[str, ...]:
    """The command `pbem ARGS` runs, by its words (`host run`, `turn`)."""
    from typer.core import TyperGroup

    from pbem.cli import command_line

    command, words = command_line(args), []
    for word in args:
        inner = command.commands.get(word) if isinstance(command, TyperGroup) else None
        if inner is None:
            break
        command, words = inner, [*words, word]
    return tuple(words)


def _calls(fd: int, pending: bytes) -> tuple[list[list[str]], bytes]:
    """The whole calls in what came (each: its folder, then its arguments), and the rest."""
    pending += os.read(fd, 1 << 16)
    found = []
    while (head := pending.partition(b"\0"))[1]:
        fields = pending.split(b"\0", int(head[0]) + 2)
        if len(fields) < int(head[0]) + 3:
            break
        found.append([f.decode() for f in fields[1:-1]])
        pending = fields[-1]
    return found, pending


def _answer_calls(bash: subprocess.Popen, ask: Path, calls: int, answers: int, here,
                  seen: set[tuple[str, ...]]) -> None:
    """Answer bash's calls until it ends: `real` for the first of each command not in `seen`
    (each added to it), else the exit code of the run in this process, its stdout and stderr in
    ask/out and ask/err."""
    pending, deadline = b"", time.monotonic() + 900
    while bash.poll() is None:
        assert time.monotonic() < deadline, "the block did not finish"
        if not io.select([calls], [], [], 0.2)[0]:
            continue
        found, pending = _calls(calls, pending)
        for cwd, *args in found:
            answer, kind = "real", _kind(args)
            if kind in seen:
                ran = here(*args, home=None, cwd=Path(cwd), env={"PBEM_LANG": "en", "PBEM_STORE": None})
                (ask / "out").write_text(ran.stdout)
                (ask / "err").write_text(ran.stderr)
                answer = str(ran.returncode)
            seen.add(kind)
            os.write(answers, f"{answer}\n".encode())


def _run_docs_block(tmp_path: Path, marker: str, here, real_elsewhere: frozenset[tuple[str, ...]] = frozenset()
                    ) -> tuple[subprocess.CompletedProcess[str], set[tuple[str, ...]]]:
    """Run a try-it block with bash in an empty folder; it must succeed. The first `pbem` of
    each command is a real process bash starts, unless the command is in `real_elsewhere` (run
    as a real process by the other block); the other runs of a command (the same code, run
    again on other files) go through the command line's own entry in this process (`here`), with
    the environment the processes have. Also: the commands it ran as real processes."""
    seen = set(real_elsewhere)
    env = {k: v for k, v in cli_env(tmp_path).items() if k not in ("PBEM_HOME", "PBEM_STORE")}
    env["PBEM_LANG"] = "en"
    with tempfile.TemporaryDirectory(dir=tmp_path.parent) as scratch:
        ask = Path(scratch)
        os.mkfifo(ask / "call")
        os.mkfifo(ask / "answer")
        # both ends held open here for the whole block: no end of file between the calls, and an
        # answer waits in its pipe until bash reads its line
        calls, answers = os.open(ask / "call", os.O_RDWR), os.open(ask / "answer", os.O_RDWR)
        with (ask / "stdout").open("w+") as out, (ask / "stderr").open("w+") as err:
            bash = subprocess.Popen(["bash", "-euo", "pipefail", "-c", _ASKING + _docs_block(marker)], cwd=tmp_path,
                                    env={**env, "PBEM_ASK": str(ask), "PBEM_PYTHON": PBEM[0]}, stdout=out, stderr=err)
            try:
                _answer_calls(bash, ask, calls, answers, here, seen)
            finally:
                if bash.poll() is None:
                    bash.kill()
                bash.wait()
                os.close(calls)
                os.close(answers)
            out.seek(0)
            err.seek(0)
            r = subprocess.CompletedProcess(bash.args, bash.returncode, out.read(), err.read())
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r, seen - real_elsewhere


# The commands the club's block runs, each first as a real process (its test checks that it still
# does): the trustless block runs them in this process, its own commands as real processes.
CLUB_BLOCK_COMMANDS = frozenset({("key", "new"), ("game", "new"), ("folder", "init"), ("turn",), ("host", "run"),
                                 ("games",)})


@pytest.mark.slow
def test_the_newcomers_club_in_docs_playing_runs_as_written(tmp_path: Path, here) -> None:
    """docs/playing.md section 9's try-it block, run by bash in an empty folder, the first `pbem`
    of each command a real process: three games in one store, one daemon, and 'pbem games' lists
    them."""
    r, real = _run_docs_block(tmp_path, "club", here)
    assert real == CLUB_BLOCK_COMMANDS, real
    assert sorted(p.name for p in (tmp_path / "saves").glob("*.db")) == ["pbem.db"]
    listed = r.stdout.split("games you host:\n", 1)[1].splitlines()
    for g in GAMES:
        assert [seq for seq, _ in GameFolder.open(tmp_path / "shared" / g).packets(None)] == [1], r.stdout
        line = next(x for x in listed if x.split()[0] == g)
        assert "round 1, packet 1" in line and " to move" in line, line


@pytest.mark.slow
def test_the_trustless_game_by_mail_in_docs_playing_runs_as_written(tmp_path: Path, here) -> None:
    """docs/playing.md section 4's trustless try-it block, run by bash in an empty folder, the
    first `pbem` of each command the club's block does not run a real process (the club's
    ones run there as processes: CLUB_BLOCK_COMMANDS), folders of .eml files for mailboxes: the
    invitation mailed, three joins by mail, the three shuffles and deal tokens sent by `pbem
    turn` alone, ann's first move by `pbem mail-move`, and 'pbem games' says the table waits
    for bob's move."""
    from pbem.host.blind import BlindHost
    from pbem.seat.trustless import chain_in

    r, real = _run_docs_block(tmp_path, "trustless-mail", here, CLUB_BLOCK_COMMANDS)
    assert real == {("inbox",), ("mail-join",), ("mail-move",)}, real
    assert sorted(p.name for p in (tmp_path / "saves").glob("*.db")) == ["pbem.db"]  # the club's store keeps it
    with BlindHost(tmp_path / "saves" / "pbem.db", game="friday") as h:
        st, chain = h.status(), h.packets()
    assert st["seq"] == 8 and st["waiting"] == {"step": "move", "seats": ["bob"]}, st
    steps = [read_blocks(a)[0].doc.waiting.step for _, a in chain]
    assert steps == ["shuffle"] * 3 + ["deal"] * 3 + ["move"] * 2
    listed = r.stdout.split("games you host:\n", 1)[1]
    assert "friday" in listed and "the table waits for the move step from bob" in listed, listed
    bobs = r.stdout.split("games you play:\n")[-1].splitlines()[0]
    assert "as bob" in bobs and "YOUR TURN: the table waits for the move step from bob" in bobs, bobs
    for who in ("ann", "bob", "cat"):  # each key home holds the chain its mail brought, from packet 1, no gap
        game = next((tmp_path / f"keys-{who}" / "games").iterdir())
        kept = [p.doc.seq for p in chain_in(sorted((game / "packets").glob("*.pbem")), game.name)]
        assert kept == list(range(1, len(kept) + 1)) and len(kept) >= 4, (who, kept)  # to its deal tokens at least
        if who == "ann":
            assert kept[-1] == 7  # her turn's mail: every packet since her deal tokens
    assert "error" not in r.stderr.lower(), r.stderr[-3000:]


@pytest.mark.slow
def test_host_run_all_serves_the_trustless_games_of_the_store(tmp_path: Path, here) -> None:
    """A trustless game is kept in the club's store as any game (no file of its own): --all serves it
    over the folder 'pbem folder init' remembered, says once why it cannot serve one that has
    no folder yet, and 'pbem games' lists it with the step its table waits for. (The commands run
    in this process: the docs' club runs each of them as a process of its own.)"""
    cmd = in_process(here, tmp_path)
    homes = club(tmp_path, ["oak"])
    players = [a for s in SEATS for a in ("--player", f"{s}={keys.load_public(homes[s], s).encode()}")]
    for g in ("duo", "trio"):
        cmd(homes["referee"], "game", "new", g, "--host", "referee", *players, "--trustless")
    assert sorted(p.name for p in (tmp_path / "saves").glob("*.db")) == ["pbem.db"]
    cmd(homes["referee"], "folder", "init", "duo", tmp_path / "shared" / "duo")
    ids = {s: keys.load_identity(homes[s], s, None) for s in SEATS}
    for g in ("oak", "duo"):
        for s in SEATS:
            FolderSeat.open(tmp_path / "shared" / g, ids[s], homes[s]).join()
    out = cmd(homes["referee"], "host", "run", "--all", "--once").stdout
    for g in ("oak", "duo"):
        assert [seq for seq, _ in GameFolder.open(tmp_path / "shared" / g).packets(None)] == [1], out
    duo = read_blocks(GameFolder.open(tmp_path / "shared" / "duo").packets(None)[0][1].read_text())[0].doc
    assert duo.waiting is not None and duo.waiting.step == "shuffle" and len(duo.relayed) == 3
    assert "host duo" in out and "everyone is in" in out
    assert out.count("not serving trio yet: game trio has no transport yet") == 1, out
    listed = {g["name"]: g for g in json.loads(cmd(homes["referee"], "games", "--json").stdout)["hosting"]}
    assert sorted(listed) == ["duo", "oak", "trio"]
    assert listed["duo"]["trustless"] and listed["duo"]["transport"] == "folder" and listed["duo"]["seq"] == 1
    assert listed["duo"]["waiting"] == {"step": "shuffle", "seats": [duo.waiting.seats[0]]}
    assert listed["trio"]["transport"] is None and listed["trio"]["joined"] == 0
    text = cmd(homes["referee"], "games", "--host").stdout
    assert f"the table waits for the shuffle step from {duo.waiting.seats[0]}" in text
    # the next pass: nothing new, the reason for trio not said again
    again = cmd(homes["referee"], "host", "run", "--all", "--once").stdout
    assert "everyone is in" not in again and again.count("not serving trio yet") == 1


def _check(url: str, game: str, referee: Path) -> int:
    """The game is over, every round replays from its archive, and every move was applied
    exactly once; returns the number of moves."""
    with H.Host(url, keys.load_identity(referee, "referee", None), game=game) as host:
        assert host.status()["status"] == "over"
        archives = host.archives()
        game_id = host.game_id()
    assert sorted(archives) == [1, 2, 3]
    total = 0
    for armored in archives.values():
        doc = read_blocks(armored)[0].doc
        state = load(doc.start)
        for i, m in enumerate(doc.moves, 1):
            assert m.n == i
            apply(state, m.text)
        assert dump(state) == doc.final
        total += len(doc.moves)
    engine = create_engine(url)
    with engine.connect() as c:
        assert c.execute(select(func.count()).select_from(moves).where(moves.c.game_id == game_id)).scalar() == total
    engine.dispose()
    return total


def _applied_once(url: str, game: str, folder: GameFolder) -> int:
    """Every move of `game` so far applied exactly once (numbered 1, 2, ... in each round, none
    twice, none left out), and every packet published once, in order; returns the number of moves."""
    with H.Host(url, game=game) as host:
        seq, game_id = host.head()[0], host.game_id()
    engine = create_engine(url)
    with engine.connect() as c:
        numbers = c.execute(select(moves.c.round_no, moves.c.n).where(moves.c.game_id == game_id)).all()
    engine.dispose()
    by_round: dict[int, list[int]] = {}
    for round_no, n in numbers:
        by_round.setdefault(round_no, []).append(n)
    assert all(sorted(ns) == list(range(1, len(ns) + 1)) for ns in by_round.values()), by_round  # each once
    assert [s for s, _ in folder.packets(None)] == list(range(1, seq + 1))
    return len(numbers)


def _serving(log: Path, proc: subprocess.Popen, others: list[subprocess.Popen] | list[BotHere], deadline: float) -> bool:
    """Wait until a daemon says it serves a game (True), or it stopped, the others all ended or time ran out."""
    while time.monotonic() < deadline and proc.poll() is None and any(p.poll() is None for p in others):
        if "serving " in log.read_text():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_two_daemons_on_one_store_one_killed_again_and_again(tmp_path: Path, store_url: str, here) -> None:
    """Two `pbem host run --all` share two games of one store; one of them is SIGKILLed four
    times at random moments of its serving and started again: no move is lost or applied twice,
    no packet published twice or left out. On PostgreSQL, the club's store, both games then go
    on to their end and every round replays from its archive. On SQLite the test stops once the
    kills are done: what is the store's own is how its transactions come through the kills (a
    whole game served to its end by two daemons on SQLite is tests/test_trustless_club.py's, a
    host killed again and again until its SQLite game ends tests/test_autohost.py's)."""
    whole = store_url.startswith("postgresql")
    games = GAMES[:2]
    homes = club(tmp_path, games, store_url)
    # --poll is only the look at every game: a move's file wakes its daemon at once (pbem.watch),
    # and the leases are renewed and taken over on rounds of their own (--lease)
    daemon = lambda log: start(  # noqa: E731
        [*PBEM, "host", "run", "--all", "--store", store_url, "--poll", "0.5", "--lease", "1"], env=cli_env(homes["referee"]),
        stdout=log.open("ab"), stderr=subprocess.STDOUT)
    steady = daemon(tmp_path / "daemon-1.log")
    kills = 0
    moments = random.Random()
    victim = daemon(tmp_path / "daemon-2-0.log")
    deadline = time.monotonic() + 400
    everyone: list[BotHere] = []  # the players, in threads of this process: the daemons are the point
    try:
        assert _serving(tmp_path / "daemon-2-0.log", victim, [steady], deadline)  # the first kill comes early
        for g in games:
            # at a tenth of a second a step, a game outlasts the kills (in threads at full speed a game
            # was over after two)
            everyone += bots_here(tmp_path / "shared" / g, homes, tmp_path / "shared" / g, pace=0.1).values()
        # each victim is killed while it serves, not while Python is still importing (under load a
        # start can take longer than any fixed wait, and a kill would then land before 'serving');
        # a packet takes tens of ms, so half a second after 'serving' is any moment of its work.
        # Four kills: each restart imports pbem anew, about half a second of CPU
        while kills < 4 and _serving(tmp_path / f"daemon-2-{kills}.log", victim, everyone, deadline):
            time.sleep(moments.uniform(0.0, 0.5))
            victim.send_signal(signal.SIGKILL)  # at whatever moment it is in
            victim.wait()
            kills += 1
            victim = daemon(tmp_path / f"daemon-2-{kills}.log")
        if whole:
            for bot in everyone:  # the kills done, the rest of the game at full speed
                bot.pace = 0.0
            wait_all(everyone, timeout=60)
        assert victim.poll() is None and steady.poll() is None, "a daemon stopped by itself"  # it serves until stopped
    finally:
        for p in [steady, victim, *everyone]:
            if p.poll() is None:
                p.terminate()
                p.wait(10)
    logs = "".join(p.read_text() for p in tmp_path.glob("daemon-*.log"))
    assert kills >= 3 and all(b.returncode == 0 for b in everyone), logs
    for g in games:
        folder = GameFolder.open(tmp_path / "shared" / g)
        if whole:
            n = _check(store_url, g, homes["referee"])
            with H.Host(store_url, game=g) as host:
                seq = host.head()[0]
            assert [s for s, _ in folder.packets(None)] == list(range(1, seq + 1)) and n > 0
            assert len(list(folder.archive_dir.iterdir())) == 3
        else:
            # stopped mid-game: a SIGTERM can land between a packet's commit and its publishing, and
            # a move can come after it; the next start publishes and applies them (in this process)
            here("host", "run", g, "--once", "--store", store_url, home=homes["referee"], ok=True)
            assert _applied_once(store_url, g, folder) > 0
        rejected = folder.inbox_dir / "rejected"
        assert not rejected.exists() or not list(rejected.iterdir()), logs


@pytest.mark.slow  # a PostgreSQL server of its own, restarted twice under bots playing: 10-20 s
def test_a_daemon_serves_on_through_restarts_of_its_postgresql(tmp_path: Path, here) -> None:
    """The store's server restarts twice mid-game (at once, and after a second down): the daemon
    goes on serving without being restarted itself, and every move is applied once, each
    packet published once (pbem.host.server: pooled sessions the server ended are replaced as
    they are taken)."""
    from pg_server import PgServer

    server = PgServer()
    everyone: list[subprocess.Popen | BotHere] = []
    try:
        url = server.new_database()
        homes = club(tmp_path, ["oak"], url)
        log = tmp_path / "daemon.log"
        everyone.append(start([*PBEM, "host", "run", "--all", "--store", url, "--poll", "0.2", "--lease", "2"],
                              env=cli_env(homes["referee"]), stdout=log.open("ab"), stderr=subprocess.STDOUT))
        folder = GameFolder.open(tmp_path / "shared" / "oak")
        everyone += bots_here(folder.dir, homes, folder.dir).values()  # the players in threads of this process
        for at, down in ((5, 0.0), (15, 1.0), (25, None)):
            deadline = time.monotonic() + 120
            while len(folder.packets(None)) < at:
                assert time.monotonic() < deadline and everyone[0].poll() is None, log.read_text()[-3000:]
                time.sleep(0.05)
            if down is not None:
                server.restart(down)
        assert all(p.poll() is None for p in everyone), log.read_text()[-3000:]  # they serve and play on
        for p in everyone:
            p.terminate()
            p.wait(30)
        # A SIGTERM can land between a packet's commit and its publishing: the next start publishes it.
        here("host", "run", "oak", "--once", "--store", url, home=homes["referee"], ok=True)  # (in this process)
        assert _applied_once(url, "oak", folder) >= 20
    finally:
        for p in everyone:
            if p.poll() is None:
                p.terminate()
                p.wait(10)
        server.stop()
