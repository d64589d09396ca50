"""The one sanitiser for text that reaches a terminal from a source nobody vouched for.

A game id, a seat name, a move's text, a card or player name from a position file, a mail's
From header or an error quoting any of them may come from a stranger's mail or file. Printed
raw, control characters in it can set the window title, move the cursor, clear the screen,
colour or hide the text around them (SGR, `ESC [ ... m`), fake an `error:` line (a newline) or
reverse the text (bidi overrides). `printable` shows each such character as a visible escape
instead (`\\x1b`, `\\n`, `\\u202e`), so the text is still readable and nothing acts on the
terminal. The CLI passes every line of such text through it before printing.

Behind it, everything a command prints passes `shown` (pbem.cli.main puts `Shown` in front of
stdout and stderr): the same escapes, keeping only line breaks and tabs; no escape sequence of
any kind gets through. The one exception is what rich draws: a rich console writes to
`Shown.rich_proxied_file` (rich looks for it), which keeps the colour and weight codes rich
draws with (SGR: they move no cursor, set no title, write no line) and escapes the rest; and
every console pbem makes (`console()`) cleans the text of each piece it draws with `shown`
first, so an SGR code that came inside a name or a move is escaped before rich styles it. The
full-screen replay draws its lines with such a console too. What --json prints passes
`json_shown`: the same characters written as JSON escapes (`\\u202e`), which read back as the
same text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, ConsoleRenderable
    from rich.segment import Segment

# Bidirectional overrides and isolates: not control characters (category Cf), but they
# reorder the text around them ("Trojan Source").
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
# What `shown` looks at: a run of anything but tabs and line breaks (one look at a line's run,
# at C speed, not a call per character: a long replay is mostly such runs).
_LOOK = re.compile(r"[^\t\n]+")
# What `styled` looks at: an SGR code (kept), a lone ESC, or a run of anything else.
_STYLED_LOOK = r"\x1b\[[0-9;]*m|\x1b|[^\t\n\x1b]+"  # (re compiles it at its first use, as the next)
# What `json_shown` looks at: each line (JSON holds line breaks only between its values).
_JSON_LOOK = r"[^\n]+"


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
    """`text` as printable() shows it, but for its line breaks and tabs."""
    return _LOOK.sub(_escaped, text)


def _escaped(m: re.Match[str]) -> str:
    s = m.group()
    return s if s.isprintable() else "".join(ch if _harmless(ch) else _escape(ch) for ch in s)


def styled(text: str) -> str:
    """What rich drew, as `shown` shows it but for the SGR codes rich styles it with (only for a
    console's output: `console()` cleaned each text it drew before styling it)."""
    return re.sub(_STYLED_LOOK, _kept_or_escaped, text)


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
    return re.sub(_JSON_LOOK, _json_escaped, text)


class Shown:
    """A text stream that writes `shown(text)` to `stream`. It has no `buffer`: click's echo then
    writes text to it, never bytes around it. A rich console writes to its `rich_proxied_file`
    instead, which keeps rich's styles (`styled`)."""

    def __init__(self, stream: TextIO, clean: Callable[[str], str] = shown) -> None:
        self.stream = stream
        self.clean = clean

    def write(self, text: str) -> int:
        self.stream.write(self.clean(text))
        return len(text)

    @property
    def rich_proxied_file(self) -> Shown:
        return self if self.clean is styled else Shown(self.stream, styled)

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":
            raise AttributeError(name)
        return getattr(self.stream, name)


def console(**options: Any) -> Console:
    """A rich console (rich.console.Console's `options`) that escapes, as `shown` does, every
    text it draws before it styles it: a name or a move holding an escape sequence is shown,
    never acted on, whatever renderable carries it."""
    from rich.console import Console, RenderHook

    class Cleaned(RenderHook):
        def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
            return [_Cleaned(r) for r in renderables]

    made = Console(**options)
    made.push_render_hook(Cleaned())
    return made


class _Cleaned:
    """A renderable drawn as `inner` is, each piece of text passed through `shown` (the codes rich
    moves the cursor with are not text: they stay)."""

    def __init__(self, inner: ConsoleRenderable) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        from rich.segment import Segment

        for seg in console.render(self.inner, options):
            if seg.control or seg.text.isprintable():
                yield seg
            else:
                yield Segment(shown(seg.text), seg.style)


def unshown(stream: Any) -> Any:
    """The stream under a Shown: where a live display of pbem's own draws (the demo's progress
    bars move the cursor and clear lines; what they show comes from its own processes)."""
    return stream.stream if isinstance(stream, Shown) else stream
