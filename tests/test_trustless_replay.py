"""`pbem replay` of a trustless game's round, in every form the other games have: printed, one
step as a seat saw it, JSON, the HTML page, full screen on a terminal; from the shared folder
and from the blind host's own file. A trustless round has no archive: its chain is its record,
followed again to the round's end, where every seat's round key opens the deal it was played on.
The game is played to the end of round 1 in one process (tests/blind_game.py), its packets
published into a real game folder; the first `pbem replay` of each source, and the full screen,
are real processes, the other forms run in this process (`here`), each following the chain again.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from blind_game import BlindGame, round_over
from processes import one_error_line, pbem

from pbem.protocol.crypto import PublicKey
from pbem.protocol.documents import Mental, Packet, read_blocks
from pbem.protocol.trustless.table import Layout
from pbem.seat.trustless import read_relayed


@pytest.fixture(scope="module")
def game(tmp_path_factory) -> BlindGame:
    return BlindGame(tmp_path_factory.mktemp("trustless-replay")).play(round_over(1))


def _chain_moves(g: BlindGame) -> list[Mental]:
    """The move blocks the blind host relayed, in chain order."""
    keys = {p.name: PublicKey.decode(p.key) for p in g.inv.doc.seats}
    out = []
    for _, armored in g.host.packets(0):
        packet = read_blocks(armored)[0].expect(Packet).doc
        out += [b.doc for b in read_relayed(packet, keys) if isinstance(b.doc, Mental) and b.doc.step == "move"]
    return out


def test_a_trustless_round_is_replayed_from_its_folder_and_its_file(game: BlindGame, here) -> None:
    end = game.table.ended[0]
    moves = _chain_moves(game)[:end.moves]
    printed = pbem("replay", game.folder, "--round", "1", stdin=subprocess.DEVNULL)
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.splitlines()
    assert lines[0].startswith(f"game {game.inv.game}, round 1: {end.moves} moves")
    assert lines[-3].startswith("the round is over")
    assert lines[-1].startswith("roles: ann ")  # and who found the gold, or that nobody did, before it
    # every move as the chain relayed it: a played card as its seat wrote it; a face-down
    # discard (its cards were secret until the round's keys opened them) now with its cards
    listed = [line.split(": ", 1) for line in lines if line[:1].isdigit() and ". " in line.split(":")[0]]
    assert len(listed) == end.moves
    for (head, text), block in zip(listed, moves, strict=True):
        assert head.split(". ", 1)[1] == block.seat
        if block.play is not None:
            assert text == block.move
        else:
            assert text.startswith("discard ") and len(text.split()) == 1 + len(block.discard)
    # --as bob --to 0: bob's own hand is the one he opened with the others' deal tokens; every other hand is shut
    seen = pbem("replay", game.db, "--round", "1", "--to", "0", "--as", "bob", "--json")
    assert seen.returncode == 0, seen.stderr
    view = json.loads(seen.stdout)
    assert view["as"] == "bob" and view["step"] == 0 and view["moves"] == []
    hands = view["position"]["hands"]
    bob = game.seats["bob"].seat
    assert sorted(hands["bob"]) == sorted(bob.opened[s] for s in Layout.of(bob.game, 1).hands["bob"]), hands
    assert all(set(hands[p]) == {"?"} for p in ("ann", "cat")), hands
    whole = here("replay", game.folder, "--all", "--json", home=None)  # the default round: the last one that ended
    assert whole.returncode == 0, whole.stderr
    assert json.loads(whole.stdout)["round"] == 1 and json.loads(whole.stdout)["moves_total"] == end.moves
    # round 2 is being played: nothing to replay yet, said in one line, no word of an archive
    early = here("replay", game.folder, "--round", "2", home=None)
    one_error_line(early, 2, f"round 2 of game {game.inv.game} has not ended yet")
    assert "archive" not in early.stderr


@pytest.mark.slow
def test_a_trustless_round_as_a_web_page_and_full_screen(game: BlindGame, tmp_path: Path, here) -> None:
    from test_replay_screen import Pty

    page = tmp_path / "r1.html"
    wrote = here("replay", game.folder, "--round", "1", "--html", page, "--as", "cat", home=None)  # a process: test_trustless_expansion.py
    assert wrote.returncode == 0, wrote.stderr
    assert f"wrote {page}: round 1 of game {game.inv.game}" in wrote.stdout
    html = page.read_text()
    assert html.startswith("<!doctype html>") and game.inv.game in html
    total = game.table.ended[0].moves
    term = Pty(str(game.folder), "--round", "1")
    try:
        rows = term.read(lambda rows: "q quit" in rows[-1])
        assert rows[0].startswith(f"replay: game {game.inv.game}, round 1") and f"the deal (0 of {total})" in rows[0]
        term.type("G")
        term.read(lambda rows: f"move {total} of {total}" in rows[0])
        term.type("g1\rv")
        term.read(lambda rows: "move 1 of" in rows[0] and "as ann saw it then" in rows[0])
        term.type("q")
        assert term.wait() == 0
        term.restored()
    finally:
        term.close()


def test_a_replay_by_a_seat_checks_only_what_its_key_did_not_check_before(game: BlindGame, here, tmp_path: Path) -> None:
    """`pbem replay --as ann` from ann's key home, which keeps how far her key checked the chain
    (pbem/seat/checked.py): those packets' proofs are not checked again, as her `pbem turn` does
    not; the round shown is the same. From a copy of her home whose record is gone, or is bob's
    record put in her name, every proof is checked again (`pbem audit` trusts no record)."""
    import shutil

    from group_ops import counted

    from pbem.seat.checked import mark_checked
    from pbem.seat.home import checked_path

    packets = [read_blocks(a)[0].expect(Packet) for _, a in game.host.packets(0)]
    mid = packets[len(packets) // 2]
    homes = {what: tmp_path / what for what in ("mine", "none", "bob's")}
    for h in homes.values():
        shutil.copytree(game.homes["ann"], h)
    mark_checked(homes["mine"], game.ids["ann"], game.inv, "ann", mid)  # as her turn keeps it, signed by her key
    mark_checked(homes["bob's"], game.ids["bob"], game.inv, "ann", packets[-1])
    assert not checked_path(homes["none"], game.inv.game, "ann").exists()
    muls, said = {}, {}
    for what, h in homes.items():
        with counted() as ops:
            said[what] = here("replay", game.folder, "--round", "1", "--to", "0", "--as", "ann", "--json", home=h, ok=True)
        muls[what] = ops["mul"]
    assert said["mine"].stdout == said["none"].stdout == said["bob's"].stdout
    assert json.loads(said["mine"].stdout)["as"] == "ann"
    assert muls["none"] == muls["bob's"] > 2 * muls["mine"] > 0, muls  # after her record's packet: checked
