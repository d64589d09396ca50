"""The `pbem` command line. Thin: parse arguments, call into pbem/ and engine/, print."""

from __future__ import annotations

import sys

import typer

app = typer.Typer(
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
    help="Play Saboteur asynchronously: by email, shared folder, or file by file.",
)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
