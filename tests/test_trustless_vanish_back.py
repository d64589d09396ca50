"""A seat declared gone that comes back (docs/trustless.md §11.2), through the real blind host
(a real SQLite file, a fake clock) and real seats: its own block is taken again for what it
still owes, the face-down discards the table took for it stay made, and it plays its
remaining turns itself, reading the cards it drew while it was gone."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest
from processes import pbem
from test_trustless_vanish import Table, _audit

from engine.catalog import HIDDEN
from engine.moves import Move
from engine.state import PLAYING, RoundState
from pbem.auto.turn import Turn, _trustless_turn
from pbem.errors import StaleMove
from pbem.protocol.documents import read_blocks, sign
from pbem.seat.home import join_path
from pbem.seat.trustless import join
from pbem.seat.trustless_client import TrustlessClient

SEATS = ("ann", "bob", "cat", "dan")


class Back(Table):
    """cat plays a while, goes silent until the table took one of its turns as a face-down
    discard, then answers again."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp, silent={"cat"})
        self.silent_from = 20
        self.blind: list[RoundState] = []  # cat's views, after it came back, with a card it could not read
        self.back_at = 0
        self.seats["cat"].choose = self._watch(self.seats["cat"].choose)

    def _watch(self, choose: Callable[[RoundState], Move]) -> Callable[[RoundState], Move]:
        def watched(v: RoundState) -> Move:
            if self.back_at and v.phase == PLAYING and (HIDDEN in v.hands["cat"] or v.roles["cat"] in (None, HIDDEN)):
                self.blind.append(v)
            return choose(v)
        return watched

    def sync(self) -> None:
        super().sync()
        table = self.seats["ann"].table
        if self.silent and table.vanished.discarded.get("cat"):
            self.silent = set()  # cat answers again
            self.back_at = self.seen


@pytest.mark.slow
def test_a_gone_seat_that_answers_again_plays_its_remaining_turns_itself(tmp_path: Path) -> None:
    t = Back(tmp_path).join()
    t.run(rounds=1)
    assert t.back_at, "cat was never declared gone"
    audit = _audit(t, check=False)  # its proofs: by `pbem audit` below
    table = audit.table
    assert len(table.ended) >= 1 and table.gone == {}
    (declared,) = audit.declared
    assert declared[1].seats == ["cat"]
    (back,) = table.vanished.returned["cat"]
    assert back > declared[0]
    discards = table.vanished.discarded["cat"]
    assert discards >= 1  # its face-down discards stay made
    # cat's first block after the declaration came back; then it moved itself, and the table took no more discards
    after = [(seq, doc) for seq, doc, _ in audit.log if seq >= back]
    assert after[0][1].seat == "cat" and after[0][0] == back
    cat_moves = [doc for seq, doc in after if doc.seat == "cat" and doc.step == "move"]
    assert cat_moves, "cat had no turn left after it came back"
    assert t.seats["ann"].table.vanished.discarded["cat"] == discards
    # it read every card it held at each of its turns: those drawn while it was gone too
    assert t.blind == []
    # the round, replayed on its opened cards, has cat's discards by their slots and its own moves after
    played = table.ended[0].played
    cat_texts = [x for s, x in played if s == "cat"]
    assert sum(1 for x in cat_texts if x.startswith("discard ")) >= discards
    for s in SEATS:
        assert t.seats[s].table.ended[0].gold == table.ended[0].gold
    run = pbem("audit", "--db", t.db, "--json", timeout=300)  # the real command on the host's store
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    (gone,) = json.loads(run.stdout)["gone"]
    assert (gone["seat"], gone["packet"], gone["discards"], gone["back"]) == ("cat", declared[0], discards, [back])


def _turn(t: Table, tmp: Path, seat: str, joins: dict[str, bytes]) -> Turn:
    """What `pbem turn FOLDER --as SEAT` does for `seat` (the seat's library path, the real host)."""
    home, out = tmp / f"home-{seat}", tmp / "packets"
    out.mkdir(exist_ok=True)
    path = join_path(home, t.inv.game, seat)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(joins[seat])  # the join it sent

    def packets() -> list[tuple[int, Path]]:
        files = []
        for seq, armored in t.host.packets(0):
            (out / f"{seq:06d}.pbem").write_text(armored)
            files.append((seq, out / f"{seq:06d}.pbem"))
        return files

    client = TrustlessClient(t.inv, t.ids[seat], home, packets, lambda _seq, data: t.send(read_blocks(data.decode())[0]))
    return _trustless_turn(client, "folder", "", home)


@pytest.mark.slow
def test_a_gone_seat_comes_back_only_with_what_the_table_can_take(tmp_path: Path) -> None:
    """A gone seat's block for a step that does not wait for it is refused with nothing stored;
    its block of tokens is taken, and the table waits for it again from then on."""
    t = Table(tmp_path, silent={"cat"}, seats=SEATS[:3])
    joins = {s: join(t.inv, t.ids[s], s).armored().encode() for s in t.names}
    for s in t.names:
        t.send(read_blocks(joins[s].decode())[0])
    t.silent_from = 4  # cat shuffles, then sends no deal tokens
    t.run(until=4)
    while "cat" not in t.seats["ann"].table.gone:
        t.run(until=t.seen + 1)
    cat = t.seats["cat"]
    block = cat.owed()
    assert block is not None and block.doc.step == "deal"  # it comes back with its deal tokens
    wrong = sign(msgspec.structs.replace(block.doc, step="tokens", signer=""), t.ids["cat"])
    before = t.host.packets(0)
    with pytest.raises(StaleMove):
        t.send(wrong)
    assert t.host.packets(0) == before and t.host.status()["absent"] == ["cat"]
    # `pbem turn` for cat (its library path, over the host's packets as files) sends it
    turn = _turn(t, tmp_path, "cat", joins)
    assert any(line.startswith("sent your") and "block for packet" in line for line in turn.said), turn.said
    t.sync()
    assert t.host.status()["absent"] == [] and cat.table.gone == {} and cat.table.vanished.returned == {"cat": [t.seen]}
    t.silent = set()
    while not any(doc.seat == "cat" and doc.step == "move" for _, doc, _ in cat.log):
        t.run(until=t.seen + 1)
    assert t.seats["ann"].table.vanished.discarded == {}  # back before its first turn: it moved itself


def test_a_block_made_while_a_seat_was_gone_is_taken_after_it_came_back(tmp_path: Path) -> None:
    """A seat's move and gone cat's block answer the same packet; the move carries the seat's
    shares of cat's tokens, made while cat was gone. cat's block comes first and brings it back:
    the move is still taken (its shares for cat passed over), not refused (which left its seat
    waiting, through a real folder, until it was declared late in turn), and the chain audits."""
    t = Table(tmp_path, silent={"cat"}, seats=SEATS[:3]).join()
    t.silent_from = 12
    while "cat" not in t.seats["ann"].table.gone:
        t.run(until=t.seen + 1)
    while True:
        t.sync()
        owed = [t.seats[s].owed() for s in ("ann", "bob")]
        rider = next((b for b in owed if b is not None and b.doc.step == "move"
                      and any(x.dealer == "cat" for x in b.doc.stand_in or [])), None)
        if rider is not None:
            break
        assert t.seats["ann"].table.step() != "over"
        t.run(until=t.seen + 1)
    back = t.seats["cat"].owed()
    assert back is not None and back.doc.seq == rider.doc.seq
    assert t.send(back) == "applied"
    t.send(rider)  # refused before: "bob's stand-in shares are for 'cat', whose tokens the table does not wait for"
    assert [doc.seat for _, doc, _ in _audit(t, check=False).log[-2:]] == ["cat", rider.doc.seat]
    t.silent = set()
    t.run(until=t.seen + 6)
    assert _audit(t).table.gone == {}
