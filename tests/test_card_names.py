"""A move may name its cards as `pbem show` names them, in English, 简体 or 繁體 (pbem/ui/card_names.py):
`play 十字路 at 1,0`, `play straight at 1,0`, `discard dead end`. The move kept and sent is in ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from processes import new_keys, one_error_line, pbem
from run_here import here_wide

from engine.catalog import KINDS, ids_of
from engine.errors import IllegalMove, InvalidMove
from engine.moves import parse, resolve
from pbem.ui import words
from pbem.ui.card_names import names, typed_move

DEALT = sorted(k for k, kind in KINDS.items() if kind.category in ("path", "action") and not k.startswith(("start", "goal")))


def read(text: str, hand: list[str]) -> str:
    """The move `text` as the notation writes it once read against `hand` (names, then kinds)."""
    return str(resolve(parse(typed_move(text, hand), hand=hand), hand))


def _position(tmp_path: Path, hand: list[str], ruleset: str = "classic") -> Path:
    doc = {"format": "pbem-position/1", "ruleset": ruleset, "players": ["ann", "bob", "cat"], "board": [],
           "hands": {"ann": hand, "bob": ["map.5"], "cat": ["map.6"]}, "deck": ["map.1", "map.2"], "to_move": "ann"}
    path = tmp_path / "position.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize("lang", words.LANGUAGES)
def test_every_name_show_prints_reads_as_its_card(lang: str) -> None:
    """Each path and action card of both rulesets, alone in a hand, by the name `show` gives it
    in each language: the move reads as its id, and the notation writes the id back."""
    assert any(KINDS[k].ruleset != "classic" for k in DEALT) and len(DEALT) > 50
    for kind in DEALT:
        with words.using(lang):
            name = words.card_name(kind)
        card = ids_of(kind)[0]
        assert read(f"discard {name}", [card]) == f"discard {card}", (lang, kind, name)
        if KINDS[kind].category == "path":
            assert read(f"play {name.upper()} at 1,0", [card]) == f"play {card} at 1,0"


def test_ids_kinds_numbers_and_other_words_are_left_to_the_notation() -> None:
    hand = ["cross.1", "map.3", "straight-ew.2"]
    for text in ("play cross.1 at 1,0", "play cross at 1,0", "play 1 at 1,0", "play map on top", "discard 2 3",
                 "play break-lamp on bob", "steal nobody", "play crosss at 1,0", "play on bob", "discard"):
        assert typed_move(text, hand) == text
    assert typed_move("play 直路 at 1,0 rotated", hand) == "play straight-ew.2 at 1,0 rotated"


def test_a_move_in_the_notation_reads_no_card_names() -> None:
    """A card given as an id, a kind or a number, alone at its place, is the notation's: the
    names of every language (each catalog read whole) are not gathered for it."""
    hand = ["cross.1", "map.3", "straight-ew.2"]
    names.cache_clear()
    for text in ("play cross.1 at 1,0", "play cross at 1,0", "play 1 at 1,0", "play map on top", "discard 2",
                 "play break-lamp on bob", "discard"):
        assert typed_move(text, hand) == text
    assert names.cache_info().currsize == 0
    assert typed_move("discard 2 3", hand) == "discard 2 3" and names.cache_info().currsize == 1  # "2 3" may be a name


def test_a_name_two_kinds_of_the_hand_share_is_refused_with_their_numbers() -> None:
    hand = ["curve-ne.2", "curve-nw.1", "dead-n.1", "dead-ew.1"]
    with pytest.raises(InvalidMove) as refused:
        typed_move("play curve at 1,0", hand)
    assert "1 (curve-ne.2), 2 (curve-nw.1)" in refused.value.reason
    with pytest.raises(IllegalMove, match="you hold no straight"):
        typed_move("discard straight", hand)
    assert typed_move("discard dead end curve", ["dead-n.1", "curve-ne.2"]) == "discard dead-n.1 curve-ne.2"
    # the same name twice in a discard is two cards of that name
    assert typed_move("discard 直路 直路", ["straight-ew.1", "straight-ew.2"]) == "discard straight-ew.1 straight-ew.2"
    with pytest.raises(IllegalMove):
        typed_move("discard straight straight", ["straight-ew.1"])
    assert max(len(n.split()) for n in names()) >= 2  # "dead end", "double curve", "broken lamp"


def test_a_misspelt_name_of_two_words_is_answered_with_the_name() -> None:
    """`discard dead edn` was answered 'did you mean discard dead-n edn' (the engine mends one
    word); now with the name meant, whole."""
    hand = ["dead-n.1", "break-lamp.1", "double-curve.1"]
    for typed, meant in [("discard dead edn", "discard dead end"), ("play brokn lamp on bob", "play broken lamp on bob"),
                         ("play dubble curve at 1,0", "play double curve at 1,0"), ("discard 1 Dead Edn", "discard 1 dead end")]:
        with pytest.raises(InvalidMove) as refused:
            typed_move(typed, hand)
        assert refused.value.suggestion == meant and typed_move(meant, hand) != meant
    assert typed_move("play strait at 1,0", hand) == "play strait at 1,0"  # one word: the engine's own suggestion


def test_the_hint_names_the_card_meant(tmp_path: Path) -> None:
    path = _position(tmp_path, ["dead-n.1", "map.3"])
    run = pbem("position", "apply", path, "discard dead edn", env={"PBEM_LANG": "en"})
    one_error_line(run, 2, "unknown card 'dead edn'")
    assert "discard dead end" in run.stderr.splitlines()[1] and "dead-n edn" not in run.stderr


@pytest.mark.parametrize("lang, move, placed", [
    ("zh-Hans", "play 十字路 at 1,0", "cross.1"),
    ("zh-Hant", "play 十字路 at 1,0", "cross.1"),
    ("en", "play straight at 1,0", "straight-ew.2"),
    ("en", "play Straight at 1,0", "straight-ew.2"),
])
def test_pbem_position_apply_places_the_card_named(tmp_path: Path, lang: str, move: str, placed: str, here) -> None:
    """(Through the command line's entry in this process: the test above runs `position apply` as a process.)"""
    path = _position(tmp_path, ["straight-ew.2", "map.3", "cross.1"])
    run = here("--lang", lang, "position", "apply", path, move, "--events", home=None)
    assert run.returncode == 0, run.stderr
    events = [json.loads(line) for line in run.stderr.splitlines()]
    assert events[0] == {"event": "move", "player": "ann", "move": f"play {placed} at 1,0"}


def test_a_refused_name_says_so_in_the_readers_words(tmp_path: Path, here) -> None:
    """`discard dead end` with no dead end in the hand: 'you hold no dead end' (exit 6), not
    the old 'did you mean: discard dead-n end'; a name of two cards lists them (exit 2), in 简体
    with full-width punctuation. (In this process: a test above runs `position apply` as a process.)"""
    path = _position(tmp_path, ["curve-ne.2", "curve-nw.1", "map.3"])
    one_error_line(here("position", "apply", path, "discard dead end", home=None, env={"PBEM_LANG": "en"}), 6,
                   "you hold no dead end")
    run = here("--lang", "zh-Hans", "position", "apply", path, "play 弯路 at 1,0", home=None, env={"PBEM_LANG": ""})
    assert run.returncode == 2 and run.stderr.startswith("错误："), run.stderr
    assert "你手里不止一张牌叫 '弯路'：1 (curve-ne.2)、2 (curve-nw.1)；请写它的编号或牌号" in run.stderr, run.stderr
    assert ";" not in run.stderr and "Traceback" not in run.stderr


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A classic game file by file, three seats, packet 1 dealt: real keys, real processes (each
    command's further runs through the command line's entry in this process)."""
    root = tmp_path_factory.mktemp("names")
    seats = ["ann", "bob", "cat"]
    homes = {n: root / f"home-{n}" for n in ["referee", *seats]}
    pubs = new_keys(homes)
    players = [a for s in seats for a in ("--player", f"{s}={pubs[s]}")]
    pbem("game", "new", "friday", "--host", "referee", *players, home=homes["referee"], cwd=root, ok=True)
    invitation = root / "saves" / "friday" / "out" / "invitation.pbem"
    for s in seats:
        run = pbem if s == seats[0] else here_wide
        run("join", invitation, "--as", s, "-o", root / f"join-{s}.pbem", home=homes[s], cwd=root, ok=True)
    pbem("apply", "friday", *[root / f"join-{s}.pbem" for s in seats], home=homes["referee"], cwd=root, ok=True)
    p1 = root / "saves" / "friday" / "out" / "packet-000001.pbem"
    mover = json.loads(pbem("show", p1, "--as", "ann", "--json", home=homes["ann"], cwd=root, ok=True).stdout)["to_move"]
    hand = json.loads(here_wide("show", p1, "--as", mover, "--json", home=homes[mover], cwd=root, ok=True).stdout)["hand"]
    return {"root": root, "homes": homes, "p1": p1, "mover": mover, "hand": hand}


def test_pbem_move_by_a_chinese_name_keeps_and_sends_the_id(table: dict, here) -> None:
    """`pbem --lang zh-Hans move PACKET "discard NAME"` with a card's 简体 name from the hand: the
    host applies `discard <id>`, and the same move typed by id is the same move, not a second one.
    (`move` first as a process, then through the command line's entry in this process.)"""
    root, homes, mover = table["root"], table["homes"], table["mover"]
    with words.using("zh-Hans"):
        named = {c: words.card_name(c) for c in table["hand"]}
    card = next(c for c in sorted(table["hand"]) if [named[o] for o in table["hand"]].count(named[c]) == 1
                and len({o.rpartition(".")[0] for o in table["hand"] if named[o] == named[c]}) == 1)
    out = root / "named.pbem"
    made = pbem("--lang", "zh-Hans", "move", table["p1"], f"discard {named[card]}", "--as", mover, "-o", out,
                home=homes[mover], cwd=root, env={"PBEM_LANG": ""})
    assert made.returncode == 0, made.stderr
    again = here("move", table["p1"], f"discard {card}", "--as", mover, "-o", out, home=homes[mover], cwd=root)
    assert again.returncode == 0 and "warning" not in again.stderr, again.stderr  # the same move
    other = next(c for c in table["hand"] if c != card)
    second = here("move", table["p1"], f"discard {other}", "--as", mover, "-o", root / "other.pbem",
                  home=homes[mover], cwd=root, env={"PBEM_LANG": "en"})
    assert second.returncode == 5 and f"“discard {card}”" in second.stderr, second.stderr  # kept in ids
    applied = here("apply", "friday", out, home=homes["referee"], cwd=root, env={"PBEM_LANG": "en"})
    assert f"applied {mover}'s move: discard 1 card; packet 2" in applied.stdout, applied.stdout + applied.stderr
