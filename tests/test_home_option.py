"""--home works on every command, as docs/playing.md says, and `game new` takes the key home's
only key as the host when --host is left out (real processes for what a person runs; a command's
further runs, and those --home is compared with, through the command line's entry in this process)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer.main
from folder_games import keys_here
from processes import one_error_line, pbem

from pbem.cli import command_line, whole


def _commands(cmd, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    subs = getattr(cmd, "commands", None)
    if subs is None:
        return [path]
    return [p for name, sub in sorted(subs.items()) for p in _commands(sub, (*path, name))]


COMMANDS = _commands(typer.main.get_command(whole()))


def test_the_tree_has_the_commands_the_issue_named() -> None:
    assert {("status",), ("game", "email"), ("game", "new"), ("replay",)} <= set(COMMANDS) and len(COMMANDS) > 30


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_command_takes_home_and_its_help_lists_it(path: tuple[str, ...], capsys: pytest.CaptureFixture) -> None:
    """The command line as `pbem PATH --help` builds it (pbem.cli.command_line: only the branch
    named), its help page as click writes it."""
    group = command_line([*path, "--help"])
    ctx = group.make_context("pbem", [*path, "--help"], resilient_parsing=True)
    cmd = group
    for word in path:
        cmd = cmd.commands[word]
        ctx = cmd.make_context(word, [], parent=ctx, resilient_parsing=True)
    assert any("--home" in p.opts for p in cmd.params), path
    cmd.get_help(ctx)  # Typer's pages print themselves (rich)
    assert "--home" in capsys.readouterr().out, path


def test_status_and_game_email_accept_home(tmp_path: Path, here) -> None:
    homes = {n: tmp_path / f"home-{n}" for n in ("referee", "ann", "bob", "cat")}
    pubs = keys_here(homes)
    seats = [a for n in ("ann", "bob", "cat") for a in ("-p", f"{n}={pubs[n]}")]
    pbem("game", "new", "friday", "--home", homes["referee"], *seats, cwd=tmp_path, ok=True)
    for args in (("status", "friday"), ("game", "email", "friday", "ann=ann@example.org")):
        before = here(*args, home=None, cwd=tmp_path)  # without --home: what --home must match
        run = pbem(*args, "--home", homes["referee"], cwd=tmp_path)
        assert run.returncode == before.returncode == 0 and run.stdout == before.stdout != "", run.stderr
    assert "ann@example.org" in pbem("game", "email", "friday", "--home", homes["ann"], cwd=tmp_path, ok=True).stdout


def test_game_new_hosts_with_the_only_key_and_asks_when_there_are_several(tmp_path: Path, here) -> None:
    homes = {"referee": tmp_path / "host", "ann": tmp_path / "p1", "bob": tmp_path / "p2", "cat": tmp_path / "p3"}
    pubs = keys_here(homes)
    seats = [a for n in ("ann", "bob", "cat") for a in ("-p", f"{n}={pubs[n]}")]
    run = pbem("game", "new", "friday", *seats, home=homes["referee"], cwd=tmp_path, ok=True)
    assert run.stdout.startswith("created game friday-")
    assert here("status", "friday", home=None, cwd=tmp_path, ok=True).stdout.startswith("game friday-")
    keys_here({"other": homes["referee"]})  # a second key in the host's key home
    run = here("game", "new", "monday", *seats, home=homes["referee"], cwd=tmp_path)
    one_error_line(run, 2, "which identity hosts the game? pass --host NAME")
    assert "identities in" in run.stderr and "other, referee" in run.stderr
    assert "monday" not in pbem("games", "--host", home=homes["referee"], cwd=tmp_path).stdout
    here("game", "new", "monday", *seats, "--host", "other", home=homes["referee"], cwd=tmp_path, ok=True)
