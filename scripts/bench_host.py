"""The host's own time per move, run against one source tree (`python bench_host.py ROOT`).

`scripts/bench_pbem.py` runs this file twice in one run, once on the current tree and once on
an older commit extracted to a temporary folder, so the two rows are measured side by side.
It uses only the API both versions have: `create_game(path, ...)`, `Host(path, identity)`,
`accept`, `packets`, `set_email`, plus each version's way of writing packet files and mail.

Prints one JSON object: medians in milliseconds of an ordinary move, a round's last move,
and publishing (packet files, then mail) early in the game and late in it.
"""

from __future__ import annotations

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
    """(write packet files, mail pending packets) as this version does them."""
    try:  # the store that publishes only what is new
        from pbem.host.publish import OutDir, publish_pending
        from pbem.mail.outgoing import Courier, MailPublisher

        files, mail = OutDir(out), MailPublisher(host, Courier(to_dir=out / "mail"))
        return (lambda: publish_pending(host, files)), (lambda: publish_pending(host, mail))
    except ImportError:  # before: every command re-read every packet (names only that version has)
        import importlib

        from pbem.cli.play import write_packets
        from pbem.mail.outgoing import Courier

        send_pending = importlib.import_module("pbem.mail.outgoing").send_pending

        courier = Courier(to_dir=out / "mail")
        return (lambda: write_packets(host, out)), (lambda: send_pending(host, courier))


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
        write_files, mail = publishers(host, root / "out")
        write_files()
        mail()
        bots = {s: RandomBot(s) for s in names}
        moves, last_moves, files_t, mail_t = [], [], [], []
        seq = 1
        for _ in range(limit):
            found = dict(host.packets(seq - 1))
            packet = read_blocks(found[seq])[0]
            if _field(packet.doc, "phase") == "game-over":
                break
            seat = _field(packet.doc, "to_move")
            sp = P.open_packet(packet, ids[seat], homes[seat], remember=False)
            block = read_blocks(P.make_move(sp, str(bots[seat].choose(sp.view))).armored())[0]
            t0 = time.perf_counter()
            out = host.accept(block)
            t1 = time.perf_counter()
            write_files()
            t2 = time.perf_counter()
            mail()
            t3 = time.perf_counter()
            seq = out.seq
            new = read_blocks(dict(host.packets(seq - 1))[seq])[0]
            (last_moves if _field(new.doc, "phase") != "playing" else moves).append(t1 - t0)
            files_t.append(t2 - t1)
            mail_t.append(t3 - t2)
        host.close()
    ms = lambda xs: round(statistics.median(xs) * 1000, 2) if xs else None  # noqa: E731
    print(json.dumps({
        "players": players, "packets": seq, "move_ms": ms(moves), "round_end_ms": ms(last_moves),
        "files_first_ms": ms(files_t[:20]), "files_last_ms": ms(files_t[-20:]),
        "mail_first_ms": ms(mail_t[:20]), "mail_last_ms": ms(mail_t[-20:]),
    }))


if __name__ == "__main__":
    main()
