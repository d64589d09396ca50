"""The `pbem` command line. Thin: parse arguments, call into pbem/ and engine/, print.

Errors raised inside are small typed exceptions; only here do they become one line on
stderr (`error: ...`, maybe `hint: ...`) and an exit code (the table in docs/protocol.md).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from functools import cache
from typing import Any, NoReturn

import typer
import typer.main
from typer.core import TyperGroup

# The modules that add commands (each by its register(app)), in the order the help page lists
# what they add, with the words each adds at the top: its commands and groups (`game` gathers
# commands from three). A command line imports only the modules of its first word: `pbem show`
# loads none of the mail, folder, host, replay and deadline commands; a page or a word no module
# adds (the root page, a typo, for click's suggestion) loads them all.
# tests/test_startup.py checks the words against what each module adds.
PARTS: dict[str, tuple[str, ...]] = {
    "keys": ("key",),
    "agent": ("agent",),
    "position": ("position",),
    "newgame": ("game",),
    "play": ("join", "apply", "show", "move", "status", "packet", "games", "demo"),
    "replay": ("replay", "audit", "archive"),
    "transport": ("game", "mail", "folder", "host", "bot", "inbox", "mail-join", "mail-move", "turn", "say"),
    "deadlines": ("game", "away", "resign", "back", "handover"),
    "club": ("club",),
}


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        from pbem.ui.words import t

        try:
            number = version("pbem")
        except PackageNotFoundError:  # run from a source tree that was never installed
            number = "0+unknown"
        typer.echo(t("pbem {version}", version=number))
        raise typer.Exit()


def _root(
    lang: str | None = typer.Option(None, "--lang", help="Language of the output: en, zh-Hans (简体), zh-Hant (繁體). "
                                    "Default: $PBEM_LANG, else en.", show_default=False),
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True,
                                 callback=_version),
) -> None:
    if lang is not None:
        from pbem.ui import words
        from pbem.ui.words import t

        try:
            words.set_language(lang)
        except ValueError:
            raise typer.BadParameter(t("unknown language {lang}; use en, zh-Hans or zh-Hant", lang=repr(lang)),
                                     param_hint="--lang") from None


class _Root(TyperGroup):
    """The top-level group: its help page lists every command from what the command modules
    register (pbem.cli.rootpage), so that a command line without a command word, the root
    page's, needs none of their commands converted."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from pbem.cli.rootpage import draw, listing

        draw(self, ctx, listing(whole()))


def tree(parts: Iterable[str] = PARTS, only: str | None = None) -> typer.Typer:
    """The command line with the commands of `parts` (keys of PARTS; all by default), or with
    only the command or group called `only` of theirs."""
    import importlib

    app = typer.Typer(cls=_Root, no_args_is_help=True, pretty_exceptions_show_locals=False, add_completion=False,
                      help="Play Saboteur asynchronously: by email, shared folder, or file by file.")
    app.callback()(_root)
    for part in parts:
        importlib.import_module(f"pbem.cli.{part}").register(app, only)
    return app


def tree_for(argv: list[str]) -> typer.Typer:
    """The command line with only the command or group the first command word of `argv` names
    (and the modules that add it); with none but the root's options when `argv` has no command
    word (--help, --version); else (a word no command has) the whole one."""
    from pbem.cli.helptext import command_words

    first = next(iter(command_words(argv)), None)
    parts = [part for part, words in PARTS.items() if first in words]
    return tree(parts, first) if parts or first is None else whole()


@cache
def whole() -> typer.Typer:
    """The whole command line (made once)."""
    return tree()


def __getattr__(name: str) -> Any:
    """`pbem.cli.app`: the whole command line, made on first use."""
    if name == "app":
        return whole()
    raise AttributeError(name)


from pbem.errors import EXIT_BAD_POSITION, EXIT_INTERNAL, EXIT_INTERRUPTED  # noqa: E402


def _fail(message: str, hint: str | None, code: int, source: str | None = None) -> NoReturn:
    # Messages quote their input (a game id, a file name from a stranger's mail): sanitised.
    from pbem.ui.terminal import printable
    from pbem.ui.words import labelled, t

    print(printable(t("error: {message}", message=labelled(source, message) if source else message)), file=sys.stderr)
    if hint:
        print(printable(t("hint: {hint}", hint=hint)), file=sys.stderr)
    sys.exit(code)


def command_line(argv: list[str]) -> Any:
    """The click command that runs `argv`: the command line with the modules of its first word."""
    from pbem.cli._common import home_everywhere

    return home_everywhere(typer.main.get_command(tree_for(argv)))


def main() -> None:
    from pbem.ui.terminal import Shown

    # Whatever a command prints, from whichever source, reaches the terminal without a character
    # that acts on it (pbem.ui.terminal).
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Shown(out), Shown(err)
    try:
        _main()
    finally:
        sys.stdout, sys.stderr = out, err


def _main() -> None:
    from pbem.cli.helptext import localise
    from pbem.ui import words
    from pbem.ui.words import t

    try:
        words.set_language(words.language_in(sys.argv[1:]))
    except ValueError:
        pass  # the --lang callback reports it
    try:
        code = localise(command_line(sys.argv[1:]), sys.argv[1:])(standalone_mode=False)
        if code == EXIT_INTERRUPTED:  # Typer turns Ctrl-C (KeyboardInterrupt) into a silent Exit(130)
            _fail(t("interrupted"), None, EXIT_INTERRUPTED)
        if isinstance(code, int) and code:  # a command that reported its own errors (typer.Exit)
            sys.exit(code)
    except KeyboardInterrupt:
        _fail(t("interrupted"), None, EXIT_INTERRUPTED)
    except Exception as exc:
        _report(exc)


def _report(exc: Exception) -> None:
    """What a command raised, as one line on stderr (maybe a hint) and its exit code. The
    engine's errors are imported here, when something failed: a command that needs no engine
    (`pbem --help`, `pbem key list`) does not load it."""
    from engine.errors import BadPosition, IllegalMove, InvalidMove
    from pbem.errors import EXIT_ILLEGAL_MOVE, EXIT_INVALID_MOVE, PbemError
    from pbem.ui import failures
    from pbem.ui.words import t

    if isinstance(exc, InvalidMove):
        hint = t("hint did you mean", move=exc.suggestion) if exc.suggestion else t("hint notation")
        _fail(failures.message(exc), hint, EXIT_INVALID_MOVE, getattr(exc, "source", None))
    if isinstance(exc, IllegalMove):
        _fail(failures.message(exc), None, EXIT_ILLEGAL_MOVE, getattr(exc, "source", None))
    if isinstance(exc, BadPosition):
        _fail(str(exc), t("see docs/RULES.md §8 for the position format"), EXIT_BAD_POSITION)
    if isinstance(exc, PbemError):
        _fail(failures.message(exc), failures.hint(exc), exc.exit_code, getattr(exc, "source", None))
    from typer._click import ClickException  # pyproject pins a Typer that vendors click

    if isinstance(exc, typer.Exit):
        sys.exit(exc.exit_code)
    if isinstance(exc, ClickException):
        if type(exc).__name__ == "NoArgsIsHelpError":  # a group run bare shows its page
            exc.show()
            sys.exit(exc.exit_code)
        from pbem.cli import usage

        _fail(usage.message(exc), usage.hint(exc, sys.argv[1:]), exc.exit_code)
    if isinstance(exc, typer.Abort):
        _fail(t("aborted"), None, 1)
    if os.environ.get("PBEM_DEBUG"):
        raise exc
    # A bug, not bad input: still one line, no locals, no traceback.
    first = (str(exc).splitlines() or [""])[0]
    _fail(t("internal error: {kind}: {text}", kind=type(exc).__name__, text=first),
          t("please report it; PBEM_DEBUG=1 shows the traceback"), EXIT_INTERNAL)


if __name__ == "__main__":
    main()
