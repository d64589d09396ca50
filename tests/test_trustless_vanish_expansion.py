"""A Saboteur 2 seat that vanishes owing sealed tokens (docs/trustless.md §11): the cards it
handed over by swap-hand, or its role an inspector looks at, stay shut to their reader, since
the others stand in only for its public tokens. Through the real blind host (a real SQLite
file, a fake clock) and real seats: the new holder of such cards still moves (an unread card
can only be discarded face down), the game ends and its chain audits clean."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from processes import pbem
from test_trustless_expansion import eager
from test_trustless_vanish import Table, _audit

from engine.catalog import HIDDEN
from engine.moves import Move
from engine.rules import legal_moves
from engine.state import PLAYING, RoundState
from pbem.protocol.documents import Signed

SEATS = ("ann", "bob", "cat", "dan")


class Sealed(Table):
    """Eager Saboteur 2 bots; the first seat to owe its old hand's tokens sealed to the seat a
    swap-hand gave it to goes silent at once, before it sends them."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp, silent=set(), seats=SEATS, ruleset="expansion")
        self.owing: dict[str, list] = {}
        self.blind: list[tuple[str, str]] = []  # (seat, move) chosen with an unread card in hand
        for s in SEATS:
            self.seats[s].choose = self._watch(s, eager(s, f"sealed-{s}", self.seats[s]))

    def send(self, block: Signed) -> str:
        kind = super().send(block)
        self.sync()
        r = self.seats["ann"].table.round
        swap = getattr(block.doc, "step", None) == "move" and "swap-hand" in (block.doc.move or "")
        if swap and not self.silent and r is not None:
            for p in SEATS:
                owed = r.ledger.owed_by(p)
                sealed = {to: s for to, s in owed.items() if to != "all" and set(s) & set(r.ledger.holdings[to])}
                if sealed:
                    self.owing, self.silent = sealed, {p}
                    break
        return kind

    def _watch(self, seat: str, choose: Callable[[RoundState], Move]) -> Callable[[RoundState], Move]:
        def watched(v: RoundState) -> Move:
            """The first time a seat holds a card it cannot read, it discards that card (the one
            move the engine offers with it); later it plays on around it."""
            if v.phase != PLAYING or HIDDEN not in v.hands[seat]:
                return choose(v)
            moves = legal_moves(v)
            assert all(m.card != HIDDEN for m in moves)  # never played, never placed
            move = next(m for m in moves if m.cards == (HIDDEN,)) if not self.blind else choose(v)
            self.blind.append((seat, str(move)))
            return move
        return watched


@pytest.mark.slow
def test_a_seat_gone_owing_sealed_tokens_the_game_still_ends(tmp_path: Path) -> None:
    t = Sealed(tmp_path).join()
    t.run(rounds=3)
    assert t.owing, "no seat came to owe a swapped hand's tokens"
    (gone,) = t.silent
    audit = _audit(t)
    table = audit.table
    assert table.step() == "over" and len(table.ended) == 3 and list(table.gone) == [gone]
    for s in SEATS:
        if s != gone:
            assert t.seats[s].table.ended[-1].gold == table.ended[-1].gold
    # the new holder of the gone seat's cards moved with cards it could not read: the first time it
    # discarded one face down (the engine offers nothing else with it), then played on around them
    # (the cards may travel on by a later swap-hand: any seat but the gone one may hold them)
    assert t.blind and t.blind[0][0] in t.owing and all(seat != gone for seat, _ in t.blind)
    assert t.blind[0][1] == str(Move("discard", cards=(HIDDEN,)))
    run = pbem("audit", "--db", t.db, "--json", timeout=300)  # the real command on the host's file
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    out = json.loads(run.stdout)
    assert [g["seat"] for g in out["gone"]] == [gone], out["gone"]
