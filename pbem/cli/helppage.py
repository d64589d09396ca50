"""A command's or a group's --help page, in the look of Typer's (typer.rich_utils), drawn through
rich's public classes with pbem's own line breaking (pbem.cli.linebreak: Chinese breaks between
characters) and in the reader's language (the "Usage: " word and the panels' titles too).

tests/test_help_pages.py checks that every English page is Typer's, line for line, and that a
Chinese one loses nothing at any width.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Iterator
from enum import Enum
from typing import Any

from pbem.cli.linebreak import wrapped
from pbem.ui.words import N_, language, t

# Typer's styles for a help page (typer.rich_utils), which these pages keep.
_STYLES = {"option": "bold cyan", "switch": "bold green", "negative_option": "bold magenta",
           "negative_switch": "bold red", "types": "bold yellow", "types_sep": "dim", "usage": "yellow"}
# The words of a page around its help texts, as Typer writes them.
USAGE, ARGUMENTS, OPTIONS, COMMANDS = N_("Usage: "), N_("Arguments"), N_("Options"), N_("Commands")
DEFAULT, REQUIRED, ENVVAR, DEPRECATED = N_("[default: {}]"), N_("[required]"), N_("[env var: {}]"), N_("(deprecated) ")
WORDS = (USAGE, ARGUMENTS, OPTIONS, COMMANDS, DEFAULT, REQUIRED, ENVVAR, DEPRECATED)


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


class _Page:
    """What draws one page: its console, highlighters and way of breaking lines."""

    def __init__(self) -> None:
        from rich.highlighter import RegexHighlighter

        usage = re.escape(t(USAGE))

        class Options(RegexHighlighter):
            highlights = [r"(^|\W)(?P<switch>\-\w+)(?![a-zA-Z0-9])", r"(^|\W)(?P<option>\-\-[\w\-]+)(?![a-zA-Z0-9])",
                          r"(?P<types>\<[^\>]+\>)", rf"(?P<usage>{usage})"]

        class Negative(RegexHighlighter):
            highlights = [r"(^|\W)(?P<negative_switch>\-\w+)(?![a-zA-Z0-9])",
                          r"(^|\W)(?P<negative_option>\-\-[\w\-]+)(?![a-zA-Z0-9])"]

        class Types(RegexHighlighter):
            highlights = [r"^(?P<types_sep>(\[|<))", r"(?P<types_sep>\|)", r"(?P<types_sep>(\]|>))(\.\.\.)?$"]

        self.options, self.negative, self.types = Options(), Negative(), Types()
        self.console = _console()
        self.cjk = language() != "en"

    def text(self, text: Any) -> Any:
        return wrapped(text, self.cjk)

    def prose(self, text: str, style: str = "") -> Any:
        """A help text's rich markup, its options highlighted, without emoji codes: no help text
        holds one (tests/test_help_pages.py compares the pages with Typer's), and looking for them
        loads rich's table of every emoji name."""
        from rich.text import Text

        return self.text(self.options(Text.from_markup(inspect.cleandoc(text), style=style, emoji=False)))

    def panel(self, table: Any, title: str) -> None:
        from rich.panel import Panel
        from rich.text import Text

        self.console.print(Panel(table, border_style="dim", title=Text.from_markup(t(title), emoji=False),
                                 title_align="left"))


def draw(cmd: Any, ctx: Any, commands: list[tuple[str, str]] | None = None) -> None:
    """Print the page of `cmd` (its usage, help, arguments, options, and a group's commands:
    `commands`, (name, help in the reader's language) pairs, else the group's own)."""
    from rich.align import Align
    from rich.console import Group
    from rich.padding import Padding
    from rich.text import Text

    page = _Page()
    page.console.print(Padding(page.text(page.options(_usage(cmd, ctx))), 1), style="bold")
    if cmd.help:
        said = [Text(t(DEPRECATED), style="red")] if cmd.deprecated else []
        first, *rest = inspect.cleandoc(cmd.help).partition("\f")[0].split("\n\n")
        said.append(page.prose((first if first.startswith("\b") else first.replace("\n", " ")).strip()))
        if rest:
            said += [Text(""), page.prose("\n\n".join(rest), style="dim")]
        page.console.print(Padding(Align(Group(*said), pad=False), (0, 1, 1, 1)))
    for kind, title in (("argument", ARGUMENTS), ("option", OPTIONS)):
        panels: dict[str, list[Any]] = {title: []}  # by rich_help_panel, Typer's panel names
        for param in cmd.get_params(ctx):
            if param.param_type_name == kind and not getattr(param, "hidden", False):
                panels.setdefault(getattr(param, "rich_help_panel", None) or title, []).append(param)
        for name, params in panels.items():
            _parameters(page, ctx, params, name)
    if commands is None and hasattr(cmd, "commands"):
        subs = [cmd.get_command(ctx, name) for name in cmd.list_commands(ctx)]
        commands = [(c.name or "", c.short_help or c.help or "") for c in subs if c is not None and not c.hidden]
    if commands:
        _commands(page, commands)
    if cmd.epilog:
        epilog = "\n".join(p.replace("\n", " ").strip() for p in cmd.epilog.split("\n\n"))
        page.console.print(Padding(Align(page.prose(epilog), pad=False), 1))


def _usage(cmd: Any, ctx: Any) -> str:
    """The page's first line, "Usage: pbem COMMAND [OPTIONS] ...", in the reader's language; one
    longer than click's help width is wrapped as click wraps it (which a short one does not need)."""
    formatter = ctx.make_formatter()
    pieces = " ".join(cmd.collect_usage_pieces(ctx))
    line = f"{t(USAGE)}{ctx.command_path} {pieces}"
    if len(line) <= formatter.width:
        return line
    formatter.write_usage(ctx.command_path, pieces, t(USAGE))
    return str(formatter.getvalue()).rstrip("\n")


def _parameters(page: _Page, ctx: Any, params: list[Any], title: str) -> None:
    """The panel of `params` (arguments, or options): names, type, help with default and required."""
    from rich.columns import Columns
    from rich.table import Table
    from rich.text import Text

    if not params:
        return
    rows = []
    for param in params:
        argument = param.param_type_name == "argument"
        metavar = param.make_metavar(ctx)
        named = metavar.replace(param.name.upper(), param.name) if argument and param.metavar is None and param.name \
            else metavar if argument else None
        kind = Text(style=_STYLES["types"], overflow="fold")
        shown = metavar if not argument and metavar and metavar != "BOOLEAN" else param.type.name.upper()
        if shown != "BOOLEAN":
            kind.append(shown)
        if not argument and hasattr(param.type, "min_open") \
                and not (param.count and param.type.min == 0 and param.type.max is None):  # a number range
            kind.append(f" [{_range(param.type)}]")
        names: list[str] = []
        negative: list[str] = []
        for opts, into in ((param.opts, names), (getattr(param, "secondary_opts", []), negative)):
            into.append(",".join(o for o in opts if "--" in o))
            into.append(",".join(named or o for o in opts if "--" not in o))
        rows.append([Text("*", style="red") if param.required else "", page.text(page.options(names[0])),
                     page.text(page.options(names[1])), page.text(page.negative(negative[0])),
                     page.text(page.negative(negative[1])), page.text(page.types(kind)),
                     Columns(list(_help(page, ctx, param)))])
    table = Table(highlight=True, show_header=False, expand=True, box=None, pad_edge=False, padding=(0, 1))
    for row in rows:
        table.add_row(*(row if any(r[0] for r in rows) else row[1:]))
    page.panel(table, title)


def _help(page: _Page, ctx: Any, param: Any) -> Iterator[Any]:
    """A parameter's help, then its environment variable, default and whether it is required."""
    from rich.text import Text

    if param.help:
        paragraphs = [p.replace("\n", " ").strip() if not p.startswith("\b") else "{}\n".format(p.strip("\b\n"))
                      for p in param.help.split("\n\n")]
        yield page.prose("\n".join(paragraphs).strip())
    envvar = param.envvar
    if envvar is None and getattr(param, "allow_from_autoenv", None) and ctx.auto_envvar_prefix is not None \
            and param.name is not None:
        envvar = f"{ctx.auto_envvar_prefix}_{param.name.upper()}"
    if envvar and getattr(param, "show_envvar", None):
        named = envvar if isinstance(envvar, str) else ", ".join(str(d) for d in envvar)
        yield page.text(Text(t(ENVVAR).format(named), style="dim yellow"))
    resilient, ctx.resilient_parsing = ctx.resilient_parsing, True
    try:
        default = param.get_default(ctx, call=False)
    finally:
        ctx.resilient_parsing = resilient
    if isinstance(param.show_default, str) or (default is not None and (param.show_default or ctx.show_default)):
        said = f"({param.show_default})" if isinstance(param.show_default, str) else _default(param, default)
        if said:
            yield page.text(Text(t(DEFAULT).format(said), style="dim"))
    if param.required:
        yield page.text(Text(t(REQUIRED), style="dim red"))


def _default(param: Any, value: Any) -> str:
    """A default value as Typer's pages show it."""
    if isinstance(value, (list, tuple)):
        return ", ".join(_default(param, v) for v in value)
    if isinstance(value, Enum):
        return str(value.value)
    if inspect.isfunction(value):
        return "(dynamic)"
    if getattr(param, "is_bool_flag", False) and param.secondary_opts:
        return (param.opts if param.default else param.secondary_opts)[0].lstrip("-/+")
    if getattr(param, "is_bool_flag", False) and not value:
        return ""
    return str(value)


def _range(kind: Any) -> str:
    """A number range as click describes it (x>=1.0, 0<=x<=60)."""
    if kind.min is None:
        return f"x{'<' if kind.max_open else '<='}{kind.max}"
    if kind.max is None:
        return f"x{'>' if kind.min_open else '>='}{kind.min}"
    return f"{kind.min}{'<' if kind.min_open else '<='}x{'<' if kind.max_open else '<='}{kind.max}"


def _commands(page: _Page, commands: list[tuple[str, str]]) -> None:
    """The panel of a group's commands, each with its help's first paragraph."""
    from rich.table import Table
    from rich.text import Text

    table = Table(highlight=False, show_header=False, expand=True, box=None, pad_edge=False, padding=(0, 1))
    table.add_column(style="bold cyan", no_wrap=True, width=max(len(name) for name, _ in commands))
    table.add_column("Description", justify="left", no_wrap=False, ratio=10)
    for name, help_text in commands:
        first = inspect.cleandoc(help_text).split("\n\n")[0]
        table.add_row(Text(name), page.prose(first.replace("\b\n", "").strip()))
    page.panel(table, COMMANDS)
