"""The games `scripts/bench_pbem.py` times the commands on, made by one source tree's own code
(`python bench_fixture.py TREE OUT`).

Each tree reads only what it writes itself: an older tree refuses a newer tree's store
("unsupported schema") and may not know its key files, so the bench makes one set of games per
tree, each with that tree on the path. Like scripts/bench_host.py, this file uses only the API
every version has: `create_identity`, `create_game(path, ...)`, `Host(path, identity)`, `accept`,
`packets`, `archives`, `join`, `open_packet`, `make_move`.

Makes, under OUT:
- cli/: a dealt 5-seat classic game whose key files have a passphrase at the full scrypt cost
  (as people's are), the packet its seat to move answers (packet.pbem) and that seat's move
  as a file (m.pbem);
- rounds/: a 5-seat classic game played by random bots to the end of its first round (no
  passphrase: the audit and replay rows time reading, not unlocking);
- shared/: the cli game's table over a shared folder (its own store, folder.db), dealt, for
  `pbem turn`: made only by a tree that has shared folders (`folder_home` null otherwise).

Prints one JSON object: the paths, the seat to move and its move's text.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

TREE = Path(sys.argv[1]).resolve()
sys.path.insert(0, str(TREE))
os.environ.pop("PBEM_SCRYPT_N", None)  # the full cost, as people's key files have it

from engine.bots import RandomBot  # noqa: E402
from pbem.host import referee as H  # noqa: E402
from pbem.protocol.documents import read_blocks  # noqa: E402
from pbem.seat import keys  # noqa: E402
from pbem.seat import player as P  # noqa: E402

PASSPHRASE = "bench passphrase words"


def _field(doc, name: str):
    """A document's field: a typed document's attribute, or an older tree's dict key."""
    return doc[name] if isinstance(doc, dict) else getattr(doc, name)


def table(root: Path, n: int, protected: bool):
    """A classic game of n seats in root/g5.db, dealt."""
    names = [f"p{i}" for i in range(n)]
    ids, homes = {}, {}
    for name in ["host", *names]:
        homes[name] = root / "homes" / name
        ids[name] = keys.create_identity(homes[name], name, PASSPHRASE.encode() if protected else None)
    inv = H.create_game(root / f"g{n}.db", f"b{n}", ids["host"], "classic", [(s, ids[s].public) for s in names], [])
    host = H.Host(root / f"g{n}.db", ids["host"])
    for s in names:
        host.accept(read_blocks(P.join(read_blocks(inv.armored())[0], ids[s], homes[s]).armored())[0])
    return host, ids, homes


def answer(host, ids, homes, bots: dict[str, RandomBot]):
    """The newest packet, its seat to move, and that seat's move (opened and made by the seat)."""
    packet = read_blocks(host.packets()[-1][1])[0]
    seat = _field(packet.doc, "to_move")
    sp = P.open_packet(packet, ids[seat], homes[seat], remember=False)
    text = str(bots.setdefault(seat, RandomBot(1)).choose(sp.view))
    return packet, seat, text, P.make_move(sp, text)


def shared(out: Path, ids, homes, seat: str) -> tuple[str | None, str]:
    """The seats of the cli game over a shared folder (out/shared), dealt: the key home of a
    copy of `seat`'s for `pbem turn`; or None and why not (this tree has no shared folders, or
    an older API for them than this script uses)."""
    import shutil

    try:
        from pbem.auto.host_runner import FolderHost
        from pbem.folder import play
    except ImportError:
        return None, "has no shared folders"
    try:
        seat_class = getattr(play, "FolderSeat", None) or play.Seat  # its older name
        seats = sorted(n for n in ids if n != "host")
        H.create_game(out / "folder.db", "f5", ids["host"], "classic", [(s, ids[s].public) for s in seats], [])
        with H.Host(out / "folder.db", ids["host"], game="f5") as host:
            folder, _ = play.init_folder(out / "shared", host)
            for s in seats:
                seat_class.open(folder.dir, ids[s], homes[s]).join()
            FolderHost(host, folder.dir, lambda line: None).step()
    except (AttributeError, TypeError) as e:  # a name or signature this script does not know
        return None, f"has shared folders through an API this script does not know ({type(e).__name__}: {e})"
    home = out / "turn-home"
    shutil.copytree(homes[seat], home)
    return str(home), ""


def main() -> None:
    out = Path(sys.argv[2]).resolve()
    host, ids, homes = table(out / "cli", 5, protected=True)
    packet, seat, text, move = answer(host, ids, homes, {})
    (out / "packet.pbem").write_text(packet.armored())
    (out / "m.pbem").write_bytes(move.armored().encode())
    host.close()
    folder_home, folder_why = shared(out, ids, homes, seat)
    rhost, rids, rhomes = table(out / "rounds", 5, protected=False)
    bots = {s: RandomBot(s) for s in rids if s != "host"}
    while not rhost.archives():
        rhost.accept(read_blocks(answer(rhost, rids, rhomes, bots)[3].armored())[0])
    rhost.close()
    import inspect

    # Since the store holds many games (--store), apply's first word names the game; before,
    # it was the game's .db file.
    from pbem.cli import play

    print(json.dumps({
        "game": "b5", "apply_names_game": "store" in inspect.signature(inspect.unwrap(play.apply)).parameters,
        "seat": seat, "move": text, "packet": str(out / "packet.pbem"), "move_file": str(out / "m.pbem"),
        "db": str(out / "cli" / "g5.db"), "seat_home": str(homes[seat]), "host": "host", "host_home": str(homes["host"]),
        "rounds_db": str(out / "rounds" / "g5.db"), "rounds_home": str(rhomes["host"]),
        "folder": str(out / "shared"), "folder_home": folder_home,
        "folder_why": folder_why,
    }))


if __name__ == "__main__":
    main()
