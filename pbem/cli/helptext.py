"""--help in the reader's language, and flags shown without a type.

Help texts (docstrings and `help=`) are English in the code, like every message; before the
command line runs, `localise` walks the command tree and puts each through the catalogs
(pbem/ui/locale/). `help_texts` lists them for scripts/i18n and the tests.
"""

from __future__ import annotations

import inspect
import re
import unicodedata
from collections.abc import Iterator
from functools import cache
from typing import Any

import typer
import typer.main

from pbem.ui.words import language, t

# Typer's own words around the help (panel titles, markers); these are its module settings.
_TYPER_WORDS = ("ARGUMENTS_PANEL_TITLE", "OPTIONS_PANEL_TITLE", "COMMANDS_PANEL_TITLE", "ERRORS_PANEL_TITLE",
                "ABORTED_TEXT", "RICH_HELP", "DEFAULT_STRING", "REQUIRED_LONG_STRING", "DEPRECATED_STRING",
                "ENVVAR_STRING")


def rich_utils() -> Any:
    """typer.rich_utils, which draws the help pages: it imports rich, so only a help page loads it."""
    import typer.rich_utils

    return typer.rich_utils


@cache
def _english() -> dict[str, str]:
    """Typer's words as it ships them, read before the first translation."""
    return {name: getattr(rich_utils(), name) for name in _TYPER_WORDS}


def _commands(cmd: Any) -> Iterator[Any]:
    yield cmd
    for sub in getattr(cmd, "commands", {}).values():
        yield from _commands(sub)


def _parts(cmd: Any) -> Iterator[Any]:
    """Every object with a `help` in the tree: commands, groups, their parameters, --help."""
    import typer._click as click

    for c in _commands(cmd):
        yield c
        yield from c.params
        opt = c.get_help_option(click.Context(c))
        if opt is not None:
            yield opt


def help_texts(app: typer.Typer) -> list[str]:
    """Every English help text of the command line `app` (pbem.cli.app) and Typer's words, once each."""
    cmd = typer.main.get_command(app)
    texts = [p.help for p in _parts(cmd) if getattr(p, "help", None)]
    texts += list(_english().values())
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
    no `<bool>` type (it takes no value). Given `argv`, it does nothing unless a help page is
    shown (every start of pbem would pay for loading rich and Typer's help otherwise)."""
    if argv is not None and not help_wanted(cmd, argv):
        return cmd
    for part in _parts(cmd):
        if getattr(part, "help", None):
            english = getattr(part, "_pbem_english", None) or part.help
            part._pbem_english = english
            part.help = reflow(t(english))
        if getattr(part, "is_flag", False) and not getattr(part, "count", False):
            part.metavar = ""
    if argv is None or command_words(argv):  # a page Typer draws (the root page is pbem.cli.rootpage's)
        for name, english in _english().items():
            setattr(rich_utils(), name, t(english))
        _usage_in_language()
    if language() != "en":
        _break_between_cjk_characters()
    return cmd


def _usage_in_language() -> None:
    """click writes a page's first line's "Usage: " itself (HelpFormatter.write_usage), outside
    Typer's words above, and Typer's highlighter styles it by that English word: both take the
    reader's word ("用法："). Every page's context makes its formatter from this class."""
    from typer._click import core, formatting

    word = t("Usage: ")

    class Formatter(formatting.HelpFormatter):
        def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
            super().write_usage(prog, args, word if prefix is None else prefix)

    core.Context.formatter_class = Formatter
    highlighter = rich_utils().OptionHighlighter
    highlighter.highlights = [h for h in highlighter.highlights if "?P<usage>" not in h] + [
        rf"(?P<usage>{re.escape(word)})"]


_CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f"
_OPENING = "（「『《"
_CLOSING = "，。、；：？！）」』》"


def _break_between_cjk_characters() -> None:
    """Rich breaks a line only at whitespace, and Chinese has none: a sentence was one long
    "word", moved whole to the next line ("一个自动主持人和 5" / "个机器人玩家，..."). Each CJK
    character is a word of its own for rich's wrapping (punctuation stays with the
    character it belongs to), so lines fill up to the width. rich._wrap looks its pattern up on
    every call; only help pages (localise) change it."""
    import rich._wrap

    char = rf"(?![{_OPENING}])[{_CJK}]"
    rich._wrap.re_word = re.compile(rf"\s*[{_OPENING}]*(?:{char}|[^\s{_CJK}]+)[{_CLOSING}]*\s*")
