"""Costs of trustless dealing (`scripts/bench-mental`): CPU time and sizes, one table.

One seat's shuffle of every stack of a whole game with its proofs, and another seat's check
of it, at 5 seats (classic) and at 10 (classic) and 12 (expansion); a decryption token made
and checked; a key share's proof; sizes. CPU time (time.process_time), median of a few runs.
Then a whole game through the blind host (a real SQLite file in a temporary folder), smart
bots on every seat: packets before the first move and in all, the armoured files as they
travel, CPU per block of each step (the seat making it, the host checking it, one other seat
following the packet that relays it) and one seat following the whole chain.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from script_args import at_least_one, listed, numbers  # noqa: E402

from pbem.protocol.crypto import canonical_json
from pbem.protocol.mental.elgamal import KeyShare, encrypt, joint_key
from pbem.protocol.mental.group import base_mul, random_scalar
from pbem.protocol.mental.proofs import check_key, check_token, make_token, prove_key
from pbem.protocol.mental.shuffle import check_shuffle, prove_shuffle, shuffle
from pbem.protocol.mental.transcript import context
from pbem.protocol.trustless.keys import SeatKeys
from pbem.protocol.trustless.stacks import game_stacks, initial
from pbem.protocol.trustless.tokens import ALL, make_bundle


def cpu(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return statistics.median(times)


def game_rows(ruleset: str, seats: int, runs: int) -> list[tuple[str, str]]:
    shares = [KeyShare.new() for _ in range(seats)]
    y = joint_key([k.public for k in shares])
    stacks = [(s, initial(s)) for s in game_stacks(ruleset, seats)]
    cards = sum(len(s.cards) for s, _ in stacks)
    made: list = []

    def make() -> None:
        made.clear()
        for s, cts in stacks:
            ctx = context("shuffle", game="bench", seat="p0", stack=s.label)
            out, perm, rands = shuffle(y, cts)
            made.append((cts, out, prove_shuffle(y, cts, out, perm, rands, ctx), ctx))

    def check() -> None:
        for cts, out, proof, ctx in made:
            check_shuffle(y, cts, out, proof, ctx)

    t_make = cpu(make, runs)
    t_check = cpu(check, runs)
    size = sum(64 * len(out) + len(proof.encode()) for _, out, proof, _ in made)
    tag = f"{seats} seats ({ruleset}, {cards} cards)"
    return [
        (f"one seat's shuffle + proofs, {tag}", f"{t_make * 1000:.0f} ms CPU (aim <= 1000)"),
        (f"checking one seat's shuffle, {tag}", f"{t_check * 1000:.0f} ms CPU (aim <= 1000)"),
        (f"checking all {seats} shuffles (setup), {tag}", f"{t_check * seats * 1000:.0f} ms CPU"),
        (f"one seat's shuffle message, {tag}", f"{size:,} bytes raw, {size * 4 // 3:,} base64"),
    ]


def small_rows(n: int = 300) -> list[tuple[str, str]]:
    a = KeyShare.new()
    ct = encrypt(a.public, base_mul(random_scalar()), random_scalar())
    ctx = context("token", game="bench", seat="p1", slot=0)
    tokens = [make_token(a, ct, ctx) for _ in range(n)]
    t_make = cpu(lambda: [make_token(a, ct, ctx) for _ in range(n)], 3) / n

    def check_tokens() -> None:
        for t in tokens:
            check_token(a.public, ct, t, ctx)

    def check_keys() -> None:
        for _ in range(n):
            check_key(a.public, proof, ctx)

    proof = prove_key(a, ctx)
    t_check = cpu(check_tokens, 3) / n
    t_key = cpu(check_keys, 3) / n
    k = random_scalar()
    t_mul = cpu(lambda: [ct.c1 * k for _ in range(n)], 3) / n
    return [
        ("scalar multiplication (ristretto255, rbcl)", f"{t_mul * 1e6:.0f} us"),
        ("decryption token + Chaum-Pedersen proof: make", f"{t_make * 1e6:.0f} us ({len(tokens[0].encode())} bytes)"),
        ("decryption token: check", f"{t_check * 1e6:.0f} us"),
        ("key share Schnorr proof: check", f"{t_key * 1e6:.0f} us"),
    ]


def message_rows(seats: int = 12) -> list[tuple[str, str]]:
    """Sizes as canonical JSON (what rides inside a signed move), and armoured (base64 of it)."""
    game = "bench-00000000"
    keys = [SeatKeys.new() for _ in range(seats)]
    y = joint_key([k.shares[1].public for k in keys])
    cts = {("deck@1", i): encrypt(y, base_mul(random_scalar()), random_scalar()) for i in range(seats + 1)}
    shares = {"deck@1": keys[0].shares[1]}
    owed = make_bundle(game, "p0", shares, cts, [("deck@1", i) for i in range(1, seats)], ALL)
    opening = make_bundle(game, "p0", shares, cts, [("deck@1", 0)], ALL)
    move = {"seat": "p0", "tokens": owed, "play": {"slot": ["deck@1", 0], "open": opening, "move": "play path-4.1 at 3,1"}}
    join = {"seat": "p0", "mental": keys[0].public(game, "p0")}
    sizes = {f"a move with its card's opening and tokens for {seats - 1} draws": len(canonical_json(move)),
             "a join's key shares with their proofs": len(canonical_json(join))}
    return [(f"{name}, {seats} seats", f"{n:,} bytes JSON, {(n + 2) // 3 * 4:,} armoured") for name, n in sizes.items()]


def blind_rows(seats: int, ruleset: str = "classic", rounds: int = 3) -> list[tuple[str, str]]:
    """A whole game (or its first `rounds`) through the blind host (a real SQLite file), smart bots
    on every seat, each seat following every packet as it would at home: CPU per seat, sizes,
    messages."""
    import tempfile

    from engine.bots import make_bot
    from pbem.host import blind
    from pbem.protocol.crypto import Identity
    from pbem.protocol.documents import Packet, parse_relayed, read_blocks
    from pbem.seat.trustless import TrustlessSeat, join

    names = [f"p{i}" for i in range(seats)]
    host_id = Identity.generate("host")
    ids = {n: Identity.generate(n) for n in names}
    sizes: dict[str, list[int]] = {}
    host_cpu: dict[str, list[float]] = {}
    make_cpu: dict[str, list[float]] = {}
    follow_step: dict[str, list[float]] = {}
    seat_cpu = dict.fromkeys(names, 0.0)  # each seat: making its blocks and following every packet
    turn_cpu: list[float] = []  # per move packet: the mover's block, and one other seat following it
    dealt_at = 0
    deal_cpu: dict[str, float] = {}
    all_bytes = 0
    wall = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        inv = blind.create_game(db, "bench", host_id, ruleset, [(n, ids[n].public) for n in names], [])
        host = blind.BlindHost(db, host_id)
        table = {n: TrustlessSeat(inv, ids[n], n) for n in names}
        for n in names:
            table[n].choose = make_bot("smart", n, "bench").choose
        for n in names:
            host.accept(read_blocks(join(inv, ids[n], n).armored())[0])
        seen = 0

        def sync(mover: str | None = None, made: float = 0.0) -> None:
            nonlocal seen, all_bytes
            for seq, armored in host.packets(seen):
                all_bytes += len(armored)
                packet = read_blocks(armored)[0].expect(Packet)
                step = "join" if seq == 1 else parse_relayed(packet.doc.relayed[0], "block").doc.step  # type: ignore[index]
                sizes.setdefault("packet 1 (every join)" if seq == 1 else f"a packet relaying a {step} block",
                                 []).append(len(armored))
                for n in names:
                    t = time.process_time()
                    table[n].follow(packet)
                    spent = time.process_time() - t
                    seat_cpu[n] += spent
                    if n == names[-1] and seq > 1:
                        follow_step.setdefault(step, []).append(spent)
                    if step == "move" and n == names[-1] and mover is not None:
                        turn_cpu.append(made + spent)
                seen = seq

        sync()
        while (waiting := host.status()["waiting"])["step"] != "over" and len(host.table()[0].ended) < rounds:
            if waiting["step"] == "move" and not dealt_at:
                dealt_at, deal_cpu = host.status()["seq"], dict(seat_cpu)
            for n in waiting["seats"]:
                t = time.process_time()
                block = table[n].owed()
                assert block is not None, (n, waiting)
                text = block.armored()
                spent = time.process_time() - t
                seat_cpu[n] += spent
                make_cpu.setdefault(block.doc.step, []).append(spent)
                sizes.setdefault(f"a seat's {block.doc.step} block", []).append(len(text))
                t = time.process_time()
                host.accept(read_blocks(text)[0])
                host_cpu.setdefault(block.doc.step, []).append(time.process_time() - t)
                sync(n if block.doc.step == "move" else None, spent)
        packets = host.status()["seq"]
        host.close()
        db_bytes = sum(p.stat().st_size for p in Path(tmp).iterdir())
    biggest = max(max(v) for v in sizes.values())
    worst = max(seat_cpu.values())
    tag = f"{seats} seats ({ruleset})"
    played = "the whole game" if rounds >= 3 else "the first round" if rounds == 1 else f"the first {rounds} rounds"
    counts = ", ".join(f"{len(v)} {k}" for k, v in host_cpu.items())
    out = [(f"messages (packets) before the first move, {tag}", f"{dealt_at} (2n + 1), in n + 2 message rounds"),
           (f"packets in {played}{' (3 rounds)' if rounds >= 3 else ''}, {tag}", f"{packets}: {counts}"),
           (f"a seat's CPU per shuffle (making it / checking one), {tag}",
            f"{statistics.median(make_cpu['shuffle']):.2f} s / {statistics.median(follow_step['shuffle']):.2f} s"),
           (f"a seat's CPU per turn (its move block, or following another's), {tag}",
            f"{statistics.median(make_cpu['move']) * 1000:.1f} ms / {statistics.median(follow_step['move']) * 1000:.1f} ms"
            " (median)"),
           (f"a seat's CPU to the deal (joins, every shuffle), {tag}", f"{max(deal_cpu.values()):.1f} s (the most)"),
           (f"a seat's CPU for {played}, {tag}",
            f"{worst:.1f} s the most, {statistics.median(seat_cpu.values()):.1f} s median; a round: "
            f"{worst / min(rounds, 3):.1f} s (aim < 30 s: {'met' if worst / min(rounds, 3) < 30 else 'NOT met'})"),
           (f"bytes per packet (median / the largest), {tag}",
            f"{statistics.median(v for k, v2 in sizes.items() if k.startswith('a packet') for v in v2):,.0f} / {biggest:,}"
            f" (aim < 512 KiB: {'met' if biggest < 512 * 1024 else 'NOT met'})"),
           (f"bytes {'per game' if rounds >= 3 else 'in ' + played} (every packet, armoured), {tag}", f"{all_bytes:,}"),
           (f"the host's database after {'the game' if rounds >= 3 else played}, {tag}", f"{db_bytes:,} bytes"),
           (f"wall time of {played} in one process, {tag}", f"{time.monotonic() - wall:.0f} s"),
           (f"the time a vanished seat costs the table, {tag}", "not yet (a trustless seat cannot vanish yet)")]
    for step in host_cpu:
        ms = [statistics.median(d[step]) * 1000 for d in (make_cpu, host_cpu, follow_step)]
        out.append((f"a {step} block: made / checked by the host / followed by a seat, {tag}",
                    f"{ms[0]:.1f} / {ms[1]:.1f} / {ms[2]:.1f} ms CPU (median)"))
    out += [(f"{name}, {tag}", f"{statistics.median(v):,.0f} bytes armoured (median), {max(v):,} max")
            for name, v in sorted(sizes.items())]
    return out


def rows(runs: int = 3, seats: tuple[int, ...] = (5, 8, 10), rulesets: tuple[str, ...] = ("classic",)) -> list[tuple[str, str]]:
    out = small_rows() + message_rows()
    for ruleset, n in (("classic", 5), ("classic", 10), ("expansion", 12)):
        out += game_rows(ruleset, n, runs)
    for ruleset in rulesets:
        for n in seats:
            if ruleset == "classic" and n > 10:  # classic is played by 3 to 10
                continue
            out += blind_rows(n, ruleset)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(prog="scripts/bench-mental", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="example: scripts/bench-mental 1 5,12 classic,expansion")
    ap.add_argument("runs", nargs="?", type=at_least_one, default=3, help="runs per measurement, the median kept (default 3)")
    ap.add_argument("seats", nargs="?", type=numbers(3, 12), default=[5, 8, 10],
                    help="seat counts of the whole games through the blind host (default 5,8,10)")
    ap.add_argument("rulesets", nargs="?", type=listed(("classic", "expansion")), default=["classic"],
                    help="their rulesets (default classic; classic is played by 3 to 10)")
    args = ap.parse_args()
    table = rows(args.runs, tuple(args.seats), tuple(args.rulesets))
    width = max(len(k) for k, _ in table)
    print(f"{'measure':<{width}}  value")
    for k, v in table:
        print(f"{k:<{width}}  {v}")


if __name__ == "__main__":
    main()
