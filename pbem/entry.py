"""The `pbem` command's entry point: a Ctrl-C at any moment is `error: interrupted`, exit 130.

Importing the CLI (Typer, the command tree) takes a moment, during which a Ctrl-C would raise
KeyboardInterrupt out of the import, and Python would print its traceback. This module imports
nothing but the standard library's `sys` and `os` before it catches that; pbem.cli.main
handles a Ctrl-C from then on (docs/protocol.md, exit codes).
"""

from __future__ import annotations

import os
import sys

EXIT_INTERRUPTED = 130  # = pbem.errors.EXIT_INTERRUPTED (a test checks): importing that module here would widen the window


def _interrupted() -> None:
    line = "error: interrupted"
    try:  # the words, unless a second Ctrl-C or a half-imported package gets in the way
        from pbem.ui import words

        try:
            words.set_language(words.language_in(sys.argv[1:]))
        except ValueError:
            pass
        line = words.t("error: {message}", message=words.t("interrupted"))
    except BaseException:
        pass
    try:
        print(line, file=sys.stderr, flush=True)
    finally:
        os._exit(EXIT_INTERRUPTED)  # no cleanup that a second Ctrl-C could interrupt with a traceback


def main() -> None:
    try:
        from pbem.cli import main as cli_main
    except KeyboardInterrupt:
        _interrupted()
        return
    cli_main()
