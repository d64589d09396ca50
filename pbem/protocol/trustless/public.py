"""The public table of a trustless game: what the blind host and every seat know alike.

It follows the relayed blocks in chain order (the joins, then the seats' mental blocks),
checks each against the step the table is at and every proof in it, and says what the table
waits for next. It holds no secret: the host keeps one to order the chain, each seat keeps
one beside its own `table.Seat`, and both refuse the same blocks for the same reasons.

Steps (docs/trustless.md §5): `join` (every seat, in parallel), `shuffle` (each seat in seat
order), `deal` (every seat's tokens for the others' roles and hands, in parallel), then
`move`. A block answers a packet (`seq`, `packet`): for the step it belongs to, that packet
must be the one that opened the step or a later one, so no block made for an earlier state
of the table is taken for a later one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from pbem.errors import BadPacket, Conflict, StaleMove
from pbem.protocol.documents import Invitation, Join, Mental, Waiting
from pbem.protocol.mental.group import Point
from pbem.protocol.trustless import keys as K
from pbem.protocol.trustless import messages as M
from pbem.protocol.trustless import setup as S
from pbem.protocol.trustless.stacks import game_stacks
from pbem.protocol.trustless.table import Layout, TrustlessGame
from pbem.protocol.trustless.tokens import ALL, bundle_slots, read_bundle


def game_of(inv: Invitation) -> TrustlessGame:
    players = inv.seat_names()
    options = frozenset(inv.options)
    return TrustlessGame(inv.game, inv.ruleset, players, options, tuple(game_stacks(inv.ruleset, len(players), options)))


@dataclass
class PublicTable:
    game: TrustlessGame
    joins: dict[str, Join] = field(default_factory=dict)
    shares: dict[str, dict[int, Point]] = field(default_factory=dict)
    stacks: S.Stacks = field(default_factory=dict)
    shuffled: int = 0  # seats that have shuffled, in seat order
    dealt: list[str] = field(default_factory=list)  # seats whose round-1 deal tokens are in
    bundles: list[dict[str, Any]] = field(default_factory=list)  # every token bundle, in chain order
    opened_at: int = 1  # the packet that opened the current step
    check_proofs: bool = True

    @classmethod
    def of(cls, inv: Invitation, *, check_proofs: bool = True) -> PublicTable:
        game = game_of(inv)
        return cls(game, stacks=S.start(list(game.stacks)), check_proofs=check_proofs)

    # --- where the table is ------------------------------------------------------------------

    @property
    def players(self) -> tuple[str, ...]:
        return self.game.players

    def step(self) -> str:
        if len(self.joins) < len(self.players):
            return "join"
        if self.shuffled < len(self.players):
            return "shuffle"
        if len(self.dealt) < len(self.players):
            return "deal"
        return "move"

    def waiting(self) -> Waiting:
        """The step the table waits for and the seats that owe it."""
        step = self.step()
        if step == "join":
            return Waiting(step=step, seats=[p for p in self.players if p not in self.joins])
        if step == "shuffle":
            return Waiting(step=step, seats=[self.players[self.shuffled]])
        if step == "deal":
            return Waiting(step=step, seats=[p for p in self.players if p not in self.dealt])
        return Waiting(step=step, seats=[self.players[0]])

    # --- taking blocks -------------------------------------------------------------------------

    def take_join(self, join: Join) -> None:
        if join.seat not in self.players:
            raise BadPacket(f"no seat {join.seat!r} in game {self.game.id}")
        if join.seat in self.joins:
            raise Conflict(f"{join.seat} has already joined")
        if join.mental is None:
            raise BadPacket(f"{join.seat}'s join carries no key shares: game {self.game.id} is trustless",
                            hint="join with a pbem that plays trustless games")
        self.shares[join.seat] = M.join_shares(join)
        self.joins[join.seat] = join

    def take(self, doc: Mental, head: int) -> str:
        """Check a mental block against the table at packet `head` (hash checked by the caller)
        and follow it; returns a line saying what it did."""
        step = self.step()
        if doc.seq > head:
            raise StaleMove(f"{doc.seat}'s {doc.step} answers packet {doc.seq}, which is not out yet")
        if doc.seq < self.opened_at:
            raise StaleMove(f"{doc.seat}'s {doc.step} answers packet {doc.seq}, from before the {step} step "
                            f"(opened by packet {self.opened_at})")
        if doc.step != step:
            raise StaleMove(f"{doc.seat} sends a {doc.step} message while the table waits for the {step} step")
        if doc.seat not in self.waiting().seats:
            raise StaleMove(f"{doc.seat} sends a {step} message, but the table waits for "
                            f"{', '.join(self.waiting().seats)}")
        if step == "shuffle":
            return self._shuffle(doc, head)
        if step == "deal":
            return self._deal(doc, head)
        raise BadPacket(f"{doc.seat}'s {doc.step}: play after the deal is not built yet (docs/trustless.md §9)")

    def _shuffle(self, doc: Mental, head: int) -> str:
        assert doc.shuffle is not None
        turn = self.shuffled
        body = msgspec.to_builtins(doc.shuffle)
        if self.check_proofs:
            self.stacks = S.check_shuffle_doc(self.game.id, doc.seat, turn, list(self.game.stacks),
                                              K.joint_keys(self.shares), self.stacks, body)
        else:  # a replay of a chain whose proofs were checked when it was made
            self.stacks = {s.label: S.decode_stack(body["stacks"][s.label]["cards"], len(s.cards), s.label)
                           for s in self.game.stacks}
        self.shuffled += 1
        self.opened_at = head + 1
        left = len(self.players) - self.shuffled
        return f"{doc.seat} shuffled every stack ({'proofs checked; ' if self.check_proofs else ''}" + \
            (f"{left} to go)" if left else "the deck is ready: every seat sends its deal tokens)")

    def _deal(self, doc: Mental, head: int) -> str:
        tokens = doc.tokens or []
        layout = Layout.of(self.game, 1)
        want = [s for p in self.players if p != doc.seat for s in layout.private(p)]
        if len(tokens) != 1 or tokens[0].to != ALL or bundle_slots(M.bundle(tokens[0])) != want:
            raise BadPacket(f"{doc.seat}'s deal tokens are not one public bundle for every other seat's role and hand")
        bundle = M.bundle(tokens[0])
        if self.check_proofs:
            shares = {s.label: self.shares[doc.seat][s.round_no] for s in self.game.stacks}
            cts = {(label, i): ct for label, cts in self.stacks.items() for i, ct in enumerate(cts)}
            read_bundle(self.game.id, bundle, shares, cts)
        self.bundles.append(bundle)
        self.dealt.append(doc.seat)
        if len(self.dealt) == len(self.players):
            self.opened_at = head + 1
            return f"{doc.seat} sent its deal tokens; round 1 is dealt, {self.players[0]} to move"
        return f"{doc.seat} sent its deal tokens; waiting for {', '.join(self.waiting().seats)}"
