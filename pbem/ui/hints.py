"""Where a seat's cards go now (`pbem show --hints`, `pbem turn --hints`), and its legal moves
in notation (`"legal"` of `pbem show --json`).

Both come from the engine's legal-move generation on the seat's own view (engine.rules), so
a mark on the maze is a move `pbem move` takes. A path card is marked by its number in the
hand as shown (`play 3 at 1,0` plays the third): above an empty cell's dot the cards that fit
there as they lie, below it (after ↻) those that fit turned round (`... rotated`). Copies of
one kind carry the same marks. The action cards' legal targets are listed in words.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.catalog import HIDDEN, KINDS, card_kind
from engine.moves import Move, Pos, shown_hand
from engine.state import PLAYING, THEFT, RoundState
from pbem.ui import words
from pbem.ui.words import t

TURNED = "↻"  # before the numbers of the cards that fit a cell turned round
CellHints = tuple[tuple[int, ...], tuple[int, ...]]  # (numbers that fit as they lie, numbers that fit turned)


def _playable(view: RoundState, seat: str) -> RoundState | None:
    """`view` if `seat` is to move on it (its hand without the cards it cannot see yet: a
    trustless seat's cards whose tokens are not all in), else None."""
    if view.phase not in (PLAYING, THEFT) or view.player != seat:
        return None
    hand = view.hands.get(seat, [])
    if HIDDEN in hand:
        view = view.copy()
        view.hands[seat] = [c for c in hand if c != HIDDEN]
    return view


def legal_for(view: RoundState, seat: str) -> list[str]:
    """Every legal move of `seat` now, in notation, sorted (empty when it is not its turn)."""
    from engine.rules import legal_texts

    mine = _playable(view, seat)
    return legal_texts(mine) if mine is not None else []


@dataclass
class Hints:
    """A seat's hints: cell -> (numbers of the cards that fit it as they lie, numbers of those
    that fit it turned round), and the lines that say the rest."""

    cells: dict[Pos, CellHints] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)


def hints_for(view: RoundState, seat: str) -> Hints:
    """Where each card of `seat`'s hand goes now on `view` (the seat's view of the round)."""
    from engine.rules import legal_moves

    mine = _playable(view, seat)
    if mine is None:
        return Hints(lines=[t("no hints: the table does not wait for your move")])
    if mine.phase == THEFT:
        thefts = [m.target for m in legal_moves(mine) if m.target]
        return Hints(lines=[t("whom you may rob (steal NAME): {players}", players=words.listing([*thefts, t("nobody")]))])
    numbers: dict[str, list[int]] = {}  # kind -> its cards' numbers in the hand as shown (shut cards count)
    for n, cid in enumerate(shown_hand(view.hands[seat]), 1):
        if cid != HIDDEN:
            numbers.setdefault(card_kind(cid).kind, []).append(n)
    upright: dict[Pos, list[int]] = {}
    turned: dict[Pos, list[int]] = {}
    aims: dict[str, list[str]] = {kind: [] for kind in numbers}
    for move in legal_moves(mine):
        if move.verb != "play" or move.card is None:
            continue
        k = card_kind(move.card)
        if k.category == "path" and move.at is not None:
            (turned if move.rotated else upright).setdefault(move.at, []).extend(numbers[k.kind])
        aims[k.kind].append(_aim(move))
    cells = {pos: (tuple(sorted(upright.get(pos, ()))), tuple(sorted(turned.get(pos, ()))))
             for pos in sorted({*upright, *turned}, key=lambda p: (p[1], p[0]))}
    lines = [t("{numbers} {card}: {aims}", numbers=" ".join(map(str, nums)), card=words.card_name(kind),
               aims=_aims(aims[kind]) if aims[kind] else t("nowhere now"))
             for kind, nums in numbers.items()]
    if mine.blocked(seat) and any(KINDS[k].category == "path" for k in numbers):
        lines.append(t("a broken tool lies in front of you: no path card can be played until it is fixed"))
    return Hints(cells, lines)


def _aims(aims: list[str]) -> str:
    """A card's aims in a line: cells (which hold a comma) apart by two spaces, the rest listed."""
    return "  ".join(aims) if "," in aims[0] else words.listing(aims)


def _aim(move: Move) -> str:
    """Where one legal play of a card goes, in words: a cell (after ↻ when turned), a player (and
    the tool it fixes), a goal, or nothing (a card played on its own)."""
    if move.at is not None:
        cell = f"{move.at[0]},{move.at[1]}"
        return TURNED + cell if move.rotated else cell
    if move.target is None:
        return t("played on its own")
    target = words.goal_name(move.target)
    return f"{target} ({t(move.tool)})" if move.tool else target


def marks(nums: tuple[int, ...], width: int, prefix: str = "") -> str:
    """Hand numbers as they fit in `width` cells: spaced, else run together (numbers of one
    digit), else cut with …"""
    if not nums:
        return ""
    spaced = prefix + " ".join(map(str, nums))
    if len(spaced) <= width:
        return spaced
    tight = prefix + "".join(map(str, nums))
    if all(n < 10 for n in nums) and len(tight) <= width:
        return tight
    return tight[:width - 1] + "…"
