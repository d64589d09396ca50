"""What a command's --json prints: the value indented by two spaces, its text unescaped but for
the characters that act on a terminal (pbem.ui.terminal.json_shown)."""

from __future__ import annotations

import json
from typing import Any


def json_text(value: Any, indent: int | None = 2) -> str:
    """The text `json.dumps(value, indent=indent, ensure_ascii=False)` writes, as json_shown
    leaves it."""
    from pbem.ui.terminal import json_shown

    return json_shown(json.dumps(value, indent=indent, ensure_ascii=False))
