"""The table as text: the maze drawn with box characters, a hand and the legend (one seat's
whole view of a round is pbem.ui.seatview).

Every function returns a rich renderable (nothing prints on import); `plain_text` turns one
into colourless text for mails and tests.

A cell is 7 characters by 3 lines. The tunnel arms run from the middle of the cell to the
middle of each open edge, so the arms of neighbouring cards join into one line:

        │           N arm: line 0, column 3
     ───┼───        W and E arms: line 1, columns 0-2 and 4-6; the centre is column 3
        │           S arm: line 2, column 3

The four corners (3 characters each) carry the marks: start/goal tag top left, ladder top
right, door bottom left, crystals bottom right. A stub (a dead-end opening) is drawn as a
half line that stops short of the centre; a card of stubs only has a block in the centre.
Nine 7-character columns and a 4-character row label make 67 columns for the 5 x 9 maze.
"""

from __future__ import annotations

import io
from collections.abc import Iterable

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Span, Text

from engine.board import GOAL_CELLS, Board, Face, Tile, face
from engine.catalog import KINDS, card_kind, is_card_id
from engine.moves import shown_hand
from engine.shapes import E, N, S, W, format_mask
from pbem.ui import words
from pbem.ui.hints import TURNED, CellHints, marks
from pbem.ui.words import t

CELL_W, CELL_H = 7, 3
LABEL_W = 4
DEFAULT_AREA = ((0, -2), (8, 2))  # always drawn: the start, the goals and the 5 x 9 between

# The centre character of a segment joining these edges.
_JOIN = {
    N | S: "│", E | W: "─", N | E: "└", N | W: "┘", E | S: "┌", S | W: "┐",
    N | E | S: "├", N | S | W: "┤", E | S | W: "┬", N | E | W: "┴", N | E | S | W: "┼",
    N: "╵", E: "╶", S: "╷", W: "╴",
}
# Where each edge's arm goes: (line, first column, full arm, stub arm).
_ARM = {
    N: (0, 3, "│", "╵"),
    S: (2, 3, "│", "╷"),
    W: (1, 0, "───", "──╴"),
    E: (1, 4, "───", "╶──"),
}
DEAD_END = "■"
BRIDGE = "╴│╶"  # the centre of a bridge: E-W broken under N-S
DOUBLE_CURVE = "╱"  # the centre of NW|SE: the wall between the two curves
CRYSTAL = "◆"
LADDER = "H"

STYLE = {
    "tunnel": "",
    "start": "bold",
    "gold": "bold yellow",
    "stone": "grey50",
    "hidden": "bright_black",
    "ask": "bold",
    "empty": "grey35",
    "ladder": "bold cyan",
    "crystal": "bold magenta",
    "green": "bold green",
    "blue": "bold blue",
    "label": "dim",
    "hint": "bold bright_green",
}

Grid = list[list[tuple[str, str]]]  # lines of (char, style)


class Geometry:
    """Where a cell's pieces go. FULL is the 7 x 3 cell of the module docstring; COMPACT is
    3 x 3 (one character per arm, marks in the corners) for terminals narrower than the maze."""

    def __init__(self, w: int, label_w: int, arms: dict[int, tuple[int, int, str, str]], centre: int,
                 marks: dict[str, tuple[int, int]], box: tuple[str, ...]) -> None:
        self.w, self.h, self.label_w = w, CELL_H, label_w
        self.arms, self.centre, self.marks, self.box = arms, centre, marks, box

    def width(self, columns: int) -> int:
        return self.label_w + self.w * columns


FULL = Geometry(CELL_W, LABEL_W, _ARM, 3, {"tag": (0, 1), "ladder": (0, 5), "door": (2, 0), "crystal": (2, 4)},
                ("╭───╮", "│   │", "╰───╯"))
COMPACT = Geometry(3, 3, {N: (0, 1, "│", "╵"), S: (2, 1, "│", "╷"), W: (1, 0, "─", "╴"), E: (1, 2, "─", "╶")}, 1,
                   {"tag": (0, 0), "ladder": (0, 2), "door": (2, 0), "crystal": (2, 2)}, ("╭─╮", "│ │", "╰─╯"))


def _blank(geo: Geometry = FULL) -> Grid:
    return [[(" ", "") for _ in range(geo.w)] for _ in range(geo.h)]


def _put(grid: Grid, line: int, col: int, text: str, style: str) -> None:
    for i, ch in enumerate(text):
        grid[line][col + i] = (ch, style)


def _tunnels(grid: Grid, f: Face, style: str, geo: Geometry = FULL) -> None:
    """Draw the arms and the centre of a face-up card."""
    door_style = STYLE.get(f.door or "", style)
    # A one-edge segment is a stub unless it carries the ladder (then it leads down the shaft).
    through = [i for i, seg in enumerate(f.segments) if bin(seg).count("1") > 1 or (i == 0 and f.ladder)]
    for i, seg in enumerate(f.segments):
        seg_style = door_style if i == 0 and f.door else style
        for edge, (line, col, full, stub) in geo.arms.items():
            if seg & edge:
                _put(grid, line, col, full if i in through else stub, seg_style)
    centre_style = door_style if through and through[0] == 0 and f.door else style
    if not through:
        centre = DEAD_END
    elif len(through) == 1:
        centre = _JOIN[f.segments[through[0]]]
    elif {f.segments[i] for i in through} == {N | S, E | W}:
        # A bridge: the N-S tunnel passes over, the E-W one is broken beside it.
        _put(grid, 1, geo.centre - 1, BRIDGE, style)
        return
    else:
        # Two curves back to back (NW|SE): the wall between them runs corner to corner.
        centre = DOUBLE_CURVE
    _put(grid, 1, geo.centre, centre, centre_style)


def cell_grid(tile: Tile | None, known: str | None = None, geo: Geometry = FULL) -> Grid:
    """The drawing of one cell (`known`: a face-down goal's card learned by a map)."""
    c = geo.centre
    grid = _blank(geo)
    if tile is None:
        _put(grid, 1, c, "·", STYLE["empty"])
        return grid
    if tile.hidden:
        box = STYLE["hidden"]
        left = c - len(geo.box[0]) // 2
        for line, part in enumerate(geo.box):
            _put(grid, line, left, part, box)
        # The full state knows the card; a view knows it only from a map.
        card = tile.card if tile.card != "?" else known
        if card is None:
            _put(grid, 1, c, "?", STYLE["ask"])
        else:
            gold = card_kind(card).kind == "goal-gold"
            if geo is FULL:
                _put(grid, 1, c - 1, "?", STYLE["ask"])
            _put(grid, 1, c, "$" if gold else "#", STYLE["gold" if gold else "stone"])
        return grid
    k = card_kind(tile.card)
    tag = geo.marks["tag"]
    if k.kind == "start":
        _tunnels(grid, tile.face, STYLE["start"], geo)
        _put(grid, *tag, "S", STYLE["start"])
        return grid
    if k.category == "goal":
        gold = k.kind == "goal-gold"
        style = STYLE["gold" if gold else "stone"]
        _tunnels(grid, tile.face, style, geo)
        _put(grid, *tag, "$" if gold else "#", style)
        return grid
    _tunnels(grid, tile.face, STYLE["tunnel"], geo)
    if tile.face.ladder:
        _put(grid, *geo.marks["ladder"], LADDER, STYLE["ladder"])
    if tile.face.door:
        door = f"[{tile.face.door[0]}]" if geo is FULL else tile.face.door[0]
        _put(grid, *geo.marks["door"], door, STYLE[tile.face.door])
    if tile.face.crystals:
        many = min(tile.face.crystals, 3) if geo is FULL else 1
        _put(grid, *geo.marks["crystal"], CRYSTAL * many, STYLE["crystal"])
    return grid


class _Styled:
    """A Text's characters and spans, gathered as Text.append would make them (one span per
    styled piece: a colour terminal gets each piece's own escape codes, as before) but without
    a call of append each (a maze is ~1,000 of them)."""

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.spans: list[Span] = []
        self.at = 0

    def add(self, text: str, style: str = "") -> None:
        if style and text:
            self.spans.append(Span(self.at, self.at + len(text), style))
        self.chars.append(text)
        self.at += len(text)

    def cells(self, cells: Iterable[tuple[str, str]]) -> None:
        spans, at = self.spans, self.at
        for ch, style in cells:
            if style:
                spans.append(Span(at, at + 1, style))
            at += 1
            self.chars.append(ch)
        self.at = at

    def text(self) -> Text:
        # no control codes to strip: box characters, digits and card marks only
        return Text("".join(self.chars), no_wrap=True, overflow="ignore", spans=self.spans)


def maze_area(board: Board, also: Iterable[tuple[int, int]] = ()) -> tuple[tuple[int, int], tuple[int, int]]:
    """The bounding box of the placed cards (and the cells `also`), never smaller than the default 5 x 9."""
    cells = [*board.cells, *also, *DEFAULT_AREA]
    xs = [p[0] for p in cells]
    ys = [p[1] for p in cells]
    return (min(xs), min(ys)), (max(xs), max(ys))


def hint_grid(fits: CellHints, geo: Geometry = FULL) -> Grid:
    """An empty cell marked with the hand numbers of the cards that fit it: as they lie above
    the dot, turned round (after ↻) below it (pbem.ui.hints)."""
    grid = cell_grid(None, geo=geo)
    upright, turned = fits
    for line, text in ((0, marks(upright, geo.w)), (2, marks(turned, geo.w, TURNED))):
        _put(grid, line, (geo.w - len(text)) // 2, text, STYLE["hint"])
    return grid


def maze_text(board: Board, *, known_goals: dict[str, str] | None = None, geo: Geometry = FULL,
              dense: bool = False, hints: dict[tuple[int, int], CellHints] | None = None) -> Text:
    """The maze with x across the top and y down the side, in cells of `geo`.

    `known_goals` (goal name -> card id) marks face-down goals a player has seen with a map.
    `dense`: neighbouring rows share one line (the bottom line of a row is the top line of the
    next; in a legal maze their arms line up), 2 lines a row instead of 3, for a short terminal.
    `hints` (cell -> numbers, see hint_grid) marks where the seat's path cards fit (not dense).
    """
    hints = hints or {}
    (x0, y0), (x1, y1) = maze_area(board, hints)
    known_at = {GOAL_CELLS[g]: c for g, c in (known_goals or {}).items() if g in GOAL_CELLS}
    lines: list[tuple[str, list[tuple[str, str]]]] = []  # (row label, the line's cells)
    for y in range(y0, y1 + 1):
        grids = [hint_grid(hints[(x, y)], geo) if (x, y) in hints and (x, y) not in board.cells
                 else cell_grid(board.cells.get((x, y)), known_at.get((x, y)), geo) for x in range(x0, x1 + 1)]
        rows = [("", [c for g in grids for c in g[line]]) for line in range(geo.h)]
        rows[1] = (str(y), rows[1][1])
        if dense and lines:
            lines[-1] = ("", _shared_line(lines[-1][1], rows[0][1]))
            rows = rows[1:]
        lines += rows
    out = _Styled()
    out.add(" " * geo.label_w)
    for x in range(x0, x1 + 1):
        out.add(f"{x:^{geo.w}}"[: geo.w], STYLE["label"])
    for label, cells in lines:
        out.add("\n")
        out.add(f"{label:>{geo.label_w - 1}} " if label else " " * geo.label_w, STYLE["label"])
        out.cells(cells)
    return out.text()


_VERTICAL = frozenset("│╷╵")


def _shared_line(upper: list[tuple[str, str]], lower: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The bottom line of one maze row drawn over the top line of the next (see maze_text's dense):
    two halves of a vertical tunnel join into one; otherwise the lower row's mark wins over a blank."""
    out = []
    for a, b in zip(upper, lower):
        if b[0] == " ":
            out.append(a)
        elif a[0] in _VERTICAL and b[0] in _VERTICAL:
            out.append(("│", b[1] or a[1]))
        else:
            out.append(b)
    return out


class Maze:
    """The maze as a renderable that fits the console: full cells when there is room, else
    compact 3 x 3 cells with a line saying so. The start, every goal and every card are
    always drawn; nothing is cut off at the right edge."""

    def __init__(self, board: Board, known_goals: dict[str, str] | None = None, dense: bool = False,
                 hints: dict[tuple[int, int], CellHints] | None = None) -> None:
        self.board, self.known, self.dense, self.hints = board, known_goals, dense, hints
        (x0, _), (x1, _) = maze_area(board, hints or ())
        self.columns = x1 - x0 + 1

    def geometry(self, width: int) -> Geometry:
        return FULL if FULL.width(self.columns) <= width else COMPACT

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        geo = self.geometry(options.max_width)
        yield maze_text(self.board, known_goals=self.known, geo=geo, dense=self.dense, hints=self.hints)
        if geo is COMPACT:
            yield Text(t("compact maze: the terminal is {width} columns wide, the full maze needs {full}",
                         width=options.max_width, full=FULL.width(self.columns)), style=STYLE["label"])

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(COMPACT.width(self.columns), FULL.width(self.columns))


def render_maze(board: Board, *, known_goals: dict[str, str] | None = None, dense: bool = False,
                hints: dict[tuple[int, int], CellHints] | None = None) -> Maze:
    """The maze, drawn to fit the console it is printed on (see Maze; dense, hints: see maze_text)."""
    return Maze(board, known_goals, dense, hints)


# Glyph and word of each legend item; the expansion's pieces only when they can appear.
_LEGEND = (("S", "lg start"), ("?", "lg goal"), ("$", "lg gold"), ("#", "lg stone"), (DEAD_END, "lg dead end"))
_LEGEND_EXPANSION = (
    (LADDER, "lg ladder"), ("[g][b]", "lg door"), (CRYSTAL, "lg crystal"), (BRIDGE, "lg bridge"),
    (DOUBLE_CURVE, "lg double curve"),
)


def packed(items: Iterable[str], width: int, sep: str = "   ") -> list[str]:
    """`items` joined by `sep` into as few lines of at most `width` cells as there can be, an item
    never split (a line break never falls inside one; one wider than `width` has its own line)."""
    lines: list[str] = []
    for item in items:
        if lines and cell_len(lines[-1] + sep + item) <= width:
            lines[-1] += sep + item
        else:
            lines.append(item)
    return lines


class Packed:
    """`packed` as a renderable: the items fill the console's width (rich would break a line
    inside an item: "dwarf" / "cards aside: 11")."""

    def __init__(self, items: list[str], style: str = "", sep: str = "   ") -> None:
        self.items, self.style, self.sep = items, style, sep

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in packed(self.items, options.max_width, self.sep):
            yield Text(line, style=self.style)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(max((cell_len(i) for i in self.items), default=0), cell_len(self.sep.join(self.items)))


def render_legend(ruleset: str = "expansion", width: int = 78) -> Text:
    """What the maze's marks mean, packed into lines of at most `width` cells (a line break never
    falls between a glyph and its word)."""
    items = _LEGEND + (_LEGEND_EXPANSION if ruleset != "classic" else ())
    return Text("\n".join(packed((f"{glyph} {t(key)}" for glyph, key in items), width)), style=STYLE["label"])


# --- cards -------------------------------------------------------------------------------


def shape_code(card: str) -> str:
    """`NES|W crystal`: the shape notation of RULES.md §1 for a path card, else ""."""
    k = KINDS.get(card) or (card_kind(card) if is_card_id(card) else None)
    if k is None or k.category not in ("path", "start", "goal"):
        return ""
    code = "|".join(_segment_code(s) for s in k.segments)
    mods = (["ladder"] if k.ladder else []) + ([f"door:{k.door}"] if k.door else []) + ["crystal"] * k.crystals
    return " ".join([code, *mods])


def _segment_code(mask: int) -> str:
    """A segment as RULES.md writes it: its edges in N, E, S, W order, except that a curve names
    its north or south edge first (`NE`, `NW`, `SE`, `SW`: the double curve is `NW|SE`)."""
    letters = format_mask(mask)
    if len(letters) == 2 and letters[0] in "EW" and letters[1] in "NS":
        return letters[::-1]
    return letters


def render_hand(cards: list[str]) -> RenderableType:
    """A hand: numbered rows (id, name, shape), then the path cards drawn, numbered alike."""
    if not cards:
        return Text(t("empty hand"), style="dim")
    cards = shown_hand(cards)  # numbered as the notation reads them ("play 3 at 1,0")
    table = Table(box=None, show_header=True, header_style="dim", pad_edge=False)
    for col in ("#", t("card"), t("name"), t("shape")):
        table.add_column(Text(col))
    strip: list[tuple[int, Grid]] = []
    for i, cid in enumerate(cards, 1):
        table.add_row(*text_cells(str(i), cid, words.card_name(cid), shape_code(cid)))
        if is_card_id(cid) and card_kind(cid).category == "path":
            k = card_kind(cid)
            tile = Tile(cid, False, face(k.kind, False))
            strip.append((i, cell_grid(tile)))
    if not strip:
        return table
    # Path cards as they lie unturned; 8 columns each (a space between cards).
    art = _Styled()
    art.add("".join(f"{i:^{CELL_W}} " for i, _ in strip), STYLE["label"])
    for line in range(CELL_H):
        art.add("\n")
        for _, grid in strip:
            art.cells(grid[line])
            art.add(" ")
    return Group(table, art.text())


def text_cells(*texts: str) -> list[Text]:
    """A table row's cells as Text: a str cell went through rich's markup and emoji codes (and
    loaded its table of emoji names), which no name, card or count of a seat's
    view holds (seat names are lower-case letters, digits, - and _; tests/test_render.py
    checks every card and role name in every language), so the cells are the same."""
    return [Text(w) for w in texts]


def plain_text(renderable: RenderableType, width: int = 80) -> str:
    """Render without colour or styles; lines keep no trailing spaces."""
    buf = io.StringIO()
    from pbem.ui.terminal import console as new_console

    console = new_console(file=buf, width=width, color_system=None, force_terminal=False, legacy_windows=False)
    # console.print joins bare Text objects into a new Text, losing no_wrap; a Group keeps it.
    console.print(Group(renderable), crop=False, soft_wrap=False)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"
