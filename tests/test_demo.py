"""The README's main job: `pbem demo` plays a whole game through real processes and files."""

from __future__ import annotations

from pathlib import Path

import pytest
from processes import ROOT, pbem


@pytest.mark.slow
def test_demo_plays_three_rounds_that_replay_and_audit(tmp_path: Path) -> None:
    work = tmp_path / "demo"
    run = pbem("demo", "--dir", work, timeout=240)
    assert run.returncode == 0, run.stderr[-2000:]
    out = run.stdout
    for n in (1, 2, 3):
        assert f"round {n}:" in out
    assert "final scores" in out and "pbem replay" in out
    audit = pbem("audit", work / "shared")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert audit.stdout.count("audit ok") == 3
    # every seat's process held only its own key
    for home in (work / "homes").iterdir():
        assert [p.stem for p in (home / "keys").glob("*.key")] == [home.name]


@pytest.mark.slow
def test_demo_without_dir_on_a_terminal_draws_its_progress_bars_and_removes_its_folder(tmp_path: Path) -> None:
    """A scripts/demo run leaves no pbem-demo-* folder behind; on a terminal it draws its
    progress bars with rich's own control codes, none of them escaped (pbem.ui.terminal.unshown).
    One run of the whole demo serves both claims; three seats (the test above plays the default five).
    A table the ruleset does not seat is refused before any folder is made."""
    from test_passphrase_prompt import Terminal

    refused = pbem("demo", "--seats", "11", home=tmp_path / "home", env={"TMPDIR": str(tmp_path)})
    assert refused.returncode == 2 and refused.stderr == "error: classic is played by 3-10 players, not 11\n"
    assert list(tmp_path.iterdir()) == []  # no key home, no demo folder
    term = Terminal("demo", "--seats", "3", home=tmp_path / "home", cwd=tmp_path, env={"TMPDIR": str(tmp_path)})
    assert term.end(timeout=300) == 0, term.text()[-2000:]
    assert b"\x1b[?25l" in term.out and b"\\x1b[" not in term.out  # rich hid the cursor; nothing came out escaped
    out = term.text()
    assert "final scores" in out and "demo --dir DIR" in out, out[-2000:]
    # only the demo's own folder counts: libraries may leave their own temporary files (ffi .so stubs)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("pbem-demo-")] == []


def _scripts_in(tmp_path: Path) -> tuple[Path, Path]:
    """scripts/_venv.sh, demo and test in a copy of the tree whose .venv is installed (its stamp
    newer than pyproject.toml), whose python and pbem only write down how they were called, and
    whose mail servers need nothing installed."""
    import shutil

    root, calls = tmp_path / "clone", tmp_path / "calls"
    (root / "scripts").mkdir(parents=True)
    for name in ("_venv.sh", "demo", "test"):
        shutil.copy2(ROOT / "scripts" / name, root / "scripts" / name)
    (root / "scripts" / "_mail_servers.sh").write_text("")  # (installs nothing here)
    shutil.copy2(ROOT / "pyproject.toml", root / "pyproject.toml")
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for program in ("python", "pbem"):
        (bin_dir / program).write_text(f'#!/bin/sh\necho "{program} $* [PBEM_ENGINE=$PBEM_ENGINE]" >> "{calls}"\n')
        (bin_dir / program).chmod(0o755)
    (root / ".venv" / ".installed-test").touch()
    return root, calls


def test_scripts_demo_starts_the_game_without_compiling_the_engine(tmp_path: Path) -> None:
    """A first scripts/demo spent about half its wall time compiling the engine with mypyc before
    the game began; a demo needs no compiled engine: it runs the one built earlier if still
    current, else the pure one. scripts/test still builds it and asks for it (PBEM_ENGINE=compiled)."""
    import os
    import subprocess

    root, calls = _scripts_in(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PBEM_ENGINE"}
    demo = subprocess.run(["bash", root / "scripts" / "demo", "--seats", "3"], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert demo.returncode == 0, demo.stderr
    assert calls.read_text().splitlines() == ["pbem demo --seats 3 [PBEM_ENGINE=]"]
    calls.unlink()
    test = subprocess.run(["bash", root / "scripts" / "test", "-q"], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert test.returncode == 0, test.stderr
    built, pytest_run = calls.read_text().splitlines()
    assert built == f"python {root}/scripts/compiled_engine.py [PBEM_ENGINE=]"
    assert pytest_run.startswith("python -m pytest") and pytest_run.endswith("-q [PBEM_ENGINE=compiled]")


def _venv_maker(root: Path, calls: Path, version: str = "3.11.7") -> Path:
    """A `python3` that says it is `version` and, as `-m venv DIR`, lays the stubs of
    _scripts_in's .venv/bin in DIR (writing down that call)."""
    import shutil

    stubs = root.parent / "stubs"
    if not stubs.exists():
        shutil.copytree(root / ".venv" / "bin", stubs)
    old = tuple(map(int, version.split("."))) < (3, 11)
    maker = root.parent / "python3"
    maker.write_text(f'#!/bin/sh\n[ "$1" = -c ] && exit {int(old)}\n[ "$1" = -V ] && echo "Python {version}" && exit 0\n'
                     f'echo "python3 $*" >> "{calls}"\n[ "$1 $2" = "-m venv" ] || exit 1\n'
                     f'mkdir -p "$3" && cp -r "{stubs}" "$3/bin" && echo "version = {version}" > "$3/pyvenv.cfg"\n')
    maker.chmod(0o755)
    return maker


def test_an_older_python_makes_no_venv_and_a_venv_it_made_is_made_again(tmp_path: Path) -> None:
    """pbem needs Python 3.11: with an older `python3` the scripts said so only after pip's long
    log, and kept the venv it made, so that running them again with a newer PYTHON still failed."""
    import os
    import subprocess

    root, calls = _scripts_in(tmp_path)
    base = {k: v for k, v in os.environ.items() if k != "PBEM_ENGINE"}
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.10.12\n")

    def demo(version: str) -> subprocess.CompletedProcess[str]:
        env = {**base, "PYTHON": str(_venv_maker(root, calls, version))}
        return subprocess.run(["bash", root / "scripts" / "demo"], env=env, capture_output=True, text=True,
                              timeout=60, check=False)

    old = demo("3.10.12")
    assert old.returncode == 1 and not (root / ".venv").exists() and not calls.exists(), old.stderr
    assert old.stderr.splitlines() == [
        f"{root}/.venv was made by Python 3.10; making it again with {tmp_path}/python3...",
        f"error: pbem needs Python 3.11 or newer; {tmp_path}/python3 is Python 3.10.12",
        "hint: install one and run again with PYTHON=python3.11 (or newer)",
    ]
    new = demo("3.12.1")
    assert new.returncode == 0, new.stderr
    assert calls.read_text().splitlines()[0] == f"python3 -m venv {root}/.venv"
    assert calls.read_text().splitlines()[-1] == "pbem demo [PBEM_ENGINE=]"


def test_a_moved_or_copied_checkout_makes_its_venv_again(tmp_path: Path) -> None:
    """A .venv holds its folder's path: moved, `pbem` no longer started ("cannot execute: required
    file not found"); copied, it would run the original folder's code. A .venv made for another
    folder is made again (here by a `python3 -m venv` that lays the same stubs), once; a .venv
    that is a link is left as it is."""
    import os
    import subprocess

    root, calls = _scripts_in(tmp_path)
    (root / ".venv" / ".made-for").write_text("/elsewhere/pbem\n")
    env = {**{k: v for k, v in os.environ.items() if k != "PBEM_ENGINE"}, "PYTHON": str(_venv_maker(root, calls))}

    def demo() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", root / "scripts" / "demo", "--seats", "3"], env=env, capture_output=True,
                              text=True, timeout=60, check=False)

    first = demo()
    assert first.returncode == 0, first.stderr
    assert f"was made for /elsewhere/pbem; making it again for {root}" in first.stderr
    assert calls.read_text().splitlines() == [
        f"python3 -m venv {root}/.venv",
        "python -m pip install -q --upgrade pip [PBEM_ENGINE=]",
        f"python -m pip install -q -e {root}[test] [PBEM_ENGINE=]",
        "pbem demo --seats 3 [PBEM_ENGINE=]",
    ]
    assert (root / ".venv" / ".made-for").read_text() == f"{root}\n"
    calls.unlink()
    assert demo().returncode == 0 and calls.read_text().splitlines() == ["pbem demo --seats 3 [PBEM_ENGINE=]"]

    calls.unlink()
    elsewhere = tmp_path / "shared-venv"
    (root / ".venv").rename(elsewhere)
    (elsewhere / ".made-for").write_text("/elsewhere/pbem\n")
    (root / ".venv").symlink_to(elsewhere)
    linked = demo()
    assert linked.returncode == 0 and "making it again" not in linked.stderr, linked.stderr
    assert calls.read_text().splitlines() == ["pbem demo --seats 3 [PBEM_ENGINE=]"]
    assert (root / ".venv").is_symlink() and (elsewhere / ".made-for").read_text() == "/elsewhere/pbem\n"


def test_a_demo_table_seats_what_its_ruleset_seats() -> None:
    """`pbem demo --seats N`: N distinct seat names, each one `game new` takes, up to the biggest
    table of the ruleset; one more, or one less than its smallest, is refused."""
    from pbem.auto.demo import demo_seats
    from pbem.errors import UsageError
    from pbem.names import check_seat_name

    for ruleset, lo, hi in (("classic", 3, 10), ("expansion", 2, 12)):
        table = demo_seats(ruleset, hi)
        assert len(set(table)) == hi and demo_seats(ruleset, lo) == table[:lo]
        for name in table:
            check_seat_name(name)
        for n in (lo - 1, hi + 1):
            with pytest.raises(UsageError):
                demo_seats(ruleset, n)
