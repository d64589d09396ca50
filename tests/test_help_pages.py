"""Every --help page reads well at 80 columns: its prose is wrapped at the terminal's width,
not at the width the docstring was written in (Typer keeps a docstring's line breaks after its
first paragraph, which came out ragged: "--folder, --maildir / or --imap / is remembered")."""

from __future__ import annotations

import re
from collections import Counter
from functools import cache

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


def test_chinese_breaks_between_characters_and_punctuation_stays_with_its_character() -> None:
    """pbem.cli.linebreak: a line of Chinese breaks between any two characters, never after an
    opening bracket nor before a comma or closing one; other words break at spaces, and one
    wider than the line is cut into pieces that fit."""
    from pbem.cli.linebreak import breaks

    def lines(text: str, width: int) -> list[str]:
        at = [0, *breaks(text, width), len(text)]
        return [text[i:j] for i, j in zip(at, at[1:])]

    assert lines("主持人（和机器人）说：好。", 8) == ["主持人", "（和机器", "人）说：", "好。"]
    assert lines("主持人（和机器人）说：好。", 6) == ["主持人", "（和机", "器人）", "说：", "好。"]
    assert lines("用 --once 只跑一轮", 8) == ["用 ", "--once ", "只跑一轮"]
    assert lines("imaps://USER@HOST/FOLDER（USER）", 10) == ["imaps://US", "ER@HOST/FO", "LDER", "（USER）"]


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


# In one fresh interpreter (Typer reads the terminal's settings when it is imported), in each
# language named on its command line in turn (each run reads PBEM_LANG anew): the page of every
# command, group and the root, as `python -m pbem ... --help` draws it (runpy, so that click names
# the program as it does), then, in English, Typer's own page of the same command in the converted
# tree, drawn by typer.rich_utils; `python -m pbem` alone for the root page. A line of its own
# ends each page.
PAGES = """
import os, runpy, sys
import typer._click as click
import typer.main
import typer.rich_utils
from pbem.cli import whole
from pbem.cli._common import home_everywhere
from pbem.cli.helptext import localise
END = "-8<-" * 10

def paths(cmd, path=()):
    yield list(path)
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from paths(sub, (*path, name))

def entry(*args):
    sys.argv = ["pbem", *args]
    try:
        runpy.run_module("pbem", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        assert not args or not exc.code, (args, exc.code)  # alone, the page comes with click's usage exit
    print(END, flush=True)

for lang in sys.argv[1:]:
    os.environ["PBEM_LANG"] = lang
    root = localise(home_everywhere(typer.main.get_command(whole())))
    for path in paths(root):
        print("#", lang, *path, flush=True)
        entry(*path, "--help")
        if lang != "en":
            continue
        ctx = click.Context(root, info_name="python -m pbem")
        for word in path:
            ctx = click.Context(ctx.command.get_command(ctx, word), info_name=word, parent=ctx)
        typer.rich_utils.rich_format_help(obj=ctx.command, ctx=ctx, markup_mode="rich")
        print(flush=True)  # what click echoes after a page (its get_help, empty, and a newline)
        print(END, flush=True)
    print("#", lang, "(alone)", flush=True)
    entry()
"""
END = "-8<-" * 10


@cache
def _drawn(env: tuple[tuple[str, str], ...], *langs: str) -> str:
    import subprocess
    import sys

    from processes import ROOT, cli_env

    return subprocess.run([sys.executable, "-c", PAGES, *langs], env=cli_env(**dict(env)), capture_output=True,
                          text=True, cwd=ROOT, check=True).stdout


def _pages(env: dict[str, str], *langs: str) -> dict[tuple[str, ...], list[str]]:
    """The pages PAGES prints, by (language, command words...)."""
    out = _drawn(tuple(sorted(env.items())), *langs)
    pages: dict[tuple[str, ...], list[str]] = {}
    for block in ("\n" + out).split("\n# ")[1:]:
        title, drawn = block.split("\n", 1)
        pages[tuple(title.split())] = (drawn + "\n").split(END + "\n")[:-1]
    return pages


@pytest.mark.parametrize("env", [{"COLUMNS": "80", "TERMINAL_WIDTH": "80"}, {"COLUMNS": "60", "TERMINAL_WIDTH": "60"},
                                 {"COLUMNS": "120", "FORCE_COLOR": "1"}], ids=["80", "60", "colour"])
def test_every_english_page_is_typers_page(env: dict[str, str]) -> None:
    """pbem draws every help page itself (pbem.cli.helppage; the root page from what the command
    modules register, without the tree Typer converts): in English, each is the page Typer draws
    of the same command, byte for byte, at any width, in colour; `pbem` alone is the root page."""
    pages = _pages(env, "en")
    assert len(pages) > 50 and ("en", "host", "run") in pages and ("en", "game") in pages
    bare = pages.pop(("en", "(alone)"))[0]
    for key, (ours, typers) in pages.items():
        plain = re.sub(r"\x1b\[[0-9;]*m", "", typers)
        assert "╭─" in plain and "Usage: python -m pbem" in plain, key
        assert ours == typers, key
    assert bare == pages[("en",)][0].removesuffix("\n")  # alone, without the blank line after it


def _shown(page: str) -> Counter[str]:
    """The characters a page shows, but for spaces and the panels' borders."""
    return Counter(c for c in page if not c.isspace() and c not in "╭╮╰╯│─")


@pytest.mark.parametrize("width", [80, 60])
def test_every_chinese_page_loses_nothing(width: int) -> None:
    """Chinese breaks between characters (pbem.cli.linebreak): on no page, in no column, at no
    width, is a word cut off with "…" (a Chinese run wider than its column was, and so was the
    last character of a line Rich counted one character too long: "否则 …" for "否则用"). Each page
    shows every character it shows on a terminal wide enough for every line, and no line is
    wider than the terminal."""
    from rich.cells import cell_len

    narrow = _pages({"COLUMNS": str(width), "TERMINAL_WIDTH": str(width)}, "zh-Hans", "zh-Hant")
    wide = _pages({"COLUMNS": "1000", "TERMINAL_WIDTH": "1000"}, "zh-Hans", "zh-Hant")
    assert narrow.keys() == wide.keys() and len(narrow) > 100
    for key, (page, *_) in narrow.items():
        assert "用法：" in page and "Usage" not in page, key
        assert "…" not in page.replace("……", ""), (key, page)
        assert _shown(page) == _shown(wide[key][0]), (key, page)
        assert max(cell_len(line) for line in page.splitlines()) <= width, (key, page)
