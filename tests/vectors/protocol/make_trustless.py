"""Write the trustless messages' golden vectors (tests/vectors/protocol/trustless.*). By hand only:

    .venv/bin/python tests/vectors/protocol/make_trustless.py

A 3-seat classic table (ann, bob, cat, the fixed identities of make.py) through the protocol
core: the three joins with their key shares, the three shuffles of the setup chain, the three
deal-token messages, a played card with its opening, a face-down discard paying the tokens of a
draw, a token-only message with a sealed bundle, a goal's tokens and a round-end key reveal;
then the expansion's two: a card played after a swap-hand, its earlier holder's token handed on
with the opening (`handed`), and a thief's `steal`. The mental randomness is seeded and Ed25519
is deterministic, so a rerun writes the same bytes except the sealed bundle (HPKE's ephemeral
key). The packets they answer are named by made-up numbers and hashes (the blind host's packets
have their own vectors). trustless.json keeps each seat's secret shares (test keys) and ann's
dealt cards, so the test can open what the messages deal.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[2]), str(HERE)]

from make import identity  # noqa: E402

from pbem.protocol.documents import Join, sign  # noqa: E402
from pbem.protocol.mental.group import seeded_scalars  # noqa: E402
from pbem.protocol.trustless import keys as K  # noqa: E402
from pbem.protocol.trustless import messages as M  # noqa: E402
from pbem.protocol.trustless import setup as S  # noqa: E402
from pbem.protocol.trustless.play import Ledger, pay_debts  # noqa: E402
from pbem.protocol.trustless.stacks import game_stacks  # noqa: E402
from pbem.protocol.trustless.table import Layout, TableSeat, TrustlessGame  # noqa: E402

GAME = "trustvec-0000beef"
SEATS = ("ann", "bob", "cat")
SEED = b"pbem trustless golden vectors v1"


def fake_packet(seq: int) -> str:
    return hashlib.sha256(f"vector packet {seq}".encode()).hexdigest()


def build() -> tuple[list[str], dict]:
    rng = seeded_scalars(SEED)
    ids = {s: identity(s) for s in SEATS}
    stacks = tuple(game_stacks("classic", len(SEATS)))
    game = TrustlessGame(GAME, "classic", SEATS, frozenset(), stacks)
    secrets = {s: K.SeatKeys.new(rng) for s in SEATS}
    invitation = hashlib.sha256(b"vector trustless invitation").hexdigest()
    blocks = []
    shares = {}
    for s in SEATS:
        join = sign(Join(game=GAME, seat=s, invitation=invitation, contribution="A" * 43 + "=",
                         mental=M.key_shares(secrets[s], GAME, s, rng)), ids[s])
        blocks.append(join.armored())
        shares[s] = M.join_shares(join.doc)
    joint = K.joint_keys(shares)
    current = S.start(list(stacks))
    for turn, s in enumerate(SEATS):
        doc, current = S.make_shuffle(GAME, s, turn, list(stacks), joint, current, rng)
        blocks.append(M.message(ids[s], GAME, s, 1 + turn, fake_packet(1 + turn), "shuffle", shuffle=doc).armored())
    seats = {s: TableSeat(game, s, ids[s], secrets[s], {q: ids[q].public for q in SEATS}, shares, current)
             for s in SEATS}
    deal = {s: seats[s].deal_bundle(1) for s in SEATS}
    for s in SEATS:
        blocks.append(M.message(ids[s], GAME, s, 4, fake_packet(4), "deal", bundles=[deal[s]]).armored())
        for q in SEATS:
            if q != s:
                seats[q].receive(deal[s])
    layout = Layout.of(game, 1)
    ledger = Ledger.new(game, 1)
    # ann plays her first card (its opening), draws; bob discards face down and pays ann's draw
    first = layout.hands["ann"][0]
    card = seats["ann"].opened[first]
    ledger.play("ann", first)
    ledger.draw("ann")
    blocks.append(M.message(ids["ann"], GAME, "ann", 5, fake_packet(5), "move", move=f"{card} 1,0",
                            play=(first, seats["ann"].open_publicly(first)), bundles=pay_debts(seats["ann"], ledger))
                  .armored())
    gone = layout.hands["bob"][0]
    ledger.play("bob", gone)
    ledger.draw("bob")
    blocks.append(M.message(ids["bob"], GAME, "bob", 6, fake_packet(6), "move", move="discard ?",
                            discard=[gone], bundles=pay_debts(seats["bob"], ledger)).armored())
    # a token-only message: cat pays what it owes, plus a token sealed to ann (a later reader)
    sealed = seats["cat"].bundle_for([layout.goals["top"]], to="ann")
    blocks.append(M.message(ids["cat"], GAME, "cat", 7, fake_packet(7), "tokens",
                            bundles=[*pay_debts(seats["cat"], ledger), sealed]).armored())
    blocks.append(M.message(ids["ann"], GAME, "ann", 8, fake_packet(8), "goal",
                            bundles=[seats["ann"].bundle_for([layout.goals["middle"]])]).armored())
    blocks.append(M.message(ids["ann"], GAME, "ann", 9, fake_packet(9), "reveal",
                            reveal={"1": secrets["ann"].secret_hex()["1"]}).armored())
    # swap-hand: ann's second card went to cat with ann's token sealed to it; cat plays it and
    # hands ann's token on with its own opening (bob's token for it is public since the deal)
    handed = layout.hands["ann"][1]
    seats["cat"].receive(seats["ann"].bundle_for([handed], to="cat"))
    blocks.append(M.message(ids["cat"], GAME, "cat", 10, fake_packet(10), "move", move=f"{seats['cat'].opened[handed]} 2,0",
                            play=(handed, seats["cat"].open_publicly(handed)),
                            handed=seats["cat"].hand_on(handed, {"bob": {handed}})).armored())
    blocks.append(M.message(ids["bob"], GAME, "bob", 11, fake_packet(11), "steal", move="steal ann").armored())
    facts = {"game": GAME, "seats": list(SEATS), "ruleset": "classic", "seed": SEED.decode(),
             "invitation": invitation, "secrets": {s: secrets[s].secret_hex() for s in SEATS},
             "ann_dealt": [seats["ann"].opened[slot] for slot in layout.private("ann")],
             "played": card, "handed_on": seats["cat"].opened[handed]}
    return blocks, facts


def main() -> None:
    blocks, facts = build()
    text = "\n".join(blocks)
    (HERE / "trustless.pbem").write_text(text, encoding="utf-8")
    facts["bytes"] = [len(b.encode()) for b in blocks]
    (HERE / "trustless.json").write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
