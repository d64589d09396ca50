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
    Complaint,
    Dealing,
    check_secret_share,
    check_stand_in,
    combine,
    complain,
    deal,
    image,
    images,
    judge,
    open_shares,
    reconstruct,
    stand_in,
)

EPOCHS = 4
CTX = context("key dealing", game="vss-test", seat=0)


def _table(n: int, threshold: int, seed: bytes = b"vss"):
    """Seat 0 deals its epoch keys to seats 1..n-1; returns (rng, epoch keys, seals, dealing)."""
    rng = seeded_scalars(seed)
    keys = [KeyShare.new(rng) for _ in range(EPOCHS)]
    seals = {i: KeyShare.new(rng) for i in range(1, n)}
    dealing = deal([k.secret for k in keys], [(i, seals[i].public) for i in seals], threshold, CTX, rng)
    return rng, keys, seals, dealing


def _publics(keys):
    return [k.public for k in keys]


def test_every_holder_opens_shares_that_match_and_any_quorum_rebuilds_each_key():
    rng, keys, seals, dealing = _table(5, 3)
    shares = {i: open_shares(dealing, i, seals[i], _publics(keys), CTX) for i in seals}
    for e, key in enumerate(keys):
        for quorum in itertools.combinations(sorted(seals), 3):
            assert reconstruct({i: shares[i][e] for i in quorum}, key.public, 3) == key.secret
        # two holders (below the threshold) interpolate to something else
        with pytest.raises(BadShare):
            reconstruct({1: shares[1][e], 2: shares[2][e]}, key.public, 2)


def test_stand_in_shares_combine_to_the_vanished_seats_real_token():
    rng, keys, seals, dealing = _table(4, 3)
    others = [KeyShare.new(rng) for _ in range(3)]
    y = joint_key([keys[1].public] + [o.public for o in others])
    card = hash_to_point("test card", b"7")
    ct = encrypt(y, card, rng())
    shares = {i: open_shares(dealing, i, seals[i], _publics(keys), CTX)[1] for i in seals}
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
    rng, keys, seals, dealing = _table(4, 3)
    ct = encrypt(keys[2].public, hash_to_point("test card", b"x"), rng())
    ctx = context("stand-in", game="vss-test", seat=0, holder=1, stack="deck", slot=0)
    img = image(keys[2].public, dealing.commitments[2], 1)
    share = open_shares(dealing, 1, seals[1], _publics(keys), CTX)[2]
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


def test_a_bad_published_key_share_is_refused():
    rng, keys, seals, dealing = _table(4, 3)
    s = open_shares(dealing, 2, seals[2], _publics(keys), CTX)[3]
    img = images(_publics(keys), dealing, 2)[3]
    check_secret_share(s, img)
    for bad in (s + 1, ORDER + s, -1):
        with pytest.raises(BadShare):
            check_secret_share(bad, img)


def _tampered(dealing: Dealing, index: int, epoch: int) -> Dealing:
    """The same dealing with one holder's share of one epoch off by one (as a cheating dealer)."""
    j = dealing.holders.index(index)
    box = bytearray(dealing.sealed[j])
    box[epoch * 32] ^= 1
    sealed = dealing.sealed[:j] + (bytes(box),) + dealing.sealed[j + 1:]
    return Dealing(dealing.threshold, dealing.holders, dealing.commitments, dealing.ephemeral, sealed)


def test_a_bad_share_is_caught_by_its_holder_and_its_complaint_names_the_dealer():
    rng, keys, seals, dealing = _table(4, 3)
    bad = _tampered(dealing, 2, 1)
    open_shares(bad, 1, seals[1], _publics(keys), CTX)  # the others' shares are untouched
    with pytest.raises(BadShare):
        open_shares(bad, 2, seals[2], _publics(keys), CTX)
    complaint = Complaint.decode(complain(bad, 2, seals[2], CTX, rng).encode())
    assert judge(complaint, bad, 2, seals[2].public, _publics(keys), CTX) == "dealer"


def test_commitments_that_are_not_the_dealers_key_are_caught():
    rng, keys, seals, dealing = _table(4, 3)
    other = [KeyShare.new(rng).public for _ in range(EPOCHS)]  # A_0 is the published key share
    with pytest.raises(BadShare):
        open_shares(dealing, 1, seals[1], other, CTX)


def test_a_forged_complaint_names_the_complainer():
    rng, keys, seals, dealing = _table(4, 3)
    honest = complain(dealing, 3, seals[3], CTX, rng)
    assert judge(honest, dealing, 3, seals[3].public, _publics(keys), CTX) == "complainer"
    # a complaint whose point is not the holder's DH point: its proof fails
    wrong = Complaint(honest.point + base_mul(1), honest.proof)
    assert judge(wrong, dealing, 3, seals[3].public, _publics(keys), CTX) == "complainer"
    # a complaint of holder 3 replayed as holder 1's
    assert judge(honest, dealing, 1, seals[1].public, _publics(keys), CTX) == "complainer"
    # a third party that knows no seal key cannot make the holder's complaint
    mallory = KeyShare.new(rng)
    forged = Complaint(dealing.ephemeral * mallory.secret, complain(dealing, 3, mallory, CTX, rng).proof)
    assert judge(forged, dealing, 3, seals[3].public, _publics(keys), CTX) == "complainer"


def test_shares_sealed_to_one_holder_do_not_open_for_another():
    rng, keys, seals, dealing = _table(4, 2)
    stolen = Dealing(dealing.threshold, dealing.holders, dealing.commitments, dealing.ephemeral,
                     (dealing.sealed[1], dealing.sealed[1], dealing.sealed[2]))
    with pytest.raises(BadShare):
        open_shares(stolen, 1, seals[1], _publics(keys), CTX)
    with pytest.raises(BadShare):
        open_shares(dealing, 1, seals[1], _publics(keys), context("key dealing", game="vss-other", seat=0))


def test_the_wire_form_round_trips_and_refuses_wrong_sizes():
    _, keys, seals, dealing = _table(5, 3)
    data = dealing.encode()
    assert len(data) == Dealing.size(EPOCHS, 3, 4) == 32 * (1 + 4 * 2) + 32 * 4 * 4
    assert Dealing.decode(data, EPOCHS, 3, dealing.holders) == dealing
    for bad in (data[:-1], data + b"\0"):
        with pytest.raises(BadShare):
            Dealing.decode(bad, EPOCHS, 3, dealing.holders)
    for k in (0, 5):
        with pytest.raises(BadShare):
            Dealing.decode(data, EPOCHS, k, dealing.holders)
    with pytest.raises(BadPacket):  # a commitment that is not a point
        Dealing.decode(data[:32] + b"\xff" * 32 + data[64:], EPOCHS, 3, dealing.holders)


def test_threshold_one_and_all_others():
    for n, k in ((3, 1), (3, 2), (6, 5)):
        _, keys, seals, dealing = _table(n, k, seed=f"vss {n} {k}".encode())
        shares = {i: open_shares(dealing, i, seals[i], _publics(keys), CTX) for i in seals}
        last = sorted(seals)[-k:]
        assert reconstruct({i: shares[i][0] for i in last}, keys[0].public, k) == keys[0].secret
        with pytest.raises(BadShare):
            combine({i: base_mul(shares[i][0]) for i in last[1:]}, k)
    with pytest.raises(BadShare):
        deal([1], [(1, base_mul(5))], 2, CTX)


def test_scalar_bytes_of_a_share_is_canonical():
    _, keys, seals, dealing = _table(3, 2)
    for i in seals:
        for s in open_shares(dealing, i, seals[i], _publics(keys), CTX):
            assert int.from_bytes(scalar_bytes(s), "little") == s < ORDER
