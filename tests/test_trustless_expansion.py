"""Saboteur 2 played trustlessly through the blind host (a real SQLite file), every seat following
every packet: swap-hand, swap-hat, inspect, the discard-2-to-remove, thefts and their steals,
the expansion's payout from the opened round. Bots that play those cards whenever they may,
so each rule comes up in a short game.

Secrecy is checked in the bytes: from every packet the host stored and the keys of every seat
but the new hat's wearer, a swapped-in hat does not open (with the wearer's key it does); a
dwarf card left aside is never given a token before the round's end. A wrong token for a
swap-hat's new hat, and a thief robbing itself, are refused by the host with nothing stored.
"""

from __future__ import annotations

import base64
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from blind_game import BlindGame
from processes import pbem

from engine.bots import make_bot
from engine.catalog import card_kind
from engine.errors import MoveError
from engine.moves import Move
from engine.rules import legal_moves
from engine.state import PLAYING, RoundState
from pbem.errors import BadPacket
from pbem.protocol.documents import Mental, Packet, parse_relayed, read_blocks
from pbem.protocol.mental.elgamal import open_with
from pbem.protocol.mental.group import Point
from pbem.protocol.mental.proofs import Token
from pbem.protocol.trustless import messages as M
from pbem.protocol.trustless.stacks import card_of
from pbem.protocol.trustless.tokens import TOKEN_BYTES, Slot, make_bundle
from pbem.seat.trustless import TrustlessSeat

EAGER = ("swap-hand", "swap-hat", "inspect", "theft", "break")


def eager(seat: str, seed: str, ts: TrustlessSeat | None = None):
    """A bot that hardly digs: it plays swap-hand, swap-hat, inspect, theft and break whenever it
    may, then (knowing its seat `ts`) a card handed to it by swap-hand, then a discard that removes
    a card in front of it, else passes; so the round runs through the whole deck and every rule
    comes up. A smart bot chooses whom to rob."""
    bot = make_bot("smart", seat, seed)

    def choose(v: RoundState) -> Move:
        if v.phase != PLAYING:
            return bot.choose(v)
        moves = legal_moves(v)
        for m in moves:
            if m.verb == "play" and m.card and card_kind(m.card).action in EAGER:
                return m
        if ts is not None and ts.seat is not None and ts.table.round is not None:
            handed = {ts.seat.opened.get(s) for s in ts.table.round.ledger.holdings[seat] if s in ts.seat.proven}
            for m in moves:
                if m.verb == "play" and m.card in handed:
                    return m
        return next((m for m in moves if m.verb == "discard" and m.remove and m.remove != "theft"),
                    next(m for m in moves if m.verb == "discard" and len(m.cards) == 1))
    return choose


class Game(BlindGame):
    """Five seats of Saboteur 2 through the blind host, each choosing with `eager`."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, tuple(f"p{i}" for i in range(5)), "expansion")
        self.names = list(self.seats_)
        self.bundles: list[list[tuple[str, list, bytes]]] = []  # each stored packet's public bundles
        for n in self.names:
            self.seats[n].choose = eager(n, f"sab2-{n}", self.seats[n])

    def waiting(self) -> dict:
        return self.host.status()["waiting"]

    def send_block(self, block) -> None:
        self.host.accept(read_blocks(block.armored())[0])
        self.sync()

    def public_tokens(self, slot: Slot) -> dict[str, Point]:
        """Every public token for `slot` in the packets the host stored, read from their bytes
        (each packet's public bundles read once: a stored packet never changes)."""
        self.public_bundles(self.host.packets(len(self.bundles)))
        out: dict[str, Point] = {}
        for maker, slots, raw in (b for packet in self.bundles for b in packet):
            for i, s in enumerate(slots):
                if tuple(s) == slot:
                    out[maker] = Token.decode(raw[i * TOKEN_BYTES:(i + 1) * TOKEN_BYTES], "token").point
        return out

    def public_bundles(self, packets: list[tuple[int, str]]) -> None:
        """Keep the public bundles of `packets` (the packets after those kept): maker, slots, tokens."""
        for seq, armored in packets:
            assert seq == len(self.bundles) + 1
            kept = []
            for r in read_blocks(armored)[0].expect(Packet).doc.relayed or []:
                block = parse_relayed(r, "block")
                if not isinstance(block.doc, Mental):
                    continue
                bundles = [*(block.doc.tokens or []), *([block.doc.play.open, *(block.doc.play.handed or [])]
                                                        if block.doc.play else [])]
                for b in bundles:
                    doc = M.bundle(b)
                    if doc["to"] == "all":
                        kept.append((doc["from"], doc["slots"], base64.b64decode(doc["tokens"])))
            self.bundles.append(kept)


def _hat_slots(g: Game) -> tuple[list[Slot], list[Slot]]:
    """The aside dwarf cards handed out by swap-hat this round, and those still aside."""
    ledger = g.seats[g.names[0]].table.round.ledger
    return ledger.layout.aside[:ledger.hats], ledger.layout.aside[ledger.hats:]


def _corrupt(g: Game, block, hat: Slot):
    """`block` with its public token for the new hat `hat` made on another slot's ciphertext."""
    seat = g.seats[block.doc.seat].seat
    cts = dict(seat.ciphertexts())
    other = next(s for s in cts if s[0] == hat[0] and s != hat)
    cts[hat] = cts[other]
    tokens = []
    for b in block.doc.tokens or []:
        doc = M.bundle(b)
        slots = [tuple(s) for s in doc["slots"]]
        if doc["to"] == "all" and hat in slots:
            doc = make_bundle(g.inv.game, block.doc.seat, seat.my_shares(), cts, slots, "all")
        tokens.append(doc)
    d = block.doc
    return M.message(g.ids[d.seat], g.inv.game, d.seat, d.seq, d.packet, d.step, bundles=tokens, move=d.move,
                     play=(d.play.slot.slot, M.bundle(d.play.open)) if d.play else None,
                     handed=[M.bundle(b) for b in d.play.handed or []] if d.play else None,
                     discard=[s.slot for s in d.discard] if d.discard is not None else None)


def _hand_on_wrong(g: Game, block):
    """`block` with the token it hands on made by its maker for another slot, relabelled."""
    d = block.doc
    handed = [M.bundle(b) for b in d.play.handed]
    maker, slot = handed[0]["from"], tuple(handed[0]["slots"][0])
    other = next(s for s in g.seats[maker].seat.ciphertexts() if s[0] == slot[0] and s != slot)
    handed[0] = g.seats[maker].seat.bundle_for([other]) | {"slots": [list(slot)]}
    return M.message(g.ids[d.seat], g.inv.game, d.seat, d.seq, d.packet, d.step,
                     bundles=[M.bundle(b) for b in d.tokens or []], move=d.move,
                     play=(d.play.slot.slot, M.bundle(d.play.open)), handed=handed)


def _stored(g: Game) -> bytes:
    """Every byte of the blind host's files."""
    return b"".join(p.read_bytes() for p in sorted(g.db.parent.iterdir()) if p.is_file())


def _hat_is_secret(g: Game, slot: Slot) -> bool:
    """Every public token stored and every key but the wearer's do not open the new hat in
    `slot`; with the wearer's key they do. False: its wearer gave it up again (a later swap-hat)."""
    table = g.seats["p0"].table
    ledger = table.round.ledger
    wearer = next((p for p, s in ledger.roles.items() if s == slot), None)
    if wearer is None:
        return False
    pub = g.public_tokens(slot)
    assert sorted(pub) == sorted(p for p in g.names if p != wearer)
    ct = g.seats[wearer].seat.ciphertexts()[slot]
    k = table.round_no
    others = [ct.c1 * g.seats[p].keys.shares[k].secret for p in g.names if p != wearer]
    stack = table.game.stack(slot[0])
    assert card_of(open_with(ct, others), stack) is None
    assert card_of(open_with(ct, others + list(pub.values())), stack) is None
    mine = ct.c1 * g.seats[wearer].keys.shares[k].secret
    assert card_of(open_with(ct, others + [mine]), stack) == g.seats[wearer].seat.opened[slot]
    return True


@pytest.mark.slow
def test_an_expansion_game_plays_every_rule_and_keeps_each_secret(tmp_path: Path) -> None:
    g = Game(tmp_path)
    steps: dict[str, int] = {}
    moves: list[str] = []
    aside_checked = cheat_refused = steal_refused = handed_refused = False
    hats_checked = 0
    facts_checked = 0
    kinds = ("swap-hand", "swap-hat", "inspect", "theft", "remove")

    def seen_all() -> bool:  # every rule came up and was checked (most often in round 1; at most the whole game)
        played = " | ".join(m for m in moves if m)
        checked = hats_checked and aside_checked and cheat_refused and steal_refused and facts_checked
        return bool(steps.get("steal")) and handed_refused and bool(checked) and g.seats["p0"].table.theft is None \
            and all(kind in played for kind in kinds)

    while (w := g.waiting())["step"] != "over" and not seen_all():
        table = g.seats["p0"].table
        if w["step"] == "reveal" and not table.revealed:  # the round is over, no key is out yet
            handed, aside = _hat_slots(g)
            for slot in aside:  # a dwarf card left aside: no token for it before the round's end
                assert not g.public_tokens(slot)
                aside_checked = True
            for slot in handed:  # a new hat: nobody but its wearer can open it, from every byte stored
                hats_checked += _hat_is_secret(g, slot)
        for n in w["seats"]:
            block = g.seats[n].owed()
            assert block is not None, (n, w)
            if block.doc.step == "move":
                moves.append(block.doc.move)
                v = g.seats[n].view()
                for fact in v.knowledge.get(n, []):  # what an inspect or a new hat showed: the true card's kind
                    if fact[0] in ("inspect", "hat"):
                        assert fact[-1] != "?"
                        facts_checked += 1
            handed, _ = _hat_slots(g) if g.seats[n].table.round else ([], [])
            owed_hat = [h for h in handed for b in block.doc.tokens or [] if b.to == "all"
                        and h in [s.slot for s in b.slots]]
            if owed_hat and not cheat_refused:
                before = _stored(g)
                with pytest.raises(BadPacket):
                    g.host.accept(read_blocks(_corrupt(g, block, owed_hat[0]).armored())[0])
                assert _stored(g) == before and g.host.status()["seq"] == g.seen
                cheat_refused = True
            if block.doc.play is not None and block.doc.play.handed and not handed_refused:
                before = _stored(g)  # a token handed on for a card it does not open: every seat would refuse it
                with pytest.raises(BadPacket):
                    g.host.accept(read_blocks(_hand_on_wrong(g, block).armored())[0])
                assert _stored(g) == before
                handed_refused = True
            if block.doc.step == "steal" and not steal_refused:  # a thief robbing itself: the rules say no
                before = _stored(g)
                d = block.doc
                with pytest.raises(MoveError):
                    g.host.accept(read_blocks(M.message(g.ids[n], g.inv.game, n, d.seq, d.packet, "steal",
                                                        move=f"steal {n}").armored())[0])
                assert _stored(g) == before
                steal_refused = True
            steps[block.doc.step] = steps.get(block.doc.step, 0) + 1
            g.send_block(block)
    played = " | ".join(m for m in moves if m)
    for kind in kinds:
        assert kind in played, kind
    assert steps.get("steal"), steps
    assert hats_checked and aside_checked and cheat_refused and steal_refused and handed_refused and facts_checked
    ends = g.seats["p0"].table.ended
    end = ends[-1]  # the round opened at its end: every role dealt from the expansion's 15 dwarf cards
    k = end.round_no
    assert sorted(end.orders[f"dwarves@{k}"]) == sorted(table.game.stack(f"dwarves@{k}").cards)
    assert len(end.orders[f"dwarves@{k}"]) == 15 and all(card_kind(end.state.roles[p]).kind for p in g.names)
    assert any(m.startswith("steal") for e in ends for _, m in e.played)
    assert end.state.phase == "over" and sum(end.state.gold.values()) > 0
    assert k == 3 or g.seats["p1"].table.round.round_no == k + 1
    # `pbem audit` and `pbem replay` count the round's moves alike: its thieves' steals too. What
    # they print of it, from one following of the chain (every proof checked once, as `pbem demo`
    # does for its audit and replay; the test below runs both commands as processes of their own)
    from pbem.replay.load import load_replay
    from pbem.replay.sources import ALL, open_source
    from pbem.replay.trustless import follow_chain

    robbed = next(e for e in ends if any(m.startswith("steal") for _, m in e.played))
    followed = follow_chain(open_source(None, g.db), g.inv.game, None)
    audit = followed[0].to_json()
    assert audit["ok"], audit
    counted = {r["round"]: r["moves"] for r in audit["rounds"]}
    shown = load_replay(None, db=g.db, round_no=robbed.round_no, followed=followed).to_json(0, ALL)
    assert counted[robbed.round_no] == shown["moves_total"] == len(robbed.played)
    print(json.dumps(steps), "handed on:", handed_refused)


@pytest.mark.slow
def test_an_expansion_game_through_a_folder_audits_and_replays(tmp_path: Path) -> None:
    """`pbem demo --trustless --ruleset expansion --seats 3`: the blind host (`pbem host run`) and
    three `pbem bot run` seats, separate processes through a real folder, to the game's end (the
    in-process game above plays five seats: here the processes and the folder are the point); then
    `pbem audit`, `pbem replay` of a round as a seat (printed, --json, --html), and the secrecy of
    one seat's role (a swapped-in hat, if a swap-hat was played) and hand before the round's end."""
    from test_trustless_folder import _chain

    from pbem.protocol.documents import Invitation
    from pbem.seat import keys
    from pbem.seat.checked import read_checked

    work = tmp_path / "demo"
    demo = pbem("demo", "--trustless", "--ruleset", "expansion", "--seats", "3", "--dir", work, home=tmp_path / "h",
                timeout=900)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "the chain audited" in demo.stdout and "final scores" in demo.stdout
    folder = work / "shared"
    homes = {s: work / "homes" / s for s in ("ann", "bob", "cat")}
    inv = read_blocks((folder / "invitation.pbem").read_text())[0].expect(Invitation)
    assert inv.doc.trustless and inv.doc.ruleset == "expansion"
    last = _chain(folder, inv.game)[-1]  # each bot kept that its key checked the whole chain, the game over:
    for seat, home in homes.items():  # its seat's replays below check no proof of it again
        assert read_checked(home, keys.load_identity(home, seat, None), inv, seat) == (last.doc.seq, last.hash)
    page = tmp_path / "r3.html"
    # the audit follows the whole chain again, every proof checked; each replay as its seat, whose
    # key checked it before (all cards open: tests/test_trustless_replay.py). Side by side, and
    # beside the secrecy check
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = [pool.submit(pbem, *args, home=homes[seat], timeout=300) for seat, args in (
            ("bob", ("audit", folder, "--json")), ("bob", ("replay", folder, "--round", "1", "--as", "bob")),
            ("cat", ("replay", folder, "--round", "2", "--to", "0", "--as", "cat", "--json")),
            ("ann", ("replay", folder, "--round", "3", "--html", page, "--as", "ann")))]
        swapped = _secrecy_before_round_1s_end(folder, inv, homes)
    audit, printed, seen, wrote = (r.result() for r in runs)
    assert audit.returncode == 0, audit.stderr
    report = json.loads(audit.stdout)
    assert report["ok"] and report["step"] == "over" and [r["round"] for r in report["rounds"]] == [1, 2, 3]
    assert printed.returncode == 0 and printed.stdout.startswith(f"game {inv.game}, round 1: "), printed.stderr
    assert "roles: ann " in printed.stdout
    assert seen.returncode == 0, seen.stderr
    # the audit and the replay count a round's moves alike (a Saboteur 2 round's steals too)
    assert printed.stdout.startswith(f"game {inv.game}, round 1: {report['rounds'][0]['moves']} moves")
    assert json.loads(seen.stdout)["moves_total"] == report["rounds"][1]["moves"]
    hands = json.loads(seen.stdout)["position"]["hands"]
    assert "?" not in hands["cat"] and all(set(hands[p]) == {"?"} for p in hands if p != "cat")
    assert wrote.returncode == 0 and page.read_text().startswith("<!doctype html>"), wrote.stderr
    print(f"expansion through a folder: swapped hats in round 1: {swapped}")


def _secrecy_before_round_1s_end(folder: Path, inv, homes: dict[str, Path]) -> list[str]:
    """Every message up to round 1's end and the other seats' keys open nothing one seat still
    holds, nor its role (a new hat's slot, if it swapped hats); with that seat's key too they do.
    The seats whose hats were swapped."""
    from test_trustless_folder import _chain, keys_of, try_to_open

    from pbem.seat import keys
    from pbem.seat import trustless as T

    chain = _chain(folder, inv.game)
    ids = {s: keys.load_identity(homes[s], s, None) for s in homes}
    cut = next(i for i, p in enumerate(chain) if any(getattr(b.doc, "step", None) == "reveal"
                                                  for b in T.read_relayed(p.doc, keys_of(inv))))
    watcher = T.Follower(inv)
    watcher.table.check_proofs = False  # the `pbem audit` beside this checks every proof
    for p in chain[:cut]:
        watcher.follow(p)
    ledger = watcher.table.round.ledger
    swapped = [p for p, s in ledger.roles.items() if s != ledger.layout.roles[p]]
    target = swapped[0] if swapped else "cat"
    held = [ledger.roles[target], *ledger.holdings[target]]
    others = [s for s in homes if s != target]
    attacker = {"any": (ids[others[0]], others[0]), "shares": {s: T.seat_keys(ids[s], inv) for s in others}}
    assert try_to_open(chain[:cut], inv, attacker, held) == {}
    attacker["shares"][target] = T.seat_keys(ids[target], inv)  # type: ignore[index]
    assert len(try_to_open(chain[:cut], inv, attacker, held)) == len(held)  # the attack is real
    return swapped


@pytest.mark.slow
def test_a_thief_declared_gone_robs_nobody_and_the_game_goes_on(tmp_path: Path) -> None:
    """Saboteur 2 with a deadline: the first thief goes silent at the steal step; the blind host
    declares it gone past its deadline and grace, the table takes its steal as `steal nobody`,
    and the next round is dealt (its round key came at the reveal; its part from then on from the
    others' stand-in shares)."""
    from test_trustless_vanish import Table, _audit

    names = tuple(f"p{i}" for i in range(5))
    t = Table(tmp_path, silent=set(), seats=names, ruleset="expansion").join()
    for n in names:
        t.seats[n].choose = eager(n, f"gone-{n}")
    thief, rounds_before = None, 0
    while thief is None or len(t.seats["p0"].table.ended) < 1 + rounds_before:
        t.sync()
        table = t.seats["p0"].table
        if table.step() == "over":
            break
        if thief is None and table.step() == "steal":
            thief, rounds_before = table.theft.state.player, len(table.ended)
            t.silent = {thief}
        sent = False
        for n in names:
            if n in t.silent:
                continue
            block = t.seats[n].owed()
            if block is not None:
                t.send(block)
                t.sync()
                sent = True
        if not sent:
            t.clock.advance(3600 + 601)
            assert t.host.tick(), "the clock declares nobody gone"
    assert thief is not None, "no thief had anyone to rob in the whole game"
    audit = _audit(t, check=False).table  # what the chain says: the host checked each block's proofs as it came in
    assert thief in audit.gone
    end = audit.ended[rounds_before]
    assert (thief, "steal nobody") in end.played and end.state.phase == "over"
    assert audit.round is not None or end.round_no == 3


@pytest.mark.slow
def test_a_person_steals_with_pbem_turn(tmp_path: Path, here) -> None:
    """A thief who is a person: `pbem turn FOLDER --as SEAT` shows the round opened at its end and
    says it is their turn; a steal the rules refuse is said in one line with nothing sent; `steal
    nobody` goes into the folder's inbox and the blind host takes it."""
    from processes import one_error_line

    g = BlindGame(tmp_path, tuple(f"p{i}" for i in range(5)), "expansion")
    for n in g.seats_:
        g.seats[n].choose = eager(n, f"turn-{n}")
    for _ in range(3):  # a round with thefts (nearly always the first)
        g.play(lambda table: table.step() == "steal" or len(table.ended) == 3)
        if g.table.step() == "steal":
            break
    assert g.table.step() == "steal", "no thief had anyone to rob in the whole game"
    thief = g.table.waiting().seats[0]
    shown = pbem("turn", g.folder, "--as", thief, "--json", home=g.homes[thief], timeout=300)
    assert shown.returncode == 0, shown.stderr
    said = json.loads(shown.stdout)
    assert said["your_turn"] and said["waiting"]["step"] == "steal" and "steal nobody" in said["legal"]
    inbox = g.folder / "inbox"
    before = sorted(inbox.glob("*.pbem"))
    own = here("turn", g.folder, "--as", thief, f"steal {thief}", home=g.homes[thief])  # in this process
    one_error_line(own, own.returncode, "steal")
    assert own.returncode != 0 and sorted(inbox.glob("*.pbem")) == before
    done = here("turn", g.folder, "--as", thief, "steal nobody", home=g.homes[thief])  # in this process too
    assert done.returncode == 0, done.stderr
    sent = [p for p in sorted(inbox.glob("*.pbem")) if p not in before]
    assert len(sent) == 1
    block = read_blocks(sent[0].read_text())[0]
    assert block.doc.step == "steal" and block.doc.move == "steal nobody" and block.doc.seat == thief
    assert g.host.accept(block).kind == "applied"
