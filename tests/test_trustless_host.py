"""The blind host and its seats, in one process with a real SQLite file: each cheat is refused
at the message where it happens, and refusing it changes nothing stored.

A shuffle that replaces a card, a wrong deal token, a block out of turn or for the wrong
step, one answering a packet the host never sent, one signed by another seat's key, the same
block twice, a join without key shares or with a bad proof, and a host that forks the chain.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest
from processes import one_error_line

from pbem.errors import BadPacket, BadSignature, StaleMove
from pbem.host import blind
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Join, Packet, Signed, read_blocks, sign
from pbem.protocol.mental.elgamal import Ciphertext
from pbem.protocol.mental.proofs import BadProof
from pbem.protocol.shapes import b64
from pbem.protocol.trustless import messages as M
from pbem.protocol.trustless.keys import unb64
from pbem.seat.trustless import TrustlessSeat, join
from pbem.ui.words import render

SEATS = ("ann", "bob", "cat")


class Table:
    def __init__(self, tmp: Path, referee: Identity | None = None) -> None:
        self.db = tmp / "saves" / "t.db"
        self.ids = {n: Identity.generate(n) for n in SEATS}
        self.ids["referee"] = referee or Identity.generate("referee")
        self.inv = blind.create_game(self.db, "t", self.ids["referee"], "classic",
                                     [(s, self.ids[s].public) for s in SEATS], [])
        self.host = blind.BlindHost(self.db, self.ids["referee"])
        self.seats = {s: TrustlessSeat(self.inv, self.ids[s], s) for s in SEATS}

    @classmethod
    def copy(cls, other: Table, tmp: Path) -> Table:
        """A copy of `other` (its host closed) in `tmp`: its store's files, a host on them, and
        seats made anew with the same keys that follow its packets, trusting the host's checks
        of them (a seat's keys and table come from its key and the chain alone)."""
        t = cls.__new__(cls)
        t.db = tmp / "saves" / "t.db"
        shutil.copytree(other.db.parent, t.db.parent)
        t.ids, t.inv = other.ids, other.inv
        t.host = blind.BlindHost(t.db, t.ids["referee"])
        t.seats = {s: TrustlessSeat(t.inv, t.ids[s], s) for s in SEATS}
        t.trusting(True).sync()
        return t.trusting(False)

    def send(self, block: Signed) -> str:
        return self.host.accept(read_blocks(block.armored())[0]).kind

    def sync(self) -> None:
        for _, armored in self.host.packets(0):
            packet = read_blocks(armored)[0].expect(Packet)
            for s in self.seats.values():
                s.follow(packet)

    def joined(self) -> Table:
        for s in SEATS:
            self.send(join(self.inv, self.ids[s], s))
        self.sync()
        return self

    def trusting(self, yes: bool) -> Table:
        """Whether the seats follow the chain without checking its proofs again: the host checked
        each block's as it came in, and a test of the host's refusals needs no second check."""
        for s in self.seats.values():
            s.table.check_proofs = not yes
        return self

    def db_bytes(self) -> bytes:
        return b"".join(p.read_bytes() for p in self.db.parent.iterdir() if p.is_file())


def _unchanged(table: Table, fn) -> Exception:
    before = table.host.packets(0)
    with pytest.raises(Exception) as info:
        fn()
    assert table.host.packets(0) == before
    return info.value


def test_joins_need_checked_key_shares_and_the_seats_own_key(tmp_path: Path) -> None:
    t = Table(tmp_path)
    plain = sign(Join(game=t.inv.game, seat="ann", invitation=t.inv.hash, contribution="A" * 43 + "="), t.ids["ann"])
    assert isinstance(_unchanged(t, lambda: t.send(plain)), BadPacket)
    good = join(t.inv, t.ids["ann"], "ann")
    again = join(t.inv, t.ids["ann"], "ann")  # derived: the same keys and proofs every time (the dealing's
    assert again.doc.mental == good.doc.mental  # boxes are sealed afresh; the key home keeps the join it sent)
    shares = list(good.doc.mental)
    shares[1], shares[2] = msgspec.structs.replace(shares[1], proof=shares[2].proof), shares[2]
    forged = sign(msgspec.structs.replace(good.doc, mental=shares, signer=""), t.ids["ann"])
    assert isinstance(_unchanged(t, lambda: t.send(forged)), BadProof)
    stolen = sign(msgspec.structs.replace(good.doc, signer=""), t.ids["bob"])
    assert isinstance(_unchanged(t, lambda: t.send(stolen)), BadSignature)
    assert t.send(good) == "joined" and t.send(good) == "duplicate"


@pytest.mark.slow
def test_every_cheat_is_refused_at_its_message(tmp_path: Path) -> None:
    t = Table(tmp_path).joined().trusting(True)
    ann, bob = t.seats["ann"], t.seats["bob"]
    # out of turn: bob shuffles first
    early = M.message(t.ids["bob"], t.inv.game, "bob", 1, bob.head[1], "deal",
                      bundles=[{"from": "bob", "to": "all", "slots": [["deck@1", 0]], "tokens": b64(bytes(96))}])
    assert isinstance(_unchanged(t, lambda: t.send(early)), StaleMove)
    # a shuffle that replaces one card: its proof fails at the host
    block = ann.owed()
    assert block is not None and block.doc.step == "shuffle"
    doc = msgspec.to_builtins(block.doc.shuffle)
    raw = bytearray(unb64(doc["stacks"]["deck@1"]["cards"], "cards"))
    other = Ciphertext.decode(bytes(raw[64:128]), "x")
    raw[0:64] = other.encode()  # the first card replaced by a copy of the second
    doc["stacks"]["deck@1"]["cards"] = b64(bytes(raw))
    bad = M.message(t.ids["ann"], t.inv.game, "ann", 1, ann.head[1], "shuffle", shuffle=doc)
    assert isinstance(_unchanged(t, lambda: t.send(bad)), BadProof)
    # one answering a packet this host never sent
    stray = M.message(t.ids["ann"], t.inv.game, "ann", 1, "0" * 64, "shuffle", shuffle=msgspec.to_builtins(block.doc.shuffle))
    assert isinstance(_unchanged(t, lambda: t.send(stray)), BadPacket)
    # the honest shuffle goes through, once
    assert t.send(block) == "applied" and t.send(block) == "duplicate"
    t.sync()
    # bob's shuffle, then cat's, then a wrong deal token from ann
    for s in ("bob", "cat"):
        t.send(t.seats[s].owed())
        t.sync()
    deal = ann.owed()
    assert deal is not None and deal.doc.step == "deal"
    bundle = msgspec.to_builtins(deal.doc.tokens[0])
    raw = bytearray(unb64(bundle["tokens"], "tokens"))
    raw[96:192], raw[192:288] = raw[192:288], raw[96:192]  # two tokens swapped between slots
    bundle["tokens"] = b64(bytes(raw))
    wrong = M.message(t.ids["ann"], t.inv.game, "ann", deal.doc.seq, deal.doc.packet, "deal", bundles=[bundle])
    assert isinstance(_unchanged(t, lambda: t.send(wrong)), BadProof)
    # a shuffle sent again now is for a step the table has left
    assert isinstance(_unchanged(t, lambda: t.send(bad)), (StaleMove, BadPacket))
    for s in SEATS:
        t.send(t.seats[s].owed())
    t.sync()
    assert all(None not in s.hand()[1] for s in t.seats.values())
    # the host's database holds no secret: no seat's key share appears in it
    data = t.db_bytes()
    for s in t.seats.values():
        for secret in s.keys.secret_hex().values():
            assert secret.encode() not in data and bytes.fromhex(secret) not in data


def test_a_host_that_forks_the_chain_is_caught_by_the_seat(tmp_path: Path) -> None:
    t = Table(tmp_path).joined()
    first = read_blocks(t.host.packets(0)[0][1])[0].expect(Packet)
    fork = sign(msgspec.structs.replace(first.doc, waiting=msgspec.structs.replace(first.doc.waiting, seats=["bob"]),
                                        signer=""), t.ids["referee"])
    fresh = TrustlessSeat(t.inv, t.ids["ann"], "ann")
    fresh.follow(fork)  # a seat that was shown the fork first follows it ...
    t.send(t.seats["ann"].owed())
    second = read_blocks(t.host.packets(1)[0][1])[0].expect(Packet)
    with pytest.raises(BadPacket, match="does not follow"):  # ... and refuses the real chain's next packet
        fresh.follow(second)
    impostor = sign(msgspec.structs.replace(second.doc, signer=""), t.ids["bob"])
    with pytest.raises(BadSignature):
        TrustlessSeat(t.inv, t.ids["cat"], "cat").follow(impostor)


def test_the_manual_host_commands_serve_a_trustless_game(tmp_path: Path, here) -> None:
    """`pbem game new --trustless --deadline`, `pbem apply` of the joins, `pbem status`, `pbem show`
    of packet 1 from the host's out/ folder; a timeout policy a blind host cannot follow (bot), and the
    host commands it cannot do, are refused in one line. (The first refusal as a process of its own,
    the second through the command line's entry in this process.)"""
    import json

    from folder_games import make_homes
    from processes import pbem

    from pbem.seat import keys

    homes = make_homes(tmp_path, ["referee", *SEATS])
    pubs = {s: keys.load_identity(homes[s], s, None).public.encode() for s in SEATS}
    db = tmp_path / "saves" / "t.db"
    players = [a for s in SEATS for a in ("--player", f"{s}={pubs[s]}")]
    bad = pbem("game", "new", "t", "--host", "referee", *players, "--db", db, "--trustless", "--deadline", "2h",
               "--on-timeout", "bot", home=homes["referee"], timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("error: a trustless game cannot take --on-timeout bot")
    assert "hint: use --on-timeout discard" in bad.stderr and len(bad.stderr.splitlines()) == 2
    assert "Traceback" not in bad.stderr and not db.exists()
    absent = here("game", "new", "t", "--host", "referee", *players, "--db", db, "--trustless", "--deadline", "2h",
                  "--absent-after", "3", home=homes["referee"])
    assert absent.returncode == 2 and absent.stderr.startswith("error: --absent-after does not apply to a trustless")
    assert "Traceback" not in absent.stderr and not db.exists()
    here("game", "new", "t", "--host", "referee", *players, "--db", db, "--trustless", "--deadline", "2h", "-o",
         tmp_path / "invitation.pbem", home=homes["referee"], ok=True)
    from pbem.errors import UsageError

    paused = here("game", "pause", "t", "--db", db, home=homes["referee"])
    one_error_line(paused, UsageError.exit_code, "is trustless: its host cannot pause")
    joins = []
    for s in SEATS:
        out = tmp_path / f"join-{s}.pbem"
        here("join", tmp_path / "invitation.pbem", "--as", s, "-o", out, home=homes[s], ok=True)
        joins.append(out)
    here("apply", "t", *joins, "--db", db, "--out", tmp_path / "out", home=homes["referee"], ok=True)
    st = json.loads(here("status", "t", "--db", db, "--json", home=homes["referee"], ok=True).stdout)
    due = st["waiting"].pop("due")  # the deadline of ann's shuffle, 2 h from packet 1, signed in it
    assert st["trustless"] and st["seq"] == 1 and st["waiting"] == {"step": "shuffle", "seats": ["ann"]}
    assert st["timing"]["deadline"] == 7200 and st["timing"]["on_timeout"] == "wait"
    said = here("status", "t", "--db", db, home=homes["referee"], ok=True).stdout
    assert "packet 1" in said and "the table waits for the shuffle step from ann; due " in said, said
    shown = json.loads(here("show", tmp_path / "out" / "packet-000001.pbem", "--as", "bob", "--json", home=homes["bob"], ok=True).stdout)
    assert shown["waiting"] == {"step": "shuffle", "seats": ["ann"], "due": due} and shown["role"] is None
    assert len(shown["cards_waiting"]) == 7  # its role and six cards, every one still shut
    # file by file: `pbem move PACKET` writes what the table waits for from you (ann's shuffle),
    # refuses a move out of turn, and says so when it waits for nothing from you
    first = tmp_path / "out" / "packet-000001.pbem"
    assert "the table waits for your shuffle: pbem move" in here("show", first, "--as", "ann", home=homes["ann"], ok=True).stdout
    shuffle = tmp_path / "shuffle-ann-000001.pbem"
    wrote = here("move", first, "--as", "ann", "-o", shuffle, home=homes["ann"], ok=True)
    assert f"shuffle file: {shuffle} (send it to the host)" in wrote.stdout and shuffle.is_file()
    data = shuffle.read_bytes()
    here("move", first, "--as", "ann", "-o", shuffle, home=homes["ann"], ok=True)
    assert shuffle.read_bytes() == data  # the same block again, never a second shuffle
    early = here("move", first, "discard 1", "--as", "ann", home=homes["ann"])
    one_error_line(early, StaleMove.exit_code, "it is not your turn")  # exit 5
    idle = here("move", first, "--as", "bob", home=homes["bob"])
    one_error_line(idle, StaleMove.exit_code, "waits for nothing from you")
    for refused in (["resign", first, "--as", "bob"], ["mail-move", first, "discard 1", "--as", "bob"]):
        said = here(*refused, home=homes["bob"])  # nobody answers for a seat; mail-move takes the game
        one_error_line(said, UsageError.exit_code, "trustless")
    here("apply", "t", shuffle, "--db", db, "--out", tmp_path / "out", home=homes["referee"], ok=True)
    second = json.loads(here("show", tmp_path / "out" / "packet-000002.pbem", "--as", "bob", "--json", home=homes["bob"], ok=True).stdout)
    assert second["seq"] == 2 and second["waiting"]["seats"] == ["bob"]


@pytest.fixture(scope="module")
def dealt_once(tmp_path_factory: pytest.TempPathFactory) -> Table:
    """Every seat shuffles and sends its deal tokens: round 1 waits for ann's first move (the seats
    follow the deal trusting the host's checks). Made once (the shuffles and their proofs take
    most of a second); each test plays on a copy of it (`_dealt`)."""
    t = Table(tmp_path_factory.mktemp("dealt")).joined().trusting(True)
    while (w := t.host.table()[0].waiting()).step != "move":
        for s in w.seats:
            t.send(t.seats[s].owed())
        t.sync()
    t.host.close()
    return t


def _dealt(once: Table, tmp: Path) -> Table:
    """A copy of the dealt table in `tmp`: from the first move on, its seats check every proof."""
    return Table.copy(once, tmp)


@pytest.mark.slow
def test_every_cheat_in_play_is_refused_at_its_move(tmp_path: Path, dealt_once: Table) -> None:
    from engine.catalog import card_kind
    from engine.errors import IllegalMove
    from engine.rules import legal_moves

    t = _dealt(dealt_once, tmp_path)
    ann, bob = t.seats["ann"], t.seats["bob"]
    r = ann.table.round
    mine, theirs = r.ledger.holdings["ann"], r.ledger.holdings["bob"]
    seq, h = ann.head
    honest = next(m for m in legal_moves(ann.view()) if m.verb == "play")
    good = ann.move_block(honest)
    slot = good.doc.play.slot.slot

    def play(slot, text, opening=None, bundles=None, seat="ann"):
        opening = opening or t.seats[seat].seat.open_publicly(slot) if slot in t.seats[seat].seat.opened else opening
        return M.message(t.ids[seat], t.inv.game, seat, seq, h, "move", move=text, play=(slot, opening), bundles=bundles)

    # a card that is not in the player's hand: bob's slot, opened with ann's (public) token for it
    stolen = play(theirs[0], honest._replace(card="x").__str__(), opening=ann.seat.bundle_for([theirs[0]]))
    assert "not in its hand" in str(_unchanged(t, lambda: t.send(stolen)))
    # the move names another card than the one its slot opens to
    other = next(c for s, c in ann.seat.opened.items() if s in mine and s != slot and
                 card_kind(c).kind != card_kind(honest.card).kind)
    liar = play(slot, str(honest._replace(card=other)))
    assert isinstance(_unchanged(t, lambda: t.send(liar)), IllegalMove)  # the view's hand holds only the opened card
    # a wrong opening token: ann's token for another of its slots, put under this slot
    forged = dict(ann.seat.bundle_for([mine[-1] if mine[-1] != slot else mine[0]]), slots=[list(slot)])
    assert isinstance(_unchanged(t, lambda: t.send(play(slot, str(honest), opening=forged))), BadProof)
    # tokens that ann does not owe, riding on its move
    unowed = play(slot, str(honest), bundles=[ann.seat.bundle_for([r.ledger.layout.deck[5]])])
    assert "does not owe" in str(_unchanged(t, lambda: t.send(unowed)))
    # a move against the rules: the path card placed far from the maze
    far = play(slot, str(honest._replace(at=(5, 5))) if card_kind(honest.card).category == "path"
               else f"play {honest.card} at 5,5")
    assert isinstance(_unchanged(t, lambda: t.send(far)), IllegalMove)
    # out of turn: bob plays while ann is to move
    bob_slot = next(s for s in theirs if s in bob.seat.opened)
    early = M.message(t.ids["bob"], t.inv.game, "bob", seq, h, "move", move=f"play {bob.seat.opened[bob_slot]} at 1,0",
                      play=(bob_slot, bob.seat.open_publicly(bob_slot)))
    assert isinstance(_unchanged(t, lambda: t.send(early)), StaleMove)
    # a face-down discard of a slot ann does not hold, and one of a slot named twice
    seen = M.message(t.ids["ann"], t.inv.game, "ann", seq, h, "move", move="discard 1 card", discard=[theirs[0]])
    assert "not in its hand" in str(_unchanged(t, lambda: t.send(seen)))
    # the honest move goes through; every seat and the host keep the same public position
    assert t.send(good) == "applied"
    t.sync()
    host = t.host.table()[0].round
    for s in t.seats.values():
        assert s.table.round.state.board.cells == host.state.board.cells
        assert s.table.round.ledger.holdings == host.ledger.holdings
    assert host.record == [str(honest)] and host.mover == "bob"
    # the card ann played is open to all: the host opened it from public tokens only
    assert t.host.table()[0].opened[slot] == honest.card


@pytest.mark.slow
def test_a_seat_with_no_move_sends_the_tokens_the_mover_waits_for(tmp_path: Path, dealt_once: Table) -> None:
    """The `tokens` step: when the player to move waits for tokens from seats that have no move
    to carry them, the table waits for a token-only message from each. Here ann is to move and
    the others owe her their tokens for the top goal, as after a map of hers (the same ledger
    fact applied to every copy of the table: the host's is rebuilt from the chain, so it is
    followed in memory here, seat by seat, with every token checked)."""
    t = _dealt(dealt_once, tmp_path)
    tables = [s.table for s in t.seats.values()]
    for table in tables:
        table.round.ledger.follow([{"event": "map", "player": "ann", "goal": "top"}])
    assert {tb.waiting().step for tb in tables} == {"tokens"} and tables[0].waiting().seats == ["bob", "cat"]
    head = t.seats["ann"].head
    for s in ("bob", "cat"):
        block = t.seats[s].owed()
        assert block is not None and block.doc.step == "tokens" and block.doc.move is None
        assert [tok.to for tok in block.doc.tokens] == ["all"]
        for seat in t.seats.values():
            seat.table.take(read_blocks(block.armored())[0].doc, head[0])
            seat._learn(block.doc, True)
    assert {tb.waiting().step for tb in tables} == {"move"}
    top = tables[0].round.ledger.layout.goals["top"]
    assert top in t.seats["ann"].seat.opened and top not in t.seats["bob"].seat.opened
    # nobody else can open it: ann's own token for it is still hers alone
    with pytest.raises(BadPacket, match="no public token from ann"):
        tables[1].open_public(top)


@pytest.mark.slow
def test_the_blind_host_reminds_and_names_a_late_seat_at_every_step(tmp_path: Path) -> None:
    """Deadlines on the blind host's clock (a fake one, as in tests/test_deadlines.py): each
    packet signs when the seats it waits for are due; a step's clock starts with the packet that
    opens it and runs on while a parallel step's seats answer one by one; a reminder goes to each
    seat still waited for, a late notice names each one to everyone once;
    a restarted host says nothing twice; and nothing is ever played or sent for a seat (there
    is no timeout move)."""
    from datetime import timedelta

    from pbem.host.clock import FakeClock, parse_time
    from pbem.host.deadlines import Timing
    from pbem.protocol.documents import Notice

    t = Table(tmp_path)
    t.host.clock = clock = FakeClock()
    t.host.set_timing(Timing(deadline=3600, reminders=["50%"], absent_after=2))
    t.joined().trusting(True)  # the seats follow the deal for its deadlines, not to check it again

    def told() -> list[tuple[str, str | None, str | None]]:
        docs = [read_blocks(n.armored)[0].expect(Notice).doc for n in t.host.notices()]
        assert all(d.game == t.inv.game for d in docs)
        return [(d.notice, d.seat, d.step) for d in docs]

    def due(seq: int) -> str | None:
        return read_blocks(t.host.packet(seq))[0].expect(Packet).doc.waiting.due

    assert due(1) == "2026-12-01T13:00:00+00:00" and t.seats["bob"].due == due(1)  # followed by every seat
    assert t.host.tick() == []
    assert t.host.next_tick() == parse_time("2026-12-01T12:30:00+00:00")  # when a host that waits for mail wakes
    clock.advance(1800)
    assert [o.kind for o in t.host.tick()] == ["notice"] and t.host.tick() == []
    assert t.host.next_tick() == parse_time(due(1))
    clock.advance(1800)
    late = t.host.tick()
    assert t.host.next_tick() is None  # no timeout move on a trustless table
    assert told() == [("reminder", "ann", "shuffle"), ("late", "ann", "shuffle")]
    said = render(late[0].message, "en")  # the host's outcome is a message value; the edge says it
    assert "ann is late with their shuffle" in said and "nobody else can send it" in said
    packets = t.host.packets(0)
    assert blind.BlindHost(t.db, t.ids["referee"], clock).tick() == []  # a restarted host says nothing twice
    assert t.host.packets(0) == packets  # and nothing was played or sent for ann
    for s in SEATS:  # the shuffles: each opens a step, and a clock of its own
        t.send(t.seats[s].owed())
        t.sync()
        clock.advance(60)
    assert [due(n) for n in (2, 3, 4)] == ["2026-12-01T14:00:00+00:00", "2026-12-01T14:01:00+00:00",
                                           "2026-12-01T14:02:00+00:00"]
    t.send(t.seats["ann"].owed())  # one deal bundle of three: the step's clock runs on
    t.sync()
    assert due(5) == due(4) and t.seats["cat"].due == due(4)
    clock.set(parse_time(due(4)) - timedelta(minutes=20))  # past half-way: a reminder to each seat still owing
    t.host.tick()
    clock.advance(1200)
    t.host.tick()
    assert told()[2:] == [("reminder", "bob", "deal"), ("reminder", "cat", "deal"), ("late", "bob", "deal"),
                          ("late", "cat", "deal")]
    t.send(t.seats["bob"].owed())
    t.sync()
    clock.advance(7200)
    assert t.host.tick() == []  # one late notice per step and seat
    t.send(t.seats["cat"].owed())
    t.sync()
    assert t.host.table()[0].step() == "move"
    clock.advance(7200)  # every reminder time and the deadline passed at once: the late notice only
    t.host.tick()
    mover = t.host.table()[0].waiting().seats[0]
    assert told()[-1] == ("late", mover, "move") and len(told()) == 7
    assert "absent" not in {k for k, _, _ in told()}  # a trustless seat is waited for, never played for


def test_a_blind_games_file_names_its_host_key_to_the_probe(tmp_path: Path) -> None:
    """pbem.host.paths.probe: what a host command begins unlocking before the store opens."""
    from pbem.host.paths import probe

    table = Table(tmp_path)
    assert probe(table.db, "t") == probe(table.db) == (True, "referee")


def _statements(host: blind.BlindHost, step) -> list[str]:
    """The statements `step()` runs."""
    from sqlalchemy import event

    said: list[str] = []

    def record(conn, cursor, statement, *rest) -> None:
        said.append(statement)

    event.listen(host.store.engine, "before_cursor_execute", record)
    try:
        step()
    finally:
        event.remove(host.store.engine, "before_cursor_execute", record)
    return said


def test_a_blind_host_reads_its_settings_once_per_commit_and_sees_another_processs(tmp_path: Path) -> None:
    """A folder host's step (publish, take a seat's block, publish it, tick) reads the game's
    settings and clock again only after a commit changed the store: twice (after the packet,
    after its delivery mark), not at each of its seven reads; and notices and talk only when
    some are newer than the channel's marks. A setting another process
    changes (`pbem game config`, a second host) is seen at the next read, and a delivery
    mark written after it keeps it."""
    from processes import pbem

    from pbem.auto.host_runner import FolderHost
    from pbem.host.clock import FakeClock
    from pbem.host.deadlines import Timing
    from pbem.seat import keys

    home = tmp_path / "home"
    t = Table(tmp_path, keys.create_identity(home, "referee", None)).joined().trusting(True)
    t.host.clock = FakeClock()
    runner = FolderHost(t.host, tmp_path / "folder", log=lambda line: None)
    for seat in ("ann", "bob"):
        runner.step()
        t.sync()
        (runner.folder.inbox_dir / f"{seat}.pbem").write_text(t.seats[seat].owed().armored())
        said = _statements(t.host, runner.step)
        assert len([s for s in said if "trustless_games.settings" in s or "trustless_games.clock" in s]) == 2  # 7
        assert len(said) == 21  # 25 when each publishing read the notices and talk, owed or not
    assert t.host.head()[0] == 3 and t.host.next_tick() is None
    # another process sets a deadline: the running host sees it at once
    pbem("game", "config", "t", "--db", t.db, "--deadline", "1h", home=home, ok=True)
    assert t.host.next_tick() is not None and t.host.settings().timing == Timing(deadline=3600)
    # a second host on the store gives the host an address; a mark the first writes keeps it
    blind.BlindHost(t.db, t.ids["referee"]).set_email("host", "host@example.org")
    t.host.mark_delivered("elsewhere", 3)
    assert t.host.settings().emails == {"host": "host@example.org"} and t.host.delivered("elsewhere") == 3
    t.host.set_timing(Timing())
    assert t.host.next_tick() is None
