"""--help in the reader's language, and flags shown without a type.

Help texts (docstrings and `help=`) are English in the code, like every message; before the
command line runs, `localise` walks the command tree and puts each through the catalogs
(pbem/ui/locale/), and has pbem.cli.helppage draw each command's page. `help_texts` lists them
for scripts/i18n and the tests.
"""

from __future__ import annotations

import inspect
import unicodedata
from collections.abc import Iterator
from typing import Any

import typer
import typer.main

from pbem.ui.words import t


def _commands(cmd: Any) -> Iterator[Any]:
    yield cmd
    for sub in getattr(cmd, "commands", {}).values():
        yield from _commands(sub)


def _parts(cmd: Any) -> Iterator[Any]:
    """Every object with a `help` in the tree: commands, groups, their parameters, --help."""
    for c in _commands(cmd):
        yield c
        yield from c.params
        opt = c.get_help_option(typer.Context(c))
        if opt is not None:
            yield opt


def help_texts(app: typer.Typer) -> list[str]:
    """Every English help text of the command line `app` (pbem.cli.app) and the words of its
    pages around them ("Usage: ", "Options"...), once each."""
    from pbem.cli.helppage import WORDS

    cmd = typer.main.get_command(app)
    texts = [p.help for p in _parts(cmd) if getattr(p, "help", None)]
    texts += list(WORDS)
    return list(dict.fromkeys(texts))


def _joined(upper: str, lower: str) -> str:
    """Two lines of one paragraph as one: a space between words, none between CJK characters."""
    if upper and lower and unicodedata.east_asian_width(upper[-1]) in "WF" \
            and unicodedata.east_asian_width(lower[0]) in "WF":
        return upper + lower
    return f"{upper} {lower}"


def reflow(text: str) -> str:
    """Each paragraph of a help text as one line, for the help page to wrap at the terminal's
    width: Typer keeps a docstring's line breaks after its first paragraph, so a text wrapped
    at 100 columns came out ragged on an 80-column terminal. A paragraph starting with \\b
    (Click's "keep my lines") is left as it is."""
    out = []
    for para in inspect.cleandoc(text).split("\n\n"):
        if para.startswith("\b"):
            out.append(para)
            continue
        line = ""
        for piece in (p.strip() for p in para.split("\n")):
            line = _joined(line, piece) if line else piece
        out.append(line)
    return "\n\n".join(out)


def command_words(argv: list[str]) -> list[str]:
    """The words of a command line that may name commands: not options, nor --lang's value."""
    return [a for i, a in enumerate(argv) if not a.startswith("-") and (i == 0 or argv[i - 1] != "--lang")]


def help_wanted(cmd: Any, argv: list[str]) -> bool:
    """Whether this command line shows a help page (--help, or a group named without a command;
    `pbem --version` names none)."""
    if not argv or "--help" in argv:
        return True
    words = command_words(argv)
    if not words:
        return False
    node = cmd
    for word in words:
        node = getattr(node, "commands", {}).get(word)
        if node is None:
            return False
    return bool(getattr(node, "commands", None))


def localise(cmd: Any, argv: list[str] | None = None) -> Any:
    """Translate the help of the tree `cmd` in place into the current language; a flag shows
    no `<bool>` type (it takes no value); each command's page is pbem.cli.helppage's. Given
    `argv`, it does nothing unless a help page is shown (every start of pbem would pay for
    walking the tree otherwise)."""
    if argv is not None and not help_wanted(cmd, argv):
        return cmd
    for part in _parts(cmd):
        if getattr(part, "help", None):
            english = getattr(part, "_pbem_english", None) or part.help
            part._pbem_english = english
            part.help = reflow(t(english))
        if getattr(part, "is_flag", False) and not getattr(part, "count", False):
            part.metavar = ""
    for sub in _commands(cmd):
        if sub is not cmd:  # the root draws its own page (pbem.cli.rootpage)
            sub.context_class = Page
    return cmd


class Page(typer.Context):
    """The context of a command whose help page pbem.cli.helppage draws (Typer's would break
    Chinese only at spaces)."""

    def get_help(self) -> str:
        from pbem.cli.helppage import draw

        draw(self.command, self)
        return ""  # the page is printed; what click echoes after it, a blank line, is Typer's too
