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
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from pbem.errors import PbemError
from pbem.folder.layout import GameFolder
from pbem.folder.play import init_folder
from pbem.host import referee as H
from pbem.protocol.documents import Packet, Result, Standings, read_blocks
from pbem.seat import keys

SEATS = ["ann", "bob", "cat", "dan", "eve"]
POLL = "0.05"
TIMEOUT = 300.0


class DemoFailed(PbemError):
    exit_code = 1


def _spawn(args: list[str], home: Path, log: Path) -> subprocess.Popen:
    env = {**os.environ, "PBEM_HOME": str(home)}
    env.pop("PBEM_PASSPHRASE", None)
    return subprocess.Popen([sys.executable, "-m", "pbem.cli", *args], env=env, stdin=subprocess.DEVNULL,
                            stdout=log.open("w"), stderr=subprocess.STDOUT)


def _latest(folder: GameFolder, after: int) -> list[Packet]:
    """Packet documents published after `after`, in order (signatures checked)."""
    docs = []
    for seq, path in folder.packets(None):
        if seq > after:
            docs += [b.doc for b in read_blocks(path.read_text(encoding="utf-8")) if isinstance(b.doc, Packet)]
    return docs


def run_demo(console: Console, *, seats: list[str] | None = None, ruleset: str = "classic",
             workdir: Path | None = None, bot: str = "smart") -> dict[str, int]:
    """Play the demo in `workdir`, or in a temporary folder that is removed afterwards (kept,
    and said so, when the demo fails: its logs are what a bug report needs)."""
    if workdir is not None:
        return _play(console, seats or SEATS, ruleset, Path(workdir).resolve(), bot, keep=True)
    root = Path(tempfile.mkdtemp(prefix="pbem-demo-")).resolve()
    try:
        gold = _play(console, seats or SEATS, ruleset, root, bot, keep=False)
    except BaseException:
        console.print(f"the demo's files stay in {root} (logs in {root / 'logs'})", soft_wrap=True)
        raise
    shutil.rmtree(root, ignore_errors=True)
    return gold


def _play(console: Console, seats: list[str], ruleset: str, root: Path, bot: str, keep: bool) -> dict[str, int]:
    started = time.perf_counter()
    console.print(f"[bold]pbem demo[/]: {len(seats)} bot seats play {ruleset} through a shared folder in {root}",
                  soft_wrap=True)
    homes = {name: root / "homes" / name for name in ["host", *seats]}
    ids = {name: keys.create_identity(home, name, None) for name, home in homes.items()}
    db = root / "saves" / "demo.db"
    H.create_game(db, "demo", ids["host"], ruleset, [(s, ids[s].public) for s in seats], [])
    host = H.Host(db)
    try:
        folder, _ = init_folder(root / "shared", host)
    finally:
        host.close()
    console.print(f"keys for the host and {len(seats)} seats, one key home each; game {folder.game_id}; "
                  f"folder {folder.dir}")
    logs = root / "logs"
    logs.mkdir()
    procs = [_spawn(["host", "run", "--db", str(db), "--folder", str(folder.dir), "--poll", POLL],
                    homes["host"], logs / "host.log")]
    procs += [_spawn(["bot", "run", "--as", s, "--folder", str(folder.dir), "--bot", bot, "--seed", f"demo-{s}",
                      "--poll", POLL], homes[s], logs / f"{s}.log") for s in seats]
    results: list[Result] = []
    final = Standings(gold={}, winners=[])
    try:
        final = _watch(console, folder, results, procs)
        for p in procs:
            p.wait(timeout=30)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for r in results:
        found = f"gold found by {r.finder}" if r.finder else "gold not found"
        paid = ", ".join(f"{p} +{g}" for p, g in r.payout.items() if g) or "nobody"
        console.print(f"round {r.round}: {found}; winners {', '.join(r.winners) or 'none'}; {paid}")
    table = Table(title="final scores")
    table.add_column("seat")
    table.add_column("gold", justify="right")
    for s, g in sorted(final.gold.items(), key=lambda kv: -kv[1]):
        table.add_row(s + ("  (winner)" if s in final.winners else ""), str(g))
    console.print(table)
    console.print(f"{len(list(folder.dir.glob('inbox/done/*')))} signed move and join files, "
                  f"{len(folder.packets(None))} packets, {time.perf_counter() - started:.1f} s")
    _replay_tail(console, folder.dir, keep)
    return final.gold


def _watch(console: Console, folder: GameFolder, results: list[Result], procs: list[subprocess.Popen]) -> Standings:
    columns = (TextColumn("round {task.fields[round]}"), BarColumn(), MofNCompleteColumn(), TextColumn("moves"),
               TimeElapsedColumn())
    deadline = time.monotonic() + TIMEOUT
    seen = 0
    tasks: dict[int, TaskID] = {}
    with Progress(*columns, console=console) as progress:
        while True:
            for doc in _latest(folder, seen):
                seen = doc.seq
                for m in doc.moves:
                    task = tasks.get(m.round)
                    if task is None:
                        task = tasks[m.round] = progress.add_task("", total=None, round=m.round)
                    progress.update(task, completed=m.n)
                if doc.result is not None:
                    r = doc.result
                    results.append(r)
                    task = tasks.get(r.round)
                    if task is not None:
                        done = progress.tasks[task].completed
                        progress.update(task, total=done, completed=done)
                if doc.phase == "game-over" and doc.standings is not None:
                    return doc.standings
            if time.monotonic() > deadline:
                raise DemoFailed(f"the demo game did not finish in {TIMEOUT:.0f} s", hint="see the logs folder")
            if any(p.poll() not in (None, 0) for p in procs):
                raise DemoFailed("a host or bot process stopped with an error", hint="see the logs folder")
            time.sleep(0.05)


def _replay_tail(console: Console, shared: Path, keep: bool, last: int = 4) -> None:
    """Round 1's last moves, replayed from the files the players received."""
    from pbem.replay.navigator import frame
    from pbem.replay.rounds import ALL, load_replay

    r = load_replay(str(shared), round_no=1)
    console.print(f"\n[bold]replay[/]: the last {last} moves of round 1, all cards open, from the shared folder")
    for i in range(max(1, len(r) - last + 1), len(r) + 1):
        console.print(f"  {i}. {'; '.join(r.sentences(i, ALL))}   [dim]{r.notation(i, ALL)}[/]")
    console.print(frame(r, len(r), ALL))
    pbem = _command()
    if not keep:
        console.print(f"the temporary folder is removed now; to replay and audit the game yourself: "
                      f"{pbem} demo --dir DIR", soft_wrap=True)
        return
    # soft_wrap: commands stay on one line, ready to copy.
    console.print(f"step through it yourself:  {pbem} replay {shared} --round 1", soft_wrap=True)
    console.print(f"as one player saw it:      {pbem} replay {shared} --round 1 --as {r.players[0]}", soft_wrap=True)
    console.print(f"audit it:                  {pbem} audit {shared}", soft_wrap=True)


def _command() -> str:
    """How to call pbem from this shell: plain `pbem` if it is on PATH, else its full path."""
    here = Path(sys.executable).parent / "pbem"
    on_path = shutil.which("pbem")
    return "pbem" if on_path and Path(on_path).resolve() == here.resolve() else str(here)
