"""The root help page (`pbem --help`, `pbem` alone), drawn in the look of Typer's pages from
what the command modules register (their commands' names and help texts), through rich's
public classes.

Typer draws a page from the command tree it converts (every parameter of every command) with
typer.rich_utils, which also loads rich's Markdown and traceback renderers; the root page
needs neither. tests/test_help_pages.py checks this page is Typer's, line for line, in every
language.
"""

from __future__ import annotations

import inspect
import os
from typing import Any

import typer
import typer.main

# Typer's styles for a help page (typer.rich_utils), which this page keeps.
_STYLES = {"option": "bold cyan", "switch": "bold green", "negative_option": "bold magenta",
           "negative_switch": "bold red", "types": "bold yellow", "types_sep": "dim", "usage": "yellow"}


def listing(app: typer.Typer) -> list[tuple[str, str]]:
    """Each command and group `app` registers, in the order Typer lists them (commands first),
    with its English help text, as Typer gives it to the converted command."""
    commands = [(info.name or typer.main.get_command_name(info.callback.__name__),  # type: ignore[union-attr]
                 info.help or inspect.getdoc(info.callback) or "") for info in app.registered_commands]
    groups = [(info.name, typer.main.solve_typer_info_help(info)) for info in app.registered_groups if info.name]
    return commands + groups


def _console() -> Any:
    from rich.theme import Theme

    from pbem.ui.terminal import console

    width = os.environ.get("TERMINAL_WIDTH")  # the settings Typer's pages take from the environment
    forced = True if os.environ.get("GITHUB_ACTIONS") or os.environ.get("FORCE_COLOR") or os.environ.get("PY_COLORS") \
        else None
    if os.environ.get("_TYPER_FORCE_DISABLE_TERMINAL"):
        forced = False
    return console(theme=Theme(_STYLES), color_system="auto", force_terminal=forced, width=int(width) if width else None,
                   emoji=False)  # as markup() below


def _highlighters(usage: str) -> tuple[Any, Any]:
    """The highlighters of options and of types, as Typer's (with the reader's word for "Usage: ")."""
    import re

    from rich.highlighter import RegexHighlighter

    class Options(RegexHighlighter):
        highlights = [r"(^|\W)(?P<switch>\-\w+)(?![a-zA-Z0-9])", r"(^|\W)(?P<option>\-\-[\w\-]+)(?![a-zA-Z0-9])",
                      r"(?P<types>\<[^\>]+\>)", rf"(?P<usage>{re.escape(usage)})"]

    class Types(RegexHighlighter):
        highlights = [r"^(?P<types_sep>(\[|<))", r"(?P<types_sep>\|)", r"(?P<types_sep>(\]|>))(\.\.\.)?$"]

    return Options(), Types()


def markup(text: str, style: str = "") -> Any:
    """`text`'s rich markup as Typer's page draws it, without emoji codes: no help text holds
    one (tests/test_help_pages.py compares the page with Typer's in every language), and
    looking for them loads rich's table of every emoji name."""
    from rich.text import Text

    return Text.from_markup(text, style=style, emoji=False)


def draw(cmd: Any, ctx: Any, commands: list[tuple[str, str]]) -> None:
    """Print the page of the root group `cmd` (its usage, help and options) listing `commands`
    ((name, English help) pairs), in the current language."""
    from rich.columns import Columns
    from rich.console import Group
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    from pbem.cli.helptext import reflow
    from pbem.ui.words import t

    usage = t("Usage: ")
    options, types = _highlighters(usage)
    console = _console()
    console.print(Padding(options(f"{usage}{ctx.command_path} {' '.join(cmd.collect_usage_pieces(ctx))}"), 1),
                  style="bold")
    first, *rest = inspect.cleandoc(cmd.help or "").split("\n\n")
    said = [options(markup(first.replace("\n", " ").strip()))]
    if rest:
        said += [Text(""), options(markup("\n\n".join(rest), style="dim"))]
    console.print(Padding(Group(*said), (0, 1, 1, 1)))
    table = Table(highlight=True, show_header=False, expand=True, box=None, pad_edge=False, padding=(0, 1))
    for param in cmd.get_params(ctx):
        kind = "" if getattr(param, "is_flag", False) else param.make_metavar(ctx)
        help_text = "\n".join(p.replace("\n", " ").strip() for p in (param.help or "").split("\n\n")).strip()
        table.add_row(options(",".join(o for o in param.opts if "--" in o)),
                      options(",".join(o for o in param.opts if "--" not in o)), "", "",
                      types(Text(kind, style=_STYLES["types"], overflow="fold")),
                      Columns([options(markup(help_text))]))
    console.print(Panel(table, border_style="dim", title=markup(t("Options")), title_align="left"))
    table = Table(highlight=False, show_header=False, expand=True, box=None, pad_edge=False, padding=(0, 1))
    table.add_column(style="bold cyan", no_wrap=True, width=max(len(name) for name, _ in commands))
    table.add_column("Description", justify="left", no_wrap=False, ratio=10)
    for name, english in commands:
        table.add_row(Text(name), options(markup(reflow(t(english)).split("\n\n")[0].strip())))
    console.print(Panel(table, border_style="dim", title=markup(t("Commands")), title_align="left"))
