"""The text notation of moves (RULES.md §7, §9 notation and listing)."""

from __future__ import annotations

import random

import pytest

from engine.bots import RandomBot
from engine.catalog import CLASSIC, EXPANSION
from engine.chance import SeededChance
from engine.errors import IllegalMove, InvalidMove
from engine.game import Game
from engine.moves import Move, parse, public_text, resolve
from engine.rules import apply, check, legal_moves, legal_texts
from engine.state import PLAYING, THEFT
from engine.views import view

# --- canonical printing -------------------------------------------------------------------

CANONICAL = [
    (Move("play", "cross.1", at=(3, -1)), "play cross.1 at 3,-1"),
    (Move("play", "curve-ne.2", at=(-1, 0), rotated=True), "play curve-ne.2 at -1,0 rotated"),
    (Move("play", "rockfall.3", at=(2, 0)), "play rockfall.3 at 2,0"),
    (Move("play", "break-pick.1", target="bob"), "play break-pick.1 on bob"),
    (Move("play", "fix-pick.1", target="bob", tool="pick"), "play fix-pick.1 on bob pick"),
    (Move("play", "fix-lamp-cart.1", target="ann", tool="cart"), "play fix-lamp-cart.1 on ann cart"),
    (Move("play", "map.4", target="bottom"), "play map.4 on bottom"),
    (Move("play", "theft.2"), "play theft.2"),
    (Move("discard", cards=("cross.1",)), "discard cross.1"),
    (Move("discard", cards=("cross.1", "map.2", "map.5")), "discard cross.1 map.2 map.5"),
    (Move("discard", cards=("cross.1", "map.2"), remove="break-lamp"), "discard cross.1 map.2 remove break-lamp"),
    (Move("steal", target="cat"), "steal cat"),
    (Move("steal"), "steal nobody"),
]


@pytest.mark.parametrize("move,text", CANONICAL, ids=[t for _, t in CANONICAL])
def test_prints_canonical_and_parses_back(move: Move, text: str) -> None:
    assert str(move) == text
    assert parse(text) == move
    assert str(parse(text)) == text


# --- case, spacing and bare kinds ---------------------------------------------------------


@pytest.mark.parametrize(
    "text,canonical",
    [
        ("PLAY CROSS.1 AT 1,0", "play cross.1 at 1,0"),
        ("Play Curve-NE.2 At -1,0 Rotated", "play curve-ne.2 at -1,0 rotated"),
        ("  play   map.1   on   TOP  ", "play map.1 on top"),
        ("play fix-pick.1 on BOB Pick", "play fix-pick.1 on bob pick"),
        ("play cross.1 at 1, 0", "play cross.1 at 1,0"),
        ("DISCARD Map.1", "discard map.1"),
        ("Discard MAP.1 cross.2 Remove TRAP", "discard map.1 cross.2 remove trap"),
        ("STEAL Nobody", "steal nobody"),
        ("Steal Cat", "steal cat"),
    ],
)
def test_parse_is_case_insensitive(text: str, canonical: str) -> None:
    assert str(parse(text)) == canonical


def test_bare_kinds_are_accepted_and_resolve_to_the_lowest_copy() -> None:
    move = parse("play cross at 1,0")
    assert move.card == "cross"
    hand = ["cross.4", "map.2", "cross.2", "curve-ne.5"]
    assert str(resolve(move, hand)) == "play cross.2 at 1,0"
    assert str(resolve(parse("Play CURVE-NE at 2,0 rotated"), hand)) == "play curve-ne.5 at 2,0 rotated"
    assert str(resolve(parse("play map on middle"), hand)) == "play map.2 on middle"
    assert str(resolve(parse("discard cross"), hand)) == "discard cross.2"
    # two bare copies of one kind take the two lowest copies; a discard lists its cards sorted by id
    assert str(resolve(parse("discard map cross cross"), hand)) == "discard cross.2 cross.4 map.2"
    assert str(resolve(parse("discard map.2 cross.4"), hand)) == "discard cross.4 map.2"


def test_symmetric_cards_lose_rotated() -> None:
    hand = ["cross.1", "straight-ns.1", "dead-ew.1", "curve-nw.1"]
    assert str(resolve(parse("play cross at 1,0 rotated"), hand)) == "play cross.1 at 1,0"
    assert str(resolve(parse("play straight-ns at 0,1 rotated"), hand)) == "play straight-ns.1 at 0,1"
    assert str(resolve(parse("play dead-ew at 1,0 rotated"), hand)) == "play dead-ew.1 at 1,0"
    assert str(resolve(parse("play curve-nw at 1,0 rotated"), hand)) == "play curve-nw.1 at 1,0 rotated"


@pytest.mark.parametrize(
    "text,hand,reason",
    [
        ("play cross at 1,0", ["map.1"], "you hold no cross"),
        ("play cross.2 at 1,0", ["cross.1"], "you do not hold cross.2"),
        ("discard map map", ["map.1"], "you hold no map"),
        ("discard map.1 map.1", ["map.1", "map.2"], "you do not hold map.1"),
    ],
)
def test_resolve_refuses_cards_not_held(text: str, hand: list[str], reason: str) -> None:
    with pytest.raises(IllegalMove) as err:
        resolve(parse(text), hand, text)
    assert err.value.move == text
    assert reason in err.value.reason


# --- malformed input ----------------------------------------------------------------------

MALFORMED = [
    "",
    "   ",
    "jump",
    "place cross at 1,0",
    "play",
    "PLAY",
    "play nothing at 1,0",
    "play cross.0 at 1,0",
    "play cross.6 at 1,0",
    "play cross at",
    "play cross at 1",
    "play cross at 1,0,2",
    "play cross at x,y",
    "play cross at +1,0",
    "play cross at 1 ,0",
    "play cross at 1,0 sideways",
    "play cross at 1,0 rotated twice",
    "play cross 1,0",
    "play cross on",
    "play cross beside bob",
    "play fix-pick on bob hammer",
    "play fix-pick on bob pick now",
    "play map on top of the mine",
    "discard",
    "DISCARD",
    "discard cross map rockfall break-pick",
    "discard unknown-card",
    "discard cross remove trap",
    "discard cross map remove",
    "discard cross map remove everything",
    "discard cross map remove trap theft",
    "steal",
    "steal bob cat",
    "play theft.9",
    "play 'cross' at 1,0",
]


@pytest.mark.parametrize("text", MALFORMED, ids=[repr(t) for t in MALFORMED])
def test_malformed_input_raises_invalid_move_quoting_the_text(text: str) -> None:
    with pytest.raises(InvalidMove) as err:
        parse(text)
    assert err.value.move == text
    assert repr(text) in str(err.value)
    assert err.value.reason


def test_a_refused_move_from_apply_quotes_the_text() -> None:
    state = Game(CLASSIC, ("ann", "bob", "cat")).start_round(SeededChance("quote"))
    for text, error in [("play cross.1 at 50,50", IllegalMove), ("steal bob", IllegalMove), ("Jump Around", InvalidMove)]:
        with pytest.raises(error) as err:
            apply(state, text)
        assert repr(text) in str(err.value)


def test_text_that_does_not_parse_is_not_an_illegal_move() -> None:
    """Two errors, two exit codes: InvalidMove (a usage error) is not an IllegalMove."""
    with pytest.raises(InvalidMove) as err:
        parse("jump")
    assert not isinstance(err.value, IllegalMove)


# --- round trip over generated moves ------------------------------------------------------


@pytest.mark.parametrize(
    "ruleset,players",
    [(CLASSIC, 3), (CLASSIC, 7), (CLASSIC, 10), (EXPANSION, 2), (EXPANSION, 6), (EXPANSION, 12)],
)
def test_round_trip_of_every_generated_move(ruleset: str, players: int) -> None:
    names = tuple(f"p{i}" for i in range(players))
    seen = 0
    for seed in range(4):
        game = Game(ruleset, names)
        bots = {p: RandomBot(f"{seed}/{p}") for p in names}
        rng = random.Random(seed)
        while not game.over:
            state = game.start_round(SeededChance(f"notation/{seed}/{len(game.rounds) + 1}"))
            while state.phase in (PLAYING, THEFT):
                for m in legal_moves(state):
                    text = str(m)
                    assert parse(text) == m, text
                    assert str(parse(text)) == text
                    assert str(parse(text.upper())) == text
                    seen += 1
                move = bots[state.player].choose(state) if rng.random() < 0.5 else rng.choice(legal_moves(state))
                apply(state, str(move))
    assert seen > 1000


@pytest.mark.parametrize("ruleset,players", [(CLASSIC, 4), (EXPANSION, 3)])
def test_legal_texts_on_the_movers_view_are_the_moves_check_accepts(ruleset: str, players: int) -> None:
    """What a seat is offered (its view's legal moves in notation) is every legal move of the
    full state, each read back and accepted by `check` on that view, and nothing more."""
    names = tuple(f"p{i}" for i in range(players))
    seen = 0
    for seed in range(3):
        game = Game(ruleset, names)
        rng = random.Random(seed)
        while not game.over:
            state = game.start_round(SeededChance(f"texts/{seed}/{len(game.rounds) + 1}"))
            while state.phase in (PLAYING, THEFT):
                seen_by_mover = view(state, state.player)
                texts = legal_texts(seen_by_mover)
                assert texts == sorted(str(m) for m in legal_moves(state)) == sorted(set(texts))
                for text in texts:
                    assert str(check(seen_by_mover, text)) == text
                seen += len(texts)
                apply(state, rng.choice(texts))
    assert seen > 1000


# --- the public form (what other seats see) ---------------------------------------------


def test_public_form_of_moves() -> None:
    assert public_text("discard cross.1 map.2") == "discard 2 cards"
    assert public_text("discard cross.1") == "discard 1 card"
    assert public_text("discard cross.1 map.2 remove trap") == "discard 2 cards remove trap"
    assert public_text("discard 2 cards remove trap") == "discard 2 cards remove trap"
    assert public_text("play cross.1 at 3,0") == "play cross.1 at 3,0"
    assert public_text("steal ann") == "steal ann"
    move = parse("discard cross.1 map.2 remove trap")
    assert move.public() == parse("discard 2 cards remove trap", public=True)
    assert move.public().face_down and not move.face_down


@pytest.mark.parametrize("text", ["discard 2 cards", "discard 1 card", "discard 2 cards remove trap"])
def test_a_player_cannot_send_the_public_form(text: str) -> None:
    with pytest.raises(InvalidMove):
        parse(text)


@pytest.mark.parametrize("text", ["discard 4 cards", "discard 2 cards remove", "discard 2 cards remove map",
                                  "discard 2 cards trap"])
def test_malformed_public_forms(text: str) -> None:
    with pytest.raises(InvalidMove):
        parse(text, public=True)
