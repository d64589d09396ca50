"""During a round: which seat holds which slot, and which tokens each seat still owes.

The `Ledger` is public: every seat (and the blind host) keeps the same one, changed only by
public facts (a draw, a play, a discard, a map), so all agree on who must send which token to
whom. Tokens for a drawn card ride on the other seats' next messages (their moves, or a
token-only message when they have no move); the drawer can read its card by its next turn.
`SlotDrawer` is the engine seam (engine/dealer.py): it hands the engine a card id once the
slot is open to this seat, and the hidden placeholder before that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.catalog import HIDDEN
from engine.state import RoundState
from pbem.errors import BadPacket, msg
from pbem.protocol.trustless.table import Layout, TableSeat, TrustlessGame
from pbem.protocol.trustless.tokens import ALL, Slot


@dataclass
class Ledger:
    game: TrustlessGame
    round_no: int
    layout: Layout
    holdings: dict[str, list[Slot]]
    roles: dict[str, Slot] = field(default_factory=dict)  # each seat's dwarf card now (swap-hat changes it)
    drawn: int = 0  # how many slots of the draw pile have been dealt
    hats: int = 0  # how many aside dwarf cards swap-hat has handed out
    owed: dict[str, list[tuple[str, Slot, bool]]] = field(default_factory=dict)  # maker -> [(reader, slot, sealed)]
    public: dict[str, set[Slot]] = field(default_factory=dict)  # maker -> slots its token is out for
    gone: set[str] = field(default_factory=set)  # seats declared gone (docs/trustless.md §11)
    learned: dict[str, list[Slot]] = field(default_factory=dict)  # reader -> what each map, inspect, new hat showed

    @classmethod
    def new(cls, game: TrustlessGame, round_no: int) -> Ledger:
        layout = Layout.of(game, round_no)
        dealt = {m: {s for p in game.players if p != m for s in layout.private(p)} for m in game.players}
        return cls(game, round_no, layout, {p: list(s) for p, s in layout.hands.items()}, roles=dict(layout.roles),
                   public=dealt)

    def _owe(self, slot: Slot, to: str) -> None:
        """The other seats owe reader `to` their tokens for `slot`.

        A slot stays hidden while one token for it is unpublished. For a slot's first reader
        every other token can be public (its own stays private); a later reader's own token is
        public already (or owed publicly), so what it still lacks must be sealed to it.
        """
        if to in self.gone:
            return  # a gone seat reads nothing: nobody owes it a token
        sealed = self._goes_public(to, slot)
        for maker in self.game.players:
            if maker != to and slot not in self.public.get(maker, set()):  # a public token serves every reader
                self.owed.setdefault(maker, []).append((to, slot, sealed))

    def _goes_public(self, maker: str, slot: Slot) -> bool:
        """Whether `maker`'s token for `slot` is public, or owed publicly (not yet sent)."""
        return slot in self.public.get(maker, set()) or any(s == slot and not sealed
                                                            for _, s, sealed in self.owed.get(maker, []))

    def forget(self, seat: str) -> None:
        """`seat` is gone: the tokens owed to it will never be made (its own debts, public or
        sealed, a quorum stands in for, docs/trustless.md §11.2)."""
        self.gone.add(seat)
        self.owed = {m: [d for d in debts if d[0] != seat] for m, debts in self.owed.items()}

    def back(self, seat: str) -> None:
        """`seat` came back: the others owe it again their tokens for what it holds and for
        what it learned (its role, its hand, cards drawn while it was gone, its maps)."""
        self.gone.discard(seat)
        for slot in dict.fromkeys([self.roles[seat], *self.holdings[seat], *self.learned.get(seat, [])]):
            if any(d[0] == seat and d[1] == slot for debts in self.owed.values() for d in debts):
                continue
            self._owe(slot, seat)

    def draw(self, player: str) -> Slot:
        if self.drawn >= len(self.layout.deck):
            raise BadPacket(msg("the draw pile is empty"))
        slot = self.layout.deck[self.drawn]
        self.drawn += 1
        self.holdings[player].append(slot)
        self._owe(slot, player)
        return slot

    def play(self, player: str, slot: Slot) -> None:
        """`player` plays or discards the card in `slot` (it must hold it)."""
        if slot not in self.holdings[player]:
            raise BadPacket(msg("{seat} does not hold slot {slot}", seat=player, slot=f"{slot[0]} #{slot[1]}"))
        self.holdings[player].remove(slot)
        for maker, debts in self.owed.items():  # tokens nobody needs any more
            self.owed[maker] = [d for d in debts if d[1] != slot]

    def follow(self, events: list[dict[str, Any]]) -> list[Slot]:
        """Follow the engine's events of one move, in order; returns the slots drawn.

        A map: the other seats owe the mapper their tokens for the goal. Inspect: the target's
        role slot, to the inspector (only the target's own token is not public yet). Swap-hat:
        the next aside dwarf card becomes the target's, all others owe it their tokens.
        Swap-hand: the hands trade slots, and each player owes the other its own tokens.
        """
        drawn = []
        for e in events:
            kind = e.get("event")
            if kind == "draw":
                drawn.append(self.draw(str(e["player"])))
            elif kind == "map":
                self._learn(self.layout.goals[str(e["goal"])], str(e["player"]))
            elif kind == "inspect":
                self._learn(self.roles[str(e["target"])], str(e["player"]))
            elif kind == "swap-hat":
                target = str(e["player"])
                if self.hats >= len(self.layout.aside):
                    raise BadPacket(msg("swap-hat with no dwarf card left aside"))
                self.roles[target] = self.layout.aside[self.hats]
                self.hats += 1
                self._learn(self.roles[target], target)
            elif kind == "swap-hand":
                a, b = str(e["player"]), str(e["target"])
                self.holdings[a], self.holdings[b] = self.holdings[b], self.holdings[a]
                for slot in self.holdings[b]:
                    self._owe(slot, b)  # only a's own tokens are new: the others' are public already
                for slot in self.holdings[a]:
                    self._owe(slot, a)
        return drawn

    def _learn(self, slot: Slot, reader: str) -> None:
        """`reader` learns the card in `slot` (in the order of the engine's knowledge facts)."""
        self.learned.setdefault(reader, []).append(slot)
        self._owe(slot, reader)

    def owed_by(self, maker: str) -> dict[str, list[Slot]]:
        """What `maker` owes: {"all": public slots, seat: slots sealed to that seat}, one token per slot."""
        out: dict[str, list[Slot]] = {}
        for to, slot, sealed in self.owed.get(maker, []):
            key = to if sealed else ALL
            if slot not in out.setdefault(key, []):
                out[key].append(slot)
        return out

    def paid(self, maker: str, to: str, slots: list[Slot]) -> None:
        """`maker` sent its tokens for `slots`, public (to='all') or sealed to seat `to`."""
        owed = self.owed_by(maker).get(to, [])
        for s in slots:
            if s not in owed:
                raise BadPacket(msg("{seat} sends tokens for slot {slot} to {to}, which it does not owe", seat=maker,
                                  slot=f"{s[0]} #{s[1]}", to=to))
        self.owed[maker] = [d for d in self.owed.get(maker, []) if d[1] not in slots or (ALL if not d[2] else d[0]) != to]
        if to == ALL:
            self.public.setdefault(maker, set()).update(slots)

    def published(self, maker: str, slots: list[Slot]) -> None:
        """`maker`'s tokens for `slots` are out to everyone (a goal reached): no debt for them is left."""
        self.owed[maker] = [d for d in self.owed.get(maker, []) if d[1] not in slots]
        self.public.setdefault(maker, set()).update(slots)

    def owes(self, maker: str, reader: str) -> bool:
        """Whether `reader` waits for a token from `maker` (then, if `maker` has no move before
        `reader`'s turn, it sends a token-only message)."""
        return any(to == reader for to, _, _ in self.owed.get(maker, []))

    def waiting(self) -> dict[str, list[str]]:
        """Per seat, who still owes it tokens (what `pbem show` lists as cards waiting)."""
        out: dict[str, set[str]] = {}
        for maker, debts in self.owed.items():
            for to, _, _ in debts:
                out.setdefault(to, set()).add(maker)
        return {to: sorted(makers) for to, makers in out.items()}


def debt_bundles(seat: TableSeat, ledger: Ledger) -> list[dict[str, Any]]:
    """The token bundles `seat` owes (public first, then one sealed to each later reader), to ride
    on its next message (the ledger changes when the message is taken, not here)."""
    return [seat.bundle_for(slots, to)
            for to, slots in sorted(ledger.owed_by(seat.me).items(), key=lambda kv: (kv[0] != ALL, kv[0]))]


def pay_debts(seat: TableSeat, ledger: Ledger) -> list[dict[str, Any]]:
    """`debt_bundles`, marked paid in `ledger` at once (one process playing every seat)."""
    out = debt_bundles(seat, ledger)
    for b in out:
        ledger.paid(seat.me, b["to"], [tuple(s) for s in b["slots"]])
    return out


class SlotDrawer:
    """A `Drawer` for one seat's view: its own draws are known once their tokens are in."""

    def __init__(self, seat: TableSeat, ledger: Ledger) -> None:
        self.seat = seat
        self.ledger = ledger
        self._taken = 0  # draws handed to the engine and not yet settled

    def draw(self, state: RoundState) -> str | None:
        if not state.deck:
            return None
        state.deck.pop(0)
        slot = self.ledger.layout.deck[self.ledger.drawn + self._taken]
        self._taken += 1
        return self.seat.opened.get(slot, HIDDEN)

    def settle(self, events: list[dict[str, Any]]) -> list[Slot]:
        """After `rules.apply`: follow the move's events in the ledger (draws go to their drawers)."""
        self._taken = 0
        return self.ledger.follow(events)

    def hand(self) -> list[str]:
        """The seat's hand as far as it is open (HIDDEN where tokens are still missing)."""
        return [self.seat.opened.get(s, HIDDEN) for s in self.ledger.holdings[self.seat.me]]
