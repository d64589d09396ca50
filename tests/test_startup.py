"""Start-up stays light: the CLI loads the database layer and rich only for commands that use them."""

from __future__ import annotations

import subprocess
import sys


def test_cli_startup_does_not_import_heavy_modules() -> None:
    code = ("import sys, pbem.cli; heavy = ('sqlalchemy', 'rich', 'pbem.host.referee', 'pbem.ui.render', 'pbem.mail.outgoing'); "
            "print(','.join(m for m in heavy if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"imported at start-up: {out}"
