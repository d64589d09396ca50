"""A whole classic round dealt trustlessly: every card a seat learns comes from tokens.

The engine plays the real deal (the oracle, which no seat has) with bots choosing on each
seat's view; the trustless side runs beside it as the seats would: a played card is opened
by its player's public tokens and checked by every other seat against the slot it held; a
face-down discard names slots only; tokens for each draw ride on the other seats' next moves;
a reached goal opens in one parallel round; a map opens a goal to its player only. At the
round's end every seat reveals its round key and the audit reopens the whole deal.

Not shown here (docs/trustless.md, Status): seats keeping the public position from these
messages alone, and the nugget payout. Swap-hand's tokens are tested in test_trustless_deal.py.
"""

from __future__ import annotations

import json

import pytest
from trustless_table import build

from engine.bots import make_bot
from engine.catalog import card_kind, nugget_ids
from engine.moves import parse
from engine.rules import apply
from engine.views import view
from pbem.protocol.mental.proofs import BadProof
from pbem.protocol.trustless import audit
from pbem.protocol.trustless.play import Ledger, SlotDrawer, pay_debts
from pbem.protocol.trustless.tokens import ALL


def _slot_of(seat, ledger, card):
    return next(s for s in ledger.holdings[seat.me] if seat.opened.get(s) == card)


def _deliver(table, ledgers, maker, bundles):
    """Token bundles: every ledger marks the debts paid; every seat checks the public ones, and
    the recipient the sealed one."""
    for bundle in bundles:
        for p, ledger in ledgers.items():
            if p == maker:
                continue
            ledger.paid(maker, bundle["to"], [tuple(s) for s in bundle["slots"]])
            if p in table.seats and bundle["to"] in (ALL, p):
                table.seats[p].receive(bundle)


def _kind(card):
    return card_kind(card).kind


def play_round(ruleset: str, seed: int):
    table = build(ruleset, 3, game_id=f"round-{seed:08x}", seed=f"{ruleset} {seed}".encode())
    table.deal(1)
    game, players = table.game, table.game.players
    truth = table.truth(1)
    ledgers = {p: Ledger.new(game, 1) for p in (*players, "host")}
    bots = {p: make_bot("smart", p, f"{seed}-{p}") for p in players}
    sizes = []
    opened_in_play = {}
    seen = set()
    token_only: list[str] = []
    learned: dict[str, list] = {}
    while not truth.over and truth.phase == "playing":
        mover = truth.player
        seat, mine = table.seats[mover], ledgers[mover]
        # a drawn (or handed over) card is readable by its holder's next turn, and so is its role
        hand = SlotDrawer(seat, mine).hand()
        assert sorted(hand) == sorted(truth.hands[mover]), "the mover's tokens did not all arrive in time"
        assert seat.opened[mine.roles[mover]] == truth.roles[mover]
        for slot, kind in learned.pop(mover, []):  # what a map or inspect showed it, it can read now
            assert _kind(seat.opened[slot]) == kind
        move = bots[mover].choose(view(truth, mover))
        message = {"seat": mover}
        if move.verb == "discard":
            message["discard"] = [list(_slot_of(seat, mine, c)) for c in move.cards]
        else:
            slot = _slot_of(seat, mine, move.card)
            message["play"] = {"slot": list(slot), "open": seat.open_publicly(slot), "move": str(move)}
        events = apply(truth, move)
        seen.update(e["event"] for e in events)
        for e in events:
            if e["event"] == "map":
                learned.setdefault(mover, []).append((mine.layout.goals[e["goal"]], _kind(e["card"])))
            elif e["event"] == "inspect":
                learned.setdefault(mover, []).append((mine.roles[e["target"]], e["role"]))
        for p, ledger in ledgers.items():  # every seat (and the blind host) follows the move
            if "play" in message:
                slot = tuple(message["play"]["slot"])
                if p in table.seats and p != mover:
                    card = table.seats[p].check_opening(mover, slot, message["play"]["open"], ledger.holdings[mover])
                    assert card == parse(message["play"]["move"]).card == move.card
                    opened_in_play[slot] = card
                ledger.play(mover, slot)
            else:
                for s in message["discard"]:
                    ledger.play(mover, tuple(s))
            ledger.follow(events)
        # the tokens the mover owes ride on its move (a swap-hand's own tokens among them)
        message["tokens"] = pay_debts(seat, mine)
        _deliver(table, ledgers, mover, message["tokens"])
        wire = json.dumps(message, sort_keys=True, separators=(",", ":")).encode()
        table.log.append(wire)
        sizes.append(len(wire))
        # a reached goal opens to everyone in one parallel round of public tokens
        for e in events:
            if e["event"] == "reveal":
                slot = ledgers["host"].layout.goals[e["goal"]]
                bundles = {p: table.seats[p].bundle_for([slot]) for p in players}
                for p in players:
                    for q, bundle in bundles.items():
                        if q != p:
                            table.seats[p].receive(bundle)
                    assert table.seats[p].opened[slot] == e["card"]
                    opened_in_play[slot] = e["card"]
                table.log += [json.dumps(b).encode() for b in bundles.values()]
        # a seat whose tokens the next player waits for, and that has no move before it (it is
        # skipped, or it is waiting), sends a token-only message
        nxt = truth.player
        for p in players:
            if p != nxt and ledgers["host"].owes(p, nxt):
                bundles = pay_debts(table.seats[p], ledgers[p])
                _deliver(table, ledgers, p, bundles)
                table.log += [json.dumps(b).encode() for b in bundles]
                token_only.append(p)
    return table, ledgers, sizes, opened_in_play, seen, token_only


def outsider_cannot_open(table, opened_in_play):
    """Every public token in the log: no slot that was not opened to all has all its tokens out."""
    seat = table.seats[table.game.players[0]]
    public = {}
    for m in table.log:
        for bundle in _bundles(json.loads(m)):
            if bundle.get("to") == ALL:
                for s in bundle["slots"]:
                    public.setdefault(tuple(s), set()).add(bundle["from"])
    exposed = [s for s, makers in public.items() if makers == set(table.game.players) and s not in opened_in_play]
    assert not exposed, f"slots whose every token is public: {exposed}"
    return seat


def _bundles(doc):
    if "slots" in doc:
        return [doc]
    out = list(doc.get("tokens", []))
    if "play" in doc:
        out.append(doc["play"]["open"])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("ruleset,seed,needs", [
    ("classic", 3, {"map", "draw", "reveal", "gold"}),  # smart bots find the gold
    ("expansion", 18, {"inspect", "swap-hat", "map", "reveal"}),  # and a token-only message
])
def test_a_whole_round_dealt_with_tokens_only(ruleset, seed, needs):
    table, ledgers, sizes, opened, seen, token_only = play_round(ruleset, seed)
    game = table.game
    assert needs <= seen
    assert token_only or ruleset == "classic"
    # every copy of the public ledger agrees, the host's included
    assert len({json.dumps(ledger.holdings, sort_keys=True) for ledger in ledgers.values()}) == 1
    assert max(sizes) < 4096, f"a move message took {max(sizes)} bytes"
    outsider_cannot_open(table, opened)
    # the round's end: each seat reveals its round key; the audit reopens everything
    revealed = {p: table.secrets[p].secret_hex()["1"] for p in game.players}
    seat = table.seats["p0"]
    orders = audit.open_round(game, 1, seat.shares, seat.stacks, revealed)
    # the nugget pile (epoch 0) is not opened by a round's audit yet; round 1 starts with all of it
    start = audit.round_start(game, 1, orders, nuggets=list(nugget_ids()) if ruleset == "classic" else None)
    assert start.hands == table.truth(1).hands and start.roles == table.truth(1).roles
    audit.check_openings(orders, opened)
    slot = next(iter(opened))
    with pytest.raises(BadProof):  # a card claimed during play that is not the slot's
        audit.check_openings(orders, {slot: orders[slot[0]][(slot[1] + 1) % len(orders[slot[0]])]})
    with pytest.raises(Exception, match="p2 did not reveal"):
        audit.open_round(game, 1, seat.shares, seat.stacks, {p: revealed[p] for p in ("p0", "p1")})


def test_opening_a_round_costs_one_multiplication_a_slot() -> None:
    """The round's audit opens each slot with the seats' revealed keys summed (x1 c1 + ... + xn c1
    is (x1 + ... + xn) c1): one scalar multiplication a slot, however many seats, and every stack
    still opens to its cards."""
    from group_ops import counted

    from pbem.protocol.mental.group import seeded_scalars
    from pbem.protocol.mental.shuffle import shuffle
    from pbem.protocol.trustless import keys as K
    from pbem.protocol.trustless.stacks import game_stacks, initial
    from pbem.protocol.trustless.table import TrustlessGame

    players = ("p0", "p1", "p2", "p3")
    game = TrustlessGame("trust-0000abcd", "classic", players, frozenset(), tuple(game_stacks("classic", 4)))
    rng = seeded_scalars(b"open a round")
    secrets = {p: K.SeatKeys.new(rng) for p in players}
    shares = {p: {e: k.public for e, k in secrets[p].shares.items()} for p in players}
    joint = K.joint_keys(shares)
    stacks = {s.label: shuffle(joint[s.round_no], initial(s), rng)[0] for s in game.stacks}
    revealed = {p: secrets[p].secret_hex()["2"] for p in players}
    with counted() as ops:
        orders = audit.open_round(game, 2, shares, stacks, revealed)
    opened = [s for s in game.stacks if s.round_no == 2]
    assert sorted(orders) == sorted(s.label for s in opened)
    for s in opened:
        assert sorted(orders[s.label]) == sorted(s.cards) and orders[s.label] != list(s.cards)
    assert ops["mul"] == sum(len(s.cards) for s in opened), ops


def test_the_public_table_maps_its_slots_once_a_shuffle() -> None:
    """Every public bundle a follower checks reads the slots' ciphertexts: the table maps them
    once for the stacks as they lie (hundreds of slots), not again for each bundle; a shuffle's
    new stacks are mapped anew."""
    from pbem.protocol.trustless import setup as S
    from pbem.protocol.trustless.public import PublicTable
    from pbem.protocol.trustless.stacks import game_stacks
    from pbem.protocol.trustless.table import TrustlessGame

    game = TrustlessGame("trust-0000abcd", "classic", ("p0", "p1", "p2"), frozenset(), tuple(game_stacks("classic", 3)))
    table = PublicTable(game, stacks=S.start(list(game.stacks)))
    first = table.cts()
    assert table.cts() is first and len(first) == sum(len(s.cards) for s in game.stacks)
    table.stacks = {label: cts[::-1] for label, cts in table.stacks.items()}  # as a shuffle replaces them
    again = table.cts()
    assert again is not first and again[("deck@1", 0)] == table.stacks["deck@1"][0] != first[("deck@1", 0)]
    assert table.cts() is again
