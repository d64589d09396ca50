"""The `pbem` command line. Thin: parse arguments, call into pbem/ and engine/, print.

Errors raised inside are small typed exceptions; only here do they become one line on
stderr (`error: ...`, maybe `hint: ...`) and an exit code (docs/exit-codes in docs/).
"""

from __future__ import annotations

import os
import sys

import typer

from engine.errors import BadPosition, IllegalMove, InvalidMove
from pbem.errors import EXIT_ILLEGAL_MOVE as EXIT_ILLEGAL
from pbem.errors import EXIT_INVALID_MOVE as EXIT_INVALID
from pbem.cli import agent as cli_agent
from pbem.cli import deadlines as cli_deadlines
from pbem.cli import keys as cli_keys
from pbem.cli import play as cli_play
from pbem.cli import position as cli_position
from pbem.cli import replay as cli_replay
from pbem.cli import transport as cli_transport

app = typer.Typer(
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
    help="Play Saboteur asynchronously: by email, shared folder, or file by file.",
)


@app.callback()
def _root(
    lang: str | None = typer.Option(None, "--lang", help="Language of the output: en, zh-Hans (简体), zh-Hant (繁體). "
                                    "Default: $PBEM_LANG, else en.", show_default=False),
) -> None:
    if lang is not None:
        from pbem.ui import words

        try:
            words.set_language(lang)
        except ValueError:
            raise typer.BadParameter(f"unknown language {lang!r}; use en, zh-Hans or zh-Hant", param_hint="--lang")


app.add_typer(cli_keys.app, name="key")
app.add_typer(cli_agent.app, name="agent")
app.add_typer(cli_position.app, name="position")
cli_play.register(app)
cli_replay.register(app)
cli_transport.register(app)
cli_deadlines.register(app)

EXIT_BAD_POSITION = 7
EXIT_INTERNAL = 70


def _fail(message: str, hint: str | None, code: int, source: str | None = None) -> None:
    # Messages quote their input (a game id, a file name from a stranger's mail): sanitised.
    from pbem.ui.terminal import printable

    print(printable(f"error: {source + ': ' if source else ''}{message}"), file=sys.stderr)
    if hint:
        print(printable(f"hint: {hint}"), file=sys.stderr)
    sys.exit(code)


def main() -> None:
    from pbem.errors import PbemError

    try:
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:  # a command that reported its own errors (typer.Exit)
            sys.exit(code)
    except InvalidMove as exc:
        from pbem.ui.words import t

        hint = t("hint did you mean", move=exc.suggestion) if exc.suggestion else t("hint notation")
        _fail(str(exc), hint, EXIT_INVALID, getattr(exc, "source", None))
    except IllegalMove as exc:
        _fail(str(exc), None, EXIT_ILLEGAL, getattr(exc, "source", None))
    except BadPosition as exc:
        _fail(str(exc), "see RULES.md §8 for the position format", EXIT_BAD_POSITION)
    except PbemError as exc:
        _fail(str(exc), exc.hint, exc.exit_code, getattr(exc, "source", None))
    except KeyboardInterrupt:
        _fail("interrupted", None, 130)
    except Exception as exc:  # click's own usage errors and aborts
        try:
            from typer._click import ClickException  # typer >= 0.20 vendors click
        except ImportError:  # older typer depends on click
            from click import ClickException  # type: ignore[import-not-found,no-redef]

        if isinstance(exc, typer.Exit):
            sys.exit(exc.exit_code)
        if isinstance(exc, ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, typer.Abort):
            _fail("aborted", None, 1)
        if os.environ.get("PBEM_DEBUG"):
            raise
        # A bug, not bad input: still one line, no locals, no traceback.
        first = (str(exc).splitlines() or [""])[0]
        _fail(f"internal error: {type(exc).__name__}: {first}", "please report it; PBEM_DEBUG=1 shows the traceback",
              EXIT_INTERNAL)


if __name__ == "__main__":
    main()
