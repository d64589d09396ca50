"""Write the golden vectors of a vanished seat's wire forms (tests/vectors/protocol/
trustless-gone.*). By hand only:

    .venv/bin/python tests/vectors/protocol/make_trustless_gone.py

A 4-seat classic table (ann, bob, cat, dan, the fixed identities of make.py) with a threshold
of 2: the four joins, each dealing its epoch keys among the others (`dealing`); the referee's
format-2 packet declaring ann gone (`RelayPacket.gone`); bob's and cat's `stand-in` blocks,
each with its shares of ann's tokens for two cards of round 1's deck (with their proofs) and
its share of ann's round-1 key; and dan's face-down discard with its own stand-in share for
one of those cards riding along (`stand_in` on a move). The cards are the deck's first two
slots encrypted afresh under the joint key, as a shuffle leaves them. The mental randomness is
seeded and Ed25519 is deterministic, so a rerun writes the same bytes except the dealings'
sealed boxes (HPKE's ephemeral keys), and so every later block's signature over their hashes.
trustless-gone.json keeps the secrets (test keys) and the ciphertexts, so the test can check
that the shares combine into exactly ann's tokens and key.
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

from pbem.protocol.documents import Gone, Join, RelayPacket, Waiting, sign  # noqa: E402
from pbem.protocol.mental.elgamal import reencrypt  # noqa: E402
from pbem.protocol.mental.group import seeded_scalars  # noqa: E402
from pbem.protocol.trustless import dealing as D  # noqa: E402
from pbem.protocol.trustless import keys as K  # noqa: E402
from pbem.protocol.trustless import messages as M  # noqa: E402
from pbem.protocol.trustless import setup as S  # noqa: E402
from pbem.protocol.trustless import standin as SI  # noqa: E402
from pbem.protocol.trustless.stacks import game_stacks  # noqa: E402
from pbem.protocol.trustless.table import TrustlessGame  # noqa: E402

GAME = "trustgone-0000beef"
SEATS = ("ann", "bob", "cat", "dan")
THRESHOLD = 2
SEED = b"pbem trustless gone golden vectors v1"
SLOTS = [("deck@1", 0), ("deck@1", 1)]
DUE, GRACE, AT = "2026-12-05T04:00:00+00:00", "2026-12-05T05:00:00+00:00", "2026-12-05T05:00:07+00:00"
NEXT = "2026-12-06T05:00:07+00:00"


def fake_packet(seq: int) -> str:
    return hashlib.sha256(f"gone vector packet {seq}".encode()).hexdigest()


def build() -> tuple[list[str], dict]:
    rng = seeded_scalars(SEED)
    ids = {s: identity(s) for s in SEATS}
    stacks = tuple(game_stacks("classic", len(SEATS)))
    game = TrustlessGame(GAME, "classic", SEATS, frozenset(), stacks, THRESHOLD)
    secrets = {s: K.SeatKeys.new(rng) for s in SEATS}
    invitation = hashlib.sha256(b"vector trustless gone invitation").hexdigest()
    roster = [(s, ids[s].public) for s in SEATS]
    joins, shares = [], {}
    for s in SEATS:
        joins.append(sign(Join(game=GAME, seat=s, invitation=invitation, contribution="A" * 43 + "=",
                               mental=M.key_shares(secrets[s], GAME, s, rng),
                               dealing=M.dealing(secrets[s], GAME, s, roster, THRESHOLD, rng)), ids[s]))
        shares[s] = M.join_shares(joins[-1].doc)
    joint = K.joint_keys(shares)

    def epoch_of(label: str) -> int:
        return game.stack(label).round_no

    start = S.start(list(stacks))
    cts = {slot: reencrypt(joint[epoch_of(slot[0])], start[slot[0]][slot[1]], rng()) for slot in SLOTS}
    commitments = {s: D.check_public(msgspec.to_builtins(j.doc.dealing), s, SEATS, THRESHOLD)
                   for s, j in zip(SEATS, joins, strict=True)}
    held = {q: {"ann": M.open_dealing(joins[0].doc, commitments["ann"], shares["ann"], SEATS, q, ids[q])}
            for q in SEATS[1:]}
    blocks = [j.armored() for j in joins]
    host = identity("referee")
    packet = sign(RelayPacket(game=GAME, seq=9, prev=fake_packet(8), round=1, phase="playing", to_move=None,
                              public={}, moves=[], events=[], parts={}, relayed=[],
                              waiting=Waiting(step="stand-in", seats=["bob", "cat", "dan"], due=NEXT),
                              gone=Gone(seats=["ann"], step="deal", due=DUE, grace_until=GRACE, at=AT)), host)
    blocks.append(packet.armored())
    need = [SI.Need("ann", list(SLOTS), 1)]
    for q in ("bob", "cat"):
        blocks.append(M.message(ids[q], GAME, q, 9, packet.hash, "stand-in",
                                stand_in=SI.make(GAME, q, need, held[q], cts, epoch_of, rng)).armored())
    riding = SI.make(GAME, "dan", [SI.Need("ann", SLOTS[:1])], held["dan"], cts, epoch_of, rng)
    blocks.append(M.message(ids["dan"], GAME, "dan", 10, fake_packet(10), "move", move="discard ?",
                            discard=[("deck@1", 5)], stand_in=riding).armored())
    facts = {"game": GAME, "seats": list(SEATS), "ruleset": "classic", "threshold": THRESHOLD, "seed": SEED.decode(),
             "invitation": invitation, "secrets": {s: secrets[s].secret_hex() for s in SEATS},
             "ciphertexts": {f"{label} {i}": cts[(label, i)].encode().hex() for label, i in SLOTS}}
    return blocks, facts


def main() -> None:
    blocks, facts = build()
    (HERE / "trustless-gone.pbem").write_text("\n".join(blocks), encoding="utf-8")
    facts["bytes"] = [len(b.encode()) for b in blocks]
    (HERE / "trustless-gone.json").write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
