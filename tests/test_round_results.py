"""A finished round in words: `pbem show` of the packet after it says who found the gold (or
that nobody did, and which side won) and every seat's role; `show --json`'s result has the
roles; the printed `pbem replay` ends naming the saboteurs. Both rulesets, through the real
CLI on a real game played by bots (tests/table_games.py): each command as a process of its own in
the classic case, its further runs through the command line's entry in this process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from processes import pbem
from table_games import PASS, make_table, play_until

from engine.payout import winning_side
from engine.position import load
from pbem.protocol.documents import Archive, read_blocks
from pbem.ui import words

ENV = {"PBEM_PASSPHRASE": PASS.decode(), "COLUMNS": "300"}  # wide: one line a sentence


def _side(final) -> str:
    """Which side won, worked out here from the final position (the engine's own rule)."""
    if final.ruleset == "classic":
        if not final.winners:
            return "nobody wins"
        return "the gold-diggers win" if final.finder else "the saboteurs win"
    teams, lone = winning_side(final)
    if teams:
        return "winning team: " + words.listing(words.t(f"team {x}") for x in sorted(teams))
    return "the boss wins alone" if lone == "boss" else "the saboteurs win"


@pytest.mark.parametrize("ruleset,seats", [("classic", ["ann", "bob", "cat", "dan"]),
                                           ("expansion", ["ann", "bob", "cat", "dan", "eve", "fay", "gus"])])
def test_a_rounds_end_says_who_found_the_gold_and_every_role(tmp_path: Path, ruleset: str, seats: list[str],
                                                             here) -> None:
    table = make_table(tmp_path, seats, ruleset)
    play_until(table, lambda packet: packet.doc.round > 1, seed=5)
    path, packet = table.latest()
    archive = next(b for b in read_blocks(table.host.archives()[1]) if isinstance(b.doc, Archive))
    final = load(archive.doc.final)  # the host's signed record of round 1, read apart from the packet
    roles = {p: final.role(p) for p in seats}
    assert None not in roles.values() and (ruleset == "classic") == (set(roles.values()) <= {"digger", "saboteur"})

    run = pbem if ruleset == "classic" else here  # the first run of each command, as a process
    shown = run("show", path, "--as", "bob", "--json", home=table.homes["bob"], env=ENV)
    assert shown.returncode == 0, shown.stderr
    result = json.loads(shown.stdout)["result"]
    assert result["roles"] == roles and result["finder"] == final.finder  # additive: the old keys stay
    assert {"round", "winners", "payout", "gold", "next_start"} <= set(result)

    text = here("show", path, "--as", "bob", home=table.homes["bob"], env=ENV)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    found = f"{final.finder} found the gold: " if final.finder else "the gold was not found: "
    assert found + _side(final) in lines, text.stdout
    said = next(line for line in lines if line.startswith("roles: "))
    assert said == "roles: " + ", ".join(f"{p} {words.role_name(roles[p])}" for p in seats)

    printed = run("replay", tmp_path / "game.db", "--round", "1", "--all", home=None, env=ENV)
    assert printed.returncode == 0, printed.stderr
    tail = printed.stdout.splitlines()[-2:]
    assert tail == [found + _side(final), said], printed.stdout[-600:]
    saboteurs = [p for p in seats if roles[p] == "saboteur"]
    assert all(f"{p} saboteur" in tail[1] for p in saboteurs)

