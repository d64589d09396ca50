"""The mental-poker group code: ristretto255 points, ElGamal, Schnorr and Chaum-Pedersen proofs,
and the Terelius-Wikstrom shuffle proof. Property tests with hypothesis, and the exhaustive
check that every single-ciphertext change to a shuffle is refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.errors import BadPacket
from pbem.protocol.mental.elgamal import Ciphertext, KeyShare, encrypt, joint_key, open_with, reencrypt, trivial
from pbem.protocol.mental.group import (
    GENERATOR,
    IDENTITY,
    ORDER,
    BadPoint,
    Point,
    base_mul,
    decode_scalar,
    hash_to_point,
    scalar_bytes,
    seeded_scalars,
)
from pbem.protocol.mental.proofs import BadProof, Proof, Token, check_key, check_token, make_token, prove_key
from pbem.protocol.mental.shuffle import ShuffleProof, check_shuffle, proof_size, prove_shuffle, shuffle
from pbem.protocol.mental.transcript import context

scalars = st.integers(min_value=1, max_value=ORDER - 1)
messages = st.binary(min_size=1, max_size=16).map(lambda b: hash_to_point("test message", b))
CTX = context("test", game="g-1", seat="ann", round=1, stack="deck")


def keys(n: int, seed: bytes = b"k") -> list[KeyShare]:
    rng = seeded_scalars(seed)
    return [KeyShare.new(rng) for _ in range(n)]


# --- group -----------------------------------------------------------------------------------


@given(scalars, scalars)
def test_scalar_multiplication_is_a_homomorphism(a, b):
    assert base_mul(a) + base_mul(b) == base_mul(a + b)
    assert base_mul(a) * b == base_mul(a * b % ORDER)
    assert GENERATOR * a == base_mul(a)
    assert base_mul(a) - base_mul(a) == IDENTITY
    assert -base_mul(a) + base_mul(a) == IDENTITY


def test_order_times_a_point_is_the_identity():
    assert base_mul(ORDER) == IDENTITY
    assert base_mul(0) == IDENTITY
    assert hash_to_point("x", b"y") * ORDER == IDENTITY


@given(st.binary(min_size=32, max_size=32))
def test_decode_accepts_only_canonical_points(data):
    try:
        p = Point.decode(data)
    except BadPoint:
        return
    assert p.raw == data
    assert (p + IDENTITY).raw == data  # libsodium's own re-encoding agrees


@pytest.mark.parametrize("bad", [b"", bytes(31), bytes(33), "not bytes"])
def test_decode_refuses_wrong_lengths(bad):
    with pytest.raises(BadPoint):
        Point.decode(bad)  # type: ignore[arg-type]


def test_each_wire_form_refuses_a_wrong_size_as_its_own_error():
    """Every fixed-size form says what it is, the size it must have and the size it got, refused
    as its own kind of error (the code scripts read from --json)."""
    from pbem.protocol.mental.vss import BadShare, Dealing, decode_shares

    cases = [(lambda: Ciphertext.decode(bytes(5)), BadPoint, "a ciphertext must be 64 bytes, not 5"),
             (lambda: Proof.decode(bytes(7)), BadProof, "a proof must be 64 bytes, not 7"),
             (lambda: Token.decode(bytes(9), "ann's token"), BadProof, "ann's token must be 96 bytes, not 9"),
             (lambda: Dealing.decode(bytes(3), 2, 2, 3), BadShare, "a key dealing must be 64 bytes, not 3"),
             (lambda: decode_shares(bytes(4), 2), BadShare, "a key dealing must be 64 bytes, not 4")]
    for decode, error, words in cases:
        with pytest.raises(BadPacket) as raised:
            decode()
        assert type(raised.value) is error and str(raised.value) == words


@given(st.integers(min_value=0, max_value=2**256 - 1))
def test_scalars_are_canonical(k):
    data = k.to_bytes(32, "little")
    if k < ORDER:
        assert decode_scalar(data) == k and scalar_bytes(k) == data
    else:
        with pytest.raises(BadPoint):
            decode_scalar(data)


def test_bad_point_is_a_bad_packet():
    assert issubclass(BadPoint, BadPacket) and issubclass(BadProof, BadPacket)


# --- ElGamal ---------------------------------------------------------------------------------


@given(messages, st.integers(min_value=1, max_value=6), scalars, st.lists(scalars, max_size=3))
@settings(max_examples=30)
def test_encryption_round_trips_through_every_seats_token(m, seats, r, rerand):
    shares = keys(seats, seed=bytes([seats]))
    y = joint_key([k.public for k in shares])
    ct = encrypt(y, m, r)
    for r2 in rerand:
        ct = reencrypt(y, ct, r2)
    assert Ciphertext.decode(ct.encode()) == ct
    tokens = [make_token(k, ct, CTX) for k in shares]
    for k, t in zip(shares, tokens):
        check_token(k.public, ct, t, CTX)
        assert Token.decode(t.encode()) == t
    assert open_with(ct, [t.point for t in tokens]) == m
    # One token short, the plaintext stays hidden, unless the randomness added up to 0 mod the
    # group order (c1 is then the identity and c2 the message itself: hypothesis found r=1,
    # rerand=[ORDER - 1]; a real encryption draws 252-bit randomness and never meets it).
    if seats > 1 and (r + sum(rerand)) % ORDER:
        assert open_with(ct, [t.point for t in tokens[1:]]) != m


def test_trivial_encryption_opens_with_identity_tokens():
    m = hash_to_point("test message", b"card")
    assert open_with(trivial(m), [IDENTITY, IDENTITY]) == m


# --- Schnorr proof of a key share ------------------------------------------------------------


@given(st.integers(min_value=0, max_value=2**32))
@settings(max_examples=30)
def test_key_proof_verifies_only_in_its_context(seed):
    share = KeyShare.new(seeded_scalars(seed.to_bytes(8, "little")))
    proof = prove_key(share, CTX)
    check_key(share.public, Proof.decode(proof.encode()), CTX)
    with pytest.raises(BadProof):
        check_key(share.public, proof, context("test", game="g-1", seat="bob", round=1, stack="deck"))
    with pytest.raises(BadProof):
        check_key(share.public + GENERATOR, proof, CTX)
    with pytest.raises(BadProof):
        check_key(share.public, Proof(proof.challenge, (proof.response + 1) % ORDER), CTX)
    with pytest.raises(BadProof):
        check_key(share.public, Proof((proof.challenge + 1) % ORDER, proof.response), CTX)


def test_a_rogue_key_cannot_be_proved():
    """A seat that wants the joint key to be its own picks Y' = xG - sum(others): it knows no log of Y'."""
    others = keys(3)
    mine = KeyShare.new(seeded_scalars(b"me"))
    rogue = mine.public - joint_key([k.public for k in others])
    with pytest.raises(BadProof):
        check_key(rogue, prove_key(mine, CTX), CTX)


def test_the_identity_is_no_key():
    zero = KeyShare(ORDER, IDENTITY)  # x = 0 mod ORDER: a proof exists, but the key is refused
    with pytest.raises(BadProof, match="identity"):
        check_key(IDENTITY, prove_key(zero, CTX), CTX)


# --- Chaum-Pedersen decryption tokens ---------------------------------------------------------


@given(messages, scalars)
@settings(max_examples=30)
def test_wrong_tokens_are_refused(m, r):
    a, b = keys(2, seed=b"tok")
    y = joint_key([a.public, b.public])
    ct = encrypt(y, m, r)
    other = encrypt(y, m, (r + 1) % ORDER or 1)
    good = make_token(a, ct, CTX)
    check_token(a.public, ct, good, CTX)
    wrong = [
        (a.public, ct, make_token(b, ct, CTX), CTX),  # another seat's secret
        (a.public, ct, make_token(a, other, CTX), CTX),  # made for another ciphertext
        (a.public, other, good, CTX),  # presented for another ciphertext
        (a.public, ct, Token(good.point + GENERATOR, good.proof), CTX),  # altered token, old proof
        (a.public, ct, Token(good.point, Proof(good.proof.challenge, (good.proof.response + 1) % ORDER)), CTX),
        (a.public, ct, good, context("test", game="g-1", seat="ann", round=2, stack="deck")),  # other round
        (b.public, ct, good, CTX),  # checked against another seat's key
    ]
    for key, c, token, ctx in wrong:
        with pytest.raises(BadProof):
            check_token(key, c, token, ctx)


def test_token_decoding_checks_the_point():
    a = keys(1)[0]
    ct = encrypt(a.public, GENERATOR, 5)
    raw = bytearray(make_token(a, ct, CTX).encode())
    raw[31] |= 0x80  # the top bit of a canonical encoding is always clear
    with pytest.raises(BadPoint):
        Token.decode(bytes(raw))


# --- the shuffle proof -----------------------------------------------------------------------


def _deck(n: int, y: Point) -> list[Ciphertext]:
    rng = seeded_scalars(b"deck")
    return [encrypt(y, hash_to_point("test card", bytes([i])), rng()) for i in range(n)]


@given(st.integers(min_value=1, max_value=9), st.binary(min_size=1, max_size=8))
@settings(max_examples=25, deadline=None)
def test_a_correct_shuffle_verifies_and_keeps_the_cards(n, seed):
    shares = keys(3)
    y = joint_key([k.public for k in shares])
    deck = _deck(n, y)
    out, perm, rands = shuffle(y, deck, seeded_scalars(seed))
    assert sorted(perm) == list(range(n))
    proof = prove_shuffle(y, deck, out, perm, rands, CTX)
    assert len(proof.encode()) == proof_size(n)
    check_shuffle(y, deck, out, ShuffleProof.decode(proof.encode(), n), CTX)
    opened = [open_with(c, [c.c1 * k.secret for k in shares]) for c in out]
    assert opened == [open_with(deck[perm[i]], [deck[perm[i]].c1 * k.secret for k in shares]) for i in range(n)]


def test_checking_a_shuffle_proof_costs_eight_multiplications_a_card():
    """A shuffle proof's check: eight scalar multiplications a card and four more (the challenge
    folded into each card's scalar, not multiplied into three sums after them); a stack's first
    shuffle, of the public trivial encryptions, one a card fewer (the identity times anything is
    the identity); the generators' sum is computed once for a stack's size, not at each check."""
    from group_ops import counted

    n = 12
    y = joint_key([k.public for k in keys(3)])
    rng = seeded_scalars(b"count")
    first = [trivial(hash_to_point("test card", bytes([i]))) for i in range(n)]
    mid, perm, rands = shuffle(y, first, rng)
    proof1 = prove_shuffle(y, first, mid, perm, rands, CTX, rng)
    out, perm, rands = shuffle(y, mid, rng)
    proof2 = prove_shuffle(y, mid, out, perm, rands, CTX, rng)
    check_shuffle(y, mid, out, proof2, CTX)  # the generators for n cards made
    with counted() as second:
        check_shuffle(y, mid, out, proof2, CTX)
    with counted() as opening:
        check_shuffle(y, first, mid, proof1, CTX)
    assert second["mul"] == 8 * n + 4 and opening["mul"] == 7 * n + 4, (second, opening)
    assert second["add"] + second["sub"] <= 9 * n + 8, second
    with pytest.raises(BadProof):  # and it still refuses a wrong one
        check_shuffle(y, mid, out[1:] + out[:1], proof2, CTX)


def _changes(y: Point, out: list[Ciphertext], i: int) -> dict[str, list[Ciphertext]]:
    """Every way to change output i alone (or i with one neighbour, for swaps and duplicates)."""
    n = len(out)
    j = (i + 1) % n
    stranger = encrypt(y, hash_to_point("test card", b"stranger"), 7)

    def put(c: Ciphertext) -> list[Ciphertext]:
        copy = list(out)
        copy[i] = c
        return copy

    changes = {
        "re-randomised": put(reencrypt(y, out[i], 12345)),
        "replaced by another card": put(stranger),
        "c1 changed": put(Ciphertext(out[i].c1 + GENERATOR, out[i].c2)),
        "c2 changed": put(Ciphertext(out[i].c1, out[i].c2 + GENERATOR)),
        "c1 and c2 swapped": put(Ciphertext(out[i].c2, out[i].c1)),
        "dropped (identity)": put(Ciphertext(IDENTITY, IDENTITY)),
        "card added (value shifted)": put(Ciphertext(out[i].c1, out[i].c2 + hash_to_point("test card", b"x"))),
    }
    if n > 1:
        changes["duplicate of another"] = put(out[j])
        changes["duplicate, re-encrypted"] = put(reencrypt(y, out[j], 99))
        swapped = list(out)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        changes["swapped with a neighbour"] = swapped
    return changes


@pytest.mark.parametrize("n", [1, 2, 6])
def test_every_single_ciphertext_change_is_refused(n):
    shares = keys(2)
    y = joint_key([k.public for k in shares])
    deck = _deck(n, y)
    out, perm, rands = shuffle(y, deck)
    proof = prove_shuffle(y, deck, out, perm, rands, CTX)
    check_shuffle(y, deck, out, proof, CTX)
    for i in range(n):
        for name, changed in _changes(y, out, i).items():
            with pytest.raises(BadProof):
                check_shuffle(y, deck, changed, proof, CTX)
            # and the change cannot be hidden by also changing the inputs the same way
            if name != "swapped with a neighbour":
                changed_in = list(deck)
                changed_in[perm[i]] = changed[i]
                with pytest.raises(BadProof):
                    check_shuffle(y, changed_in, out, proof, CTX)


@given(st.integers(min_value=2, max_value=6), st.data())
@settings(max_examples=25, deadline=None)
def test_any_single_ciphertext_change_is_refused(n, data):
    shares = keys(2)
    y = joint_key([k.public for k in shares])
    deck = _deck(n, y)
    out, perm, rands = shuffle(y, deck)
    proof = prove_shuffle(y, deck, out, perm, rands, CTX)
    i = data.draw(st.integers(min_value=0, max_value=n - 1))
    r = data.draw(scalars)
    which = data.draw(st.sampled_from(["c1", "c2", "both"]))
    delta = base_mul(r)
    c1 = out[i].c1 + delta if which != "c2" else out[i].c1
    c2 = out[i].c2 + delta if which != "c1" else out[i].c2
    changed = list(out)
    changed[i] = Ciphertext(c1, c2)
    with pytest.raises(BadProof):
        check_shuffle(y, deck, changed, proof, CTX)


def test_a_shuffle_proof_is_bound_to_key_context_and_its_own_fields():
    shares = keys(2)
    y = joint_key([k.public for k in shares])
    deck = _deck(4, y)
    out, perm, rands = shuffle(y, deck)
    proof = prove_shuffle(y, deck, out, perm, rands, CTX)
    with pytest.raises(BadProof):
        check_shuffle(shares[0].public, deck, out, proof, CTX)
    for other in (context("test", game="g-2", seat="ann", round=1, stack="deck"),
                  context("test", game="g-1", seat="bob", round=1, stack="deck"),
                  context("test", game="g-1", seat="ann", round=2, stack="deck"),
                  context("test", game="g-1", seat="ann", round=1, stack="goals")):
        with pytest.raises(BadProof):
            check_shuffle(y, deck, out, proof, other)
    raw = proof.encode()
    for offset in range(0, len(raw), 32):  # every point and scalar of the proof, one at a time
        tampered = bytearray(raw)
        tampered[offset] ^= 0x02
        with pytest.raises(BadPacket):  # either it no longer decodes, or it no longer verifies
            check_shuffle(y, deck, out, ShuffleProof.decode(bytes(tampered), 4), CTX)
    with pytest.raises(BadProof):
        ShuffleProof.decode(raw[:-1], 4)
    with pytest.raises(BadProof):
        check_shuffle(y, deck, out[:-1], proof, CTX)


def test_a_shuffle_with_a_wrong_randomiser_is_refused():
    """The prover lies about one re-encryption: the proof it makes does not verify."""
    shares = keys(2)
    y = joint_key([k.public for k in shares])
    deck = _deck(5, y)
    out, perm, rands = shuffle(y, deck)
    out[2] = reencrypt(y, deck[perm[2]], rands[2] + 1)
    with pytest.raises(BadProof):
        check_shuffle(y, deck, out, prove_shuffle(y, deck, out, perm, rands, CTX), CTX)


def test_a_shuffle_under_another_key_is_refused():
    shares = keys(2)
    y = joint_key([k.public for k in shares])
    deck = _deck(4, y)
    out, perm, rands = shuffle(shares[0].public, deck)  # re-encrypted under one share only
    with pytest.raises(BadProof):
        check_shuffle(y, deck, out, prove_shuffle(y, deck, out, perm, rands, CTX), CTX)


def test_loading_the_group_leaves_no_file_in_the_temporary_folder(tmp_path) -> None:
    """rbcl writes its bundled libsodium (2.7 MB) into the temporary folder at every import and
    never removes it: one file per pbem process, thousands in a day of play, and a tmpfs is RAM.
    A real process loads the group with TMPDIR set to an empty folder, computes with it, and
    must leave the folder as empty as it found it."""
    import os
    import subprocess
    import sys

    folder = tmp_path / "tmp"
    folder.mkdir()
    code = "from pbem.protocol.mental.group import GENERATOR, base_mul; assert base_mul(2) == GENERATOR + GENERATOR"
    run = subprocess.run([sys.executable, "-c", code], env={**os.environ, "TMPDIR": str(folder)},
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in folder.iterdir()) == []


def test_the_group_loads_rbcl_at_its_first_computation_not_at_import() -> None:
    """`pbem games` imports the trustless protocol to list trustless games and computes nothing
    in the group: rbcl (a tenth of a second, a 2.7 MB file written and removed) waits for the
    first computation, which then gives the right points."""
    import subprocess
    import sys

    code = ("import sys; import pbem.host.blind, pbem.protocol.mental.elgamal\n"
            "from pbem.protocol.mental.group import GENERATOR, Point, base_mul\n"
            "assert 'rbcl' not in sys.modules, 'loaded at import'\n"
            "assert Point.decode(GENERATOR.raw) == GENERATOR and 'rbcl' in sys.modules\n"
            "assert base_mul(3) == GENERATOR + GENERATOR + GENERATOR and (base_mul(3) - GENERATOR) == base_mul(2)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
