"""Every `pbem` command shown in a code block of README.md and docs/*.md parses as written.

Each ```sh block is run by bash as a reader would paste it (continuation lines, loops, shell
variables, functions, `&`), in an empty folder, with no program on the PATH and `pbem` a shell
function that only records its arguments. Each recorded command line is then parsed by the
command line's own click commands, from the root group down to the command it names, with
every option and argument converted as the real run converts it, and the callback never
called. Synopsis lines in other blocks (`pbem replay SOURCE [--round N]`) are parsed with
their optional parts in. A placeholder (an upper-case word such as GAME, FILE or N, or a key
`pbem1...`) stands for a value: where the option wants a number or a choice, a sample of that
type takes its place; a lone `...` means "more of the same" and is left out.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.main
from processes import cli_env, new_keys
from processes import pbem as run_pbem
from typer import _click as click
from typer._click.core import Context

import pbem.cli

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BASH = shutil.which("bash") or "/bin/bash"
PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]*")
ELIDED = ("...", "…")
SAMPLES = {"integer": "1", "float": "1.5", "integer range": "1", "float range": "1.5"}
# Records each call: the line it was called from, then its arguments, NUL-separated, one file a call.
RECORDER = 'pbem() { local f="$PBEM_RECORD/$BASHPID-$RANDOM$RANDOM"; printf \'%s\\0\' "${BASH_LINENO[0]}" "$@" > "$f"; }\n'


@dataclass(frozen=True)
class Shown:
    """One `pbem` command line as a doc shows it: where, and its arguments after `pbem`."""
    where: str
    args: tuple[str, ...]


def blocks(path: Path) -> list[tuple[str, int, str]]:
    """Each fenced code block of `path`: its language, the line its first line is on, its text."""
    found: list[tuple[str, int, str]] = []
    lang: str | None = None
    start, body = 0, list[str]()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = line.strip()
        if fence.startswith("```"):
            if lang is None:
                lang, start, body = fence[3:].strip(), number + 1, []
            else:
                found.append((lang, start, "\n".join(body) + "\n"))
                lang = None
        elif lang is not None:
            body.append(line)
    assert lang is None, f"{path.name}: a code block is never closed"
    return found


def run_by_bash(text: str, tmp: Path) -> list[tuple[int, tuple[str, ...]]]:
    """The `pbem` calls of a shell block, as bash makes them: (line within the block, arguments)."""
    record, empty = tmp / "record", tmp / "bin"
    record.mkdir(parents=True)
    empty.mkdir()
    env = {"PATH": str(empty), "HOME": str(tmp / "home"), "PBEM_RECORD": str(record), "LANG": "C.UTF-8"}
    script = RECORDER + text + "\nwait\n"
    run = subprocess.run([BASH, "-c", script], check=False, cwd=tmp, env=env, capture_output=True, text=True, timeout=30)
    assert "syntax error" not in run.stderr, run.stderr
    calls = []
    for f in sorted(record.iterdir()):
        line, *args = f.read_bytes().decode().split("\0")[:-1]
        calls.append((int(line) - 1, tuple(a.replace(env["HOME"], "~") for a in args)))  # as the doc shows it
    return calls


def synopsis(line: str) -> tuple[str, ...]:
    """A synopsis line's arguments after `pbem`, its optional [parts] in, its comment out."""
    words = shlex.split(line.replace("[", " ").replace("]", " "), comments=True)
    return tuple(words[1:])


def shown_commands(tmp: Path) -> list[Shown]:
    """Every `pbem` command line in the code blocks of README.md and docs/*.md."""
    shown = []
    for path in DOCS:
        for n, (lang, start, text) in enumerate(blocks(path)):
            if lang in ("sh", "bash", "shell", "console") and re.search(r"\bpbem\b", text):
                calls = run_by_bash(text, tmp / f"{path.stem}-{n}")
                lines = text.splitlines()
                assert calls or not any(re.match(r"\s*pbem ", x) for x in lines), f"{path.name}:{start}: no call ran"
                shown += [Shown(f"{path.relative_to(ROOT)}:{start + i - 1}", args) for i, args in calls]
            elif lang == "":
                shown += [Shown(f"{path.relative_to(ROOT)}:{start + i}", synopsis(x))
                          for i, x in enumerate(text.splitlines()) if x.startswith("pbem ")]
    return shown


def _sampled(args: list[str], exc: click.exceptions.BadParameter) -> list[str] | None:
    """`args` with the placeholder `exc` refused replaced by a sample of the option's type, or
    None when the refused value is no placeholder."""
    param = exc.param
    sample = SAMPLES.get(getattr(param.type, "name", "")) if param is not None else None
    if sample is None and getattr(param.type if param is not None else None, "choices", None):
        sample = str(param.type.choices[0])  # type: ignore[union-attr]
    if param is None or sample is None:
        return None
    for i, word in enumerate(args[:-1]):
        if word in param.opts and PLACEHOLDER.fullmatch(args[i + 1]):
            return [*args[:i + 1], sample, *args[i + 2:]]
    return None


def parse(args: tuple[str, ...]) -> Context | None:
    """Parse `pbem ARGS` as the command line would, down to the command it names, without
    running anything; a click UsageError when it does not parse. A line with `...` leaves out
    what it does not show (`pbem game new elm --host referee ...`: the players as above), so
    a required option or argument may be missing there (None), and nothing else."""
    words = [a for a in args if a not in ELIDED]
    while True:
        try:
            command = pbem.cli.command_line(words)
            ctx = command.make_context("pbem", list(words))
            while isinstance(command, typer.core.TyperGroup):
                rest = [*ctx._protected_args, *ctx.args]
                name, inner, rest = command.resolve_command(ctx, rest)
                assert inner is not None  # resolve_command refuses a word that names no command
                command = inner
                ctx = command.make_context(name, rest, parent=ctx)
            return ctx
        except click.exceptions.Exit as exc:  # --help: the page is printed at its option
            assert exc.exit_code == 0, args
            return None
        except click.exceptions.MissingParameter:
            if len(words) == len(args):
                raise
            return None
        except click.exceptions.BadParameter as exc:
            sampled = _sampled(words, exc)
            if sampled is None:
                raise
            words = sampled


def test_the_docs_show_commands(tmp_path: Path) -> None:
    """The extraction finds the commands of every kind of block (a guard against a test that
    checks nothing): continuation lines joined, loops and functions run, synopses read."""
    found = {(s.where.split(":")[0], s.args) for s in shown_commands(tmp_path)}
    assert len(found) > 80
    assert ("docs/playing.md", ("game", "new", "demo", "--host", "referee", "--player", "ann=", "--player", "bob=",
                                "--player", "cat=")) in found  # `\` continuation, $(cat ...) with no cat
    assert ("docs/playing.md", ("key", "new", "cat", "--home", "keys-cat", "--no-passphrase")) in found  # a loop
    assert ("docs/replay.md", ("replay", "SOURCE", "--to", "N", "--as", "NAME", "--json")) in found


def test_every_command_in_the_docs_parses(tmp_path: Path) -> None:
    """Each command line a doc shows is one the command line accepts: its command exists, its
    options exist and take the values shown, and no argument is missing or left over."""
    failures = []
    for shown in shown_commands(tmp_path):
        try:
            parse(shown.args)
        except click.exceptions.ClickException as exc:
            failures.append(f"{shown.where}: pbem {shlex.join(shown.args)}\n    {exc.format_message()}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("args", [
    ("folder", "init", "~/Sync/friday", "--db", "saves/friday.db"),  # DIR missing: GAME took the folder
    ("game", "new", "friday", "--hots", "referee"),
    ("replay", "SOURCE", "--round", "one"),
    ("turn", "DIR", "--as", "ann", "play cross at 1,0", "extra"),
    ("gmae", "new", "friday"),
])
def test_a_wrong_command_does_not_parse(args: tuple[str, ...]) -> None:
    """The check can fail: a missing argument, a mistyped option, a word where a number goes,
    an argument too many and a mistyped command are each refused."""
    with pytest.raises(click.exceptions.UsageError):
        parse(args)


def test_the_trustless_folder_lines_of_playing_md_run_as_written(tmp_path: Path) -> None:
    """docs/playing.md §2's trustless folder game: after the host's `game new` (with real keys
    for its KEY placeholders), its `folder init` and `host run` lines run by bash as written
    (`--once` added: as written it serves until the game is over) and lay out and serve the
    folder in ~/Sync/friday."""
    block = next(text for _, _, text in blocks(ROOT / "docs" / "playing.md")
                 if "--trustless" in text and "folder init" in text)
    lines = [x for x in block.splitlines() if x.startswith(("pbem folder init", "pbem host run"))]
    assert len(lines) == 2, block
    homes = {n: tmp_path / f"keys-{n}" for n in ("me", "ann", "bob", "cat")}
    pubs = new_keys(homes)
    players = [a for s in ("ann", "bob", "cat") for a in ("--player", f"{s}={pubs[s]}")]
    run_pbem("game", "new", "friday", "--host", "me", *players, "--trustless", home=homes["me"], cwd=tmp_path, ok=True)
    script = 'pbem() { "$PBEM_PYTHON" -m pbem "$@"; }\n' + lines[0] + "\n" + lines[1].split("#")[0] + " --once\n"
    env = cli_env(homes["me"], HOME=str(tmp_path), PBEM_PYTHON=sys.executable, PBEM_LANG="en")
    run = subprocess.run([BASH, "-eu", "-c", script], check=False, cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    folder = tmp_path / "Sync" / "friday"
    assert (folder / "invitation.pbem").is_file() and (folder / "inbox").is_dir(), run.stdout
    assert sorted(p.name for p in (tmp_path / "saves").glob("*.db")) == ["pbem.db"]  # kept in the host's store


def test_the_saboteur_2_section_quotes_what_show_prints() -> None:
    """docs/playing.md §11 reads the expansion's screen to a newcomer: each legend mark, column
    and line it quotes is one `pbem show` prints for a 4-seat Saboteur 2 game, and each role is
    named as the screen names it."""
    from engine.catalog import KINDS
    from engine.chance import SeededChance
    from engine.state import deal
    from engine.views import view
    from pbem.ui import words
    from pbem.ui.render import plain_text
    from pbem.ui.seatview import render_view

    section = (ROOT / "docs" / "playing.md").read_text(encoding="utf-8").split("## 11. Saboteur 2\n", 1)[1]
    state = deal("expansion", ("ann", "bob", "cat", "dan"), SeededChance(1))
    with words.using("en"):
        screen = " ".join(plain_text(render_view(view(state, "ann"), "ann")).split())
        roles = [words.role_name(kind) for kind in ("green", "blue", "boss", "profiteer", "geologist", "saboteur")]
    for quoted in ("`H`", "`[g]`", "`[b]`", "`◆`", "`╴│╶`", "`╱`", "`cards in front`", "`dwarf cards aside: 11`",
                   "`your role:`"):
        assert quoted in section and quoted.strip("`") in screen, quoted
    assert all(kind in KINDS for kind in ("green", "blue", "boss", "profiteer", "geologist", "saboteur"))
    for role in roles:
        assert f"`{role}`" in section, role
