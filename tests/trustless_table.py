"""A whole trustless table in one process, for the tests: joins, the setup chain, the deal.

Every seat checks every message it is given, as a real client would; `log` keeps every
message as the bytes that would travel (canonical JSON), for the secrecy tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.state import RoundState
from pbem.protocol.crypto import Identity, canonical_json
from pbem.protocol.mental.elgamal import decrypt
from pbem.protocol.mental.group import random_scalar, seeded_scalars
from pbem.protocol.trustless import keys as K
from pbem.protocol.trustless import setup as S
from pbem.protocol.trustless.stacks import card_of, game_stacks
from pbem.protocol.trustless.table import Layout, TableSeat, TrustlessGame, deal_in_order


@dataclass
class Table:
    game: TrustlessGame
    seats: dict[str, TableSeat]
    secrets: dict[str, K.SeatKeys]
    identities: dict[str, Identity]
    log: list[bytes] = field(default_factory=list)

    def send(self, doc: Any) -> Any:
        self.log.append(canonical_json(doc))
        return doc

    def deal(self, round_no: int) -> None:
        """Every seat publishes its deal tokens (one parallel round); every other seat checks them."""
        bundles = [self.send(seat.deal_bundle(round_no)) for seat in self.seats.values()]
        for bundle in bundles:
            for p, seat in self.seats.items():
                if p != bundle["from"]:
                    seat.receive(bundle)

    def truth(self, round_no: int) -> RoundState:
        """The deal as it really is: every stack opened with every seat's secret (the oracle)."""
        orders = {}
        for s in self.game.stacks:
            cts = self.seats[self.game.players[0]].stacks[s.label]
            secret = sum(self.secrets[p].shares[s.round_no].secret for p in self.game.players)
            orders[s.label] = [card_of(decrypt(ct, secret), s) for ct in cts]
        return deal_in_order(self.game, round_no, orders)  # type: ignore[arg-type]

    def layout(self, round_no: int) -> Layout:
        return Layout.of(self.game, round_no)


def build(ruleset: str, n: int, game_id: str = "trust-0000abcd", seed: bytes | None = None) -> Table:
    """A table; with `seed`, the keys and shuffles (so the deal) are the same on every run."""
    rng = seeded_scalars(seed) if seed is not None else random_scalar
    players = tuple(f"p{i}" for i in range(n))
    stacks = tuple(game_stacks(ruleset, n))
    game = TrustlessGame(game_id, ruleset, players, frozenset(), stacks)
    identities = {p: Identity.generate(p) for p in players}
    secrets = {p: K.SeatKeys.new(rng) for p in players}
    table = Table(game, {}, secrets, identities)
    # joins: each seat publishes its shares; every seat checks every join
    joins = {p: table.send({"seat": p, "mental": secrets[p].public(game_id, p)}) for p in players}
    shares = {p: K.check_public(game_id, p, joins[p]["mental"]) for p in players}
    keys = K.joint_keys(shares)
    # setup: each seat in turn shuffles every stack; the next one checks before it shuffles
    current = S.start(list(stacks))
    for turn, p in enumerate(players):
        doc, mine = S.make_shuffle(game_id, p, turn, list(stacks), keys, current, rng)
        table.send({"seat": p, "shuffle": doc})
        checked = S.check_shuffle_doc(game_id, p, turn, list(stacks), keys, current, doc)
        assert [c.encode() for c in checked["deck@1"]] == [c.encode() for c in mine["deck@1"]]
        current = checked
    for p in players:
        table.seats[p] = TableSeat(game, p, identities[p], secrets[p], {q: identities[q].public for q in players},
                              shares, current)
    return table
