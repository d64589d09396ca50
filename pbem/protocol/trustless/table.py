"""One seat's side of a trustless game: the shared facts, the slots, the tokens it holds.

`Layout` maps a round's deal onto slots of the final stacks exactly as engine.state.deal lays
cards out (dwarves: seat i's role is slot i, the rest aside; goals in GOAL_CELLS order;
deck: the expansion's 10 removed cards, then each hand in seat order, then the draw pile), so
the engine deals the same table whichever order the shuffle produced. `TableSeat` holds what one
seat knows: every key share, the final stacks, the tokens it was given, the cards it opened.
Its `view` is the engine's view of the round for that seat (engine.views.view), with only
the cards it opened filled in: the engine never sees anything else (engine/dealer.py seam).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from engine.board import GOAL_CELLS
from engine.catalog import EXPANSION, HIDDEN, Ruleset
from engine.state import EXPANSION_REMOVED, RoundState, deal, hand_size
from engine.views import view
from pbem.errors import BadPacket, listed, msg
from pbem.protocol.crypto import Identity, PublicKey
from pbem.protocol.mental.elgamal import Ciphertext, KeyShare, open_with
from pbem.protocol.mental.group import Point
from pbem.protocol.mental.proofs import BadProof, Token
from pbem.protocol.shapes import b64
from pbem.protocol.trustless.keys import SeatKeys
from pbem.protocol.trustless.setup import Stacks
from pbem.protocol.trustless.stacks import Stack, card_of
from pbem.protocol.trustless.tokens import ALL, Slot, bundle_slots, make_bundle, read_bundle

T = TypeVar("T")


@dataclass(frozen=True)
class TrustlessGame:
    """What every seat agrees on before play: the invitation's facts and the stacks."""

    id: str
    ruleset: Ruleset
    players: tuple[str, ...]
    options: frozenset[str]
    stacks: tuple[Stack, ...]
    threshold: int = 0  # how many others can do a seat's part (docs/trustless.md §11); 0: no dealing

    def stack(self, label: str) -> Stack:
        for s in self.stacks:
            if s.label == label:
                return s
        raise BadPacket(msg("no stack {stack} in game {game}", stack=repr(label), game=self.id))


@dataclass(frozen=True)
class Layout:
    roles: dict[str, Slot]
    aside: list[Slot]
    goals: dict[str, Slot]
    removed: list[Slot]
    hands: dict[str, list[Slot]]
    deck: list[Slot]  # the draw pile, top first

    @classmethod
    def of(cls, game: TrustlessGame, round_no: int) -> Layout:
        n = len(game.players)
        dwarves = game.stack(f"dwarves@{round_no}")
        goals = game.stack(f"goals@{round_no}")
        deck = game.stack(f"deck@{round_no}")
        off = EXPANSION_REMOVED if game.ruleset == EXPANSION else 0
        size = hand_size(game.ruleset, n)
        return cls(
            roles={p: (dwarves.label, i) for i, p in enumerate(game.players)},
            aside=[(dwarves.label, i) for i in range(n, len(dwarves.cards))],
            goals={g: (goals.label, i) for i, g in enumerate(GOAL_CELLS)},
            removed=[(deck.label, i) for i in range(off)],
            hands={p: [(deck.label, off + i * size + k) for k in range(size)] for i, p in enumerate(game.players)},
            deck=[(deck.label, i) for i in range(off + n * size, len(deck.cards))],
        )

    def private(self, player: str) -> list[Slot]:
        """The slots `player` must read when the round is dealt: its role and its hand."""
        return [self.roles[player], *self.hands[player]]


class FixedOrder:
    """A `Chance` (engine/chance.py) whose shuffles are given: the order the stacks opened to."""

    def __init__(self, orders: list[list[str]]) -> None:
        self._orders = list(orders)

    def shuffled(self, items: Sequence[T]) -> list[T]:
        order = self._orders.pop(0)
        if sorted(map(str, items)) != sorted(order):
            raise BadPacket(msg("a stack opened to cards that are not the stack's"))
        by_name = {str(i): i for i in items}
        return [by_name[c] for c in order]


def deal_in_order(game: TrustlessGame, round_no: int, orders: dict[str, list[str]], *, first_seat: int = 0,
                  gold: dict[str, int] | None = None, nuggets: list[str] | None = None) -> RoundState:
    """The engine's deal of round `round_no` when each stack lies in the given order."""
    labels = [f"dwarves@{round_no}", f"goals@{round_no}", f"deck@{round_no}"]
    seq = [orders[label] for label in labels]
    if nuggets is None and "nuggets@0" in orders:
        seq.append(orders["nuggets@0"])
    elif nuggets is not None:
        seq.append(list(nuggets))
    return deal(game.ruleset, game.players, FixedOrder(seq), options=game.options, round_no=round_no,
                first_seat=first_seat, gold=gold, nuggets=nuggets)


@dataclass
class TableSeat:
    game: TrustlessGame
    me: str
    identity: Identity
    keys: SeatKeys
    seat_keys: dict[str, PublicKey]  # each seat's pbem key (for sealing tokens to it)
    shares: dict[str, dict[int, Point]]  # each seat's published key shares, checked
    stacks: Stacks  # the final stacks, after every seat's shuffle
    tokens: dict[Slot, dict[str, Point]] = field(default_factory=dict)  # checked tokens of the other seats
    opened: dict[Slot, str] = field(default_factory=dict)
    proven: dict[Slot, dict[str, Token]] = field(default_factory=dict)  # tokens sealed to me, proofs kept (hand_on)
    _cts: dict[Slot, Ciphertext] | None = field(default=None, repr=False, compare=False)

    # --- helpers -------------------------------------------------------------------------

    def ciphertexts(self) -> dict[Slot, Ciphertext]:
        if self._cts is None:
            self._cts = {(label, i): ct for label, cts in self.stacks.items() for i, ct in enumerate(cts)}
        return self._cts

    def my_shares(self) -> dict[str, KeyShare]:
        return {s.label: self.keys.shares[s.round_no] for s in self.game.stacks}

    def shares_of(self, seat: str) -> dict[str, Point]:
        return {s.label: self.shares[seat][s.round_no] for s in self.game.stacks}

    # --- giving and taking tokens --------------------------------------------------------

    def bundle_for(self, slots: list[Slot], to: str = ALL) -> dict[str, Any]:
        """My tokens for `slots`: public (the default, docs/trustless.md §4), or sealed to seat `to`."""
        return make_bundle(self.game.id, self.me, self.my_shares(), self.ciphertexts(), slots, to,
                           None if to == ALL else self.seat_keys[to])

    def deal_bundle(self, round_no: int) -> dict[str, Any]:
        """At a round's deal: my tokens for every other seat's role and hand, in one public bundle."""
        layout = Layout.of(self.game, round_no)
        return self.bundle_for([s for p in self.game.players if p != self.me for s in layout.private(p)])

    def receive(self, bundle: dict[str, Any], *, check: bool = True,
                known: dict[Slot, dict[str, Point]] | None = None) -> list[Slot]:
        """Check a bundle (public, or sealed to me) and keep its tokens; returns the slots it opened to me.
        With `check` false its proofs are not checked again (a chain this seat checked before), nor
        that of a token equal to its maker's for the slot in `known` (the public table's, checked as it came)."""
        maker = bundle.get("from") if isinstance(bundle, dict) else None
        if maker not in self.shares or maker == self.me:
            raise BadPacket(msg("a token bundle comes from {seat}, not another seat of the game", seat=repr(str(maker)[:32])))
        tokens = read_bundle(self.game.id, bundle, self.shares_of(str(maker)), self.ciphertexts(), self.identity, self.me,
                             check=check, known=known)
        if bundle.get("to") == self.me:
            for slot, tok in tokens.items():
                self.proven.setdefault(slot, {})[str(maker)] = tok
        return self.receive_points(str(maker), {slot: tok.point for slot, tok in tokens.items()})

    def receive_points(self, maker: str, points: dict[Slot, Point]) -> list[Slot]:
        """Keep `maker`'s checked tokens (from its bundle, or combined from a quorum's stand-in
        shares when it is gone); returns the slots they opened to me."""
        opened = []
        for slot, point in points.items():
            self.tokens.setdefault(slot, {})[maker] = point
            if slot not in self.opened and self._complete(slot):
                self.opened[slot] = self._open(slot)
                opened.append(slot)
        return opened

    def _complete(self, slot: Slot) -> bool:
        return all(p in self.tokens.get(slot, {}) for p in self.game.players if p != self.me)

    def _open(self, slot: Slot) -> str:
        ct = self.ciphertexts()[slot]
        mine = ct.c1 * self.my_shares()[slot[0]].secret
        others = [self.tokens[slot][p] for p in self.game.players if p != self.me]
        card = card_of(open_with(ct, [mine, *others]), self.game.stack(slot[0]))
        if card is None:  # cannot happen after checked shuffles and tokens; refuse loudly if it does
            raise BadProof(msg("slot {slot} opens to no card of its stack", slot=f"{slot[0]} #{slot[1]}"))
        return card

    # --- playing a card: opening it to everyone ------------------------------------------

    def open_publicly(self, slot: Slot) -> dict[str, Any]:
        """Open one of my slots to everyone: the others' tokens are public already; add mine."""
        if slot not in self.opened:
            raise BadPacket(msg("slot {slot} is not open to {seat}", slot=f"{slot[0]} #{slot[1]}", seat=self.me))
        return self.bundle_for([slot])

    def hand_on(self, slot: Slot, public: dict[str, set[Slot]]) -> list[dict[str, Any]]:
        """With a played card's opening: the tokens of the seats whose token for it is not public
        (`public`: maker -> its public slots, the ledger's), which reached me sealed when the card
        was handed to me (swap-hand). A token is the same whoever publishes it, and its proof
        shows who made it."""
        return [{"from": p, "to": ALL, "slots": [list(slot)], "tokens": b64(tok.encode())}
                for p, tok in self.proven.get(slot, {}).items() if slot not in public.get(p, set())]

    def check_opening(self, player: str, slot: Slot, bundle: dict[str, Any], holds: list[Slot]) -> str:
        """`player` opens `slot` (one it must hold) with its token: check it, return the card."""
        if slot not in holds:
            raise BadPacket(msg("{seat} opens slot {slot}, which is not in its hand", seat=player, slot=f"{slot[0]} #{slot[1]}"))
        if not isinstance(bundle, dict) or bundle.get("from") != player or bundle.get("to") != ALL:
            raise BadPacket(msg("{seat}'s opening of slot {slot} is not its own public token", seat=player,
                              slot=f"{slot[0]} #{slot[1]}"))
        if bundle_slots(bundle) != [slot]:
            raise BadPacket(msg("{seat}'s opening names other slots than {slot}", seat=player, slot=f"{slot[0]} #{slot[1]}"))
        if player != self.me:
            self.receive(bundle)
        if slot not in self.opened:
            missing = [p for p in self.game.players if p != self.me and p not in self.tokens.get(slot, {})]
            raise BadPacket(msg("slot {slot} cannot be opened: no token from {seats}", slot=f"{slot[0]} #{slot[1]}",
                              seats=listed(missing)))
        return self.opened[slot]

    # --- the engine's view ---------------------------------------------------------------

    def view(self, round_no: int, *, first_seat: int = 0, gold: dict[str, int] | None = None) -> RoundState:
        """The dealt round as this seat sees it: its own role and hand, everything else hidden."""
        stand_in = {s.label: list(s.cards) for s in self.game.stacks}  # any order: all of it is masked
        v = view(deal_in_order(self.game, round_no, stand_in, first_seat=first_seat, gold=gold), self.me)
        layout = Layout.of(self.game, round_no)
        v.hands[self.me] = [self.opened.get(s, HIDDEN) for s in layout.hands[self.me]]
        v.roles[self.me] = self.opened.get(layout.roles[self.me])
        return v
