"""Saboteur's cards drawn as SVG: one face-up card or a face-down goal, and a whole maze.

The replay's page (pbem.replay.html) places these drawings with its script; a host's mail
(pbem.mail.board) shows the maze as one inline <svg> with no script, no link and no id, as a
mail client that runs nothing and fetches nothing draws it.
"""

from __future__ import annotations

from typing import Any

from engine.board import GOAL_CELLS
from engine.catalog import KINDS, card_kind
from engine.shapes import E, N, S, W
from engine.state import RoundState

CW, CH = 50, 72  # a card in the maze, in SVG units (portrait, like the real cards)
TUNNEL = 12
ROCK, SAND = "#5a4331", "#e6d3a3"
DOORS = {"green": "#3fb950", "blue": "#58a6ff"}
_MID = {N: (CW / 2, 0), S: (CW / 2, CH), E: (CW, CH / 2), W: (0, CH / 2)}
_C = (CW / 2, CH / 2)


# --- the cards as SVG ------------------------------------------------------------------------


def _pt(p: tuple[float, float]) -> str:
    return f"{p[0]:g} {p[1]:g}"


def _segment_path(seg: int, through: bool) -> str:
    edges = [e for e in (N, E, S, W) if seg & e]
    if not through:  # a dead end: the tunnel stops short of the middle
        x, y = _MID[edges[0]]
        return f"M{x:g} {y:g}L{x + (_C[0] - x) * 0.45:g} {y + (_C[1] - y) * 0.45:g}"
    if len(edges) == 1:  # a ladder leads down the shaft from the middle
        return f"M{_pt(_MID[edges[0]])}L{_pt(_C)}"
    if len(edges) == 2 and seg in (N | S, E | W):
        return f"M{_pt(_MID[edges[0]])}L{_pt(_MID[edges[1]])}"
    if len(edges) == 2:  # a curve bends round the middle
        return f"M{_pt(_MID[edges[0]])}Q{_pt(_C)} {_pt(_MID[edges[1]])}"
    return "".join(f"M{_pt(_MID[e])}L{_pt(_C)}" for e in edges)


def face_svg(kind: str, rotated: bool) -> str:
    """The inside of one face-up card's <symbol>: rock, tunnels, and its marks."""
    from engine.board import face

    k = KINDS[kind]
    f = face(kind, rotated)
    bg = {"start": "#7b5a3a", "goal-gold": "#c9a227"}.get(kind, "#8d8d8d" if k.category == "goal" else ROCK)
    out = [f'<rect x="1" y="1" width="{CW - 2}" height="{CH - 2}" rx="4" fill="{bg}" stroke="#2b1f16"/>']
    through = [bin(s).count("1") > 1 or (i == 0 and f.ladder) for i, s in enumerate(f.segments)]
    for i, seg in enumerate(f.segments):
        d = _segment_path(seg, through[i])
        colour = DOORS[f.door] if i == 0 and f.door else SAND
        if i > 0:  # a later segment passes over the ones before (a bridge)
            out.append(f'<path d="{d}" stroke="{bg}" stroke-width="{TUNNEL + 8}" fill="none"/>')
        cap = "round" if through[i] else "butt"
        out.append(f'<path d="{d}" stroke="{colour}" stroke-width="{TUNNEL}" stroke-linecap="{cap}" '
                   f'stroke-linejoin="round" fill="none"/>')
    if not any(through):
        out.append(f'<rect x="{CW / 2 - 7:g}" y="{CH / 2 - 7:g}" width="14" height="14" fill="#1d1510"/>')
    if f.ladder:
        out.append('<g stroke="#39c5cf" stroke-width="2"><path d="M36 5V21M44 5V21M36 9H44M36 13H44M36 17H44"/></g>')
    if f.door:
        out.append(f'<rect x="4" y="{CH - 17}" width="9" height="13" rx="2" fill="{DOORS[f.door]}" stroke="#111"/>')
    for c in range(f.crystals):
        x, y = CW - 9 - 9 * c, CH - 9
        out.append(f'<path d="M{x} {y - 5}L{x + 4} {y}L{x} {y + 5}L{x - 4} {y}Z" fill="#d2a8ff" stroke="#8957e5"/>')
    if kind == "start":
        out.append('<text x="5" y="14" font-size="11" font-weight="bold" fill="#fff">S</text>')
    elif kind == "goal-gold":
        out.append('<circle cx="10" cy="11" r="5" fill="#ffe066" stroke="#7a5c00"/>')
    return "".join(out)


def back_svg(known: str | None) -> str:
    """A face-down goal; `known` ('gold'/'stone') when the viewer has seen it."""
    out = [f'<rect x="1" y="1" width="{CW - 2}" height="{CH - 2}" rx="4" fill="#26324a" stroke="#0d1117"/>',
           f'<rect x="6" y="6" width="{CW - 12}" height="{CH - 12}" rx="3" fill="none" stroke="#6e7fa3"/>',
           f'<text x="{CW / 2:g}" y="{CH / 2 + 7:g}" font-size="22" text-anchor="middle" fill="#c9d1d9">?</text>']
    if known == "gold":
        out.append(f'<circle cx="{CW / 2:g}" cy="{CH - 14}" r="6" fill="#ffe066" stroke="#7a5c00"/>')
    elif known == "stone":
        out.append(f'<circle cx="{CW / 2:g}" cy="{CH - 14}" r="6" fill="#9a9a9a" stroke="#444"/>')
    return "".join(out)


def symbol_id(kind: str, rotated: bool) -> str:
    return f"c-{kind}" + ("-r" if rotated and not KINDS[kind].symmetric else "")


def _drawing(sid: str) -> str:
    """The inside of the card drawing named `sid` (symbol_id, or back / back-gold / back-stone)."""
    if sid.startswith("back"):
        return back_svg(sid.partition("-")[2] or None)
    kind, rotated = (sid[2:-2], True) if sid.endswith("-r") else (sid[2:], False)
    return face_svg(kind, rotated)


def symbols(ids: set[str]) -> str:
    """The <symbol> of every card face named in `ids`."""
    return "".join(f'<symbol id="{sid}" viewBox="0 0 {CW} {CH}">{_drawing(sid)}</symbol>' for sid in sorted(ids))


def board_cells(v: RoundState, who: str | None) -> list[list[Any]]:
    """[x, y, symbol id] of every card in `v`'s maze, as `who` sees it (None: as every seat
    does; a goal card `who` peeked at shows what it holds on its back)."""
    facts = v.knowledge.get(who, []) if who is not None else []
    known = {f[1]: card_kind(f[2]).kind for f in facts if f and f[0] == "map" and f[2] != "?"}
    cells = []
    for (x, y), tile in sorted(v.board.cells.items()):
        if tile.hidden:
            name = next(g for g, pos in GOAL_CELLS.items() if pos == (x, y))
            kind = card_kind(tile.card).kind if tile.card != "?" else known.get(name)
            sid = "back" if kind is None else "back-gold" if kind == "goal-gold" else "back-stone"
        else:
            sid = symbol_id(card_kind(tile.card).kind, tile.rotated)
        cells.append([x, y, sid])
    return cells


# --- a maze, drawn whole ----------------------------------------------------------------------

GRID = "#3a3f47"  # the empty places' outlines and the coordinates


def maze_svg(cells: list[list[Any]]) -> str:
    """The maze of `cells` (board_cells) as one <svg> that scales to the width it is given (a
    phone's 390 px shows the 9 columns of a new maze): each card's drawing inline, no <use>
    or id that a mail client could drop, the columns and rows numbered as moves name them."""
    x0, x1, y0, y1 = 0, 8, -2, 2
    for x, y, _ in cells:
        x0, x1, y0, y1 = min(x0, x), max(x1, x), min(y0, y), max(y1, y)
    pad = 18
    w, h = (x1 - x0 + 1) * CW + pad, (y1 - y0 + 1) * CH + pad
    out = [f'<svg viewBox="{-pad} {-pad} {w} {h}" width="{w}" height="{h}" '
           f'style="display:block;width:100%;max-width:{w}px;height:auto" role="img">']
    for x in range(x0, x1 + 1):
        out.append(f'<text x="{(x - x0) * CW + CW / 2:g}" y="-5" font-size="11" fill="#8b949e" '
                   f'text-anchor="middle">{x}</text>')
        out += [f'<rect x="{(x - x0) * CW + 2}" y="{(y - y0) * CH + 2}" width="{CW - 4}" height="{CH - 4}" rx="4" '
                f'fill="none" stroke="{GRID}"/>' for y in range(y0, y1 + 1)]
    out += [f'<text x="-6" y="{(y - y0) * CH + CH / 2 + 4:g}" font-size="11" fill="#8b949e" text-anchor="end">{y}</text>'
            for y in range(y0, y1 + 1)]
    for x, y, sid in cells:
        out.append(f'<svg x="{(x - x0) * CW}" y="{(y - y0) * CH}" width="{CW}" height="{CH}" '
                   f'viewBox="0 0 {CW} {CH}">{_drawing(sid)}</svg>')
    return "".join(out) + "</svg>"
