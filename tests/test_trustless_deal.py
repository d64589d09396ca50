"""A trustless deal: key shares with proofs, the shuffle chain, tokens sealed to each seat.

Each seat's view of the dealt round must be exactly the engine's view of the real deal; no
one else can open a seat's cards, even holding every message and every other seat's keys."""

from __future__ import annotations

import dataclasses
import json

import pytest
from trustless_table import build

from engine.position import dump
from engine.views import view
from pbem.errors import BadPacket, WrongKey
from pbem.protocol.mental.elgamal import CIPHERTEXT_BYTES, Ciphertext, open_with, reencrypt
from pbem.protocol.mental.group import GENERATOR
from pbem.protocol.mental.proofs import BadProof
from pbem.protocol.shapes import b64
from pbem.protocol.trustless import keys as K
from pbem.protocol.trustless import setup as S
from pbem.protocol.trustless.stacks import card_of, card_point
from pbem.protocol.trustless.tokens import ALL, read_bundle


@pytest.fixture(scope="module")
def table():
    t = build("classic", 3)
    t.deal(1)
    return t


def test_each_seat_sees_exactly_the_engines_view_of_the_real_deal(table):
    truth = table.truth(1)
    for p, seat in table.seats.items():
        assert dump(seat.view(1)) == dump(view(truth, p))
        assert seat.view(1).hands[p] == truth.hands[p]
        assert seat.view(1).roles[p] == truth.roles[p]


def test_a_seat_opens_only_its_own_slots(table):
    layout = table.layout(1)
    for p, seat in table.seats.items():
        assert set(seat.opened) == set(layout.private(p))


def test_secrecy_in_the_bytes(table):
    """Every message and every other seat's secrets (keys and identities): the victim's cards stay hidden.

    The coalition holds every public token and can make its own; it lacks only the victim's."""
    victim = "p2"
    layout = table.layout(1)
    truth = table.truth(1)
    others = [p for p in table.game.players if p != victim]
    seat = table.seats[others[0]]
    cts = seat.ciphertexts()
    published = {}
    for m in table.log:
        doc = json.loads(m)
        if "tokens" in doc:
            got = read_bundle(table.game.id, doc, seat.shares_of(doc["from"]), cts)
            for slot, t in got.items():
                published.setdefault(slot, {})[doc["from"]] = t.point
    named = set()
    for slot in layout.private(victim):
        ct = cts[slot]
        stack = table.game.stack(slot[0])
        assert victim not in published.get(slot, {})  # the victim never gave out its own token
        # every token the coalition has: all public ones, and its own made with every key it holds
        tokens = dict(published.get(slot, {}))
        tokens.update({p: ct.c1 * table.secrets[p].shares[stack.round_no].secret for p in others})
        for guess in (open_with(ct, list(tokens.values())), ct.c2):
            card = card_of(guess, stack)
            if card is not None:
                named.add(card)
    assert not named
    # and no message names any of the victim's cards or their points
    secret_words = [c.encode() for c in truth.hands[victim]] + [truth.roles[victim].encode()]
    secret_points = [card_point(c).raw for c in truth.hands[victim]]
    blob = b"".join(table.log)
    assert not any(w in blob for w in secret_words)
    assert not any(pt in blob for pt in secret_points)


def test_a_sealed_bundle_opens_only_for_its_seat(table):
    layout = table.layout(1)
    p0, p1 = table.seats["p0"], table.seats["p1"]
    to_p2 = p0.bundle_for(layout.private("p2"), "p2")
    assert table.seats["p2"].receive(to_p2) == []  # p2 had them already: nothing new opens
    with pytest.raises(BadPacket):
        p1.receive(to_p2)
    with pytest.raises(WrongKey):
        p1.receive({**to_p2, "to": "p1"})
    good = p0.bundle_for(layout.private("p1"), "p1")
    with pytest.raises(WrongKey):  # cut to claim other slots: the seal binds its slots
        p1.receive({**good, "slots": [list(s) for s in layout.private("p2")]})


def _cheat(table, turn_seat, change):
    """Seat `turn_seat` publishes a shuffle, then we alter one card of its deck@1 and check it."""
    game, stacks = table.game, list(table.game.stacks)
    shares = table.seats["p0"].shares
    keys = K.joint_keys(shares)
    current = S.start(stacks)
    doc, _ = S.make_shuffle(game.id, turn_seat, 0, stacks, keys, current)
    raw = bytearray(K.unb64(doc["stacks"]["deck@1"]["cards"], "x"))
    change(raw, keys[1])
    doc["stacks"]["deck@1"]["cards"] = b64(bytes(raw))
    return lambda: S.check_shuffle_doc(game.id, turn_seat, 0, stacks, keys, current, doc)


def _set(raw, i, ct):
    raw[i * CIPHERTEXT_BYTES:(i + 1) * CIPHERTEXT_BYTES] = ct.encode()


def _get(raw, i):
    return Ciphertext.decode(bytes(raw[i * CIPHERTEXT_BYTES:(i + 1) * CIPHERTEXT_BYTES]))


@pytest.mark.parametrize("name,change", [
    ("drops a card (replaced by the identity)", lambda raw, y: _set(raw, 3, Ciphertext(GENERATOR * 0, GENERATOR * 0))),
    ("duplicates a card", lambda raw, y: _set(raw, 3, reencrypt(y, _get(raw, 4), 77))),
    ("replaces a card", lambda raw, y: _set(raw, 3, reencrypt(y, Ciphertext(GENERATOR * 0, card_point("nugget-1.1")), 5))),
    ("alters a card", lambda raw, y: _set(raw, 3, Ciphertext(_get(raw, 3).c1, _get(raw, 3).c2 + GENERATOR))),
])
def test_a_cheating_shuffle_is_refused_at_its_message(table, name, change):
    with pytest.raises(BadProof):
        _cheat(table, "p0", change)()


def test_a_shuffle_with_a_card_too_few_is_refused(table):
    with pytest.raises(BadPacket, match="holds 66 cards, not 67"):
        _cheat(table, "p0", lambda raw, y: raw.__delitem__(slice(0, CIPHERTEXT_BYTES)))()


def test_a_shuffle_cannot_be_replayed_as_another_seats(table):
    game, stacks = table.game, list(table.game.stacks)
    keys = K.joint_keys(table.seats["p0"].shares)
    current = S.start(stacks)
    doc, _ = S.make_shuffle(game.id, "p0", 0, stacks, keys, current)
    with pytest.raises(BadProof):
        S.check_shuffle_doc(game.id, "p1", 0, stacks, keys, current, doc)
    with pytest.raises(BadPacket):
        S.check_shuffle_doc(game.id, "p0", 1, stacks, keys, current, doc)


def test_wrong_tokens_are_refused(table):
    layout = table.layout(1)
    p0, p1 = table.seats["p0"], table.seats["p1"]
    slots = layout.private("p1")
    # p0 makes tokens with p2's secrets: they do not match p0's published shares
    liar = dataclasses.replace(p0, keys=table.secrets["p2"])
    with pytest.raises(BadProof):
        p1.receive(liar.bundle_for(slots))
    good = p0.bundle_for(slots)
    raw = bytearray(K.unb64(good["tokens"], "x"))
    raw[40] ^= 1  # one bit of one proof
    with pytest.raises(BadPacket):
        p1.receive({**good, "tokens": b64(bytes(raw))})
    # tokens moved to other slots than they were made for
    with pytest.raises(BadProof):
        p1.receive({**good, "slots": [list(s) for s in layout.private("p2")]})
    with pytest.raises(BadPacket):
        p1.receive({**good, "tokens": b64(bytes(raw[:-96]))})
    # a bundle from a stranger, or one claiming to come from its reader
    with pytest.raises(BadPacket):
        p1.receive({**good, "from": "p1"})
    with pytest.raises(BadPacket):
        p1.receive({**good, "from": "mallory"})
    with pytest.raises(BadProof):  # p0's tokens passed off as p2's
        p1.receive({**good, "from": "p2"})


def test_playing_a_card_opens_it_to_everyone(table):
    layout = table.layout(1)
    p0, p1 = table.seats["p0"], table.seats["p1"]
    slot = layout.hands["p0"][2]
    card = p0.opened[slot]
    assert slot not in p1.opened
    bundle = p0.open_publicly(slot)
    assert bundle["to"] == ALL
    assert p1.check_opening("p0", slot, bundle, layout.hands["p0"]) == card
    assert len(json.dumps(bundle)) < 220  # one token of 96 bytes, base64, with its slot


def test_a_played_card_must_be_in_the_players_slots(table):
    layout = table.layout(1)
    p0, p1 = table.seats["p0"], table.seats["p1"]
    slot = layout.hands["p0"][0]
    bundle = p0.open_publicly(slot)
    with pytest.raises(BadPacket, match="not in its hand"):
        p1.check_opening("p0", slot, bundle, layout.hands["p2"])
    with pytest.raises(BadPacket, match="not its own public token"):
        p1.check_opening("p2", slot, bundle, [slot])
    other = p0.open_publicly(layout.hands["p0"][1])
    with pytest.raises(BadPacket, match="other slots"):
        p1.check_opening("p0", slot, other, layout.hands["p0"])
    with pytest.raises(BadPacket, match="not open to p0"):  # nobody can open a card it cannot read
        p0.open_publicly(layout.hands["p1"][0])


def test_a_revealed_round_key_must_be_the_published_one(table):
    shares = table.seats["p0"].shares
    x = table.secrets["p1"].secret_hex()["1"]
    assert K.check_revealed("p1", 1, shares["p1"][1], x) == table.secrets["p1"].shares[1].secret
    with pytest.raises(BadProof):
        K.check_revealed("p1", 1, shares["p2"][1], x)


def test_a_join_without_valid_key_proofs_is_refused():
    keys = K.SeatKeys.new()
    pub = keys.public("g-1", "ann")
    with pytest.raises(BadProof):
        K.check_public("g-1", "bob", pub)  # proofs bound to ann
    with pytest.raises(BadProof):
        K.check_public("g-2", "ann", pub)  # and to the game
    with pytest.raises(BadPacket):
        K.check_public("g-1", "ann", pub[:-1])
    swapped = [dict(p) for p in pub]
    swapped[0]["share"], swapped[1]["share"] = swapped[1]["share"], swapped[0]["share"]
    with pytest.raises(BadProof):
        K.check_public("g-1", "ann", swapped)


def test_swap_hand_seals_each_players_own_tokens_to_the_other(table):
    from pbem.protocol.trustless.play import Ledger, pay_debts
    ledger = Ledger.new(table.game, 1)
    before = {p: list(ledger.holdings[p]) for p in ("p0", "p1")}
    ledger.follow([{"event": "swap-hand", "player": "p0", "target": "p1"}])
    assert ledger.holdings["p1"] == before["p0"] and ledger.holdings["p0"] == before["p1"]
    # the third seat's tokens are public already; each swapper's own must go sealed, or all would be out
    assert ledger.owed_by("p2") == {}
    assert ledger.owed_by("p0") == {"p1": before["p0"]}
    assert ledger.owed_by("p1") == {"p0": before["p1"]}
    (bundle,) = pay_debts(table.seats["p0"], ledger)
    assert bundle["to"] == "p1" and "sealed" in bundle
    p1 = dataclasses.replace(table.seats["p1"], opened=dict(table.seats["p1"].opened),
                             tokens={k: dict(v) for k, v in table.seats["p1"].tokens.items()})
    p1.receive(bundle)
    assert set(before["p0"]) <= set(p1.opened)  # p1 can read its new hand
    with pytest.raises(BadPacket):
        table.seats["p2"].receive(bundle)


def test_a_second_map_of_a_goal_is_sealed_to_its_reader(table):
    from pbem.protocol.trustless.play import Ledger, pay_debts
    ledger = Ledger.new(table.game, 1)
    goal = ledger.layout.goals["top"]
    ledger.follow([{"event": "map", "player": "p0", "goal": "top"}])
    assert ledger.owed_by("p1") == {ALL: [goal]} and ledger.owed_by("p2") == {ALL: [goal]}
    ledger.follow([{"event": "map", "player": "p1", "goal": "top"}])  # before p1 paid p0
    assert ledger.owed_by("p0") == {"p1": [goal]}  # p1's own token goes public: p0's must not
    for p in ("p1", "p2"):
        pay_debts(table.seats[p], ledger)
    assert ledger.waiting() == {"p1": ["p0"]}
    with pytest.raises(BadPacket, match="does not owe"):
        ledger.paid("p0", ALL, [goal])
