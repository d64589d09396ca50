"""Write the protocol's golden vectors (docs/protocol.md, "Golden vectors"). Run by hand, never by the tests:

    .venv/bin/python tests/vectors/protocol/make.py

Rerun it only when the wire format changes on purpose (and bump the version if old files no
longer read): the tests compare the code against these files, byte for byte. The documents
come from a real game played through the real host and seats with fixed keys; the game id,
the host's secrets, the join contributions and HPKE's ephemeral keys are random, so a rerun
writes different (equally valid) documents.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[2]), str(HERE.parents[1])]

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey  # noqa: E402

from engine.bots import RandomBot  # noqa: E402
from engine.chance import SeededChance  # noqa: E402
from engine.position import dump  # noqa: E402
from engine.state import deal  # noqa: E402
from pbem.host import referee as H  # noqa: E402
from pbem.host import timekeeper  # noqa: E402
from pbem.host.clock import FakeClock  # noqa: E402
from pbem.host.deadlines import Timing  # noqa: E402
from pbem.protocol import fairness  # noqa: E402
from pbem.protocol.armor import armor  # noqa: E402
from pbem.protocol.crypto import Identity, canonical_json  # noqa: E402
from pbem.protocol.documents import parse, read_blocks, unb64  # noqa: E402
from pbem.seat import player as P  # noqa: E402
from pbem.seat.home import invitation_path  # noqa: E402

NAMES = ["referee", "ann", "bob", "cat", "dan"]  # dan holds no seat until the deadlines game hands him one


def identity(name: str) -> Identity:
    """A fixed test identity: its two private keys are SHA-256 of a label."""
    sign = hashlib.sha256(f"pbem vector {name} ed25519".encode()).digest()
    enc = hashlib.sha256(f"pbem vector {name} x25519".encode()).digest()
    return Identity(name, Ed25519PrivateKey.from_private_bytes(sign), X25519PrivateKey.from_private_bytes(enc))


def write(name: str, obj: object) -> None:
    (HERE / name).write_text(json.dumps(obj, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


def chance_vectors() -> dict:
    out = []
    for seed_hex in ["", "00", "7062656d", hashlib.sha256(b"pbem").hexdigest()]:
        c = SeededChance(bytes.fromhex(seed_hex))
        below = [[n, c.below(n)] for n in (1, 2, 3, 6, 10, 52, 71, 1000, 2**32 + 1, 2**63 + 12345)]
        shuffled = SeededChance(bytes.fromhex(seed_hex)).shuffled(list(range(20)))
        out.append({"seed": seed_hex, "below": below, "shuffled_0_to_19": shuffled})
    seed = fairness.round_seed("vector-00000000", 1, bytes(32), [bytes([1]) * 32, bytes([2]) * 32, bytes([3]) * 32])
    dealt = dump(deal("classic", ("ann", "bob", "cat"), SeededChance(seed)))
    return {"streams": out, "deal": {"ruleset": "classic", "players": ["ann", "bob", "cat"], "seed": seed.hex(),
                                     "position": dealt}}


def fairness_vectors() -> list:
    out = []
    for game, k, secret, contributions in [
        ("vector-00000000", 1, bytes(32), [bytes([1]) * 32, bytes([2]) * 32, bytes([3]) * 32]),
        ("friday-1a2b3c4d", 3, bytes(range(32)), [hashlib.sha256(bytes([i])).digest() for i in range(5)]),
    ]:
        out.append({"game": game, "round": k, "secret": secret.hex(), "contributions": [c.hex() for c in contributions],
                    "commitment": fairness.commitment(game, k, secret),
                    "seed": fairness.round_seed(game, k, secret, contributions).hex()})
    return out


CANONICAL_INPUTS = [
    '{"b":1,"a":[true,false,null],"c":{"z":"","y":-0}}',
    '{"text":"line\\nbreak \\"quoted\\" back\\\\slash \\t tab \\u0001 ctrl"}',
    '{"简体":"繁體","ascii":"plain","emoji":"\\ud83c\\udca1","é":1}',
    '{"big":18446744073709551615,"neg":-9223372036854775808,"list":[3,2,1]}',
    '{"\\u00e9":"composed","e\\u0301":"decomposed","\\u2028":"line separator"}',
]


def canonical_vectors() -> list:
    return [{"input": text, "canonical_hex": canonical_json(json.loads(text)).hex()} for text in CANONICAL_INPUTS]


def key_vectors() -> list:
    out = []
    for name in NAMES:
        ident = identity(name)
        pub = ident.public
        out.append({"name": name,
                    "ed25519_seed": hashlib.sha256(f"pbem vector {name} ed25519".encode()).hexdigest(),
                    "x25519_private": hashlib.sha256(f"pbem vector {name} x25519".encode()).hexdigest(),
                    "sign_pub": pub.sign.hex(), "enc_pub": pub.enc.hex(), "line": pub.encode(),
                    "key_id": pub.key_id().hex(), "fingerprint": pub.fingerprint(),
                    "signature_of_abc": ident.sign(b"abc").hex()})
    return out


def armor_vectors() -> dict:
    payloads = [b"", b"\x00", b"pbem", bytes(range(256)), bytes(range(48))]
    written = [{"kind": "MOVE", "payload": p.hex(), "headers": {"Comment": "game x seq 5"} if i % 2 else {},
                "text": armor("MOVE", p, {"Comment": "game x seq 5"} if i % 2 else None)}
               for i, p in enumerate(payloads)]
    good = armor("PACKET", bytes(range(48)))
    body = good.splitlines()
    tolerated = [
        "\r\n".join(body) + "\r\n",
        "\n".join("> " + line for line in body),
        "\n".join(">> > " + line for line in body),
        "Hi,\n\nsee below\n\n" + good + "\nbye\n",
        body[0].replace("PBEM ", "PBEM\n") + "\n" + "\n".join(body[1:]),
        "\n".join([body[0], body[1][:20], body[1][20:], *body[2:]]),
        "\n".join([body[0], body[1] + body[2], *body[3:]]),
        good.replace("=", "=3D"),
    ]
    refused = [good.replace(body[-1], ""), good.replace("END PBEM PACKET", "END PBEM MOVE"),
               good.replace(body[1], body[1][:10] + "!" + body[1][11:]), good.replace(body[1], body[1][:-3])]
    return {"written": written, "tolerated": [{"text": t, "payload": bytes(range(48)).hex()} for t in tolerated],
            "refused": refused}


def documents() -> dict:
    ids = {n: identity(n) for n in NAMES}
    seats = NAMES[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        homes = {n: root / f"home-{n}" for n in NAMES}
        inv = H.create_game(root / "game.db", "vector", ids["referee"], "classic", [(s, ids[s].public) for s in seats], [])
        host = H.Host(root / "game.db", ids["referee"])
        joins = {}
        for s in seats:
            joins[s] = P.join(inv, ids[s], homes[s])
            host.accept(read_blocks(joins[s].armored())[0])
        bots = {s: RandomBot(f"vector-{s}") for s in seats}
        first_move = None
        while True:
            seq, armored = host.packets()[-1]
            packet = read_blocks(armored)[0]
            if packet.doc.phase != "playing":
                break
            seat = packet.doc.to_move
            sp = P.open_packet(packet, ids[seat], homes[seat])
            move = P.make_move(sp, str(bots[seat].choose(sp.view)))
            first_move = first_move or move
            host.accept(read_blocks(move.armored())[0])
        packet1 = host.packets()[0][1]
        archive = host.archives()[1]
        host.close()
    files = {"invitation.pbem": inv.armored(), "join.pbem": joins["ann"].armored(), "packet.pbem": packet1,
             "move.pbem": first_move.armored(), "archive.pbem": archive, **deadline_documents(ids)}
    for name, text in files.items():
        (HERE / name).write_text(text, encoding="utf-8")
    out = {name: {"hash": read_blocks(text)[-1].hash, "bytes": len(text.encode())} for name, text in files.items()}
    # the padded sizes of the sealed boxes (docs/protocol.md, "Padding")
    out["packet.pbem"]["sealed_part_bytes"] = sorted({len(unb64(v, "part")) for v in read_blocks(packet1)[0].doc.parts.values()})
    out["move.pbem"]["sealed_move_bytes"] = len(unb64(first_move.doc.sealed, "move"))
    return out


def deadline_documents(ids: dict[str, Identity]) -> dict[str, str]:
    """A round with deadlines (docs/protocol.md, "Deadlines"): bob asks to be away, cat is
    silent and the host discards for it on timeout, then the host hands bob's seat to dan."""
    seats = ["ann", "bob", "cat"]
    keys = {s: ids[s] for s in seats}
    clock = FakeClock("2026-12-01T12:00:00+00:00")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        homes = {n: root / f"home-{n}" for n in NAMES}
        inv = H.create_game(root / "game.db", "timed", ids["referee"], "classic", [(s, ids[s].public) for s in seats],
                            [], timing=Timing(deadline=3600, on_timeout="discard").to_config(), clock=clock)
        host = H.Host(root / "game.db", ids["referee"], clock)
        for s in seats:
            host.accept(read_blocks(P.join(inv, ids[s], homes[s]).armored())[0])
        request = P.make_request(inv, "bob", ids["bob"], "away", until="2026-12-03T00:00:00+00:00")
        host.accept(request)
        bots = {s: RandomBot(f"vector-timed-{s}") for s in seats}
        out: dict[str, str] = {"request.pbem": request.armored()}
        while True:
            seq, armored = host.packets()[-1]
            packet = read_blocks(armored)[0]
            if packet.doc.phase != "playing":
                break
            seat = packet.doc.to_move
            if seat == "cat" and "notice.pbem" not in out:
                clock.advance(3601)  # cat is silent: late, then the host discards for it
                host.tick()
                notice = next(r for _, r in timekeeper.notices(host) if r.kind == "late")
                out["notice.pbem"] = notice.armored
                continue
            if seat == "bob" and "handover.pbem" not in out and "notice.pbem" in out:
                handover = host.reseat_document("bob", ids["dan"].public)
                host.accept(handover)
                out["handover.pbem"] = handover.armored()
                keys["bob"] = ids["dan"]
                homes["bob"] = homes["dan"]  # dan's key home trusts the invitation too (as `folder` does)
                anchor = invitation_path(homes["dan"], inv.game)
                anchor.parent.mkdir(parents=True)
                anchor.write_text(inv.armored())
                continue
            if "handover.pbem" in out and "packet-deadline.pbem" not in out:
                out["packet-deadline.pbem"] = armored
            sp = P.open_packet(packet, keys[seat], homes[seat])
            host.accept(read_blocks(P.make_move(sp, str(bots[seat].choose(sp.view))).armored())[0])
            clock.advance(600)
        archive = host.archives()[1]
        by_host = next(m for m in read_blocks(archive)[0].doc.moves if m.by == "host")
        out["move-by-host.pbem"] = parse("move", unb64(by_host.envelope, "move")).armored()
        out["archive-deadline.pbem"] = archive
        host.close()
    return out


def main() -> None:
    random.seed(0)
    write("chance.json", chance_vectors())
    write("fairness.json", fairness_vectors())
    write("canonical-json.json", canonical_vectors())
    write("keys.json", key_vectors())
    write("armor.json", armor_vectors())
    write("documents.json", documents())


if __name__ == "__main__":
    main()
