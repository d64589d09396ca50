"""Start-up stays light: the CLI loads the database layer and rich only for commands that use them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_cli_startup_does_not_import_heavy_modules() -> None:
    code = ("import sys, pbem.cli; heavy = ('sqlalchemy', 'rich', 'pbem.host.referee', 'pbem.ui.render', 'pbem.mail.outgoing'); "
            "print(','.join(m for m in heavy if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"imported at start-up: {out}"


def test_a_command_does_not_import_pydantic(tmp_path: Path) -> None:
    """Typer 0.27+ would import pydantic to convert parameters (about a third of a command's start-up)."""
    code = ("import sys; sys.argv = ['pbem', 'key', 'list', '--home', sys.argv[1]]\n"
            "import pbem.cli\n"
            "try:\n    pbem.cli.main()\nexcept SystemExit:\n    pass\n"
            "print('pydantic' in sys.modules, 'rich' in sys.modules, 'typer' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    # rich (and typer.rich_utils's markdown-it) only for a help page: 100-300 ms of every command otherwise
    assert run.stdout.split()[-3:] == ["False", "False", "True"], run.stdout + run.stderr
