"""The one sanitiser for text that reaches a terminal from a source nobody vouched for.

A game id, a seat name, a mail's From header or an error quoting any of them may come from a
stranger's mail or file. Printed raw, control characters in it can set the window title,
move the cursor, clear the screen, fake an `error:` line (a newline) or reverse the text
around them (bidi overrides). `printable` shows each such character as a visible escape
instead (`\\x1b`, `\\n`, `\\u202e`), so the text is still readable and nothing acts on the
terminal. The CLI passes every line of such text through it before printing.
"""

from __future__ import annotations

import unicodedata

# Bidirectional overrides and isolates: not control characters (category Cf), but they
# reorder the text around them ("Trojan Source").
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object) -> str:
    """`text` with every control, format-control and bidi character shown as an escape."""
    s = str(text)
    if s.isprintable():  # the usual case: nothing to do
        return s
    return "".join(ch if ch == " " or (ch.isprintable() and ch not in _BIDI) or _wide_ok(ch) else _escape(ch)
                   for ch in s)


def _wide_ok(ch: str) -> bool:
    # str.isprintable() is False for some harmless separators (U+3000 ideographic space, used
    # in Chinese text); keep spaces, escape everything in the C (other) categories.
    return unicodedata.category(ch) == "Zs"
