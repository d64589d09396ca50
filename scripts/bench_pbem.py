"""The benchmark table (`scripts/bench [SECONDS]`).

One table: engine random rounds and legal-move generations per second, CLI wall times next
to bare `python3 -c pass` in the same run, armoured packet sizes by player count, and the
host's own time per move at 12 players (scripts/bench_host.py), for this tree and for an
older commit side by side (`--before REV`, default: the commit before the store took many
games), so a change shows up as a ratio measured in one run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import json  # noqa: E402

from engine.bots import RandomBot  # noqa: E402
from pbem.host import referee as H  # noqa: E402
from pbem.protocol.documents import read_blocks  # noqa: E402
from pbem.seat import keys  # noqa: E402
from pbem.seat import player as P  # noqa: E402

BEFORE = "3323785"  # the last one-game-per-file host


PASSPHRASE = "bench passphrase words"


def table(root: Path, n: int, ruleset: str, protected: bool = False):
    """A game of n seats, dealt. `protected`: key files with a passphrase at the full scrypt cost."""
    names = [f"p{i}" for i in range(n)]
    ids = {}
    homes = {}
    for name in ["host", *names]:
        homes[name] = root / "homes" / name
        ids[name] = keys.create_identity(homes[name], name, PASSPHRASE.encode() if protected else None)
    inv = H.create_game(root / f"g{n}.db", f"b{n}", ids["host"], ruleset, [(s, ids[s].public) for s in names], [])
    host = H.Host(root / f"g{n}.db", ids["host"])
    for s in names:
        host.accept(read_blocks(P.join(read_blocks(inv.armored())[0], ids[s], homes[s]).armored())[0])
    return host, ids, homes, names


def step(host, ids, homes, bots):
    _, armored = host.packets()[-1]
    packet = read_blocks(armored)[0]
    seat = packet.doc.to_move
    sp = P.open_packet(packet, ids[seat], homes[seat], remember=False)
    move = P.make_move(sp, str(bots[seat].choose(sp.view)))
    block = read_blocks(move.armored())[0]
    t = time.perf_counter()
    host.accept(block)
    return time.perf_counter() - t, packet


def timed(cmd: list[str], env: dict[str, str], runs: int = 5) -> float:
    """Median wall time; one untimed warm-up run first (it writes the .pyc caches)."""
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def engine_rows(seconds: float) -> list[tuple[str, str]]:
    """The engine's speed, measured by scripts/bench_engine.py's functions."""
    from bench_engine import legal_per_second, rounds_per_second

    c5, c5t, _ = rounds_per_second("classic", 5, seconds)
    x12, x12t, _ = rounds_per_second("expansion", 12, seconds)
    lm5, _ = legal_per_second("classic", 5, 20, seconds / 2)
    lm12, _ = legal_per_second("expansion", 12, 10, seconds / 2)
    return [
        ("engine: random rounds/s, classic 5p", f"{c5:.0f} ({c5t:.0f} turns each; target 264)"),
        ("engine: random rounds/s, expansion 12p", f"{x12:.0f} ({x12t:.0f} turns each)"),
        ("engine: legal-move generations/s, classic 5p", f"{lm5:,.0f}"),
        ("engine: legal-move generations/s, expansion 12p", f"{lm12:,.0f}"),
    ]


def host_rows(before: str) -> list[tuple[str, str]]:
    """scripts/bench_host.py on an older commit and on this tree, one after the other."""
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "before"
        old.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", before, "engine", "pbem"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        for label, tree in ((before, old), ("now", ROOT)):
            out = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_host.py"), str(tree)],
                                 check=True, capture_output=True, text=True).stdout
            results[label] = json.loads(out.splitlines()[-1])
    b, n = results[before], results["now"]
    rows = []
    for key, what in (("move_ms", "a move"), ("round_end_ms", "a round's last move"),
                      ("files_first_ms", "writing new packet files, early"), ("files_last_ms", "writing new packet files, late"),
                      ("mail_first_ms", "mailing new packets, early"), ("mail_last_ms", "mailing new packets, late")):
        rows.append((f"host, 12 players: {what}", f"{n[key]:.2f} ms (was {b[key]:.2f} ms at {before}: "
                                                    f"{b[key] / n[key]:.1f}x faster)"))
    return rows


def main() -> None:
    args = sys.argv[1:]
    before = BEFORE
    if "--before" in args:
        at = args.index("--before")
        before = args[at + 1]
        del args[at:at + 2]
    seconds = float(args[0]) if args else 3.0
    rows: list[tuple[str, str]] = host_rows(before) + engine_rows(seconds)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # packet sizes
        for n, ruleset in ((3, "classic"), (5, "classic"), (10, "classic"), (12, "expansion")):
            host, ids, homes, names = table(root / f"s{n}", n, ruleset)
            bots = {s: RandomBot(s) for s in names}
            sizes = []
            per_move = []
            for _ in range(40):
                dt, packet = step(host, ids, homes, bots)
                per_move.append(dt)
                sizes.append(len(packet.armored()))
            rows.append((f"packet size, {n} players ({ruleset})", f"{statistics.median(sizes):,.0f} bytes"))
            host.close()
        # CLI wall times
        work = root / "cli"
        host, ids, homes, names = table(work, 5, "classic", protected=True)
        seq, armored = host.packets()[-1]
        packet_path = work / "packet.pbem"
        packet_path.write_text(armored)
        seat = read_blocks(armored)[0].doc.to_move
        db = work / "g5.db"
        host.close()
        pbem = str(Path(sys.executable).parent / "pbem")
        # Measure as users run it: with bytecode caches (some sandboxes disable them).
        base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        base_env.pop("PBEM_SCRYPT_N", None)
        env_seat = {**base_env, "PBEM_HOME": str(homes[seat]), "PBEM_PASSPHRASE": PASSPHRASE}
        env_host = {**base_env, "PBEM_HOME": str(homes["host"]), "PBEM_PASSPHRASE": PASSPHRASE}
        bare = timed([sys.executable, "-c", "pass"], base_env)
        sp = P.open_packet(read_blocks(armored)[0], ids[seat], homes[seat], remember=False)
        move_text = str(RandomBot(1).choose(sp.view))
        show_cmd = [pbem, "show", str(packet_path), "--as", seat]
        move_cmd = [pbem, "move", str(packet_path), move_text, "--as", seat, "-o", str(work / "m.pbem")]
        show, show_json, move = (timed(c, env_seat) for c in (show_cmd, [*show_cmd, "--json"], move_cmd))
        # the same with the key agent holding the seat's key (pbem agent start): no scrypt per command
        subprocess.run([pbem, "agent", "start", "--as", seat, "--timeout", "10m"], env=env_seat, check=True,
                       stdout=subprocess.DEVNULL)
        env_agent = {k: v for k, v in env_seat.items() if k != "PBEM_PASSPHRASE"}
        try:
            show_a, show_json_a, move_a = (timed(c, env_agent) for c in (show_cmd, [*show_cmd, "--json"], move_cmd))
        finally:
            subprocess.run([pbem, "agent", "stop"], env=env_agent, check=True, stdout=subprocess.DEVNULL)
        applies = []
        for i in range(4):  # each run applies on a fresh copy of the database
            copy = work / "copy.db"
            copy.write_bytes(db.read_bytes())
            for suffix in ("-wal", "-shm"):
                Path(str(copy) + suffix).unlink(missing_ok=True)
            t = time.perf_counter()
            subprocess.run([pbem, "apply", "b5", "--db", str(copy), str(work / "m.pbem"), "--out", str(work / "out")],
                           env=env_host, check=True, stdout=subprocess.DEVNULL)
            applies.append(time.perf_counter() - t)
        apply_t = statistics.median(applies[1:])  # the first run warms the caches
        for name, t in (("python3 -c pass", bare), ("pbem show (passphrase)", show),
                        ("pbem show --json (passphrase)", show_json), ("pbem move (passphrase)", move),
                        ("pbem show (agent)", show_a), ("pbem show --json (agent)", show_json_a),
                        ("pbem move (agent)", move_a), ("pbem apply (passphrase)", apply_t)):
            rows.append((f"wall time: {name}", f"{t * 1000:.0f} ms ({t / bare:.1f}x python)"))
    width = max(len(k) for k, _ in rows)
    print(f"{'measure':<{width}}  value")
    for k, v in rows:
        print(f"{k:<{width}}  {v}")


if __name__ == "__main__":
    main()
