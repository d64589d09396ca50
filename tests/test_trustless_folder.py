"""A whole three-round trustless game through a real shared folder: `pbem demo --trustless`
runs `pbem host run --folder` (the blind host) and a `pbem bot run` per seat, separate
processes with real key files, until the game is over; then every round audited from the
chain alone (`pbem audit`), `pbem show` of the deal for each seat, and the secrecy of one
seat's hand: with every message up to the round's end and the key shares of every other seat,
no card that seat still holds opens. And a person's seat played with `pbem turn` (`pbem game
new --trustless` and `pbem folder init` as the host types them).
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from cli_games import bots_here, cli_game, start_bots, start_host
from folder_games import SEATS
from process_tools import stop_all
from processes import pbem
from rich.console import Console

from pbem.auto.demo import run_demo
from pbem.errors import EXIT_AUDIT_FAILED
from pbem.folder.layout import GameFolder
from pbem.folder.play import folder_notices
from pbem.protocol.documents import Invitation, Join, Mental, Packet, read_blocks
from pbem.protocol.mental.elgamal import open_with
from pbem.protocol.trustless.public import game_of
from pbem.protocol.trustless.stacks import card_of
from pbem.seat import keys
from pbem.seat import trustless as T


def _all_bytes(paths: list[Path]) -> bytes:
    return b"".join(p.read_bytes() for root in paths for p in sorted(root.rglob("*")) if p.is_file())


def _chain(folder: Path, game: str):
    return T.chain_in([p for _, p in GameFolder.open(folder).packets(None)], game)


def try_to_open(chain, inv, known: dict[str, object], slots) -> dict[tuple[str, int], str]:
    """Everything an attacker can open of `slots`, holding every message of `chain` and the key
    shares of the seats in `known` (their SeatKeys): every public token it finds, and its own
    tokens made with each known share. (The proofs in the chain are not checked here: each
    caller's `pbem audit` checks every one; a token's point opens whether its proof holds or not.)"""
    game = game_of(inv.doc)
    ts = T.TrustlessSeat(inv, *known["any"])  # type: ignore[misc]  # follows the chain
    ts.table.check_proofs = False  # the callers' `pbem audit` checked every proof of it
    for p in chain:
        ts.follow(p)
    stacks, cts = ts.table.stacks, ts.table.cts()
    public: dict[tuple[str, int], dict[str, object]] = {}
    for p in chain:
        for block in T.read_relayed(p.doc, {s.name: keys_of(inv)[s.name] for s in inv.doc.seats}):
            if isinstance(block.doc, Mental):
                for b in [*(block.doc.tokens or []), *([block.doc.play.open] if block.doc.play else [])]:
                    if b.to == "all":
                        from pbem.protocol.trustless import messages as M
                        from pbem.protocol.trustless.tokens import read_bundle

                        shares = {s.label: ts.table.shares[b.maker][s.round_no] for s in game.stacks}
                        for slot, tok in read_bundle(game.id, M.bundle(b), shares, cts, check=False).items():
                            public.setdefault(slot, {})[b.maker] = tok.point
    opened = {}
    for slot in slots:
        ct = stacks[slot[0]][slot[1]]
        stack = game.stack(slot[0])
        tokens = dict(public.get(slot, {}))
        for seat, secret in known["shares"].items():  # type: ignore[union-attr]
            tokens[seat] = ct.c1 * secret.shares[stack.round_no].secret
        if set(tokens) == set(game.players):
            card = card_of(open_with(ct, list(tokens.values())), stack)
            if card is not None:
                opened[slot] = card
    return opened


def keys_of(inv):
    from pbem.protocol.crypto import PublicKey

    return {s.name: PublicKey.decode(s.key) for s in inv.doc.seats}


def _payloads(chain, inv) -> bytes:
    """Every packet of `chain` with the blocks it relays decoded (base64 hides no text from this)."""
    return b"".join(p.payload + b"".join(b.payload for b in T.read_relayed(p.doc, keys_of(inv))) for p in chain)


@pytest.mark.slow
def test_a_whole_trustless_game_through_a_folder_by_separate_processes(tmp_path: Path, here) -> None:
    """`pbem demo --trustless` (run_demo, three seats here): the blind host and a bot per seat,
    real processes with one key each, through a real folder until the game is over."""
    started = time.monotonic()
    work = tmp_path / "demo"
    said = io.StringIO()
    gold = run_demo(Console(file=said, width=200), seats=list(SEATS), workdir=work, trustless=True)
    took = time.monotonic() - started
    text = said.getvalue()
    for n in (1, 2, 3):
        assert f"round {n}: " in text
    assert "roles, opened at the round's end" in text and "final scores" in text and "the chain audited" in text
    folder = work / "shared"
    homes = {s: work / "homes" / s for s in SEATS}
    for home in (work / "homes").iterdir():  # every process held only its own key
        assert [p.stem for p in (home / "keys").glob("*.key")] == [home.name]
    host_log = (work / "logs" / "host.log").read_text()
    assert "rejected" not in host_log and " is over after packet " in host_log, host_log
    inv = read_blocks((folder / "invitation.pbem").read_text())[0].expect(Invitation)
    assert inv.doc.trustless and inv.doc.commitments == []
    chain = _chain(folder, inv.game)
    steps = [p.doc.waiting.step for p in chain]
    # 1 packet for the joins, 3 shuffles, 3 deal-token messages: n + 2 message rounds, 2n + 1 packets
    assert steps[:7] == ["shuffle"] * 3 + ["deal"] * 3 + ["move"] and steps[-1] == "over"
    assert [len(p.doc.relayed) for p in chain[:7]] == [3, 1, 1, 1, 1, 1, 1]
    blocks = [b.doc for p in chain[1:] for b in T.read_relayed(p.doc, keys_of(inv))]
    kinds = [b.step for b in blocks]
    assert kinds.count("reveal") == 9 and {"move"} <= set(kinds) <= {"shuffle", "deal", "move", "tokens", "goal", "reveal"}
    # the checks below by real processes are independent of each other: run side by side
    broken = tmp_path / "broken"
    shutil.copytree(folder, broken)
    victim = next((broken / "packets").rglob("000003-*.pbem"))
    victim.unlink()
    dealt = GameFolder.open(folder).packets(None)[6][1]
    with ThreadPoolExecutor(max_workers=6) as pool:
        audit_f = pool.submit(pbem, "audit", folder, "--json", home=homes["bob"], timeout=300)
        show_f = pool.submit(pbem, "show", dealt, "--as", "ann", "--json", home=homes["ann"])
        words_f = pool.submit(pbem, "show", dealt, "--as", "cat", home=homes["cat"])
        runs = {s: here("show", dealt, "--as", s, "--json", home=homes[s]) for s in SEATS[1:]}  # in this process
        bad = here("audit", broken, home=homes["bob"])  # the audit's second run: in this process too
    runs["ann"] = show_f.result()
    # `pbem audit` of the folder: the whole chain followed again, every shuffle proof, token
    # proof, opened card and move checked, every round replayed on its opened deal
    audit = audit_f.result()
    assert audit.returncode == 0, audit.stderr
    report = json.loads(audit.stdout)
    assert report["ok"] and report["anchored"] and report["step"] == "over" and report["packets"] == len(chain)
    assert [r["round"] for r in report["rounds"]] == [1, 2, 3]
    final = report["rounds"][-1]["gold"]
    assert final == gold and f"gold {', '.join(f'{p} {final[p]}' for p in SEATS)}" in host_log
    assert final == {p: sum(r["payout"][p] for r in report["rounds"]) for p in SEATS}
    # a chain with a packet missing (3: bob's shuffle) fails its audit at the packet after it,
    # having checked no proof past it
    assert bad.returncode == EXIT_AUDIT_FAILED and "FAULT packet 4: " in bad.stdout and "does not follow" in bad.stdout
    assert bad.stderr.startswith("error: audit failed at packet 4 of game") and "Traceback" not in bad.stderr
    ids = {s: keys.load_identity(homes[s], s, None) for s in SEATS}
    # every seat's `pbem show` of the dealt packet: its role and six cards, nothing waiting
    shown = {}
    for s in SEATS:
        out = runs[s]
        assert out.returncode == 0, out.stderr
        shown[s] = json.loads(out.stdout)
        assert shown[s]["role"] and len(shown[s]["hand"]) == 6 and None not in shown[s]["hand"]
        assert shown[s]["cards_waiting"] == [] and shown[s]["waiting"] == {"step": "move", "seats": ["ann"]}
    words = words_f.result()
    assert words.returncode == 0 and "trustless game" in words.stdout and "your hand" in words.stdout
    # secrecy before a round's end: every message up to round 1's last move, the host's key
    # and two seats' key shares open none of the cards the third seat still holds, nor its role
    cut = next(i for i, p in enumerate(chain) if any(getattr(b.doc, "step", None) == "reveal"
                                                  for b in T.read_relayed(p.doc, keys_of(inv))))
    prefix = chain[:cut]
    watcher = T.TrustlessSeat(inv, ids["ann"], "ann")
    watcher.table.check_proofs = False  # the audit above checked every proof
    for p in prefix:
        watcher.follow(p)
    target = "cat"
    ledger = watcher.table.round.ledger
    held = [ledger.roles[target], *ledger.holdings[target]]
    ended = T.Follower(inv)
    ended.table.check_proofs = False
    for p in chain[:cut + 3]:  # to the round's end: the round's keys open every one of its slots
        ended.follow(p)
    truth = {s: ended.table.ended[0].orders[s[0]][s[1]] for s in held}
    assert shown["ann"]["hand"] == [ended.table.ended[0].orders["deck@1"][i] for i in range(6)]
    data = _payloads(prefix, inv)
    for card in truth.values():
        assert card.encode() not in data, f"{card} is written in a message before the round's end"
    attacker = {"any": (ids["ann"], "ann"), "shares": {s: T.seat_keys(ids[s], inv) for s in ("ann", "bob")}}
    assert try_to_open(prefix, inv, attacker, held) == {}
    attacker["shares"]["cat"] = T.seat_keys(ids["cat"], inv)  # type: ignore[index]
    assert try_to_open(prefix, inv, attacker, held) == truth  # with cat's key too it opens: the attack is real
    # the joins a seat keeps in its home are the ones the host relayed, byte for byte
    relayed = [b for b in T.read_relayed(chain[0].doc, keys_of(inv)) if isinstance(b.doc, Join)]
    for b in relayed:
        saved = next((homes[b.doc.seat] / "games").rglob(f"join-{b.doc.seat}.pbem"))
        assert read_blocks(saved.read_text())[0].payload == b.payload
    print(f"whole trustless game: {len(chain)} packets, {took:.0f} s; blocks {dict(Counter(kinds))}")


@pytest.mark.slow
def test_a_person_plays_a_trustless_seat_with_pbem_turn(tmp_path: Path, here) -> None:
    """ann is a person: each `pbem turn FOLDER --as ann` joins, follows and checks the chain,
    sends the block the table waits for from her (her shuffle, her deal tokens), shows her view,
    and on her turn plays the move she types; bob and cat are bots (in threads of the test:
    BotHere), the host is blind. The game has deadlines: ann stays silent past her first one,
    and the blind host reminds her, tells the table she is late in signed notices, plays
    nothing for her; `pbem audit` names the stall."""
    db, folder, homes = cli_game(tmp_path, trustless=True)
    timed = pbem("game", "config", "t", "--db", db, "--deadline", "3s", "--remind", "50%", home=homes["referee"],
                 timeout=60)
    assert timed.returncode == 0 and "3 seconds" in timed.stdout, timed.stdout + timed.stderr
    assert "absent" not in timed.stdout  # the blind host marks nobody absent: the rule is not said
    absent = here("game", "config", "t", "--db", db, "--absent-after", "3", home=homes["referee"])  # again: in this process
    assert absent.returncode == 2 and absent.stderr.startswith("error: --absent-after does not apply"), absent.stderr
    host = start_host(db, folder, homes["referee"], tmp_path / "host.log", poll=0.2)
    bots = bots_here(folder, homes, tmp_path, seats=["bob", "cat"])  # in threads of this process

    def turn(*args: str) -> subprocess.CompletedProcess[str]:
        return pbem("turn", folder, "--as", "ann", *args, home=homes["ann"], timeout=180)

    try:
        early = turn("discard 1")  # it joins her, but nobody can move before the deal (ann shuffles first)
        assert early.returncode == 5 and early.stderr.startswith("error: it is not your turn"), early.stderr
        deadline = time.monotonic() + 300
        inv = read_blocks((folder / "invitation.pbem").read_text())[0].expect(Invitation)
        gf = GameFolder.open(folder)

        def about_ann() -> list[tuple[str, str | None]]:
            return [(n.notice, n.step) for n in folder_notices(gf, inv) if n.seat == "ann"]

        while ("late", "shuffle") not in about_ann():  # ann is silent: the blind host's clock runs out
            assert time.monotonic() < deadline, (tmp_path / "host.log").read_text()[-2000:]
            time.sleep(0.3)
        assert about_ann() == [("reminder", "shuffle"), ("late", "shuffle")]
        first = _chain(folder, inv.game)
        assert len(first) == 1 and first[0].doc.waiting.seats == ["ann"] and first[0].doc.waiting.due  # signed
        stalled = here("audit", folder, home=homes["bob"])  # in this process: the test above runs it as one
        assert "the chain stops at packet 1: the table waits for the shuffle step from ann since packet 1" \
            in stalled.stdout and " late" in stalled.stdout, stalled.stdout + stalled.stderr
        assert stalled.returncode != 0 and "nothing to audit" in stalled.stderr  # no round has ended yet
        back = turn("--json")  # ann is back: her shuffle goes out, and she is shown what the host said
        assert back.returncode == 0, back.stderr
        said = json.loads(back.stdout)
        assert [(n["notice"], n["step"]) for n in said["notices"]] == [("reminder", "shuffle"), ("late", "shuffle")]
        assert said["waiting"]["due"] == first[0].doc.waiting.due
        def newest() -> Packet:
            return read_blocks(gf.packets(None)[-1][1].read_text())[0].expect(Packet).doc

        while True:  # ann comes back when a new packet in the folder says the table waits for her
            before = newest().seq
            run = turn("--json")
            assert run.returncode == 0, run.stderr
            shown = json.loads(run.stdout)
            if shown["your_turn"]:
                break
            while not ((p := newest()).seq > before and "ann" in p.waiting.seats):
                assert time.monotonic() < deadline, shown
                time.sleep(0.1)
        assert shown["role"] and len(shown["hand"]) == 6 and shown["cards_waiting"] == []
        seen = here("turn", folder, "--as", "ann", home=homes["ann"])  # further turns in this process
        assert seen.returncode == 0 and "your hand" in seen.stdout and "your turn: pbem turn" in seen.stdout
        illegal = here("turn", folder, "--as", "ann", "play rockfall.1 at 7,7", home=homes["ann"])  # the engine says no
        assert illegal.returncode in (2, 6) and illegal.stderr.startswith("error: ") and "Traceback" not in illegal.stderr
        assert len(illegal.stderr.strip().splitlines()) <= 2
        played = turn("discard 1")
        assert played.returncode == 0 and "submitted" in played.stdout, played.stderr

        def hers() -> list:
            return [b.doc for p in _chain(folder, inv.game) for b in T.read_relayed(p.doc, keys_of(inv))
                    if getattr(b.doc, "step", None) == "move" and b.doc.seat == "ann"]

        while not hers():  # the blind host relays her move: a face-down discard, its slot only
            assert time.monotonic() < deadline
            time.sleep(0.5)
        move = hers()[0]
        assert move.move == "discard 1 card" and len(move.discard) == 1 and move.play is None
    finally:
        stop_all([host, *bots.values()])
    assert "rejected" not in (tmp_path / "host.log").read_text()


def test_the_host_and_a_bot_answer_a_file_at_once_not_at_their_poll(tmp_path: Path, here) -> None:
    """`pbem host run` and `pbem bot run` on a folder, each with a poll of a minute: a file arriving
    wakes them (the host: a join or a shuffle in the inbox; ann's bot: packet 1, the table waiting
    for her shuffle), so the table reaches bob's shuffle in seconds. (The game made in this process:
    the test above makes one by real processes.)"""
    from pbem.folder.trustless import folder_seat

    db, folder, homes = cli_game(tmp_path, trustless=True, here=here)
    host = start_host(db, folder, homes["referee"], tmp_path / "host.log", poll=60)
    bot = start_bots(folder, homes, tmp_path, seats=["ann"], poll=60)["ann"]
    try:
        deadline = time.monotonic() + 60
        while "joined with key shares" not in ((tmp_path / "bot-ann.log").read_text()):
            assert time.monotonic() < deadline and bot.poll() is None, (tmp_path / "bot-ann.log").read_text()
            time.sleep(0.05)
        time.sleep(1)  # both wait now: the host took ann's join, her bot saw no packet yet
        started = time.monotonic()
        for s in ("bob", "cat"):
            folder_seat(folder, keys.load_identity(homes[s], s, None), homes[s]).join()
        gf = GameFolder.open(folder)
        while len(gf.packets(None)) < 2:  # everyone is in: packet 1; ann's shuffle taken: packet 2
            assert time.monotonic() - started < 30, (tmp_path / "host.log").read_text()
            time.sleep(0.05)
    finally:
        stop_all([host, bot])
    inv = read_blocks((folder / "invitation.pbem").read_text())[0].expect(Invitation)
    chain = _chain(folder, inv.game)
    assert [p.doc.waiting.step for p in chain] == ["shuffle", "shuffle"] and chain[1].doc.waiting.seats == ["bob"]
    assert "rejected" not in (tmp_path / "host.log").read_text()
