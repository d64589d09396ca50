"""pbem.ui.render: the maze and a seat's view, as plain text."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len

from engine.board import GOAL_CELLS
from engine.chance import SeededChance
from engine.position import load
from engine.state import deal
from engine.views import view
from pbem.ui import words
from pbem.ui.render import CRYSTAL, DEAD_END, LADDER, cell_grid, plain_text, render_maze
from pbem.ui.seatview import render_view

PLAYERS = ("ann", "bob", "cat", "dan", "eve")


@pytest.fixture
def dealt():
    return deal("classic", PLAYERS, SeededChance(1))


def _cell(tile) -> list[str]:
    return ["".join(ch for ch, _ in line) for line in cell_grid(tile)]


def test_default_maze_fits_80_columns(dealt) -> None:
    text = plain_text(render_maze(dealt.board))
    lines = text.splitlines()
    assert all(cell_len(line) <= 80 for line in lines)
    assert len(lines) == 1 + 5 * 3  # column headers, then 5 rows of 3 lines
    for x in range(9):
        assert str(x) in lines[0]
    assert text.count("?") == 3  # three face-down goals
    assert "S" in text


def test_views_fit_80_columns(dealt) -> None:
    for lang in words.LANGUAGES:
        with words.using(lang):
            for me in (None, "ann"):
                text = plain_text(render_view(view(dealt, me) if me else dealt, me))
                assert all(cell_len(line) <= 80 for line in text.splitlines()), (lang, me)


def test_larger_maze_is_not_cropped() -> None:
    doc = {
        "format": "pbem-position/1", "ruleset": "classic", "players": ["ann", "bob", "cat"], "to_move": "ann",
        "board": [{"at": [x, 0], "card": "straight-ew"} for x in (-1, -2, -3)] + [{"at": [-4, 0], "card": "cross"}],
    }
    text = plain_text(render_maze(load(doc).board), width=80)
    assert text.splitlines()[0].split() == [str(x) for x in range(-4, 9)]  # no column lost
    assert max(cell_len(line) for line in text.splitlines()) <= 80 and "compact maze" in text
    wide = plain_text(render_maze(load(doc).board), width=100)
    assert wide.splitlines()[0].split() == [str(x) for x in range(-4, 9)] and "compact" not in wide


def test_dense_maze_shares_row_edges_and_keeps_every_card() -> None:
    """The replay's full screen on a short terminal: 2 lines a row, tunnels still joined."""
    doc = {
        "format": "pbem-position/1", "ruleset": "classic", "players": ["ann", "bob", "cat"], "to_move": "ann",
        "board": [{"at": [0, y], "card": "straight-ns"} for y in (1, 2, 3)] + [{"at": [0, 4], "card": "dead-n"}]
        + [{"at": [1, 0], "card": "straight-ew"}],
    }
    board = load(doc).board
    usual = plain_text(render_maze(board)).splitlines()
    dense = plain_text(render_maze(board, dense=True)).splitlines()
    assert len(usual) == 1 + 7 * 3 and len(dense) == 1 + 7 * 2 + 1  # rows -2..4
    labels = [line.split()[0] for line in dense[1:] if line[:4].strip().lstrip("-").isdigit()]
    assert labels == [str(y) for y in range(-2, 5)]
    column = [line[4 + 3] if len(line) > 7 else " " for line in dense[1:]]  # x = 0: the start's column
    rows_0_to_4 = "".join(column[dense[1:].index(next(ln for ln in dense[1:] if ln.startswith("  0"))):])
    assert rows_0_to_4.startswith("┼│││││││■")  # one unbroken tunnel from the start down to the dead end
    assert "".join(dense).count("?") == 3 and "S" in "".join(dense)


@pytest.mark.parametrize("width", [40, 60, 80])
def test_narrow_terminals_show_start_goals_and_every_card(dealt, width: int) -> None:
    """At 60 columns column 8 (the goals) is not cut off without a mark."""
    text = plain_text(render_view(view(dealt, "ann"), "ann"), width=width)
    lines = text.splitlines()
    assert all(cell_len(line) <= width for line in lines), width
    header = next(line for line in lines if line.split()[:2] == ["0", "1"])
    assert header.split() == [str(x) for x in range(9)]
    maze = "\n".join(lines[lines.index(header): lines.index(header) + 16])
    assert maze.count("?") == 3 and "S" in maze  # the start and the three face-down goals
    assert ("compact maze" in text) == (width < 67)


def test_full_state_shows_every_hand_and_role(dealt) -> None:
    text = plain_text(render_view(dealt, None, last_moves=["ann placed a crossing at 1,0"], header={"game": "g1"}))
    for p in PLAYERS:
        for card in dealt.hands[p]:
            assert card in text
    assert "saboteur" in text and "gold-digger" in text
    assert "ann placed a crossing at 1,0" in text
    assert "game: g1" in text


def test_view_hides_other_hands(dealt) -> None:
    mine = view(dealt, "ann")
    text = plain_text(render_view(mine, "ann"))
    for card in dealt.hands["ann"]:
        assert card in text
    for p in PLAYERS[1:]:
        for card in dealt.hands[p]:
            assert card not in text, f"{p}'s {card} leaked into ann's view"
    assert f"your role: {words.role_name(dealt.roles['ann'])}" in text
    # Nobody else's role is shown, and the face-down goals stay unknown.
    others = {words.role_name(dealt.roles[p]) for p in PLAYERS[1:]} - {words.role_name(dealt.roles["ann"])}
    for role in others:
        assert role not in text
    assert "$" not in plain_text(render_maze(mine.board))


def test_map_knowledge_marks_the_goal(dealt) -> None:
    dealt.knowledge["ann"].append(["map", "top", dealt.board.goal_card("top")])
    mine = view(dealt, "ann")
    text = plain_text(render_view(mine, "ann"))
    assert "what you know: the top goal is" in text
    top_row = plain_text(render_maze(mine.board, known_goals={"top": dealt.board.goal_card("top")})).splitlines()[2]
    assert "?$" in top_row or "?#" in top_row


EXPANSION_DOC = {
    "format": "pbem-position/1",
    "ruleset": "expansion",
    "players": ["ann", "bob", "cat"],
    "roles": {"ann": "green", "bob": "saboteur", "cat": "geologist"},
    "revealed": ["top", "middle"],
    "rotated_goals": ["top"],
    "board": [
        {"at": [1, 0], "card": "bridge"},
        {"at": [2, 0], "card": "cross"},
        {"at": [3, 0], "card": "door-green-ew"},
        {"at": [4, 0], "card": "door-blue-ew"},
        {"at": [2, 1], "card": "ladder-nw"},
        {"at": [2, -1], "card": "crystal-ns"},
        {"at": [3, 1], "card": "crystal-nes-w"},
        {"at": [1, -1], "card": "dead-nesw"},
        {"at": [1, 1], "card": "double-curve"},
    ],
    "hands": {"ann": ["bridge", "ladder-sw", "crystal-cross", "theft"], "bob": ["trap"], "cat": ["free"]},
    "in_front": {"bob": ["trap"]},
    "deck": ["cross"],
    "to_move": "ann",
}


def test_expansion_pieces_have_distinct_glyphs() -> None:
    state = load(EXPANSION_DOC)
    cells = state.board.cells
    bridge, cross = _cell(cells[(1, 0)]), _cell(cells[(2, 0)])
    assert cross[1] == "───┼───"
    assert bridge[1] == "──╴│╶──"  # the E-W tunnel passes under: broken, not joined
    assert bridge != cross
    assert _cell(cells[(1, 1)])[1][3] not in "┼│─"  # a double curve is not a crossing either
    assert LADDER in "".join(_cell(cells[(2, 1)]))
    green, blue = "".join(_cell(cells[(3, 0)])), "".join(_cell(cells[(4, 0)]))
    assert "[g]" in green and "[b]" in blue and green != blue
    assert CRYSTAL in "".join(_cell(cells[(2, -1)]))
    assert CRYSTAL in "".join(_cell(cells[(3, 1)]))
    dead = _cell(cells[(1, -1)])
    assert dead[1] == f"──╴{DEAD_END}╶──"  # four stubs around a block, unlike the cross
    assert "╴" in _cell(cells[(3, 1)])[1]  # the crystal card's W stub stops short
    gold, stone = "".join(_cell(cells[GOAL_CELLS["middle"]])), "".join(_cell(cells[GOAL_CELLS["top"]]))
    assert "$" in gold and "#" in stone
    assert "?" in "".join(_cell(cells[GOAL_CELLS["bottom"]]))
    text = plain_text(render_view(view(state, "ann"), "ann"))
    for glyph in ("╴│╶", LADDER, "[g]", "[b]", CRYSTAL, DEAD_END, "$", "#", "?"):
        assert glyph in text, glyph
    assert "trap" in text  # bob's card in front
    assert "green gold-digger" in text


def test_colours_tell_doors_and_goals_apart() -> None:
    state = load(EXPANSION_DOC)
    styles = lambda pos: {style for line in cell_grid(state.board.cells[pos]) for ch, style in line if ch != " "}  # noqa: E731
    assert any("green" in s for s in styles((3, 0)))
    assert any("blue" in s for s in styles((4, 0)))
    assert any("yellow" in s for s in styles(GOAL_CELLS["middle"]))
    assert not any("yellow" in s for s in styles(GOAL_CELLS["top"]))


def test_chinese_view() -> None:
    state = load(EXPANSION_DOC)
    with words.using("zh-Hant"):
        text = plain_text(render_view(view(state, "ann"), "ann"))
    assert "你的手牌" in text and "綠隊掘金者" in text and "橋樑" in text


def test_table_cells_given_as_text_are_what_markup_made_of_them() -> None:
    """The tables of render.py and seatview.py take their cells as Text (no markup, no emoji codes: rich's markup
    path loads ~4,000 emoji names); so every word a cell can hold renders as it did as a str:
    every card and role name, column heading and count word in every language, and the marks."""
    from rich.markup import render as markup

    from engine.catalog import KINDS
    from pbem.ui.render import shape_code

    try:
        for lang in words.LANGUAGES:
            words.set_language(lang)
            cells = ["▶", "-", "ann *", "12", *(words.card_name(k) for k in KINDS), *(shape_code(k) for k in KINDS),
                     words.role_name(None), *(words.t(w) for w in ("card", "name", "shape", "player", "role",
                                                                   "hand sizes", "gold", "cards in front"))]
            for cell in cells:
                made = markup(cell, emoji=True)
                assert (made.plain, made.spans) == (cell, []), (lang, cell)
    finally:
        words.set_language("en")


def _appended(board, geo) -> list[tuple[str, object]]:
    """maze_text's lines built the plain way, one Text.append per character: the oracle."""
    from rich.text import Text

    from pbem.ui.render import cell_grid, maze_area

    (x0, y0), (x1, y1) = maze_area(board)
    out = Text(no_wrap=True, overflow="ignore")
    out.append(" " * geo.label_w)
    for x in range(x0, x1 + 1):
        out.append(f"{x:^{geo.w}}"[: geo.w], "dim")
    for y in range(y0, y1 + 1):
        grids = [cell_grid(board.cells.get((x, y)), None, geo) for x in range(x0, x1 + 1)]
        for line in range(geo.h):
            out.append("\n")
            label = str(y) if line == 1 else ""
            out.append(f"{label:>{geo.label_w - 1}} " if label else " " * geo.label_w, "dim")
            for g in grids:
                for ch, style in g[line]:
                    out.append(ch, style or None)
    return [(out.plain, out.spans)]


def test_the_maze_text_has_the_spans_one_append_per_character_made() -> None:
    """maze_text gathers characters and spans without a Text.append each (render._Styled): the
    same text and the same spans, one per styled character (a colour terminal's escape codes
    come per span, so merging them would change the bytes)."""
    from engine.bots import RandomBot
    from engine.rules import apply
    from engine.state import PLAYING
    from pbem.ui.render import COMPACT, FULL, maze_text

    state = deal("expansion", PLAYERS, SeededChance(3))
    bot = RandomBot(3)
    for turn in range(40):
        if turn % 8 == 0:
            for geo in (FULL, COMPACT):
                made = maze_text(state.board, geo=geo)
                assert [(made.plain, made.spans)] == _appended(state.board, geo)
                assert (made.no_wrap, made.overflow) == (True, "ignore")
        if state.phase != PLAYING:
            break
        apply(state, bot.choose(view(state, state.player)))


@pytest.mark.parametrize("lang", words.LANGUAGES)
def test_the_counts_line_breaks_between_counts_only(lang: str) -> None:
    """At 80 columns a Saboteur 2 table's counts were broken inside one ("... out of this round:
    10 cards   dwarf" / "cards aside: 11"): a line now breaks only between two counts."""
    state = deal("expansion", PLAYERS[:4], SeededChance(1))
    with words.using(lang):
        counts = [words.t("deck", n=len(state.deck)), words.t("removed", n=len(state.removed)),
                  words.t("aside", n=len(state.aside))]
        lines = plain_text(render_view(view(state, "ann"), "ann"), width=80).splitlines()
    assert len(state.aside) == 11
    for count in counts:
        assert any(count in line for line in lines), (count, lines)


def test_every_shape_in_a_hand_is_written_as_rules_md_writes_it() -> None:
    """The hand's shape column gives each path card the code of RULES.md's catalog (§2): the
    double curve is `NW|SE` there and in the hand, not `NW|ES`."""
    import re

    from engine.catalog import KINDS
    from pbem.ui.render import shape_code

    spec = (Path(__file__).resolve().parents[1] / "docs" / "RULES.md").read_text(encoding="utf-8")
    codes = {m[1]: m[2] for m in re.finditer(r"^\| ([a-z0-9-]+) \| `([^`]+)` \|", spec, re.M) if m[1] in KINDS}
    assert len(codes) > 30 and codes["double-curve"] == "NW|SE"
    assert {kind: shape_code(kind) for kind in codes} == codes


def test_a_map_whose_card_is_not_open_yet_draws_and_tells_nothing_of_it(dealt) -> None:
    """A trustless seat knows which goal its map looked at before the card's tokens are in: the
    fact holds "?" then. The seat's screen neither fails on it (it once ended `pbem turn` with
    exit 70, KeyError '?') nor says the goal is stone, which nobody knows yet."""
    seen = view(dealt, "ann")
    seen.knowledge["ann"] = [["map", "top", "?"]]
    text = " ".join(plain_text(render_view(seen, "ann")).split())
    for card in ("goal stone", "goal gold"):
        assert words.t("knows map", goal=words.goal_name("top"), card=words.t(card)) not in text, text
    assert text.count("?") >= 3  # the goal is still drawn face down
