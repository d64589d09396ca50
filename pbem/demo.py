"""`pbem demo`: a whole game played through the real PBEM pipeline, in a temporary folder.

Real identities (key files), a real game database, real packet and move files on disk,
bots on every seat choosing from their own sealed view only. It shows a progress bar per
round, each round's result and the final scores.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from engine.catalog import deck_ids
from engine.state import hand_size

from . import host as H
from . import keys
from . import player as P
from .packets import read_file

SEATS = ["ann", "bob", "cat", "dan", "eve"]


def _bot(seat: str, seed: str):
    from engine import bots

    factory = getattr(bots, "make_bot", None)
    return factory("smart", seat, seed) if factory else bots.RandomBot(f"{seed}-{seat}")


def run_demo(console: Console, *, seats: list[str] | None = None, ruleset: str = "classic",
             workdir: Path | None = None, seed: str = "demo") -> dict[str, int]:
    seats = seats or SEATS
    root = Path(workdir or tempfile.mkdtemp(prefix="pbem-demo-"))
    started = time.perf_counter()
    console.print(f"[bold]pbem demo[/]: {len(seats)} seats, {ruleset}, in {root}")
    ids, homes = {}, {}
    for name in ["host", *seats]:
        homes[name] = root / "homes" / name
        ids[name] = keys.create_identity(homes[name], name, None)
    console.print(f"created {len(ids)} identities (one key home each)")
    invitation = H.create_game(root / "saves" / "demo.db", "demo", ids["host"], ruleset,
                               [(s, ids[s].public) for s in seats], [])
    mail = root / "mail"
    mail.mkdir()
    (mail / "invitation.pbem").write_text(invitation.armored())
    host = H.Host(root / "saves" / "demo.db", ids["host"])
    for s in seats:
        join = P.join(read_file(mail / "invitation.pbem")[0], ids[s], homes[s])
        path = mail / f"join-{s}.pbem"
        path.write_text(join.armored())
        for block in read_file(path):
            host.accept(block)
    bots = {s: _bot(s, seed) for s in seats}
    total = len(deck_ids(ruleset)) + 5
    results = []
    columns = (TextColumn("round {task.fields[round]}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("moves"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("", total=total, round=1)
        moves = 0
        while True:
            seq, armored = host.packets()[-1]
            packet_path = mail / f"packet-{seq:06d}.pbem"
            packet_path.write_text(armored)
            packet = read_file(packet_path)[0]
            if "result" in packet.doc:
                results.append(packet.doc["result"])
                progress.update(task, completed=total)
                if packet.doc["phase"] == "game-over":
                    break
                task = progress.add_task("", total=total, round=packet.doc["round"])
                moves = 0
            seat = packet.doc["to_move"]
            sp = P.open_packet(packet, ids[seat], homes[seat])
            move = bots[seat].choose(sp.view)
            move_file = P.make_move(sp, str(move))
            move_path = mail / f"move-{seat}-{seq:06d}.pbem"
            move_path.write_text(move_file.armored())
            for block in read_file(move_path):
                host.accept(block)
            moves += 1
            progress.update(task, completed=min(moves, total - 1))
    for r in results:
        found = f"gold found by {r['finder']}" if r["finder"] else "gold not found"
        paid = ", ".join(f"{p} +{g}" for p, g in r["payout"].items() if g) or "nobody"
        console.print(f"round {r['round']}: {found}; winners {', '.join(r['winners']) or 'none'}; paid {paid}")
    final = packet.doc["standings"]
    table = Table(title="final scores")
    table.add_column("seat")
    table.add_column("gold", justify="right")
    for s, g in sorted(final["gold"].items(), key=lambda kv: -kv[1]):
        table.add_row(s + (" (winner)" if s in final["winners"] else ""), str(g))
    console.print(table)
    console.print(f"{seq} packets, {len(list(mail.glob('move-*')))} signed moves, "
                  f"{time.perf_counter() - started:.1f} s; files in {mail}")
    host.close()
    return final["gold"]
