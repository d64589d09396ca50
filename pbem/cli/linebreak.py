"""Where a help page's lines break: at spaces, and in Chinese, which has none, between any two
characters (punctuation stays with the character it belongs to: an opening bracket with the
one after it, a comma or a closing bracket with the one before).

Rich breaks a text only at whitespace: a Chinese sentence was one long "word", moved whole to
the next line ("一个自动主持人和 5" / "个机器人玩家，..."), or, in a table's narrow column, cut
off with "…". `Wrapped` is a text that lays out as rich's Text does (it measures the same, so
the columns of a page come out as wide as on Typer's) and breaks its lines with `breaks`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

_CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f"
_OPENING = "（「『《"
_CLOSING = "，。、；：？！）」』》"


@cache
def _word() -> re.Pattern[str]:
    """A word and the spaces after it: a CJK character (with the punctuation around it), or a run
    of anything else up to a space or a CJK character. Compiled when a Chinese page first needs
    it: an English page never does."""
    char = rf"(?![{_OPENING}])[{_CJK}]"
    return re.compile(rf"\s*[{_OPENING}]*(?:{char}|[^\s{_CJK}]+)[{_CLOSING}]*\s*")


def breaks(text: str, width: int) -> list[int]:
    """The offsets in `text` (one line) where its lines start so that each fits in `width`
    cells: a word goes to the next line when it does not fit on this one (the spaces after it
    may overhang), and a word wider than a line is cut into pieces that fit."""
    from rich.cells import cell_len, chop_cells

    out: list[int] = []
    used = 0
    for found in _word().finditer(text):
        start, word = found.start(), found.group()
        size = cell_len(word.rstrip())
        if size <= width - used:
            used += cell_len(word)
            continue
        if size > width:
            *whole, last = chop_cells(word, width)
            for piece in whole:
                if start:
                    out.append(start)
                start += len(piece)
            if start:
                out.append(start)
            used = cell_len(last)
        elif used and start:
            out.append(start)
            used = cell_len(word)
    return out


class Wrapped:
    """A rich Text laid out as rich lays it out, with its lines broken by `breaks` (a word wider
    than its column is folded onto the next line, never cut off)."""

    def __init__(self, text: Any) -> None:
        self.text = text

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement

        return Measurement.get(console, options, self.text)

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        from rich.containers import Lines
        from rich.text import Text

        text, width = self.text, options.max_width
        if text.no_wrap or options.no_wrap:
            yield text
            return
        justify = text.justify or options.justify or "default"
        lines = Lines()
        for line in text.split(allow_blank=True):
            pieces = line.divide(breaks(line.plain, width))
            for piece in pieces:
                _drop_overhang(piece, width)
            pieces.justify(console, width, justify=justify, overflow="fold")
            lines.extend(pieces)
        yield from Text("\n").join(lines).render(console, end=text.end)


def _drop_overhang(line: Any, width: int) -> None:
    """The spaces at the end of `line` that stand out past `width` cells (rich's Text counts
    characters there, and a line of Chinese, two cells a character, kept them and was then cut
    short with "…")."""
    from rich.cells import cell_len

    over = cell_len(line.plain) - width
    spaces = len(line.plain) - len(line.plain.rstrip())
    if over > 0 and spaces:
        line.right_crop(min(over, spaces))


def wrapped(text: Any, cjk: bool) -> Any:
    """`text` as a help page shows it: in a language written without spaces (`cjk`), with its
    lines broken by `breaks`; else as it is (rich breaks it at spaces, as on Typer's pages)."""
    return Wrapped(text) if cjk else text
