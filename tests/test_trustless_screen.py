"""A trustless table on screen as any other: `pbem show PACKET` draws the maze and the numbered
hand (two T-junctions told apart by their shapes), `pbem turn` says what is new since the seat
last looked (not the whole chain again), and a card still shut is said in plain words, in three
languages, never as `dwarves@1 #0`. Real `pbem` processes on a trustless game played in one
process into a real folder (tests/blind_game.py): each command's first run here; its further
runs through the command line's entry in this process (`here`)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from blind_game import BlindGame, round_over
from processes import pbem

from engine.moves import shown_hand
from pbem.protocol.crypto import PublicKey
from pbem.protocol.documents import Mental, Packet, read_blocks
from pbem.seat.trustless import read_relayed
from pbem.ui import move_words

JARGON = re.compile(r"(dwarves|deck|goals|nuggets)@\d|#\d+: waiting|opened from slot")
WIDE = {"COLUMNS": "200"}


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> tuple[BlindGame, dict[str, Path]]:
    """One dealt game for every test here, and the packets of two moments of its first round:
    `shut` after ann alone sent her deal tokens (hers wait for bob's and cat's), `reveal` when the
    round is over but its keys are not out. Packet files stay in the folder as the game goes on."""
    g = BlindGame(tmp_path_factory.mktemp("trustless-screen")).play(lambda table: table.step() == "deal")
    g.send("ann")
    moments = {"shut": g.publish().packet_file(g.seen)}
    moments["reveal"] = g.play(lambda table: table.step() == "reveal").packet_file(g.seen)
    return g.play(round_over(1)), moments


@pytest.fixture(scope="module")
def game(played: tuple[BlindGame, dict[str, Path]]) -> BlindGame:
    return played[0]


@pytest.fixture(scope="module")
def moments(played: tuple[BlindGame, dict[str, Path]]) -> dict[str, Path]:
    return played[1]


def test_show_draws_the_maze_and_the_numbered_hand(game: BlindGame) -> None:
    seq = game.seen
    shown = pbem("show", game.packet_file(seq), "--as", "ann", home=game.homes["ann"], env=WIDE)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "you are: ann" in out and f"packet: {seq}" in out and "round 2" in out
    assert re.search(r"^\s*-?\d+(\s+-?\d+){8,}\s*$", out, re.M), out  # the maze's column labels
    hand = game.seats["ann"].view().hands["ann"]
    assert "your hand" in out and re.search(r"^#\s+card\s+name\s+shape", out, re.M), out
    for i, card in enumerate(shown_hand(hand), 1):  # numbered as moves name them, each card by its id and shape
        assert re.search(rf"^{i}\s+{re.escape(card)}\s", out, re.M), (card, out)
    assert not JARGON.search(out), out


def _moves_after(game: BlindGame, seq: int) -> list[str]:
    keys = {p.name: PublicKey.decode(p.key) for p in game.inv.doc.seats}
    said = []
    for _, armored in game.host.packets(seq):
        for b in read_relayed(read_blocks(armored)[0].expect(Packet).doc, keys):
            if isinstance(b.doc, Mental) and b.doc.step == "move":
                said.append(move_words.describe_move(b.doc.move, b.doc.seat))
    return said


def test_turn_says_what_is_new_since_the_seat_last_looked(game: BlindGame, here) -> None:
    runs = 0

    def turn() -> list[str]:
        nonlocal runs
        runs += 1
        run = pbem("turn", game.folder, "--as", "bob", home=game.homes["bob"], stdin=subprocess.DEVNULL, env=WIDE,
                   timeout=180) if runs == 1 else here("turn", game.folder, "--as", "bob", home=game.homes["bob"], env=WIDE)
        assert run.returncode == 0, run.stderr
        assert not JARGON.search(run.stdout), run.stdout
        return run.stdout.splitlines()

    first = turn()  # the first look: the latest moves, round 1's end and every role, then the table
    moves = first[first.index("last moves") + 1:]
    assert "- round 1 is over" in moves and any(m.startswith("- roles: ann ") for m in moves), first
    assert moves[0].startswith("- ... and ") and "pbem replay" in moves[0]  # not all 60-odd lines of the chain
    again = turn()  # nothing happened since: no moves said again
    assert "last moves" not in again and len(again) < len(first)
    looked = game.seen
    game.play(lambda table: table.round is not None and table.round.moves() >= 3)  # three more moves
    later = turn()
    said = [line[2:] for line in later[later.index("last moves") + 1:] if line.startswith("- ")]
    assert said == _moves_after(game, looked) and len(said) >= 1, later


def test_a_card_still_shut_is_said_in_plain_words(game: BlindGame, moments: dict[str, Path], here) -> None:
    g, packet = game, moments["shut"]  # ann's deal tokens open bob's and cat's cards; hers wait for theirs
    shown = here("show", packet, "--as", "ann", home=g.homes["ann"], env=WIDE)
    assert shown.returncode == 0, shown.stderr
    assert "your role is not open yet: waiting for bob and cat to send their part of it" in shown.stdout
    assert "cards of your hand not open yet: 6; waiting for bob and cat to send their part of them" in shown.stdout
    assert not JARGON.search(shown.stdout), shown.stdout
    data = json.loads(here("show", packet, "--as", "ann", "--json", home=g.homes["ann"]).stdout)
    assert [c["card"] for c in data["cards_waiting"]] == ["role"] + ["hand"] * 6  # added beside slot and tokens_from
    assert all(c["tokens_from"] == ["bob", "cat"] and len(c["slot"]) == 2 for c in data["cards_waiting"])
    for lang, role in (("zh-Hans", "你的身份还没翻开"), ("zh-Hant", "你的身份還沒翻開")):
        said = here("show", packet, "--as", "ann", home=g.homes["ann"], env={**WIDE, "PBEM_LANG": lang})
        assert said.returncode == 0 and role in said.stdout and not JARGON.search(said.stdout), said.stdout


def test_a_round_ended_before_its_keys_are_out_names_no_winner(game: BlindGame, moments: dict[str, Path],
                                                                here) -> None:
    """The round is over on the public table, but the payout needs every seat's round key: until
    then nobody is named a winner (the view's roles are shut: 'winners: nobody' would be false)."""
    shown = here("show", moments["reveal"], "--as", "ann", home=game.homes["ann"], env=WIDE)
    assert shown.returncode == 0, shown.stderr
    assert "the round is over" in shown.stdout and "the table waits for the " in shown.stdout, shown.stdout
    assert "winners" not in shown.stdout and "payout" not in shown.stdout, shown.stdout
