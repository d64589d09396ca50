"""`pbem position`: ask the rules about a position file (RULES.md §8)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from pbem.atomic import read_bounded
from pbem.cli.jsonout import json_text
from pbem.errors import CannotRead, PbemError
from pbem.protocol.limits import MAX_FILE, check_size
from pbem.ui import failures
from pbem.ui.words import t

app = typer.Typer(help="Query the rules on a position file: legal moves, results of moves.", no_args_is_help=True)


def read_position(path: Path):
    from engine.errors import BadPosition  # the engine loads only for this group's commands
    from engine.position import load

    try:
        data = sys.stdin.buffer.read(MAX_FILE + 1) if str(path) == "-" else read_bounded(path, MAX_FILE)
        check_size(len(data), MAX_FILE, repr(str(path)))
        text = data.decode("utf-8")
    except CannotRead as exc:
        raise BadPosition(failures.message(exc)) from None
    except PbemError as exc:  # stdin over the limit
        raise BadPosition(failures.message(exc)) from None
    except UnicodeDecodeError as exc:
        raise BadPosition(t("{path} is not UTF-8 text (byte {offset})", path=repr(str(path)), offset=exc.start)) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadPosition(t("{path} is not JSON (line {line}, column {column})", path=repr(str(path)), line=exc.lineno,
                               column=exc.colno)) from None
    except RecursionError:
        raise BadPosition(t("{path} is nested too deeply", path=repr(str(path)))) from None
    return load(doc)


@app.command("legal")
def legal(
    file: Path = typer.Argument(..., help="Position file (JSON, RULES.md §8); - for stdin."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list instead of lines."),
) -> None:
    """Print every legal move of the player to move, in canonical notation, sorted."""
    from engine.rules import legal_texts

    state = read_position(file)
    moves = legal_texts(state)
    if as_json:
        typer.echo(json_text(moves, None))
    else:
        for m in moves:
            typer.echo(m)


@app.command("apply")
def apply_moves(
    file: Path = typer.Argument(..., help="Position file (JSON, RULES.md §8); - for stdin."),
    moves: list[str] = typer.Argument(..., help="Moves in notation, applied in order."),
    events: bool = typer.Option(False, "--events", help="Write each event as a JSON line to stderr."),
) -> None:
    """Apply moves and print the resulting position as JSON."""
    from engine.position import dump
    from engine.rules import apply
    from pbem.ui.card_names import check_typed

    state = read_position(file)
    for text in moves:
        for event in apply(state, check_typed(state, text)):
            if events:
                typer.echo(json_text(event, None), err=True)
    typer.echo(json_text(dump(state)))


def register(root: typer.Typer, only: str | None = None) -> None:
    """Add the `position` group to `root` (the one word this module adds: `only` is it or None)."""
    root.add_typer(app, name="position")
