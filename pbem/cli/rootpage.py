"""The root help page (`pbem --help`, `pbem` alone), drawn from what the command modules
register (their commands' names and help texts) by pbem.cli.helppage, as every page is.

Typer draws a group's page from the command tree it converts (every parameter of every
command); the root page needs none of it. tests/test_help_pages.py checks this page is Typer's,
line for line, in English, and loses nothing in Chinese.
"""

from __future__ import annotations

import inspect
from typing import Any

import typer
import typer.main


def listing(app: typer.Typer) -> list[tuple[str, str]]:
    """Each command and group `app` registers, in the order Typer lists them (commands first),
    with its English help text, as Typer gives it to the converted command."""
    commands = [(info.name or typer.main.get_command_name(info.callback.__name__),  # type: ignore[union-attr]
                 info.help or inspect.getdoc(info.callback) or "") for info in app.registered_commands]
    groups = [(info.name, typer.main.solve_typer_info_help(info)) for info in app.registered_groups if info.name]
    return commands + groups


def draw(cmd: Any, ctx: Any, commands: list[tuple[str, str]]) -> None:
    """Print the page of the root group `cmd` (its usage, help and options) listing `commands`
    ((name, English help) pairs), in the current language."""
    from pbem.cli.helppage import draw as page
    from pbem.cli.helptext import reflow
    from pbem.ui.words import t

    page(cmd, ctx, [(name, reflow(t(english))) for name, english in commands])
