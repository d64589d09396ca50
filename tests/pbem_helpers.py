"""The helpers tests share: a real game on disk (real key files, a real SQLite file, real
packet files), games made through the CLI and real processes, dumps of a store, free ports."""

from __future__ import annotations

import io
import os
import random
import select
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from processes import PBEM, cli_env, new_keys, pbem, start

from engine.bots import RandomBot
from engine.position import dump, load
from engine.rules import apply
from pbem.auto.host_runner import FolderHost
from pbem.folder.play import FolderSeat
from pbem.host import referee as H
from pbem.host.clock import FakeClock
from pbem.host.deadlines import Timing
from pbem.protocol.crypto import Identity, PublicKey
from pbem.protocol.documents import (
    Move,
    SealedMove,
    Signed,
    b64,
    move_commitment,
    read_blocks,
    read_file,
    seal_info,
    seal_json,
    sign,
)
from pbem.seat import keys
from pbem.seat import player as P

if TYPE_CHECKING:
    from mailservers import MailServers

    from pbem.auto.trustless_bot import TrustlessBot

PASS = b"correct horse"


@dataclass
class Table:
    root: Path
    host: H.Host
    ids: dict[str, Identity]
    homes: dict[str, Path]
    seats: list[str]
    files: list[Path] = field(default_factory=list)
    _last: tuple[int, str] = (0, "")  # the newest packet read so far

    def latest(self) -> tuple[Path, Signed]:
        # only the packets since the last one read: reading them all made a game quadratic
        new = self.host.packets(since=self._last[0])
        if new:
            self._last = new[-1]
        seq, armored = self._last
        path = self.root / "out" / f"packet-{seq:06d}.pbem"
        path.parent.mkdir(exist_ok=True)
        path.write_text(armored)
        self.files.append(path)
        return path, read_file(path)[0]

    def move_file(self, seat: str, text: str, packet: Signed, opened: P.SeatPacket | None = None) -> Path:
        """The seat's move file answering `packet` (`opened`: that packet already opened by the seat)."""
        sp = opened or P.open_packet(packet, self.ids[seat], self.homes[seat])
        mv = P.make_move(sp, text)
        path = self.root / "moves" / f"{seat}-{packet.doc.seq}.pbem"
        path.parent.mkdir(exist_ok=True)
        path.write_text(mv.armored())
        self.files.append(path)
        return path

    def apply_file(self, path: Path) -> list[H.Outcome]:
        return [self.host.accept(b) for b in read_file(path)]


def store_dump(url: str) -> str:
    """Every row of every table of a store (SQLite or PostgreSQL), in a stable order: two
    dumps are equal when nothing in the store changed."""
    from pbem.host.store import Store
    from pbem.host.tables import metadata

    with Store(url) as st, st.read() as c:
        return "\n".join(f"{t.name}: {sorted(map(repr, c.execute(t.select()).all()))}" for t in metadata.sorted_tables)


def make_table(root: Path, seats: list[str], ruleset: str = "classic", options: list[str] | None = None,
               store: str | None = None) -> Table:
    """A dealt game; in `store` (a URL) or else in a SQLite file root/game.db."""
    ids: dict[str, Identity] = {}
    homes: dict[str, Path] = {}
    for name in ["referee", *seats]:
        homes[name] = root / f"home-{name}"
        keys.create_identity(homes[name], name, PASS)
        ids[name] = keys.load_identity(homes[name], name, PASS)  # from the key file on disk
    db = store or root / "game.db"
    invitation = H.create_game(db, "test", ids["referee"], ruleset, [(s, ids[s].public) for s in seats], options or [])
    inv_path = root / "invitation.pbem"
    inv_path.write_text(invitation.armored())
    host = H.Host(db, ids["referee"], game="test")
    table = Table(root, host, ids, homes, seats, [inv_path])
    for s in seats:
        join = P.join(read_file(inv_path)[0], ids[s], homes[s])
        path = root / f"join-{s}.pbem"
        path.write_text(join.armored())
        table.files.append(path)
        table.apply_file(path)
    return table


def mailed_table(root: Path, seats: list[str], **settings: object) -> Table:
    """A dealt game (make_table) whose seats and host read mail at NAME@example.org, with `settings`."""
    table = make_table(root, seats)
    for s in seats:
        table.host.set_email(s, f"{s}@example.org")
    table.host.set_email("host", "referee@example.org")
    table.host.set_settings(**settings)
    return table


def play_until(table: Table, stop, seed: int = 0, limit: int = 2000) -> None:
    """Bots on every seat answer packets until `stop(packet)` is true."""
    bots = {s: RandomBot(f"{seed}-{s}") for s in table.seats}
    rng = random.Random(seed)
    for _ in range(limit):
        _, packet = table.latest()
        if stop(packet):
            return
        seat = packet.doc.to_move
        sp = P.open_packet(packet, table.ids[seat], table.homes[seat])
        move = bots[seat].choose(sp.view)
        path = table.move_file(seat, str(move), packet, sp)
        table.apply_file(path)
        rng.random()
    raise AssertionError("the game did not reach the stop condition")


POSITION_CASES = Path(__file__).parent / "positions"


def case_position_file(tmp_path: Path, ruleset: str, case: str) -> tuple[Path, dict]:
    """Write the position of rules case tests/positions/<ruleset>/<case>.json to a file of
    its own (what `pbem position` reads); return the file and the whole case."""
    import json

    doc = json.loads((POSITION_CASES / ruleset / f"{case}.json").read_text(encoding="utf-8"))
    path = tmp_path / f"{case}.position.json"
    path.write_text(json.dumps(doc["position"]), encoding="utf-8")
    return path, doc


# --- games made through the CLI and real processes -----------------------------------------

SEATS = ["ann", "bob", "cat"]


def forged_move(game: str, seq: int, packet: str, seat: str, text: str, host_key: PublicKey, signer: Identity,
                nonce: bytes | None = None) -> Signed[Move]:
    """A move of any `text` (no rule asked), sealed to the host and signed by `signer` as `seat`'s
    answer to packet `seq` (hash `packet`) of `game`: what a seat's own program could send."""
    nonce = os.urandom(16) if nonce is None else nonce
    return sign(Move(game=game, seat=seat, seq=seq, packet=packet, commit=move_commitment(nonce, text),
                     sealed=seal_json(SealedMove(move=text, nonce=b64(nonce)), host_key,
                                      seal_info(game, seq, seat, "host", "move"), pad="move")), signer)


_PORTS_GIVEN: set[int] = set()


def free_port() -> int:
    """A TCP port on 127.0.0.1 free at the moment of asking, and never one this process gave
    before: the kernel may offer a port it just handed out again once its socket is closed, and
    two servers of one set-up (Dovecot's IMAP and LMTP listeners) then ask for the same port."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _PORTS_GIVEN:
            _PORTS_GIVEN.add(port)
            return port


def main_here(args: list[object], home: Path, capsys: pytest.CaptureFixture[str],
              monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """`pbem ARGS` through the command line's own entry (`pbem.cli.main`, which turns an error
    into its `error:` line and exit code) in this process: (exit code, stderr)."""
    run = pbem_here(args, home, capsys, monkeypatch)
    return run.returncode, run.stderr


def pbem_here(args: list[object], home: Path | None, capsys: pytest.CaptureFixture[str],
              monkeypatch: pytest.MonkeyPatch, cwd: Path | None = None, ok: bool = False) -> subprocess.CompletedProcess:
    """What processes.pbem gives (exit code, stdout, stderr), run through `pbem.cli.main` in this
    process: for the many cases of a command whose one real-process case a test runs too.
    `home` None: no PBEM_HOME, as a process started without it."""
    if home is None:
        monkeypatch.delenv("PBEM_HOME", raising=False)
    else:
        monkeypatch.setenv("PBEM_HOME", str(home))
    monkeypatch.setattr(sys, "argv", ["pbem", *map(str, args)])
    if cwd is not None:
        monkeypatch.chdir(cwd)
    capsys.readouterr()
    code = _main()
    out, err = capsys.readouterr()
    return _ran(args, code, out, err, ok)


def here_wide(*args: object, home: Path, cwd: Path | None = None, ok: bool = False,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The `here` fixture's run for a fixture wider than a test (a module's game made once),
    which has no capsys or monkeypatch: the environment, argv and folder are as they were after
    it, and its output is captured by standing in for sys.stdout and sys.stderr while it runs."""
    with pytest.MonkeyPatch.context() as mp:
        for key, value in {"PBEM_HOME": str(home), **(env or {})}.items():
            mp.setenv(key, value)
        mp.setattr(sys, "argv", ["pbem", *map(str, args)])
        if cwd is not None:
            mp.chdir(cwd)
        streams = [io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True) for _ in range(2)]
        mp.setattr(sys, "stdout", streams[0])
        mp.setattr(sys, "stderr", streams[1])
        code = _main()
        out, err = (s.buffer.getvalue().decode() for s in streams)  # type: ignore[attr-defined]
    return _ran(args, code, out, err, ok)


def _main() -> int:
    """`pbem.cli.main` as the entry point runs it: its exit code."""
    from pbem.cli import main

    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _ran(args: list[object], code: int, out: str, err: str, ok: bool) -> subprocess.CompletedProcess:
    if ok:
        assert code == 0, (code, err, out)
    return subprocess.CompletedProcess(["pbem", *map(str, args)], code, out, err)


def sqlite_dump(db: Path) -> str:
    """The whole SQLite file as SQL text: equal dumps, nothing in the file changed."""
    con = sqlite3.connect(db)
    try:
        return "\n".join(con.iterdump())
    finally:
        con.close()


def make_homes(root: Path, names: list[str]) -> dict[str, Path]:
    homes = {}
    for n in names:
        homes[n] = root / f"home-{n}"
        keys.create_identity(homes[n], n, None)
    return homes


def keys_here(homes: dict[str, Path]) -> dict[str, str]:
    """What processes.new_keys makes (`pbem key new NAME --no-passphrase` in each home: the same
    identity file), made in this process; returns each name's public key line."""
    return {n: keys.create_identity(h, n, None).public.encode() for n, h in homes.items()}


def new_game(root: Path, seats: list[str] = SEATS) -> tuple[Path, dict[str, Path]]:
    homes = make_homes(root, ["referee", *seats])
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    db = root / "saves" / "t.db"
    H.create_game(db, "t", ids["referee"], "classic", [(s, ids[s].public) for s in seats], [])
    return db, homes


def check_game(db: Path, referee_home: Path) -> dict:
    """The finished game is what the engine gives replaying the archived moves, and every
    move number of every round is in the database exactly once."""
    host = H.Host(db, keys.load_identity(referee_home, "referee", None))
    try:
        st = host.status()
        archives = host.archives()
    finally:
        host.close()
    assert st["status"] == "over"
    assert sorted(archives) == [1, 2, 3]
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT round_no, n, file_hash FROM moves ORDER BY round_no, n").fetchall()
    finally:
        con.close()
    assert len({r[2] for r in rows}) == len(rows)
    gold = None
    for rnd, armored in archives.items():
        archive = read_blocks(armored)[0].doc
        state = load(archive.start)
        for i, m in enumerate(archive.moves, 1):
            assert m.n == i
            apply(state, m.text)
        assert dump(state) == archive.final, f"round {rnd} does not replay"
        assert [n for r, n, _ in rows if r == rnd] == list(range(1, len(archive.moves) + 1))
        gold = state.gold
    assert gold == st["gold"]
    return st


def cli_game(root: Path, seats: list[str] = SEATS, *, trustless: bool = False,
             here: Callable[..., subprocess.CompletedProcess] | None = None) -> tuple[Path, Path, dict[str, Path]]:
    """Keys made with 'pbem key new --no-passphrase', the game with 'pbem game new', the
    folder with 'pbem folder init': all real processes; with `here` (the fixture), the same
    commands run in this process (for a test whose point comes after the set-up)."""
    homes = {n: root / f"home-{n}" for n in ["referee", *seats]}
    db = root / "saves" / "t.db"
    folder = root / "shared"
    pubs = keys_here(homes) if here else new_keys(homes)
    players = [a for s in seats for a in ("--player", f"{s}={pubs[s]}")]
    commands = [["game", "new", "t", "--host", "referee", *players, "--db", db, *(["--trustless"] if trustless else [])],
                ["folder", "init", "t", folder, "--db", db]]
    for args in commands:
        (here or pbem)(*args, home=homes["referee"], cwd=root, ok=True)
    return db, folder, homes


def start_host(db: Path, folder: Path, home: Path, log: Path, poll: float = 0.5) -> subprocess.Popen:
    """`pbem host run --folder` as a process of its own. A file arriving in the inbox wakes it
    (pbem.watch), so `poll` is only how often it looks at the clock (deadlines) when nothing came."""
    return start([*PBEM, "host", "run", "t", "--db", db, "--folder", folder, "--poll", str(poll)],
                 env=cli_env(home), stdout=log.open("ab"), stderr=subprocess.STDOUT)


def start_bots(folder: Path, homes: dict[str, Path], root: Path, seats: list[str] = SEATS,
               kind: str = "smart", poll: float = 1.0) -> dict[str, subprocess.Popen]:
    """`pbem bot run --folder` for each of `seats`, as processes of their own. A bot waits for the
    kernel's word that a packet came (inotify: test_autohost.py shows it answers at once even
    with --poll 60), so `poll` is only how often it looks when nothing came: at 0.02 s each idle
    bot took a few percent of a core for the whole game, doing nothing."""
    return {s: start([*PBEM, "bot", "run", "--as", s, "--folder", folder, "--bot", kind,
                      "--seed", f"seed-{s}", "--poll", str(poll)],
                     env=cli_env(homes[s]), stdout=(root / f"bot-{s}.log").open("ab"), stderr=subprocess.STDOUT)
            for s in seats}


class BotHere:
    """`pbem bot run --as SEAT --folder DIR --bot KIND --seed seed-SEAT --poll POLL` (the FolderBot
    that command runs, in pbem.auto.seat_bot's loop) in a thread of this process, with what the
    tests use of a subprocess.Popen: poll(), wait(), terminate(), kill(), returncode (0 once the
    game is over or, as the command exits at a SIGTERM, once stopped; 1 if the loop raised). For a
    test whose point is the host's processes (a daemon killed, leases), not the players': a
    bot's process costs its start-up alone more CPU than its share of the game. `pace`: seconds
    each step waits first (a stop ends the wait), so that a game lasts as long as what the test
    does to its daemons meanwhile needs: in threads, bots play a hundred packets in a few seconds."""

    def __init__(self, folder: Path, seat: str, home: Path, log: Path, kind: str = "smart", poll: float = 1.0,
                 pace: float = 0.0) -> None:
        from pbem.auto import seat_bot

        self.args = ["bot", "run", "--as", seat, "--folder", str(folder), "--bot", kind, "--poll", str(poll)]
        self.returncode: int | None = None
        self.pace = pace
        self._stopping = threading.Event()
        self._out = log.open("a", encoding="utf-8")
        from pbem.folder.play import is_trustless

        me = keys.load_identity(home, seat, None)
        self._bot: seat_bot.FolderBot | TrustlessBot
        if is_trustless(folder):  # as the command, the trustless game's bot for such a folder
            from pbem.auto.trustless_bot import folder_bot
            from pbem.protocol.mental.group import base_mul

            base_mul(1)  # the group's library loaded here, once, before bots in threads use it
            self._bot = folder_bot(folder, me, home, self._log, kind, f"seed-{seat}", think=0.1)
        else:
            self._bot = seat_bot.FolderBot(folder, me, home, kind, f"seed-{seat}", self._log, think=0.1)
        self._thread = threading.Thread(target=self._run, args=(poll,), name=f"bot {seat}", daemon=True)
        self._thread.start()

    def _log(self, line: str) -> None:
        print(line, file=self._out, flush=True)

    def step(self) -> bool:
        if self.pace:
            self._stopping.wait(self.pace)
        if self._stopping.is_set():
            from pbem.auto.polling import Stopped

            raise Stopped()  # what a SIGTERM raises in the command's loop
        return self._bot.step()

    def _run(self, poll: float) -> None:
        from pbem.auto import seat_bot

        code = 1
        try:
            seat_bot.run(_Stepper(self.step, self._bot.wait), poll=poll, log=self._log)
            code = 0
        except BaseException:
            import traceback

            self._log(traceback.format_exc())
        finally:
            watch = self._bot.watch if isinstance(self._bot, seat_bot.FolderBot) else self._bot.bell
            if watch is not None:
                watch.close()
            self._out.close()
            self.returncode = code

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def terminate(self) -> None:
        self._stopping.set()

    def send_signal(self, sig: int) -> None:
        self.terminate()

    def kill(self) -> None:
        self.terminate()


@dataclass
class _Stepper:
    """What seat_bot.run steps and waits on."""
    step: Callable[[], bool]
    wait: Callable[[float], bool]


def bots_here(folder: Path, homes: dict[str, Path], root: Path, seats: list[str] = SEATS, kind: str = "smart",
              poll: float = 1.0, pace: float = 0.0) -> dict[str, BotHere]:
    """start_bots, each bot in a thread of this process (BotHere); its log in root/bot-SEAT.log."""
    return {s: BotHere(folder, s, homes[s], root / f"bot-{s}.log", kind, poll, pace) for s in seats}


def wait_all(procs, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            p.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:  # PYTHONFAULTHANDLER: SIGABRT dumps every thread's stack to its log
                if q.poll() is None:
                    q.send_signal(signal.SIGABRT)
            time.sleep(1)
            for q in procs:
                q.kill()
            raise AssertionError(f"the game did not finish in time: {[q.returncode for q in procs]}") from None


def stop_all(procs) -> None:
    """Kill those of `procs` (processes this test started) still running, and reap each."""
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


def started_game(tmp_path: Path):
    """A dealt game in a folder: (db, host, FolderHost, its log lines, seats' FolderSeat, ids)."""
    db, homes = new_game(tmp_path)
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    host = H.Host(db, ids["referee"])
    lines: list[str] = []
    fh = FolderHost(host, tmp_path / "shared", lines.append)
    fh.grace = 0.0
    seats = {s: FolderSeat.open(tmp_path / "shared", ids[s], homes[s]) for s in SEATS}
    for s in seats.values():
        s.join()
    fh.step()
    return db, host, fh, lines, seats, ids


def folder_dealt(root: Path):
    """A dealt game in the folder root/shared: (db, folder, homes, the mover's FolderSeat and its packet)."""
    db, host, _, _, seats, _ = started_game(root)
    host.close()
    sp = seats["ann"].latest()
    assert sp is not None
    mover = seats[sp.doc.to_move]
    return db, root / "shared", {n: root / f"home-{n}" for n in ["referee", *SEATS]}, mover, mover.latest()


# Runs `python -m pbem ARGS` in the same process after setting its limits (not in a preexec_fn:
# the test process has threads, and a forked child may only exec). argv[1] "1": drop
# CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the bounding set when root, so that the exec'd
# pbem lacks them and a file of mode 000 is unreadable to it too.
_LIMITED = """
import os, resource, signal, sys
peak_file, unprivileged, args = sys.argv[1], sys.argv[2], sys.argv[3:]
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    if unprivileged == "1" and os.geteuid() == 0:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in (1, 2):
            if libc.prctl(24, cap, 0, 0, 0):  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")
    os.execv(sys.executable, [sys.executable, "-m", "pbem", *args])
_, status, usage = os.wait4(pid, 0)
with open(peak_file, "w") as f:
    f.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def run_peak(args: list[object], home: Path, cwd: Path, *, unprivileged: bool = False,
             timeout: float = 60) -> tuple[int, str, int]:
    """`pbem ARGS` as a process of its own: (exit code, its output, its peak memory in MiB).
    Its address space is capped at 3 GiB, so that a reader without a bound fails (MemoryError,
    exit 70) instead of taking the machine.

    The peak is measured by a small wrapper that forks pbem itself: Linux counts into a process's
    ru_maxrss the resident size of the memory it was forked from, so a child forked straight from
    a test worker that has grown to hundreds of MiB would report the worker's size, not pbem's."""
    stamp = time.monotonic_ns()
    out, peak_file = cwd / f"run-{stamp}.log", cwd / f"run-{stamp}.peak"
    with out.open("wb") as f:
        proc = subprocess.Popen([sys.executable, "-c", _LIMITED, str(peak_file), "1" if unprivileged else "0",
                                 *map(str, args)],
                                env=cli_env(home), cwd=cwd, stdout=f, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
        timer.start()
        try:
            proc.wait()
        finally:
            timer.cancel()
    peak = int(peak_file.read_text()) if peak_file.exists() else 0
    return proc.returncode, out.read_text(errors="replace"), peak // 1024


SEATS4 = ["ann", "bob", "cat", "dan"]


def four_seat_game(root: Path, clock: FakeClock, timing: Timing, store: str):
    homes = make_homes(root, ["referee", *SEATS4])
    ids = {n: keys.load_identity(h, n, None) for n, h in homes.items()}
    db = store
    H.create_game(db, "t", ids["referee"], "classic", [(s, ids[s].public) for s in SEATS4], [],
                  timing=timing.to_config(), clock=clock)
    return db, homes, ids


def clocked_game(tmp_path: Path, timing: Timing, store: str, start: str = "2026-12-01T12:00:00+00:00"):
    """A four-seat game dealt in `store` under `timing`, with a clock that moves only when told,
    from `start`: (clock, host, FolderHost, seats' FolderSeat, ids)."""
    clock = FakeClock(start)
    db, homes, ids = four_seat_game(tmp_path, clock, timing, store)
    host = H.Host(db, ids["referee"], clock)
    fh = FolderHost(host, tmp_path / "shared", lambda line: None)
    seats = {s: FolderSeat.open(tmp_path / "shared", ids[s], homes[s]) for s in SEATS4}
    for s in seats.values():
        s.join()
    fh.step()
    return clock, host, fh, seats, ids


def bots_end_the_round(host: H.Host, fh: FolderHost, seats: dict[str, FolderSeat], ids: dict[str, Identity]) -> None:
    """clocked_game's round played to its end by a smart bot on every seat (the host keeps serving)."""
    from pbem.auto.seat_bot import FolderBot

    bots = [FolderBot(fh.dir, ids[s], seats[s].home, "smart", 1, lambda line: None) for s in seats]
    for _ in range(2000):
        if host.archives():
            break
        for bot in bots:
            bot.step()
        fh.step()
    assert host.archives()


def read_until(fd: int, needle: str, timeout: float = 20.0) -> str:
    """What a pseudo-terminal `fd` printed, read until `needle` shows (AssertionError after `timeout`)."""
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            if needle.encode() in out:
                return out.decode("utf-8", "replace")
    raise AssertionError(f"never saw {needle!r}; got {out[-600:]!r}")


def imap_game(root: Path, s: MailServers, *options: str,
              here: Callable[..., subprocess.CompletedProcess] | None = None) -> tuple[Path, dict[str, Path]]:
    """Keys, the game with everyone's address, and the host's SMTP settings, all by the CLI
    (`options` for 'pbem game new', e.g. --trustless): real processes; with `here` (the
    fixture), the same commands run in this process (for a test whose point comes after the set-up)."""
    homes = {n: root / f"home-{n}" for n in ["host", *SEATS]}
    # the host's key is "referee", its mailbox "host"
    named = {"referee" if n == "host" else n: h for n, h in homes.items()}
    pubs = keys_here(named) if here else new_keys(named)
    db = root / "saves" / "t.db"
    args = [a for p in SEATS for a in ("--player", f"{p}={pubs[p]}", "--email", f"{p}={s.address(p)}")]
    commands = [["game", "new", "t", "--host", "referee", *args, "--email", f"host={s.address('host')}", "--db", db,
                 *options],
                ["game", "smtp", "t", "--db", db, "--server", "127.0.0.1", "--port", s.smtp_port, "--security", "none",
                 "--from", s.address("host")]]
    for command in commands:
        (here or pbem)(*command, home=homes["host"], cwd=root, ok=True)
    return db, homes


def start_imap(s: MailServers, who: str, args: list[str], home: Path, log: Path) -> subprocess.Popen:
    """`pbem ARGS` for `who`, reading its mailbox on the IMAP server of `s`, as a process of its own."""
    # Each waits for its mail by IDLE, as pbem does by default: the tests' pymap
    # (tests/pymap_server.py) tells an idling client of new mail within moments, and a process
    # that waits costs nothing meanwhile (polling made every idle seat ask the server ten times
    # a second). --poll is then the first pause after a failed step (the server restarted).
    env = {**cli_env(home), "PBEM_IMAP_PASSWORD": f"pw-{who}"}
    return start([*PBEM, *args, "--imap", s.imap.url(who), "--poll", "0.1"], env=env,
                 stdin=subprocess.DEVNULL, stdout=log.open("ab"), stderr=subprocess.STDOUT)
