"""The one sanitiser for text that reaches a terminal from a source nobody vouched for.

A game id, a seat name, a mail's From header or an error quoting any of them may come from a
stranger's mail or file. Printed raw, control characters in it can set the window title,
move the cursor, clear the screen, fake an `error:` line (a newline) or reverse the text
around them (bidi overrides). `printable` shows each such character as a visible escape
instead (`\\x1b`, `\\n`, `\\u202e`), so the text is still readable and nothing acts on the
terminal. The CLI passes every line of such text through it before printing.

Behind it, everything a command prints passes `shown` (pbem.cli.main puts `Shown` in front of
stdout and stderr; the full-screen replay draws its lines through it): what the lines did
not escape is escaped there, keeping only line breaks, tabs and the colour and weight codes
rich draws with (SGR, `ESC [ numbers m`: they move no cursor, set no title, write no line).
What --json prints passes `json_shown`: the same characters written as JSON escapes
(`\\u202e`), which read back as the same text.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

# Bidirectional overrides and isolates: not control characters (category Cf), but they
# reorder the text around them ("Trojan Source").
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
# What `shown` looks at: an SGR code (kept), a lone ESC, or a run of anything else but tabs and
# line breaks (one look at a line's run, at C speed, not a call per character: a long replay
# is mostly such runs).
_LOOK = re.compile(r"\x1b\[[0-9;]*m|\x1b|[^\t\n\x1b]+")
# What `json_shown` looks at: each line (JSON holds line breaks only between its values).
_JSON_LOOK = re.compile(r"[^\n]+")


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _harmless(ch: str) -> bool:
    # str.isprintable() is False for some harmless separators (U+3000 ideographic space, used
    # in Chinese text); keep spaces, escape everything in the C (other) categories.
    if ch == " " or (ch.isprintable() and ch not in _BIDI):
        return True
    import unicodedata  # only for a character that is neither

    return unicodedata.category(ch) == "Zs"


def printable(text: object) -> str:
    """`text` with every control, format-control and bidi character shown as an escape."""
    s = str(text)
    if s.isprintable():  # the usual case: nothing to do
        return s
    return "".join(ch if _harmless(ch) else _escape(ch) for ch in s)


def _kept_or_escaped(m: re.Match[str]) -> str:
    s = m.group()
    if s.isprintable() or s.startswith("\x1b["):  # a run with nothing to escape, or an SGR code
        return s
    return "".join(ch if _harmless(ch) else _escape(ch) for ch in s)


def shown(text: str) -> str:
    """`text` as printable() shows it, but for its line breaks, tabs and SGR codes."""
    return _LOOK.sub(_kept_or_escaped, text)


def _json_escaped(m: re.Match[str]) -> str:
    s = m.group()
    return s if s.isprintable() else "".join(map(_json_char, s))


def _json_char(ch: str) -> str:
    if _harmless(ch):
        return ch
    code = ord(ch)
    if code > 0xFFFF:  # JSON writes it as a surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_shown(text: str) -> str:
    """JSON text with every character that acts on a terminal written as its JSON escape. Outside
    its strings JSON holds only ASCII and whitespace, so only what the strings hold changes, and
    a JSON reader reads the same values."""
    return _JSON_LOOK.sub(_json_escaped, text)


class Shown:
    """A text stream that writes `shown(text)` to `stream`. It has no `buffer`: click's echo then
    writes text to it, never bytes around it."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(shown(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":
            raise AttributeError(name)
        return getattr(self.stream, name)


def unshown(stream: Any) -> Any:
    """The stream under a Shown: where a live display of pbem's own draws (the demo's progress
    bars move the cursor and clear lines; what they show comes from its own processes)."""
    return stream.stream if isinstance(stream, Shown) else stream
