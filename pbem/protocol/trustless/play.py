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

from engine.state import RoundState
from engine.views import HIDDEN
from pbem.errors import BadPacket
from pbem.protocol.trustless.table import Layout, Seat, TrustlessGame
from pbem.protocol.trustless.tokens import Slot


@dataclass
class Ledger:
    game: TrustlessGame
    round_no: int
    layout: Layout
    holdings: dict[str, list[Slot]]
    drawn: int = 0  # how many slots of the draw pile have been dealt
    owed: dict[str, list[tuple[str, Slot]]] = field(default_factory=dict)  # maker -> [(reader, slot)]
    public: dict[str, set[Slot]] = field(default_factory=dict)  # maker -> slots its token is out for

    @classmethod
    def new(cls, game: TrustlessGame, round_no: int) -> Ledger:
        layout = Layout.of(game, round_no)
        dealt = {m: {s for p in game.players if p != m for s in layout.private(p)} for m in game.players}
        return cls(game, round_no, layout, {p: list(s) for p, s in layout.hands.items()}, public=dealt)

    def _owe(self, slot: Slot, to: str) -> None:
        for maker in self.game.players:
            if maker != to and slot not in self.public.get(maker, set()):  # a public token serves every reader
                self.owed.setdefault(maker, []).append((to, slot))

    def draw(self, player: str) -> Slot:
        if self.drawn >= len(self.layout.deck):
            raise BadPacket("the draw pile is empty")
        slot = self.layout.deck[self.drawn]
        self.drawn += 1
        self.holdings[player].append(slot)
        self._owe(slot, player)
        return slot

    def play(self, player: str, slot: Slot) -> None:
        """`player` plays or discards the card in `slot` (it must hold it)."""
        if slot not in self.holdings[player]:
            raise BadPacket(f"{player} does not hold slot {slot[0]} #{slot[1]}")
        self.holdings[player].remove(slot)
        for maker, debts in self.owed.items():  # tokens nobody needs any more
            self.owed[maker] = [(to, s) for to, s in debts if s != slot]

    def peek(self, player: str, slot: Slot) -> None:
        """A map: the other seats owe `player` their tokens for a goal slot."""
        self._owe(slot, player)

    def record(self, events: list[dict[str, Any]]) -> list[Slot]:
        """Follow the engine's draw events, in order: the slots they took."""
        return [self.draw(str(e["player"])) for e in events if e.get("event") == "draw"]

    def owed_by(self, maker: str) -> list[Slot]:
        return list(dict.fromkeys(slot for _, slot in self.owed.get(maker, [])))  # one token per slot

    def paid(self, maker: str, slots: list[Slot]) -> None:
        """`maker` published its tokens for `slots` (each checked by every seat that read them)."""
        owed = self.owed_by(maker)
        for s in slots:
            if s not in owed:
                raise BadPacket(f"{maker} sends tokens for slot {s[0]} #{s[1]}, which it does not owe")
        self.owed[maker] = [(to, s) for to, s in self.owed.get(maker, []) if s not in slots]
        self.public.setdefault(maker, set()).update(slots)

    def waiting(self) -> dict[str, list[str]]:
        """Per seat, who still owes it tokens (what `pbem show` lists as cards waiting)."""
        out: dict[str, set[str]] = {}
        for maker, debts in self.owed.items():
            for to, _ in debts:
                out.setdefault(to, set()).add(maker)
        return {to: sorted(makers) for to, makers in out.items()}


def pay_debts(seat: Seat, ledger: Ledger) -> dict[str, Any] | None:
    """The public token bundle `seat` owes, to ride on its next message (None: it owes nothing)."""
    slots = ledger.owed_by(seat.me)
    if not slots:
        return None
    ledger.paid(seat.me, slots)
    return seat.bundle_for(slots)


class SlotDrawer:
    """A `Drawer` for one seat's view: its own draws are known once their tokens are in."""

    def __init__(self, seat: Seat, ledger: Ledger) -> None:
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
        """After `rules.apply`: give the drawn slots to their drawers in the ledger."""
        self._taken = 0
        return self.ledger.record(events)

    def hand(self) -> list[str]:
        """The seat's hand as far as it is open (HIDDEN where tokens are still missing)."""
        return [self.seat.opened.get(s, HIDDEN) for s in self.ledger.holdings[self.seat.me]]
