"""Feldman VSS of a seat's keys and the stand-in shares that do a vanished seat's part
(pbem/protocol/mental/vss.py; docs/trustless.md §11): honest runs, and each attack refused."""

from __future__ import annotations

import itertools

import pytest

from pbem.errors import BadPacket
from pbem.protocol.mental.elgamal import KeyShare, encrypt, joint_key, open_with, token_point
from pbem.protocol.mental.group import ORDER, base_mul, hash_to_point, scalar_bytes, seeded_scalars
from pbem.protocol.mental.proofs import Token, make_token
from pbem.protocol.mental.transcript import context
from pbem.protocol.mental.vss import (
    BadShare,
    Dealing,
    SealedShare,
    check_sealed_stand_in,
    check_secret_share,
    check_shares,
    check_stand_in,
    combine,
    deal,
    decode_shares,
    image,
    images,
    judge,
    open_stand_in,
    reconstruct,
    seal_stand_in,
    share_bytes,
    stand_in,
)

EPOCHS = 4


def _table(n: int, threshold: int, seed: bytes = b"vss"):
    """Seat 0 deals its epoch keys to seats 1..n-1: (rng, epoch keys, dealing, shares by seat)."""
    rng = seeded_scalars(seed)
    keys = [KeyShare.new(rng) for _ in range(EPOCHS)]
    dealing, shares = deal([k.secret for k in keys], list(range(1, n)), threshold, rng)
    for i, mine in shares.items():
        check_shares(mine, _publics(keys), dealing, i)
    return rng, keys, dealing, shares


def _publics(keys):
    return [k.public for k in keys]


def test_every_holder_opens_shares_that_match_and_any_quorum_rebuilds_each_key():
    rng, keys, dealing, shares = _table(5, 3)
    for e, key in enumerate(keys):
        for quorum in itertools.combinations(sorted(shares), 3):
            assert reconstruct({i: shares[i][e] for i in quorum}, key.public, 3) == key.secret
        # two holders (below the threshold) interpolate to something else
        with pytest.raises(BadShare):
            reconstruct({1: shares[1][e], 2: shares[2][e]}, key.public, 2)


def test_stand_in_shares_combine_to_the_vanished_seats_real_token():
    rng, keys, dealing, all_shares = _table(4, 3)
    others = [KeyShare.new(rng) for _ in range(3)]
    y = joint_key([keys[1].public] + [o.public for o in others])
    card = hash_to_point("test card", b"7")
    ct = encrypt(y, card, rng())
    shares = {i: mine[1] for i, mine in all_shares.items()}
    parts = {}
    for i, s in shares.items():
        ctx = context("stand-in", game="vss-test", seat=0, holder=i, stack="deck", slot=3)
        img = image(keys[1].public, dealing.commitments[1], i)
        share = stand_in(s, img, ct, ctx, rng)
        check_stand_in(img, ct, share, ctx)
        parts[i] = share.point
    combined = combine(parts, 3)
    assert combined == token_point(keys[1].secret, ct)
    assert open_with(ct, [combined] + [token_point(o.secret, ct) for o in others]) == card


def test_a_quorum_member_lying_in_its_stand_in_share_is_refused():
    rng, keys, dealing, shares = _table(4, 3)
    ct = encrypt(keys[2].public, hash_to_point("test card", b"x"), rng())
    ctx = context("stand-in", game="vss-test", seat=0, holder=1, stack="deck", slot=0)
    img = image(keys[2].public, dealing.commitments[2], 1)
    share = shares[1][2]
    # a point off by one generator, proved with the right secret: its proof fails
    honest = stand_in(share, img, ct, ctx, rng)
    with pytest.raises(BadShare):
        check_stand_in(img, ct, Token(honest.point + base_mul(1), honest.proof), ctx)
    # a share made with another secret, honestly proved against that secret's own image
    liar = make_token(KeyShare(share + 1, base_mul(share + 1)), ct, ctx, rng)
    with pytest.raises(BadShare):
        check_stand_in(img, ct, liar, ctx)
    # the honest share, moved to another slot's context
    with pytest.raises(BadShare):
        check_stand_in(img, ct, honest, context("stand-in", game="vss-test", seat=0, holder=1, stack="deck", slot=1))
    check_stand_in(img, ct, honest, ctx)


def test_shares_sealed_to_a_reader_are_checked_in_public_and_open_for_it_alone():
    """A stand-in share for a later reader R is sealed to R's key share: anyone checks its proof
    against the holder's image; R opens it (and nobody without R's key: the box is ElGamal under
    it), and K of the opened shares, R's own among them, are the vanished seat's token."""
    rng, keys, dealing, all_shares = _table(4, 3)
    reader, stranger = KeyShare.new(rng), KeyShare.new(rng)
    ct = encrypt(keys[1].public, hash_to_point("test card", b"9"), rng())
    parts = {}
    for i in (1, 2):  # holder 3 is the reader: its own share it needs from nobody
        ctx = context("sealed stand-in", game="vss-test", dealer=0, holder=i, to=3, stack="deck", slot=3)
        img = image(keys[1].public, dealing.commitments[1], i)
        box = seal_stand_in(all_shares[i][1], img, ct, reader.public, ctx, rng)
        assert SealedShare.decode(box.encode()) == box and len(box.encode()) == 160
        assert box.b != token_point(all_shares[i][1], ct)  # the share itself is not in the box's bytes
        check_sealed_stand_in(img, ct, reader.public, box, ctx)
        parts[i] = open_stand_in(reader.secret, box)
        assert parts[i] == token_point(all_shares[i][1], ct)
        assert open_stand_in(stranger.secret, box) != parts[i]
        # another reader's key, another holder's image, another slot, a box changed: refused
        with pytest.raises(BadShare):
            check_sealed_stand_in(img, ct, stranger.public, box, ctx)
        with pytest.raises(BadShare):
            check_sealed_stand_in(image(keys[1].public, dealing.commitments[1], 3), ct, reader.public, box, ctx)
        with pytest.raises(BadShare):
            check_sealed_stand_in(img, ct, reader.public, box, ctx.replace(b'"slot":3', b'"slot":4'))
        with pytest.raises(BadShare):
            check_sealed_stand_in(img, ct, reader.public, SealedShare(box.a, box.b + base_mul(1), box.challenge,
                                                                      box.z_share, box.z_blind), ctx)
        # a box of another share, proved honestly for that share, does not pass as the holder's
        liar = seal_stand_in(all_shares[i][1] + 1, base_mul(all_shares[i][1] + 1), ct, reader.public, ctx, rng)
        with pytest.raises(BadShare):
            check_sealed_stand_in(img, ct, reader.public, liar, ctx)
    parts[3] = token_point(all_shares[3][1], ct)
    assert combine(parts, 3) == token_point(keys[1].secret, ct)


def test_a_bad_published_key_share_is_refused():
    rng, keys, dealing, shares = _table(4, 3)
    s = shares[2][3]
    img = images(_publics(keys), dealing, 2)[3]
    check_secret_share(s, img)
    for bad in (s + 1, ORDER + s, -1):
        with pytest.raises(BadShare):
            check_secret_share(bad, img)


def test_a_bad_share_is_caught_by_its_holder_and_the_dealers_answer_names_who_lied():
    rng, keys, dealing, shares = _table(4, 3)
    bad = list(shares[2])
    bad[1] = (bad[1] + 1) % ORDER  # a cheating dealer's share for holder 2, epoch 1
    with pytest.raises(BadShare):
        check_shares(bad, _publics(keys), dealing, 2)
    # holder 2 complains in the open; the dealer answers with the shares it sealed, or not at all
    assert judge(bad, _publics(keys), dealing, 2) == "dealer"
    assert judge(None, _publics(keys), dealing, 2) == "dealer"
    assert judge(shares[1], _publics(keys), dealing, 2) == "dealer"  # another holder's shares


def test_a_forged_complaint_names_the_complainer():
    _, keys, dealing, shares = _table(4, 3)
    assert judge(shares[3], _publics(keys), dealing, 3) == "complainer"


def test_commitments_that_are_not_the_dealers_key_are_caught():
    rng, keys, dealing, shares = _table(4, 3)
    other = [KeyShare.new(rng).public for _ in range(EPOCHS)]  # A_0 is the published key share
    with pytest.raises(BadShare):
        check_shares(shares[1], other, dealing, 1)
    lying = Dealing(3, dealing.commitments[:1] + dealing.commitments[2:] + dealing.commitments[1:2])
    with pytest.raises(BadShare):
        check_shares(shares[1], _publics(keys), lying, 1)


def test_the_wire_form_round_trips_and_refuses_wrong_sizes():
    _, keys, dealing, shares = _table(5, 3)
    data = dealing.encode()
    assert len(data) == Dealing.size(EPOCHS, 3) == 32 * 4 * 2
    assert Dealing.decode(data, EPOCHS, 3, 4) == dealing
    for bad in (data[:-1], data + b"\0"):
        with pytest.raises(BadShare):
            Dealing.decode(bad, EPOCHS, 3, 4)
    for k in (0, 5):
        with pytest.raises(BadShare):
            Dealing.decode(data, EPOCHS, k, 4)
    with pytest.raises(BadPacket):  # a commitment that is not a point
        Dealing.decode(b"\xff" * 32 + data[32:], EPOCHS, 3, 4)
    assert decode_shares(share_bytes(shares[1]), EPOCHS) == shares[1]
    with pytest.raises(BadPacket):  # a share not reduced modulo the order
        decode_shares(scalar_bytes(0)[:0] + (ORDER).to_bytes(32, "little") + share_bytes(shares[1])[32:], EPOCHS)
    with pytest.raises(BadShare):
        decode_shares(share_bytes(shares[1])[:-1], EPOCHS)


def test_threshold_one_and_all_others():
    for n, k in ((3, 1), (3, 2), (6, 5)):
        _, keys, dealing, shares = _table(n, k, seed=f"vss {n} {k}".encode())
        last = sorted(shares)[-k:]
        assert reconstruct({i: shares[i][0] for i in last}, keys[0].public, k) == keys[0].secret
        with pytest.raises(BadShare):
            combine({i: base_mul(shares[i][0]) for i in last[1:]}, k)
    with pytest.raises(BadShare):
        deal([1], [1], 2)
