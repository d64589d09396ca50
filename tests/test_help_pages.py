"""Every --help page reads well at 80 columns: its prose is wrapped at the terminal's width,
not at the width the docstring was written in (Typer keeps a docstring's line breaks after its
first paragraph, which came out ragged: "--folder, --maildir / or --imap / is remembered")."""

from __future__ import annotations

import re

import pytest
import typer.main

from pbem.cli import app
from pbem.cli.helptext import localise, reflow


def _leaves(cmd, path=()):
    subs = getattr(cmd, "commands", {})
    if not subs:
        yield list(path)
    for name, sub in subs.items():
        yield from _leaves(sub, (*path, name))


def test_a_paragraph_becomes_one_line_and_cjk_joins_without_a_space() -> None:
    assert reflow("First line\nof one.\n\nSecond\n   paragraph here.") == "First line of one.\n\nSecond paragraph here."
    assert reflow("一局游戏：一直运行\n到游戏结束。") == "一局游戏：一直运行到游戏结束。"
    assert reflow("用 --once\n只跑一轮") == "用 --once 只跑一轮"
    assert reflow("\b\nkeep\nthese lines") == "\b\nkeep\nthese lines"  # Click's "as written" marker


def test_every_help_page_fills_its_lines_at_80_columns(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("TERMINAL_WIDTH", "80")
    cmd = localise(typer.main.get_command(app))
    pages = 0
    for path in _leaves(cmd):
        with pytest.raises(SystemExit) as done:
            cmd.main([*path, "--help"], prog_name="pbem")
        assert done.value.code == 0, path
        lines = capsys.readouterr().out.splitlines()
        top = lines[: next(i for i, line in enumerate(lines) if line.lstrip().startswith("╭"))]
        prose = top[next(i for i, line in enumerate(top) if "Usage:" in line) + 1:]
        for line, after in zip(prose, prose[1:]):
            if line.strip() and after.strip():  # a line that the next one continues is (nearly) full
                assert len(line.rstrip()) + len(after.split()[0]) >= 76, f"pbem {' '.join(path)} --help:\n" + "\n".join(prose)
        pages += 1
    assert pages > 30


@pytest.mark.slow
def test_every_group_page_lists_its_commands_and_each_is_reachable(here, tmp_path) -> None:
    """`pbem GROUP --help` (through the command line's entry, which builds only the group its
    first word names) lists every command of the group, and `pbem GROUP COMMAND --help` is that
    command's page: `pbem mail --help` showed `mail send`'s page, so `mail setup` was never
    listed. The group pages are drawn in this process, the mail pages by real processes."""

    from processes import pbem

    env: dict[str, str | None] = {"COLUMNS": "120", "PBEM_LANG": None}

    def page(*args: str) -> str:
        run = pbem(*args, "--help", env=env, timeout=60)
        assert run.returncode == 0, (args, run.stderr)
        return run.stdout

    cmd = typer.main.get_command(app)
    groups = {name: sub for name, sub in cmd.commands.items() if getattr(sub, "commands", None)}  # type: ignore[attr-defined]
    assert {"mail", "game", "key", "folder", "host", "bot"} <= set(groups)
    for name, group in groups.items():
        run = here(name, "--help", home=tmp_path, env={"COLUMNS": "120"})
        assert run.returncode == 0, (name, run.stderr)
        missing = [c for c in group.commands if c not in run.stdout]
        assert not missing, (name, missing, run.stdout)
    assert "Usage: python -m pbem mail setup" in page("mail", "setup")
    assert "Usage: python -m pbem mail send" in page("mail", "send")
    assert "Usage: python -m pbem mail send" in page("mail", "friday")  # GAME alone is `mail send GAME`
    zh = pbem("--lang", "zh-Hans", "mail", "--help", env=env, timeout=60)
    assert zh.returncode == 0 and "setup" in zh.stdout and "send" in zh.stdout and "命令" in zh.stdout, zh.stdout
    assert "用法：python -m pbem mail" in zh.stdout and "Usage" not in zh.stdout, zh.stdout


@pytest.mark.parametrize("args", [["--lang", "zh-Hant", "--help"], ["--lang", "zh-Hans", "folder", "init", "--help"],
                                  ["--lang", "zh-Hans", "mail", "send", "--help"]])
def test_a_chinese_help_page_says_usage_in_chinese(args: list[str]) -> None:
    """click writes "Usage: " itself, apart from Typer's words: it was left in English on every
    Chinese help page."""
    from processes import pbem

    run = pbem(*args, env={"PBEM_LANG": "", "COLUMNS": "80"}, timeout=60)
    assert run.returncode in (0, 2) and "用法：" in run.stdout + run.stderr, run.stdout + run.stderr
    assert "Usage" not in run.stdout + run.stderr


@pytest.mark.parametrize(("command", "width"), [(["demo"], 80), (["host", "run"], 80), (["host", "run"], 60)])
def test_a_chinese_help_page_fills_its_lines(command: list[str], width: int) -> None:
    """Rich breaks lines only at spaces; a Chinese sentence has none and was moved whole to the
    next line ("一个自动主持人和 5" / "个机器人玩家，..."). Now a line breaks between characters.
    In the option panels, whose help column is narrow, a Chinese run wider than the column was
    cut off with "…" (its words lost): none is."""

    from processes import pbem
    from rich.cells import cell_len

    run = pbem("--lang", "zh-Hans", *command, "--help", env={"COLUMNS": str(width), "TERMINAL_WIDTH": str(width)},
               timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    top = lines[: next(i for i, line in enumerate(lines) if line.lstrip().startswith("╭"))]
    prose = top[next(i for i, line in enumerate(top) if "用法：" in line) + 1:]  # its usage line, in Chinese too
    assert any("主持" in line for line in prose), run.stdout
    for line, after in zip(prose, prose[1:]):
        if line.strip() and after.strip():  # the next line's first word (a character, in Chinese) did not fit
            first = after.split()[0]
            word = first[0] if cell_len(first[0]) == 2 else first
            assert cell_len(line.rstrip()) + cell_len(word) >= width - 3, "\n".join(prose)
    for line in lines:
        assert not line.rstrip(" │").endswith("（"), line  # an opening bracket stays with what it opens
        assert not re.search(r"[\u2e80-\u9fff\uff00-\uffef\u3000-\u303f]…", line), run.stdout  # Chinese cut off


# In one fresh interpreter (Typer reads the terminal's settings when it is imported), for each
# language named on its command line in turn (each run reads PBEM_LANG anew; a terminal's settings,
# not a language, need an interpreter of their own): the pages of `python -m pbem --help` and of
# `python -m pbem` alone, run as that command runs them (runpy, so that click names the program as
# it does), then Typer's own page of the whole command line, drawn by typer.rich_utils from the
# converted tree; each ends with a line of its own, and each language with another.
PAGES = """
import os, runpy, sys
END = "\\n" + "-8<-" * 10
for lang in sys.argv[1:]:
    os.environ["PBEM_LANG"] = lang
    for args in (["--help"], []):
        sys.argv = ["pbem", *args]
        try:
            runpy.run_module("pbem", run_name="__main__", alter_sys=True)
        except SystemExit as exc:
            assert args == [] or not exc.code, exc.code  # alone, the page comes with click's usage exit
        print(END, flush=True)
    import typer._click as click
    import typer.main
    import typer.rich_utils
    from pbem.cli import whole
    from pbem.cli.helptext import localise
    cmd = localise(typer.main.get_command(whole()))
    typer.rich_utils.rich_format_help(obj=cmd, ctx=click.Context(cmd, info_name="python -m pbem"), markup_mode="rich")
    print()
    print("=8<=" * 10 + lang, flush=True)
"""
LANGS = ["en", "zh-Hans", "zh-Hant"]


@pytest.mark.parametrize("env", [{"COLUMNS": "100"}, {"COLUMNS": "64", "TERMINAL_WIDTH": "64"},
                                 {"COLUMNS": "120", "FORCE_COLOR": "1"}], ids=["100", "64", "colour"])
def test_the_root_page_is_typers_page_of_the_whole_command_line(env: dict[str, str]) -> None:
    """`pbem --help` and `pbem` alone are drawn by pbem.cli.rootpage from what the command
    modules register, without the command tree Typer converts: the page Typer draws of that tree,
    byte for byte, every command listed with its help, in each language, at any width, in colour."""
    import subprocess
    import sys

    from processes import ROOT, cli_env

    out = subprocess.run([sys.executable, "-c", PAGES, *LANGS], env=cli_env(**env), capture_output=True,
                         text=True, cwd=ROOT, check=True).stdout
    for lang in LANGS:
        pages, out = out.split("=8<=" * 10 + lang + "\n", 1)
        helped, bare, typers = pages.split("\n" + "-8<-" * 10 + "\n")
        assert "╭─" in typers and "mail-join" in typers and "position" in typers
        assert ("Usage" in typers) == (lang == "en") and ("用法" in typers) == (lang != "en"), (lang, typers[:200])
        assert helped == typers, (env, lang)
        assert bare == typers.removesuffix("\n")  # click prints no blank line after it
    assert out == ""
