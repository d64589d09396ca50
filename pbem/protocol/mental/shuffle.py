"""A re-encryption shuffle and its Terelius-Wikstrom proof (non-interactive).

This follows the pseudo-code of Haenni, Locher, Koenig and Dubuis, "Pseudo-code algorithms
for verifiable re-encryption mix-nets" (FC 2017, Algorithms 8.4 GenShuffleProof and 8.5
CheckShuffleProof), written additively, with ciphertexts (c1, c2) = (rG, M + rY) where the
paper has (a, b) = (m pk^r, g^r), and the challenges drawn from one transcript that binds
the caller's context (game, seat, round, stack), the key, every input and output ciphertext
and every commitment.

Statement: outputs[i] = reencrypt(inputs[perm[i]], rands[i]) for a permutation `perm`.
Proof: a commitment to the permutation (c_j = r_j G + H_i for j = perm[i]), a commitment chain
(chat_i = rhat_i G + u'_i chat_{i-1}) that proves the committed matrix is a permutation, and
responses showing the outputs are re-encryptions of the inputs under that permutation.
Sent in the short form (challenge and responses); the verifier recomputes the commitments
t and checks that they hash back to the challenge. Size: 32 (4N + 5) bytes.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from functools import lru_cache

from pbem.errors import Text, msg
from pbem.protocol.mental.elgamal import Ciphertext, reencrypt
from pbem.protocol.mental.group import (
    GENERATOR,
    ORDER,
    Point,
    ScalarSource,
    base_mul,
    hash_to_point,
    pack,
    point_sum,
    random_scalar,
    unpack,
    wire_size,
)
from pbem.protocol.mental.proofs import BadProof
from pbem.protocol.mental.transcript import Transcript


@lru_cache(maxsize=4)
def generators(n: int) -> tuple[Point, ...]:
    """H_0 (the chain's start) and H_1..H_n: independent points with unknown discrete logs."""
    return tuple(hash_to_point("shuffle generator", i.to_bytes(4, "little")) for i in range(n + 1))


@lru_cache(maxsize=4)
def _generators_sum(n: int) -> Point:
    """H_1 + ... + H_n, which every check of a shuffle of n cards subtracts."""
    return point_sum(list(generators(n)[1:]))


def random_permutation(n: int, rng: ScalarSource | None = None) -> list[int]:
    """Fisher-Yates; from the OS unless a (seeded, test-only) scalar source is given."""
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = secrets.randbelow(i + 1) if rng is None else rng() % (i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def shuffle(key: Point, inputs: list[Ciphertext], rng: ScalarSource = random_scalar,
            perm: list[int] | None = None) -> tuple[list[Ciphertext], list[int], list[int]]:
    """Permute and re-encrypt: returns (outputs, perm, rands) with outputs[i] from inputs[perm[i]]."""
    n = len(inputs)
    if perm is None:
        perm = random_permutation(n, None if rng is random_scalar else rng)
    rands = [rng() for _ in range(n)]
    outputs = [reencrypt(key, inputs[perm[i]], rands[i]) for i in range(n)]
    return outputs, perm, rands


@dataclass(frozen=True)
class ShuffleProof:
    commitments: list[Point]  # c_j, one per input
    chain: list[Point]  # chat_i, one per output
    challenge: int
    s: tuple[int, int, int, int]
    s_hat: list[int]
    s_prime: list[int]

    def encode(self) -> bytes:
        return pack((*self.commitments, *self.chain), (self.challenge, *self.s, *self.s_hat, *self.s_prime))

    @classmethod
    def decode(cls, data: bytes, n: int, what: Text = "") -> ShuffleProof:
        if len(data) != proof_size(n):
            raise BadProof(msg("{what} for {n} cards must be {bytes} bytes, not {size}",
                                   what=what or msg("a shuffle proof"), n=n, bytes=proof_size(n), size=len(data)))
        pts, sc = unpack(data, 2 * n, 5 + 2 * n, BadProof, what)
        return cls(pts[:n], pts[n:], sc[0], (sc[1], sc[2], sc[3], sc[4]), sc[5:5 + n], sc[5 + n:])


def proof_size(n: int) -> int:
    return wire_size(2 * n, 5 + 2 * n)


def _statement(context: bytes, key: Point, inputs: list[Ciphertext], outputs: list[Ciphertext],
               commitments: list[Point]) -> Transcript:
    tr = Transcript("shuffle", context)
    tr.absorb("size", len(inputs).to_bytes(4, "little"))
    tr.statement([key], "key")
    tr.absorb("inputs", b"".join(c.encode() for c in inputs))
    tr.absorb("outputs", b"".join(c.encode() for c in outputs))
    tr.points("permutation commitment", commitments)
    return tr


def _final_challenge(tr: Transcript, chain: list[Point], t: list[Point], t_hat: list[Point]) -> int:
    tr.points("commitment chain", chain)
    tr.points("t", t)
    tr.points("t hat", t_hat)
    return tr.challenge("e")


def prove_shuffle(key: Point, inputs: list[Ciphertext], outputs: list[Ciphertext], perm: list[int],
                  rands: list[int], context: bytes, rng: ScalarSource = random_scalar) -> ShuffleProof:
    n = len(inputs)
    h = generators(n)
    h0, hs = h[0], h[1:]
    # permutation commitment, indexed by input: c_{perm[i]} = r G + H_i
    r = [0] * n
    c: list[Point] = [GENERATOR] * n
    for i in range(n):
        j = perm[i]
        r[j] = rng()
        c[j] = base_mul(r[j]) + hs[i]
    tr = _statement(context, key, inputs, outputs, c)
    u = tr.challenges("u", n)
    u_p = [u[perm[i]] for i in range(n)]
    # commitment chain
    r_hat = [rng() for _ in range(n)]
    chain = []
    prev = h0
    for i in range(n):
        prev = base_mul(r_hat[i]) + prev * u_p[i]
        chain.append(prev)
    r_bar = sum(r) % ORDER
    v = [1] * n
    for i in range(n - 1, 0, -1):
        v[i - 1] = u_p[i] * v[i] % ORDER
    r_hat_sum = sum(a * b for a, b in zip(r_hat, v)) % ORDER
    r_tilde = sum(a * b for a, b in zip(r, u)) % ORDER
    r_prime = sum(a * b for a, b in zip(rands, u_p)) % ORDER
    w1, w2, w3, w4 = rng(), rng(), rng(), rng()
    w_hat = [rng() for _ in range(n)]
    w_p = [rng() for _ in range(n)]
    t1 = base_mul(w1)
    t2 = base_mul(w2)
    t3 = base_mul(w3) + point_sum([hs[i] * w_p[i] for i in range(n)])
    t41 = point_sum([outputs[i].c2 * w_p[i] for i in range(n)]) - key * w4
    t42 = point_sum([outputs[i].c1 * w_p[i] for i in range(n)]) - base_mul(w4)
    t_hat = [base_mul(w_hat[i]) + (chain[i - 1] if i else h0) * w_p[i] for i in range(n)]
    e = _final_challenge(tr, chain, [t1, t2, t3, t41, t42], t_hat)
    s = ((w1 + e * r_bar) % ORDER, (w2 + e * r_hat_sum) % ORDER, (w3 + e * r_tilde) % ORDER,
         (w4 + e * r_prime) % ORDER)
    s_hat = [(w_hat[i] + e * r_hat[i]) % ORDER for i in range(n)]
    s_p = [(w_p[i] + e * u_p[i]) % ORDER for i in range(n)]
    return ShuffleProof(c, chain, e, s, s_hat, s_p)


def check_shuffle(key: Point, inputs: list[Ciphertext], outputs: list[Ciphertext], proof: ShuffleProof,
                  context: bytes, who: Text = "") -> None:
    """Raise BadProof unless `outputs` is a permuted re-encryption of `inputs` under `key`."""
    n = len(inputs)
    if len(outputs) != n or len(proof.commitments) != n or len(proof.chain) != n \
            or len(proof.s_hat) != n or len(proof.s_prime) != n:
        raise BadProof(msg("{what} has {outputs} outputs for {n} inputs", what=who or msg("a shuffle"),
                               outputs=len(outputs), n=n))
    if n == 0:
        return
    h = generators(n)
    h0, hs = h[0], h[1:]
    c, chain, e = proof.commitments, proof.chain, proof.challenge
    s1, s2, s3, s4 = proof.s
    tr = _statement(context, key, inputs, outputs, c)
    u = tr.challenges("u", n)
    u_prod = 1
    for x in u:
        u_prod = u_prod * x % ORDER
    c_bar = point_sum(c) - _generators_sum(n)
    c_hat = chain[-1] - h0 * u_prod
    # c~ e, a~ e and b~ e (the sums of the commitments and the inputs weighted by u, times the
    # challenge) as one sum each, the challenge folded into the weights: n multiplications, not n + 1
    ue = [x * e % ORDER for x in u]
    c_tilde_e = point_sum([c[j] * ue[j] for j in range(n)])
    a_tilde_e = point_sum([inputs[j].c2 * ue[j] for j in range(n)])
    b_tilde_e = point_sum([inputs[j].c1 * ue[j] for j in range(n)])
    sp = proof.s_prime
    t1 = base_mul(s1) - c_bar * e
    t2 = base_mul(s2) - c_hat * e
    t3 = base_mul(s3) + point_sum([hs[i] * sp[i] for i in range(n)]) - c_tilde_e
    t41 = point_sum([outputs[i].c2 * sp[i] for i in range(n)]) - key * s4 - a_tilde_e
    t42 = point_sum([outputs[i].c1 * sp[i] for i in range(n)]) - base_mul(s4) - b_tilde_e
    t_hat = [base_mul(proof.s_hat[i]) + (chain[i - 1] if i else h0) * sp[i] - chain[i] * e for i in range(n)]
    if _final_challenge(tr, chain, [t1, t2, t3, t41, t42], t_hat) != e:
        raise BadProof(msg("the proof of {what} does not verify (a card was dropped, duplicated, replaced or altered)",
                               what=who or msg("a shuffle")))
