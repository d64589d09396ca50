"""A trustless game through a real shared folder: `pbem game new --trustless`, `pbem folder
init`, `pbem host run --folder` (the blind host) and three `pbem bot run` seats, all separate
processes with real key files; then `pbem show` for each seat, and the secrecy of one seat's
hand shown in the bytes: with every file of the folder, the host's database and key, and the
key homes (so the derived key shares) of every other seat, no card of that seat opens.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from test_folder_play import PBEM, SEATS, cli_env, cli_game, start_bots, start_host, wait_all

from pbem.folder.layout import GameFolder
from pbem.protocol.documents import Invitation, Join, Mental, read_blocks
from pbem.protocol.mental.elgamal import open_with
from pbem.protocol.trustless.public import game_of
from pbem.protocol.trustless.stacks import card_of
from pbem.protocol.trustless.table import Layout
from pbem.seat import keys
from pbem.seat import trustless as T


def _all_bytes(paths: list[Path]) -> bytes:
    return b"".join(p.read_bytes() for root in paths for p in sorted(root.rglob("*")) if p.is_file())


def _chain(folder: Path, game: str):
    return T.chain_in([p for _, p in GameFolder.open(folder).packets(None)], game)


def try_to_open(chain, inv, known: dict[str, object], target: str) -> dict[tuple[str, int], str]:
    """Everything an attacker can open of `target`'s private slots, holding every message and
    the key shares of the seats in `known` (their SeatKeys): every public token it finds, and
    its own tokens made with each known share."""
    game = game_of(inv.doc)
    ts = T.TrustlessSeat(inv, *known["any"])  # type: ignore[misc]  # follows and checks the chain
    for p in chain:
        ts.follow(p)
    stacks = ts.table.stacks
    public: dict[tuple[str, int], dict[str, object]] = {}
    for p in chain:
        for block in T.read_relayed(p.doc, {s.name: keys_of(inv)[s.name] for s in inv.doc.seats}):
            if isinstance(block.doc, Mental):
                for b in [*(block.doc.tokens or []), *([block.doc.play.open] if block.doc.play else [])]:
                    if b.to == "all":
                        from pbem.protocol.trustless import messages as M
                        from pbem.protocol.trustless.tokens import read_bundle

                        shares = {s.label: ts.table.shares[b.maker][s.round_no] for s in game.stacks}
                        cts = {(label, i): ct for label, cs in stacks.items() for i, ct in enumerate(cs)}
                        for slot, tok in read_bundle(game.id, M.bundle(b), shares, cts).items():
                            public.setdefault(slot, {})[b.maker] = tok.point
    opened = {}
    for slot in Layout.of(game, 1).private(target):
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


@pytest.mark.slow
def test_a_trustless_game_is_set_up_and_dealt_through_a_folder_by_separate_processes(tmp_path: Path) -> None:
    db, folder, homes = cli_game(tmp_path, trustless=True)
    log = tmp_path / "host.log"
    host = start_host(db, folder, homes["referee"], log, poll=0.05)
    bots = start_bots(folder, homes, tmp_path, poll=0.05)
    try:
        wait_all(list(bots.values()), timeout=240)
    finally:
        host.kill()  # the blind host serves until the game is over; play is not built yet
        host.wait()
        for b in bots.values():
            if b.poll() is None:
                b.kill()
    logs = {s: (tmp_path / f"bot-{s}.log").read_text() for s in SEATS}
    assert all(b.returncode == 0 for b in bots.values()), logs
    host_log = log.read_text()
    assert "rejected" not in host_log, host_log
    inv = read_blocks((folder / "invitation.pbem").read_text())[0].expect(Invitation)
    assert inv.doc.trustless and inv.doc.commitments == []
    chain = _chain(folder, inv.game)
    # 1 packet for the joins, 3 shuffles, 3 deal-token messages: n + 2 message rounds, 2n + 1 packets
    assert [p.doc.waiting.step for p in chain] == ["shuffle"] * 3 + ["deal"] * 3 + ["move"]
    assert [len(p.doc.relayed) for p in chain] == [3, 1, 1, 1, 1, 1, 1]
    # every seat's `pbem show` of the newest packet: its role and six cards, nothing waiting
    newest = GameFolder.open(folder).packets(None)[-1][1]
    shown = {}
    for s in SEATS:
        out = subprocess.run([*PBEM, "show", newest, "--as", s, "--json"], env=cli_env(homes[s]), capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        shown[s] = json.loads(out.stdout)
        assert shown[s]["role"] and len(shown[s]["hand"]) == 6 and None not in shown[s]["hand"]
        assert shown[s]["cards_waiting"] == [] and shown[s]["waiting"] == {"step": "move", "seats": ["ann"]}
    words = subprocess.run([*PBEM, "show", newest, "--as", "cat"], env=cli_env(homes["cat"]), capture_output=True,
                           text=True, timeout=120)
    assert words.returncode == 0 and "trustless game" in words.stdout and "your hand" in words.stdout
    cards = [c for s in SEATS for c in shown[s]["hand"]]
    assert len(set(cards)) == len(cards) == 18
    # secrecy in the bytes: the host's database and key, the folder, ann's and bob's homes
    target = "cat"
    seen = _all_bytes([folder, db.parent, homes["referee"], homes["ann"], homes["bob"], *[tmp_path / f"bot-{s}.log" for s in ("ann", "bob")]])
    for card in [shown[target]["role"], *shown[target]["hand"]]:
        assert card.encode() not in seen, f"{card} is written somewhere outside {target}'s own files"
    ids = {s: keys.load_identity(homes[s], s, None) for s in SEATS}
    attacker = {"any": (ids["ann"], "ann"), "shares": {s: T.seat_keys(ids[s], inv) for s in ("ann", "bob")}}
    assert try_to_open(chain, inv, attacker, target) == {}
    # the same attack with cat's key too opens everything: the attack is a real one
    attacker["shares"]["cat"] = T.seat_keys(ids["cat"], inv)  # type: ignore[index]
    opened = try_to_open(chain, inv, attacker, target)
    layout = Layout.of(game_of(inv.doc), 1)
    assert [opened[s] for s in layout.private(target)] == [shown[target]["role"], *shown[target]["hand"]]
    # the joins a seat keeps in its home are the ones the host relayed, byte for byte
    relayed = [b for b in T.read_relayed(chain[0].doc, keys_of(inv)) if isinstance(b.doc, Join)]
    for b in relayed:
        saved = next((homes[b.doc.seat] / "games").rglob(f"join-{b.doc.seat}.pbem"))
        assert read_blocks(saved.read_text())[0].payload == b.payload
