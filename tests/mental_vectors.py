"""Golden vectors for the mental-poker wire encodings (tests/vectors/mental/encodings.json).

Everything is derived from a fixed seed, so the same code must give the same bytes. Regenerate
only when a format changes on purpose (and bump its version): `python tests/mental_vectors.py`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pbem.protocol.mental.elgamal import KeyShare, encrypt, joint_key, trivial
from pbem.protocol.mental.group import hash_to_point, scalar_bytes, seeded_scalars
from pbem.protocol.mental.proofs import make_token, prove_key
from pbem.protocol.mental.shuffle import prove_shuffle, shuffle
from pbem.protocol.mental.transcript import context
from pbem.protocol.mental.vss import deal, image, open_stand_in, seal_stand_in, share_bytes, stand_in

PATH = Path(__file__).resolve().parent / "vectors" / "mental" / "encodings.json"
SEED = b"pbem mental golden vectors v1"
VSS_PATH = PATH.parent / "vss.json"
VSS_SEED = b"pbem mental vss golden vectors v1"


def build() -> dict[str, Any]:
    rng = seeded_scalars(SEED)
    seats = ["ann", "bob", "cyd"]
    shares = [KeyShare.new(rng) for _ in seats]
    key_ctx = [context("key share", game="vectors-00000001", seat=s, round=1) for s in seats]
    key_proofs = [prove_key(k, c, rng) for k, c in zip(shares, key_ctx)]
    y = joint_key([k.public for k in shares])
    cards = [hash_to_point("test card", name.encode()) for name in ("a", "b", "c", "d")]
    deck = [trivial(m) for m in cards]
    shuffle_ctx = context("shuffle", game="vectors-00000001", seat="ann", round=1, stack="deck")
    out, perm, rands = shuffle(y, deck, rng)
    proof = prove_shuffle(y, deck, out, perm, rands, shuffle_ctx, rng)
    ct = encrypt(y, cards[0], rng())
    token_ctx = context("token", game="vectors-00000001", seat="bob", round=1, stack="deck", slot=0, to="ann")
    token = make_token(shares[1], ct, token_ctx, rng)
    return {
        "about": "pbem mental-poker encodings; hex of the wire bytes, all from seeded_scalars(seed)",
        "seed": SEED.decode(),
        "key_shares": [
            {"seat": s, "context": c.decode(), "public": k.public.raw.hex(),
             "proof": p.encode().hex()}
            for s, k, c, p in zip(seats, shares, key_ctx, key_proofs)
        ],
        "joint_key": y.raw.hex(),
        "cards": [m.raw.hex() for m in cards],
        "shuffle": {"context": shuffle_ctx.decode(), "inputs": [c.encode().hex() for c in deck],
                    "outputs": [c.encode().hex() for c in out], "permutation": perm,
                    "proof": proof.encode().hex()},
        "token": {"context": token_ctx.decode(), "ciphertext": ct.encode().hex(), "key": shares[1].public.raw.hex(),
                  "token": token.encode().hex()},
    }


def build_vss() -> dict[str, Any]:
    """Seat 0 of four deals its four epoch keys to seats 1..3 with threshold 2; stand-in
    shares of holders 1 and 3 for one ciphertext under epoch 1, and their combination."""
    rng = seeded_scalars(VSS_SEED)
    keys = [KeyShare.new(rng) for _ in range(4)]
    dealing, shares = deal([k.secret for k in keys], [1, 2, 3], 2, rng)
    ct = encrypt(keys[1].public, hash_to_point("test card", b"a"), rng())
    stand_ins = {}
    for i in (1, 3):
        sctx = context("stand-in", game="vectors-00000001", seat=0, holder=i, stack="deck", slot=0)
        token = stand_in(shares[i][1], image(keys[1].public, dealing.commitments[1], i), ct, sctx, rng)
        stand_ins[str(i)] = {"context": sctx.decode(), "share": token.encode().hex()}
    # holder 1's share sealed to a later reader's key instead (drawn last: the values above stay)
    reader = KeyShare.new(rng)
    rctx = context("sealed stand-in", game="vectors-00000001", seat=0, holder=1, to=2, stack="deck", slot=0)
    sealed = seal_stand_in(shares[1][1], image(keys[1].public, dealing.commitments[1], 1), ct, reader.public, rctx, rng)
    return {
        "about": "pbem Feldman VSS of a seat's epoch keys; hex of the wire bytes, all from seeded_scalars(seed)",
        "seed": VSS_SEED.decode(),
        "epochs": 4,
        "threshold": 2,
        "keys": [k.public.raw.hex() for k in keys],
        "dealing": dealing.encode().hex(),
        "shares": {str(i): share_bytes(s).hex() for i, s in shares.items()},
        "ciphertext": ct.encode().hex(),
        "stand_in": stand_ins,
        "token": (ct.c1 * keys[1].secret).raw.hex(),
        "sealed_stand_in": {"context": rctx.decode(), "reader": reader.public.raw.hex(),
                            "reader_secret": scalar_bytes(reader.secret).hex(), "share": sealed.encode().hex(),
                            "opened": open_stand_in(reader.secret, sealed).raw.hex()},
    }


if __name__ == "__main__":
    PATH.parent.mkdir(parents=True, exist_ok=True)
    PATH.write_text(json.dumps(build(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    VSS_PATH.write_text(json.dumps(build_vss(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {PATH} and {VSS_PATH}")
