"""Write the golden vectors of a round whose host plays a silent seat's turn with the search bot
(tests/vectors/protocol/bot-deadline.*). By hand only:

    .venv/bin/python tests/vectors/protocol/make_bot_deadline.py

A 3-seat classic round (ann, bob, cat, the fixed identities of make.py) with `--deadline 1h
--on-timeout bot` and a budget of 20 simulated turns a move, on a fake clock: cat is silent
once and the host plays its turn. bot-deadline.pbem holds the packet that names the budget in
its deadline (`bot_turns`), the host's move for cat and the round's archive (which the audit
checks by playing the search bot again at that budget); bot-deadline.json their hashes and
sizes. The deal's chance is fresh on every run, so a rerun writes other bytes.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[2]), str(HERE)]

from make import NAMES, identity  # noqa: E402

from engine.bots import RandomBot  # noqa: E402
from pbem.host import referee as H  # noqa: E402
from pbem.host.clock import FakeClock  # noqa: E402
from pbem.host.deadlines import Timing  # noqa: E402
from pbem.protocol.documents import parse, read_blocks, unb64  # noqa: E402
from pbem.seat import player as P  # noqa: E402

BUDGET = 20


def build() -> list[str]:
    ids = {n: identity(n) for n in NAMES}
    seats = ["ann", "bob", "cat"]
    clock = FakeClock("2026-12-01T12:00:00+00:00")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        homes = {n: root / f"home-{n}" for n in NAMES}
        timing = Timing(deadline=3600, on_timeout="bot", bot_turns=BUDGET)
        inv = H.create_game(root / "game.db", "botted", ids["referee"], "classic", [(s, ids[s].public) for s in seats],
                            [], timing=timing.to_config(), clock=clock)
        host = H.Host(root / "game.db", ids["referee"], clock)
        for s in seats:
            host.accept(read_blocks(P.join(inv, ids[s], homes[s]).armored())[0])
        bots = {s: RandomBot(f"vector-bot-{s}") for s in seats}
        waited = None
        while True:
            packet = read_blocks(host.packets()[-1][1])[0]
            if packet.doc.phase != "playing":
                break
            seat = packet.doc.to_move
            if seat == "cat" and waited is None:
                waited = packet.armored()  # cat is silent: the host plays the search bot for it
                clock.advance(3601)
                host.tick()
                continue
            sp = P.open_packet(packet, ids[seat], homes[seat])
            host.accept(read_blocks(P.make_move(sp, str(bots[seat].choose(sp.view))).armored())[0])
            clock.advance(600)
        archive = host.archives()[1]
        by_host = next(m for m in read_blocks(archive)[0].doc.moves if m.by == "host")
        host.close()
    assert waited is not None
    return [waited, parse("move", unb64(by_host.envelope, "move")).armored(), archive]


def main() -> None:
    blocks = build()
    (HERE / "bot-deadline.pbem").write_text("\n".join(blocks), encoding="utf-8")
    facts = {"bot_turns": BUDGET, "hashes": [read_blocks(b)[0].hash for b in blocks],
             "bytes": [len(b.encode()) for b in blocks]}
    (HERE / "bot-deadline.json").write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
