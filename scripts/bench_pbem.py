"""The benchmark table (`scripts/bench [SECONDS] [--before REV]`): start-up, engine, host and store figures.

One table, this tree beside an older commit (`--before REV`; default: the commit before the
store took many games), both measured in the same run so that a change shows as a ratio:

- the commands people wait for, as wall time over a bare `python -c pass` timed in the same
  rounds (runs alternate between the trees and the bare interpreter; CPU time beside it, which
  a busy machine skews less): show, show --json and move with the key agent and with a
  passphrase, turn on a shared folder, apply with each, status, --help, and audit and replay
  of one round; each tree on games, keys and move files its own code made
  (scripts/bench_fixture.py), through its own entry point; a row a tree cannot run is n/a, with a footnote under the table saying why;
- the host's own time per move at 12 players (scripts/bench_host.py, twice per tree in turn), split
  into the engine, sealing, signing and the store; a round's last move; publishing;
  audit and replay of one round in process;
- the engine's random rounds and legal-move generations per second, and packet sizes (this
  tree only; scripts/bench-engine --against compares engines).

Bytecode caches are on, as users have them (some sandboxes set PYTHONDONTWRITEBYTECODE).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import json  # noqa: E402

from script_args import duration  # noqa: E402

from engine.bots import RandomBot  # noqa: E402
from pbem.host import referee as H  # noqa: E402
from pbem.protocol.documents import read_blocks  # noqa: E402
from pbem.seat import keys  # noqa: E402
from pbem.seat import player as P  # noqa: E402

# The last one-game-per-file host: the table shows what the store of many games (and all since)
# did to each figure. Its modules differ from today's (no key agent, another shared-folder and
# publishing API): what the scripts cannot measure on it is n/a with a footnote, the rest is measured.
BEFORE = "3323785"
PASSPHRASE = "bench passphrase words"
RUNS = 5  # timed runs per command and tree, after one untimed warm-up (it writes the .pyc caches)


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


def extract(rev: str, into: Path) -> Path:
    """The engine and pbem packages of commit `rev`, in a folder of their own."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "engine", "pbem"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def engine_rows(seconds: float) -> list[tuple[str, str, str]]:
    """The engine's speed, measured by scripts/bench_engine.py's functions (this tree)."""
    from bench_engine import legal_per_second, rounds_per_second

    c5, c5t, _ = rounds_per_second("classic", 5, seconds)
    x12, x12t, _ = rounds_per_second("expansion", 12, seconds)
    lm5, _ = legal_per_second("classic", 5, 20, seconds / 2)
    lm12, _ = legal_per_second("expansion", 12, 10, seconds / 2)
    return [
        ("engine: random rounds/s, classic 5p", f"{c5:.0f} ({c5t:.0f} turns each)", ""),
        ("engine: random rounds/s, expansion 12p", f"{x12:.0f} ({x12t:.0f} turns each)", ""),
        ("engine: legal-move generations/s, classic 5p", f"{lm5:,.0f}", ""),
        ("engine: legal-move generations/s, expansion 12p", f"{lm12:,.0f}", ""),
    ]


HOST_ROWS = (
    ("move_ms", "host, 12 players: a move (aim: at most 4 ms)"),
    ("move_cpu_ms", "  the same, CPU time"),
    ("move_mean_ms", "  its mean, which these parts add up to:"),
    ("engine_ms", "    the engine"),
    ("sealing_ms", "    sealing (HPKE, with the JSON sealed)"),
    ("signing_ms", "    signing (with the JSON signed)"),
    ("sql_ms", "    the store's SQL statements"),
    ("commit_ms", "    the commit (SQLite, fsync)"),
    ("rest_ms", "    the rest (documents, armour, bookkeeping)"),
    ("round_end_ms", "host, 12 players: a round's last move (aim: at most 25 ms)"),
    ("move_early_ms", "host, 12 players: a move early (round 1's first 20, from packet 1)"),
    ("move_late_ms", "host, 12 players: a move late (round 3's first 20)"),
    ("growth", "  late / early (aim: 1.0x, no cost grows with the packets)"),
    ("files_first_ms", "host, 12 players: writing new packet files, early"),
    ("files_last_ms", "host, 12 players: writing new packet files, late"),
    ("mail_first_ms", "host, 12 players: mailing new packets, early"),
    ("mail_last_ms", "host, 12 players: mailing new packets, late"),
    ("audit_round_ms", "audit of one round, in process (12 players)"),
    ("replay_round_ms", "replay of one round loaded, in process (12 players)"),
)


def host_rows(trees: dict[str, Path], env: dict[str, str], rounds: int = 2
              ) -> tuple[list[tuple[str, str, str]], list[str]]:
    """scripts/bench_host.py on each tree in turn, `rounds` times; each figure's least (the run
    least disturbed by the rest of a shared machine), but the figures that go together (a
    move's parts, which add up to its mean; early, late and their ratio) from one run: the
    one whose mean move was least. And the footnotes saying why a figure is n/a: one a tree
    could not give, or all of a tree's when bench_host.py failed on it."""
    together = {"move_mean_ms", *(f"{part}_ms" for part in ("engine", "sealing", "signing", "sql", "commit", "rest")),
                "move_early_ms", "move_late_ms", "late_packet", "growth"}
    results: dict[str, dict[str, float]] = {}
    unmeasured: dict[str, dict[str, str]] = {}  # tree: {figure: why}
    failed: dict[str, str] = {}  # tree: the last line bench_host.py said
    for _ in range(rounds):
        for label, tree in trees.items():
            if label in failed:
                continue
            run = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_host.py"), str(tree)],
                                 capture_output=True, text=True, env=env)
            if run.returncode != 0:
                failed[label] = (run.stderr.strip().splitlines() or [f"exit {run.returncode}"])[-1][-200:]
                print(f"note: bench_host.py on {label} failed: {run.stderr[-300:]}", file=sys.stderr)
                continue
            got = json.loads(run.stdout.splitlines()[-1])
            unmeasured.setdefault(label, {}).update(got.pop("unmeasured", {}))
            mine = results.setdefault(label, got)
            best = mine.get("move_mean_ms") is None or (got.get("move_mean_ms") or 1e9) < mine["move_mean_ms"]
            for key, value in got.items():
                if key in together:
                    if best:
                        mine[key] = value
                elif value is not None and (mine.get(key) is None or value < mine[key]):
                    mine[key] = value

    def shown(label: str, key: str) -> str:
        got = results.get(label, {})
        if label in failed or key in unmeasured.get(label, {}):
            return "n/a"
        if got.get(key) is None:
            return "-"
        if key == "growth":
            return f"{got[key]:.2f}x"
        late = f" (from packet {got['late_packet']})" if key == "move_late_ms" and got.get("late_packet") else ""
        return f"{got[key]:.2f} ms{late}"

    notes = [f"host rows on {label}: bench_host.py failed: {why}" for label, why in failed.items()]
    for label, whys in unmeasured.items():
        for why in dict.fromkeys(whys.values()):
            notes.append(f"{label}: {', '.join(k for k, w in whys.items() if w == why)}: {why}")
    rows = [(what, shown("now", key), shown("before", key) if "before" in trees else "") for key, what in HOST_ROWS]
    return rows, notes


def packet_rows(root: Path) -> list[tuple[str, str, str]]:
    rows = []
    for n, ruleset in ((3, "classic"), (5, "classic"), (10, "classic"), (12, "expansion")):
        host, ids, homes, names = table(root / f"s{n}", n, ruleset)
        bots = {s: RandomBot(s) for s in names}
        sizes = [len(step(host, ids, homes, bots)[1].armored()) for _ in range(40)]
        rows.append((f"packet size, {n} players ({ruleset})", f"{statistics.median(sizes):,.0f} bytes", ""))
        host.close()
    return rows


class Timer:
    """Wall and CPU time of commands, run in alternation with a bare interpreter."""

    def __init__(self) -> None:
        self.wall: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}
        self.failed: dict[str, str] = {}  # key: the last line it said on stderr

    def run(self, key: str, cmd: list[str], env: dict[str, str], prepare: Callable[[], None] | None = None) -> None:
        if key in self.failed:
            return
        if prepare:
            prepare()
        t = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        err = p.stderr.read() if p.stderr else b""
        if os.waitstatus_to_exitcode(status) != 0:
            said = err.decode(errors="replace").strip()
            self.failed[key] = (said.splitlines() or [f"exit {os.waitstatus_to_exitcode(status)}"])[-1][-200:]
            print(f"note: {key} failed: {said[-300:]}", file=sys.stderr)
            return
        self.wall.setdefault(key, []).append(wall)
        self.cpu.setdefault(key, []).append(usage.ru_utime + usage.ru_stime)

    def ratio(self, key: str, bare: str) -> str:
        if key in self.failed or not self.wall.get(key):
            return "n/a"
        w, c = statistics.median(self.wall[key][1:]), statistics.median(self.cpu[key][1:])  # [0]: the warm-up
        return (f"{w / statistics.median(self.wall[bare][1:]):.1f}x ({w * 1000:.0f} ms; "
                f"cpu {c / statistics.median(self.cpu[bare][1:]):.1f}x)")


CLI_ROWS = (
    ("show-pass", "pbem show (passphrase; aim: at most 10x)"),
    ("show-json-pass", "pbem show --json (passphrase; aim: at most 10x)"),
    ("move-pass", "pbem move (passphrase; aim: at most 10x)"),
    ("turn-pass", "pbem turn, a shared folder (passphrase; aim: at most 10x)"),
    ("show-agent", "pbem show (agent; aim: at most 10x)"),
    ("show-json-agent", "pbem show --json (agent; aim: at most 10x)"),
    ("move-agent", "pbem move (agent; aim: at most 10x)"),
    ("apply", "pbem apply, one move (passphrase; aim: at most 15x)"),
    ("apply-agent", "pbem apply, one move (agent; aim: at most 15x)"),
    ("status", "pbem status (aim: at most 15x)"),
    ("help", "pbem --help (aim: at most 6x)"),
    ("audit", "pbem audit, one round (5 players)"),
    ("replay", "pbem replay --json, one round (5 players)"),
)


def launcher(tree: Path, rev: str | None, into: Path) -> Path:
    """A `pbem` console script for `tree`, as pip writes it, calling the entry point that tree's
    pyproject.toml names (an older tree's is pbem.cli:main; the venv's own script would import
    this tree's pbem.entry into the older tree)."""
    import tomllib

    text = (subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:pyproject.toml"], check=True, capture_output=True,
                           text=True).stdout if rev else (ROOT / "pyproject.toml").read_text())
    module, func = tomllib.loads(text)["project"]["scripts"]["pbem"].split(":")
    into.mkdir(parents=True)
    script = into / "pbem"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import {func}\nif __name__ == '__main__':\n"
                      f"    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n    sys.exit({func}())\n")
    script.chmod(0o755)
    return script


def cli_rows(root: Path, trees: dict[str, Path], revs: dict[str, str | None], base_env: dict[str, str]
             ) -> tuple[list[tuple[str, str, str]], list[str]]:
    """Each command of CLI_ROWS on each tree, runs interleaved with a bare interpreter's; and the
    footnotes saying why a row has no figure. Each tree runs on games, keys and move files made
    by its own code (scripts/bench_fixture.py) through its own entry point."""
    commands: list[tuple[str, str, list[str], dict[str, str], Callable[[], None] | None]] = []
    agents: list[tuple[Path, dict[str, str]]] = []
    notes: list[str] = []
    for label, tree in trees.items():
        made = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_fixture.py"), str(tree),
                               str(root / f"fixture-{label}")], capture_output=True, text=True,
                              env={**base_env, "PYTHONPATH": str(tree)})
        if made.returncode != 0:  # a tree older than the API the fixture uses: no CLI figures for it
            why = (made.stderr.strip().splitlines() or [f"exit {made.returncode}"])[-1][-200:]
            notes.append(f"{label} ({revs[label] or 'this tree'}): its CLI rows are n/a: bench_fixture.py failed: {why}")
            continue
        fx = json.loads(made.stdout.splitlines()[-1])
        pbem = str(launcher(tree, revs[label], root / f"bin-{label}"))
        path = {"PYTHONPATH": str(tree)}
        env_seat = {**base_env, **path, "PBEM_HOME": fx["seat_home"], "PBEM_PASSPHRASE": PASSPHRASE}
        # The agent rows use a copy of the seat's key home: a running agent serves its home's
        # commands even when a passphrase is set, so on the same home the passphrase rows were
        # the agent's too (the agent's socket is per home).
        agent_home = Path(fx["seat_home"] + "-agent")
        shutil.copytree(fx["seat_home"], agent_home)
        env_agent = {**base_env, **path, "PBEM_HOME": str(agent_home)}
        env_host = {**base_env, **path, "PBEM_HOME": fx["host_home"], "PBEM_PASSPHRASE": PASSPHRASE}
        host_agent_home = Path(fx["host_home"] + "-agent")  # the host's key held by an agent of its own, as the seat's
        shutil.copytree(fx["host_home"], host_agent_home)
        env_host_agent = {**base_env, **path, "PBEM_HOME": str(host_agent_home)}
        env_rounds = {**base_env, **path, "PBEM_HOME": fx["rounds_home"]}
        show = [pbem, "show", fx["packet"], "--as", fx["seat"]]
        move = [pbem, "move", fx["packet"], fx["move"], "--as", fx["seat"], "-o", str(root / f"out-{label}.pbem")]
        db, copy = Path(fx["db"]), root / f"copy-{label}.db"

        def fresh_copy(db: Path = db, copy: Path = copy) -> None:  # apply changes its store: a fresh copy each run
            shutil.copyfile(db, copy)
            for suffix in ("-wal", "-shm"):
                Path(str(copy) + suffix).unlink(missing_ok=True)

        # before the store held many games, apply's first word was the game's .db file
        store = [fx["game"], "--db", str(copy)] if fx["apply_names_game"] else [str(copy)]
        mine = [
            ("show-pass", show, env_seat, None),
            ("show-json-pass", [*show, "--json"], env_seat, None),
            ("move-pass", move, env_seat, None),
            ("show-agent", show, env_agent, None),
            ("show-json-agent", [*show, "--json"], env_agent, None),
            # a file of its own: the agent's key home keeps a move of its own, and pbem move
            # writes over no other move file
            ("move-agent", [*move[:-1], str(root / f"out-{label}-agent.pbem")], env_agent, None),
            ("apply", [pbem, "apply", *store, fx["move_file"], "--out", str(root / f"out-{label}")],
             env_host, fresh_copy),
            ("apply-agent", [pbem, "apply", *store, fx["move_file"], "--out", str(root / f"out-{label}")],
             env_host_agent, fresh_copy),
            ("status", [pbem, "status", "--db", fx["db"]], env_host, None),
            ("help", [pbem, "--help"], env_host, None),
            *([("turn-pass", [pbem, "turn", fx["folder"], "--as", fx["seat"]],
                {**env_seat, "PBEM_HOME": fx["folder_home"]}, None)] if fx.get("folder_home") else []),
            ("audit", [pbem, "audit", "--db", fx["rounds_db"], "--round", "1"], env_rounds, None),
            ("replay", [pbem, "replay", "--db", fx["rounds_db"], "--round", "1", "--json"], env_rounds, None),
        ]
        if (tree / "pbem" / "seat" / "agent.py").exists():
            # the key agents hold the seat's key and the host's for the agent rows (one agent per key
            # home), started by the tree's own code
            # (for longer than the runs take on a loaded machine: a key forgotten midway fails its rows)
            for who, held in ((fx["seat"], env_agent), (fx["host"], env_host_agent)):
                subprocess.run([pbem, "agent", "start", "--as", who, "--timeout", "3h"],
                               env={**held, "PBEM_PASSPHRASE": PASSPHRASE}, check=True, stdout=subprocess.DEVNULL)
                agents.append((Path(pbem), held))
            for unheld in (env_seat, env_host):
                seen = subprocess.run([pbem, "agent", "status", "--json"], env=unheld, check=True, capture_output=True,
                                      text=True).stdout
                assert not json.loads(seen)["running"], "the passphrase rows would be the agent's"
        else:
            mine = [c for c in mine if not c[0].endswith("-agent")]
            notes.append(f"{label} ({revs[label] or 'this tree'}) has no key agent (pbem agent): "
                         "its agent rows are n/a")
        if not fx.get("folder_home"):
            notes.append(f"{label} ({revs[label] or 'this tree'}) {fx.get('folder_why') or 'has no shared folders'}: "
                         "its turn row is n/a")
        commands += [(key, label, cmd, env, prepare) for key, cmd, env, prepare in mine]
    timer = Timer()
    bare = [sys.executable, "-c", "pass"]
    try:
        for _ in range(RUNS + 1):
            for key in dict.fromkeys(c[0] for c in commands):
                for k, label, cmd, env, prepare in commands:
                    if k == key:
                        timer.run("bare", bare, base_env)
                        timer.run(f"{key}@{label}", cmd, env, prepare)
    finally:
        for script, env in agents:
            subprocess.run([str(script), "agent", "stop"], env=env, check=True, stdout=subprocess.DEVNULL)
    bare_w = statistics.median(timer.wall["bare"][1:])
    rows = [("python3 -c pass (the unit of every x below)", f"{bare_w * 1000:.0f} ms wall", "")]
    for key, what in CLI_ROWS:
        rows.append((what, timer.ratio(f"{key}@now", "bare"),
                     timer.ratio(f"{key}@before", "bare") if "before" in trees else ""))
    notes += [f"{key.replace('@', ' on ')} failed: {why}" for key, why in sorted(timer.failed.items())]
    return rows, notes


def main() -> None:
    ap = argparse.ArgumentParser(prog="scripts/bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("seconds", nargs="?", type=duration, default=3.0,
                    help="seconds per engine measurement (default 3)")
    ap.add_argument("--before", metavar="REV", default=BEFORE,
                    help=f"the older commit measured beside this tree (default {BEFORE})")
    args = ap.parse_args()
    known = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{args.before}^{{commit}}"],
                           capture_output=True)
    if known.returncode:
        ap.error(f"--before: no commit {args.before!r} in this repository")
    before, seconds = args.before, args.seconds
    # Measure as users run it: with bytecode caches (some sandboxes disable them).
    base_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PBEM_SCRYPT_N")}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        trees = {"now": ROOT, "before": extract(before, root / "before")}
        rows, notes = host_rows(trees, base_env)
        cli, cli_notes = cli_rows(root, trees, {"now": None, "before": before}, base_env)
        rows += cli
        notes += cli_notes
        rows += engine_rows(seconds)
        rows += packet_rows(root)
    head = ("measure", "now", f"before ({before})")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(3)]
    for r in [head, *rows]:
        print("  ".join(f"{c:<{w}}" for c, w in zip(r, widths)).rstrip())
    for note in notes:  # why a row has no figure
        print(f"n/a: {note}")


if __name__ == "__main__":
    main()
