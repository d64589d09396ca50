"""`pbem demo`: a whole game played through the real PBEM pipeline, in a temporary folder.

Six real processes share one game folder, as friends on Syncthing would: the automatic
host (`pbem host run --folder`) and one bot per seat (`pbem bot run`), each holding only
its own key in its own key home. This process only watches the folder: a progress bar per
round from the published packets, each round's result, the final scores, and a replay of
the last moves of round 1 read back from the players' files.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from pbem.auto.seat_bot import check_bot_kind
from pbem.errors import PbemError
from pbem.folder.layout import GameFolder
from pbem.folder.play import init_folder
from pbem.host import blind
from pbem.host import referee as H
from pbem.host.creation import check_seat_count
from pbem.host.interface import GameHost
from pbem.names import TABLE
from pbem.protocol.documents import Packet, Result, Standings, parse_relayed, read_blocks, read_text
from pbem.seat import keys
from pbem.ui import words
from pbem.ui.words import pad, t
from pbem.watch import Doorbell

if TYPE_CHECKING:
    from pbem.replay.trustless import Followed

T = TypeVar("T")

NAMES = ("ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ivy", "jon", "kim", "lou")  # as many as a table holds
SEATS = list(NAMES[:5])
POLL = "0.02"  # seconds: where nothing wakes them, each packet waits on a poll of the host and one of a bot
WOKEN_POLL = "1"  # seconds: where the kernel wakes them when a file arrives (pbem.watch), a look now and then
TIMEOUT = 300.0


class DemoFailed(PbemError):
    exit_code = 1


def _spawn(args: list[str], home: Path, log: Path) -> subprocess.Popen:
    env = {**os.environ, "PBEM_HOME": str(home)}
    env.pop("PBEM_PASSPHRASE", None)
    return subprocess.Popen([sys.executable, "-m", "pbem.cli", *args], env=env, stdin=subprocess.DEVNULL,
                            stdout=log.open("w"), stderr=subprocess.STDOUT)


def _poll() -> str:
    """The processes' poll period: long where a file arriving wakes them, so that an idle bot or
    host reads nothing while the others think; short elsewhere."""
    from pbem.watch import arrivals

    kernel = arrivals()
    if kernel is None:
        return POLL
    kernel.close()
    return WOKEN_POLL


def _latest(folder: GameFolder, after: int) -> list[Packet]:
    """Packet documents published after `after`, in order (signatures checked)."""
    docs = []
    for _, path in folder.packets(None, after):
        docs += [b.doc for b in read_blocks(read_text(path)) if isinstance(b.doc, Packet)]
    return docs


def _packets_bell(folder: GameFolder) -> tuple[Doorbell, float]:
    """A wait for the table's next packet, and how long at most: where the kernel says when a
    file arrives, a second (a process that stopped is seen then); elsewhere a short sleep."""
    bell = Doorbell([folder.dir / "packets" / TABLE]).arm()
    return bell, 1.0 if bell.arrivals is not None else 0.05


def demo_seats(ruleset: str, n: int) -> list[str]:
    """The names of a demo table of `n` seats, if the ruleset is played by `n`."""
    check_seat_count(ruleset, n)
    return list(NAMES[:n])


def run_demo(console: Console, *, seats: list[str] | None = None, ruleset: str = "classic",
             workdir: Path | None = None, bot: str = "smart", trustless: bool = False) -> dict[str, int]:
    """Play the demo in `workdir`, or in a temporary folder that is removed afterwards (kept,
    and said so, when the demo fails: its logs are what a bug report needs). `trustless`: the
    seats shuffle and deal among themselves, the host is blind (docs/trustless.md). A ruleset
    or bot the demo cannot play is refused before anything is written or started."""
    seats = seats or SEATS
    check_seat_count(ruleset, len(seats))
    check_bot_kind(bot)
    if workdir is not None:
        return _play(console, seats, ruleset, Path(workdir).resolve(), bot, keep=True, trustless=trustless)
    root = Path(tempfile.mkdtemp(prefix="pbem-demo-")).resolve()
    try:
        gold = _play(console, seats, ruleset, root, bot, keep=False, trustless=trustless)
    except BaseException:
        console.print(t("the demo's files stay in {root} (logs in {logs})", root=root, logs=root / "logs"), soft_wrap=True)
        raise
    shutil.rmtree(root, ignore_errors=True)
    return gold


def _play(console: Console, seats: list[str], ruleset: str, root: Path, bot: str, keep: bool,
          trustless: bool = False) -> dict[str, int]:
    started = time.perf_counter()
    console.print(Text.assemble(("pbem demo", "bold"), ": ", t("{n} bot seats play {ruleset} through a shared folder "
                                "in {root}", n=len(seats), ruleset=t(ruleset), root=str(root))), soft_wrap=True)
    if trustless:
        console.print(t("trustless: the seats shuffle and deal among themselves; the host holds no secret"))
    homes = {name: root / "homes" / name for name in ["host", *seats]}
    ids = {name: keys.create_identity(home, name, None) for name, home in homes.items()}
    db = root / "saves" / "demo.db"
    if trustless:
        blind.create_game(db, "demo", ids["host"], ruleset, [(s, ids[s].public) for s in seats], [])
    else:
        H.create_game(db, "demo", ids["host"], ruleset, [(s, ids[s].public) for s in seats], [])
    host: GameHost = blind.BlindHost(db) if trustless else H.Host(db)
    with host:
        folder, _ = init_folder(root / "shared", host)
    console.print(t("keys for the host and {n} seats, one key home each; game {game}; folder {dir}", n=len(seats),
                    game=folder.game_id, dir=folder.dir))
    logs = root / "logs"
    logs.mkdir()
    poll = _poll()
    procs = [_spawn(["host", "run", "demo", "--db", str(db), "--folder", str(folder.dir), "--poll", poll],
                    homes["host"], logs / "host.log")]
    procs += [_spawn(["bot", "run", "--as", s, "--folder", str(folder.dir), "--bot", bot, "--seed", f"demo-{s}",
                      "--poll", poll], homes[s], logs / f"{s}.log") for s in seats]
    if trustless:
        return _play_trustless(console, folder, procs, started, keep)
    results: list[Result] = []
    final = _run_to_end(procs, lambda: _watch(console, folder, results, procs))
    for r in results:
        found = t("gold found by {player}", player=r.finder) if r.finder else t("gold not found")
        paid = words.listing(f"{p} +{g}" for p, g in r.payout.items() if g) or t("nobody")
        console.print(t("round {round}: {found}; winners {winners}; {paid}", round=r.round, found=found,
                        winners=words.listing(r.winners) or t("none"), paid=paid))
    _print_scores(console, final.gold, final.winners)
    console.print(t("{files} signed move and join files, {packets} packets, {seconds} s",
                    files=len(list(folder.dir.glob("inbox/done/*"))), packets=len(folder.packets(None)),
                    seconds=f"{time.perf_counter() - started:.1f}"))
    _replay_tail(console, folder.dir, keep)
    return final.gold


def _run_to_end(procs: list[subprocess.Popen], watch: Callable[[], T]) -> T:
    """What `watch` saw until the game ended; the host and bots are waited for, and killed if still running."""
    try:
        seen = watch()
        for p in procs:
            p.wait(timeout=30)
        return seen
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def _print_scores(console: Console, gold: dict[str, int], winners: Iterable[str]) -> None:
    table = Table(title=t("final scores"))
    table.add_column(t("seat"))
    table.add_column(t("gold"), justify="right")
    won = set(winners)
    for s, g in sorted(gold.items(), key=lambda kv: -kv[1]):
        table.add_row(t("{seat}  (winner)", seat=s) if s in won else s, str(g))
    console.print(table)


def _still_going(procs: list[subprocess.Popen], deadline: float, timeout: float) -> None:
    """Raise when the game ran out of time or a process stopped with an error."""
    if time.monotonic() > deadline:
        raise DemoFailed(t("the demo game did not finish in {seconds} s", seconds=f"{timeout:.0f}"),
                         hint=t("see the logs folder"))
    if any(p.poll() not in (None, 0) for p in procs):
        raise DemoFailed(t("a host or bot process stopped with an error"), hint=t("see the logs folder"))


def _columns() -> tuple:
    return (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn(t("moves played")),
            TimeElapsedColumn())


class _RoundBars:
    """A progress bar per round, full once its round is over."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[int, TaskID] = {}

    def show(self, round_no: int, moves: int) -> None:
        task = self.tasks.get(round_no)
        if task is None:
            task = self.tasks[round_no] = self.progress.add_task(t("round", n=round_no), total=None)
        self.progress.update(task, completed=moves)

    def finish(self, *rounds: int) -> None:
        """Those rounds' bars full (none named: every round's)."""
        for r in rounds or list(self.tasks):
            task = self.tasks.get(r)
            if task is not None:
                done = self.progress.tasks[task].completed
                self.progress.update(task, total=done, completed=done)


def _new_packets(folder: GameFolder, procs: list[subprocess.Popen], timeout: float) -> Iterator[Packet]:
    """Each packet the table publishes, as it comes, until the caller stops; DemoFailed when the
    game runs out of time or a process stops with an error."""
    deadline = time.monotonic() + timeout
    seen = 0
    bell, most = _packets_bell(folder)
    with closing(bell):
        while True:
            for doc in _latest(folder, seen):
                seen = doc.seq
                yield doc
            _still_going(procs, deadline, timeout)
            bell.wait(most)


def _watch(console: Console, folder: GameFolder, results: list[Result], procs: list[subprocess.Popen]) -> Standings:
    standings = None
    with Progress(*_columns(), console=console) as progress:
        bars = _RoundBars(progress)
        for doc in _new_packets(folder, procs, TIMEOUT):
            for m in doc.moves:
                bars.show(m.round, m.n)
            if doc.result is not None:
                results.append(doc.result)
                bars.finish(doc.result.round)
            if doc.phase == "game-over" and doc.standings is not None:
                standings = doc.standings
                break
    assert standings is not None  # _new_packets ends only by raising
    return standings


def _play_trustless(console: Console, folder: GameFolder, procs: list[subprocess.Popen], started: float,
                    keep: bool) -> dict[str, int]:
    """Watch a trustless game to its end, then audit its chain: what the rounds were."""
    from pbem.replay.sources import open_source
    from pbem.replay.trustless import follow_chain

    _run_to_end(procs, lambda: _watch_chain(console, folder, procs, TIMEOUT * 2))
    followed = follow_chain(open_source(folder.dir), folder.game_id, None)  # the audit, and round 1 for the replay
    report = followed[0]
    if report.fault or not report.rounds:
        raise DemoFailed(t("the trustless game's audit failed: {fault}", fault=report.fault),
                         hint=t("see the logs folder"))
    for r in report.rounds:
        found = t("gold found by {player}", player=r.finder) if r.finder else t("gold not found")
        paid = words.listing(f"{p} +{g}" for p, g in r.payout.items() if g) or t("nobody")
        roles = words.listing(f"{p} {role}" for p, role in r.roles.items())
        console.print(t("round {round}: {found}; {paid}; roles, opened at the round's end: {roles}", round=r.round,
                        found=found, paid=paid, roles=roles))
    gold = report.rounds[-1].gold
    best = max(gold.values(), default=0)
    _print_scores(console, gold, [s for s, g in gold.items() if g == best])
    console.print(t("{files} signed join and mental files, {packets} packets, {seconds} s; the chain audited: every "
                    "shuffle, token, opened card and move checked, every round replayed on its opened cards",
                    files=len(list(folder.dir.glob("inbox/done/*"))), packets=len(folder.packets(None)),
                    seconds=f"{time.perf_counter() - started:.1f}"))
    _replay_tail(console, folder.dir, keep, demo="demo --trustless --dir DIR", followed=followed)
    return gold


def _watch_chain(console: Console, folder: GameFolder, procs: list[subprocess.Popen], timeout: float) -> None:
    """A progress bar per round from the moves the blind host's packets relay."""
    moves: dict[int, int] = {}
    with Progress(*_columns(), console=console) as progress:
        bars = _RoundBars(progress)
        for doc in _new_packets(folder, procs, timeout):
            for rel in doc.relayed or []:
                block = parse_relayed(rel, "a relayed block").doc
                if getattr(block, "step", None) == "move":
                    moves[doc.round] = moves.get(doc.round, 0) + 1
                    bars.show(doc.round, moves[doc.round])
            if doc.phase == "game-over":
                bars.finish()
                return


def _replay_tail(console: Console, shared: Path, keep: bool, last: int = 4, demo: str = "demo --dir DIR",
                 followed: Followed | None = None) -> None:
    """Round 1's last moves, replayed from the files the players received (`followed`: a
    trustless game's chain, followed for its audit already)."""
    from pbem.replay.load import load_replay
    from pbem.replay.navigator import frame
    from pbem.replay.sources import ALL

    r = load_replay(str(shared), round_no=1, followed=followed)
    console.print()
    console.print(Text.assemble((t("replay"), "bold"), words.labelled("", t(
        "the last {n} moves of round 1, all cards open, from the shared folder", n=last))))
    for i in range(max(1, len(r) - last + 1), len(r) + 1):
        console.print(Text.assemble(f"  {i}. {words.clauses(r.sentences(i, ALL))}   ", (r.notation(i, ALL), "dim")))
    console.print(frame(r, len(r), ALL))
    pbem = _command()
    if not keep:
        console.print(t("the temporary folder is removed now; to replay and audit the game yourself: {command}",
                        command=f"{pbem} {demo}"), soft_wrap=True)
        return
    # soft_wrap: commands stay on one line, ready to copy.
    for label, command in ((t("step through it yourself:"), f"{pbem} replay {shared} --round 1"),
                           (t("as one player saw it:"), f"{pbem} replay {shared} --round 1 --as {r.players[0]}"),
                           (t("audit it:"), f"{pbem} audit {shared}")):
        console.print(f"{pad(label, 26)} {command}", soft_wrap=True)


def _command() -> str:
    """How to call pbem from this shell: plain `pbem` if it is on PATH, else its full path."""
    here = Path(sys.executable).parent / "pbem"
    on_path = shutil.which("pbem")
    return "pbem" if on_path and Path(on_path).resolve() == here.resolve() else str(here)
