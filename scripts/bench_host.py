"""The host's own time per move, run against one source tree (`python bench_host.py ROOT`).

`scripts/bench_pbem.py` runs this file twice in one run, once on the current tree and once on
an older commit extracted to a temporary folder, so the two rows are measured side by side.
It uses only the API both versions have: `create_game(path, ...)`, `Host(path, identity)`,
`accept`, `packets`, `set_email`, plus each version's way of writing packet files and mail.

Prints one JSON object: medians in milliseconds of an ordinary move (wall and CPU time), a
round's last move, an ordinary move early in the game (the first 20 of round 1) and late in it
(the first 20 of round 3), publishing (packet files, then mail) early and late; an ordinary move's time split
into the engine, sealing (HPKE, with the JSON sealed), signing (with the JSON signed), the store's
SQL statements, the commit (SQLite's fsync) and the rest (documents, armour, bookkeeping); and an
audit and a replay of one round of the game just played; and `unmeasured`: each figure this tree
could not give (its modules are not ones this script knows), with the reason, for a footnote.
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

TREE = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TREE))
os.environ.setdefault("PBEM_SCRYPT_N", "1024")

from engine.bots import RandomBot  # noqa: E402
from pbem.host import referee as H  # noqa: E402
from pbem.protocol.documents import read_blocks  # noqa: E402
from pbem.seat import keys  # noqa: E402
from pbem.seat import player as P  # noqa: E402


def _field(doc, name: str):
    """A document's field: a typed document's attribute, or an older tree's dict key."""
    return doc[name] if isinstance(doc, dict) else getattr(doc, name)


def publishers(host, out: Path):
    """(write packet files, mail pending packets) as this version does them; or a sentence saying
    why this script cannot publish for this tree (an older tree whose modules it does not know:
    its publishing rows are then n/a, the rest is measured)."""
    import importlib

    try:  # the store that publishes only what is new
        from pbem.host.publish import OutDir, publish_pending
        from pbem.mail.courier import Courier
        from pbem.mail.publisher import MailPublisher

        files, mail = OutDir(out), MailPublisher(host, Courier(to_dir=out / "mail"))
        return (lambda: publish_pending(host, files)), (lambda: publish_pending(host, mail))
    except ImportError:
        pass
    # before: every command re-read every packet; write_packets lived in the CLI's shared module,
    # earlier in cli/play.py, and mail.outgoing held the courier and send_pending
    for home in ("pbem.cli._common", "pbem.cli.play"):
        try:
            write_packets = importlib.import_module(home).write_packets
            outgoing = importlib.import_module("pbem.mail.outgoing")
            send_pending, courier = outgoing.send_pending, outgoing.Courier(to_dir=out / "mail")
        except (ImportError, AttributeError):
            continue
        return functools.partial(write_packets, host, out), functools.partial(send_pending, host, courier)
    return "this tree publishes through modules this script does not know (no pbem.host.publish, no write_packets)"


# The host's calls by kind, under the names the modules of pbem.host import them.
KINDS = {
    "engine": ("apply_move", "check_move", "view", "events_for", "secret_events", "dump", "load", "standings_winners"),
    "sealing": ("seal_json", "open_json", "open_as"),
    "signing": ("sign",),
}
# The store's own work, by the SQLAlchemy methods every statement and every commit go through
# (Core and ORM alike): "sql" is each statement run (BEGIN too), "commit" the commit.
STORE = {"sql": (("engine.base", "Connection", "execute"), ("engine.base", "Connection", "exec_driver_sql")),
         "commit": (("engine.default", "DefaultDialect", "do_commit"),)}
PARTS = (*KINDS, *STORE, "rest")


class Split:
    """Time spent in each kind of call, by wrapping the names in the host's modules and the
    two SQLAlchemy methods; a call made inside another timed call counts once, for the outer
    one. "rest" is what is left of the move's time."""

    def __init__(self) -> None:
        self.spent = dict.fromkeys((*KINDS, *STORE), 0.0)
        self.depth = 0
        import importlib
        import pkgutil

        import pbem.host

        modules = []  # every module of pbem.host (a move's work is spread over several, by tree)
        for found in pkgutil.iter_modules(pbem.host.__path__, "pbem.host."):
            try:
                modules.append(importlib.import_module(found.name))
            except ImportError:
                continue
        for module in modules:
            for kind, names in KINDS.items():
                for name in names:
                    if callable(getattr(module, name, None)):
                        setattr(module, name, self._timed(kind, getattr(module, name)))
        for kind, methods in STORE.items():
            for module_name, cls_name, method in methods:
                cls = getattr(importlib.import_module(f"sqlalchemy.{module_name}"), cls_name)
                setattr(cls, method, self._timed(kind, getattr(cls, method)))

    def _timed(self, kind: str, fn):
        def timed(*args, **kwargs):
            if self.depth:
                return fn(*args, **kwargs)
            self.depth += 1
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent[kind] += time.perf_counter() - t
                self.depth -= 1
        return timed

    def take(self) -> dict[str, float]:
        out, self.spent = self.spent, dict.fromkeys((*KINDS, *STORE), 0.0)
        return out


def one_round(db: Path) -> dict[str, float] | str:
    """Milliseconds to audit, then to load for replay, round 1 of the game in `db`, as `pbem audit
    --db DB --round 1` and `pbem replay --db DB --round 1` do (for a tree without them, why not)."""
    try:
        from pbem.replay.audit import audit_source
        from pbem.replay.load import load_replay
        from pbem.replay.sources import open_source, pick_game
    except ImportError as e:
        return f"this tree has no in-process audit and replay this script knows ({e})"
    audits, replays = [], []
    for _ in range(5):
        t = time.perf_counter()
        try:
            src = open_source(None, db, rounds=[1])
        except TypeError:  # an older tree: open_source takes no rounds, reads them all
            src = open_source(None, db)
        reports = audit_source(src, pick_game(src, None), [1])
        audits.append(time.perf_counter() - t)
        assert all(r.ok for r in reports), [f.line() for r in reports for f in r.faults]
        t = time.perf_counter()
        load_replay(None, db=db, round_no=1)
        replays.append(time.perf_counter() - t)
    return {"audit_round_ms": statistics.median(audits) * 1000, "replay_round_ms": statistics.median(replays) * 1000}


def main(players: int = 12, limit: int = 400) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        names = [f"p{i}" for i in range(players)]
        ids, homes = {}, {}
        for name in ["host", *names]:
            homes[name] = root / "homes" / name
            ids[name] = keys.create_identity(homes[name], name, None)
        db = root / "g.db"
        inv = H.create_game(db, "bench", ids["host"], "expansion", [(s, ids[s].public) for s in names], [])
        host = H.Host(db, ids["host"])
        for s in names:
            host.set_email(s, f"{s}@example.org")
            host.accept(read_blocks(P.join(read_blocks(inv.armored())[0], ids[s], homes[s]).armored())[0])
        publishing = publishers(host, root / "out")
        write_files, mail = publishing if isinstance(publishing, tuple) else (lambda: None, lambda: None)
        write_files()
        mail()
        bots = {s: RandomBot(s) for s in names}
        split = Split()
        moves, cpu, last_moves, files_t, mail_t = [], [], [], [], []
        by_round: dict[int, list[tuple[int, float]]] = {}  # (packet answered, time) of each ordinary move
        parts: list[dict[str, float]] = []
        seq = 1
        for _ in range(limit):
            found = dict(host.packets(seq - 1))
            packet = read_blocks(found[seq])[0]
            if _field(packet.doc, "phase") == "game-over":
                break
            seat = _field(packet.doc, "to_move")
            sp = P.open_packet(packet, ids[seat], homes[seat], remember=False)
            block = read_blocks(P.make_move(sp, str(bots[seat].choose(sp.view))).armored())[0]
            split.take()
            c0 = time.process_time()
            t0 = time.perf_counter()
            out = host.accept(block)
            t1 = time.perf_counter()
            c1 = time.process_time()
            spent = split.take()
            write_files()
            t2 = time.perf_counter()
            mail()
            t3 = time.perf_counter()
            seq = out.seq
            new = read_blocks(dict(host.packets(seq - 1))[seq])[0]
            if _field(new.doc, "phase") != "playing":
                last_moves.append(t1 - t0)
            else:
                moves.append(t1 - t0)
                cpu.append(c1 - c0)
                by_round.setdefault(_field(packet.doc, "round"), []).append((seq, t1 - t0))
                parts.append({**spent, "rest": t1 - t0 - sum(spent.values())})
            if isinstance(publishing, tuple):
                files_t.append(t2 - t1)
                mail_t.append(t3 - t2)
        host.close()
        rounds = one_round(db)
    ms = lambda xs: round(statistics.median(xs) * 1000, 2) if xs else None  # noqa: E731
    # each part's mean, so that the parts add up to the mean move (medians of parts do not add up)
    mean = lambda xs: round(statistics.fmean(xs) * 1000, 2)  # noqa: E731
    split_ms = {f"{kind}_ms": mean([p.get(kind, 0.0) for p in parts]) for kind in PARTS} if any(
        any(p[k] for k in KINDS) for p in parts) else {}
    # the first 20 moves of the first round and of the last: the same point of a round (a round's
    # board and piles grow as it goes), the last ~140 packets later
    early, late = by_round[min(by_round)][:20], by_round[max(by_round)][:20]
    early_ms, late_ms = ms([x for _, x in early]), ms([x for _, x in late])
    print(json.dumps({
        "players": players, "packets": seq, "move_ms": ms(moves), "move_cpu_ms": ms(cpu),
        "move_mean_ms": mean(moves) if split_ms else None, "round_end_ms": ms(last_moves),
        "move_early_ms": early_ms, "move_late_ms": late_ms, "late_packet": late[0][0] if late else None,
        "growth": round(late_ms / early_ms, 2) if early_ms and late_ms else None,
        "files_first_ms": ms(files_t[:20]), "files_last_ms": ms(files_t[-20:]),
        "mail_first_ms": ms(mail_t[:20]), "mail_last_ms": ms(mail_t[-20:]), **split_ms,
        **({k: round(v, 2) for k, v in rounds.items()} if isinstance(rounds, dict) else {}),
        # the figures this tree could not give, and why (shown as n/a with a footnote)
        "unmeasured": {
            **({} if isinstance(publishing, tuple) else {
                key: publishing for key in ("files_first_ms", "files_last_ms", "mail_first_ms", "mail_last_ms")}),
            **({} if isinstance(rounds, dict) else {key: rounds for key in ("audit_round_ms", "replay_round_ms")}),
        },
    }))


if __name__ == "__main__":
    main()
