"""Write the golden vectors of the share-carrying blocks a vanished seat and a bad dealing bring
(tests/vectors/protocol/trustless-shares.*). By hand only:

    .venv/bin/python tests/vectors/protocol/make_trustless_shares.py

They build on the four joins of trustless-gone.pbem (ann, bob, cat, dan, threshold 2; ann's
keys dealt among the others) and its first card (deck@1 #0), read from those files, so the
blocks here come out the same on every run (the mental randomness is seeded, Ed25519 is
deterministic) and the test writes them again byte for byte:
- bob's `tokens` block carrying its share of ann's token for the card **sealed to dan**
  (`StandIn.to`: the card's later reader; 160 bytes, the box and its proof);
- dan's `move` playing that card, its opening making ann's token public (`Opening.unsealed`):
  dan's own stand-in share and its token on bob's box, each with its proof;
- cat's `complaint` against ann, and ann's `answer` with cat's four shares in the open (they
  match ann's commitments: the verdict names cat).
Each block answers a made-up packet; they are wire forms, not one game's chain.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[2]), str(HERE)]

import msgspec  # noqa: E402
from make import identity  # noqa: E402

from pbem.protocol.documents import Join, read_blocks  # noqa: E402
from pbem.protocol.mental.elgamal import Ciphertext  # noqa: E402
from pbem.protocol.mental.group import seeded_scalars  # noqa: E402
from pbem.protocol.mental.proofs import make_token  # noqa: E402
from pbem.protocol.mental.vss import SealedShare, share_bytes  # noqa: E402
from pbem.protocol.shapes import b64  # noqa: E402
from pbem.protocol.trustless import dealing as D  # noqa: E402
from pbem.protocol.trustless import messages as M  # noqa: E402
from pbem.protocol.trustless import standin as SI  # noqa: E402
from pbem.protocol.trustless.keys import SeatKeys, unb64  # noqa: E402
from pbem.protocol.trustless.tokens import ALL, token_context  # noqa: E402

GONE = json.loads((HERE / "trustless-gone.json").read_text(encoding="utf-8"))
SEED = b"pbem trustless shares golden vectors v1"
SLOT = ("deck@1", 0)


def fake_packet(seq: int) -> str:
    return hashlib.sha256(f"shares vector packet {seq}".encode()).hexdigest()


def joins() -> list[Join]:
    """The four joins of trustless-gone.pbem, as stored."""
    return [b.expect(Join).doc for b in read_blocks((HERE / "trustless-gone.pbem").read_text(encoding="utf-8"))[:4]]


def epoch_of(label: str) -> int:
    return int(label.split("@")[1])


def build() -> tuple[list[str], dict]:
    rng = seeded_scalars(SEED)
    game, seats, k = GONE["game"], tuple(GONE["seats"]), GONE["threshold"]
    ids = {s: identity(s) for s in seats}
    by_seat = {j.seat: j for j in joins()}
    keys = {s: M.join_shares(j) for s, j in by_seat.items()}
    ann = by_seat["ann"]
    commitments = D.check_public(msgspec.to_builtins(ann.dealing), "ann", seats, k)
    held = {q: M.open_dealing(ann, commitments, keys["ann"], seats, q, ids[q]) for q in seats[1:]}
    cts = {SLOT: Ciphertext.decode(bytes.fromhex(GONE["ciphertexts"]["deck@1 0"]))}
    blocks = [
        M.message(ids["cat"], game, "cat", 1, fake_packet(1), "complaint", against="ann"),
        M.message(ids["ann"], game, "ann", 2, fake_packet(2), "answer", against="cat",
                  shares=b64(share_bytes(held["cat"]))),
    ]
    sealed = SI.make_sealed(game, "bob", "ann", "dan", [SLOT], held["bob"], cts, keys["dan"], epoch_of, rng)
    blocks.append(M.message(ids["bob"], game, "bob", 20, fake_packet(20), "tokens", stand_in=[sealed]))
    box = SealedShare.decode(unb64(sealed["shares"], "a vector"))
    dan = SeatKeys.from_secret_hex(GONE["secrets"]["dan"]).shares[epoch_of(SLOT[0])]
    own = {"from": "dan", "to": ALL, "slots": [list(SLOT)],
           "tokens": b64(make_token(dan, cts[SLOT], token_context(game, "dan", SLOT), rng).encode())}
    unsealed = SI.make_unsealed(game, "ann", "dan", SLOT, cts[SLOT], held["dan"][epoch_of(SLOT[0])], dan,
                                {"bob": box}, rng)
    blocks.append(M.message(ids["dan"], game, "dan", 21, fake_packet(21), "move", move="play cross at 1,0",
                            play=(SLOT, own), unsealed=[unsealed]))
    armored = [b.armored() for b in blocks]
    facts = {"game": game, "seed": SEED.decode(), "slot": list(SLOT), "ciphertext": GONE["ciphertexts"]["deck@1 0"],
             "joins": hashlib.sha256("\n".join(j.armored() for j in read_blocks(
                 (HERE / "trustless-gone.pbem").read_text(encoding="utf-8"))[:4]).encode()).hexdigest(),
             "bytes": [len(a.encode()) for a in armored]}
    return armored, facts


def main() -> None:
    blocks, facts = build()
    (HERE / "trustless-shares.pbem").write_text("\n".join(blocks), encoding="utf-8")
    (HERE / "trustless-shares.json").write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
