"""What a command's --json prints: the value indented by two spaces, its text unescaped but for
the characters that act on a terminal (pbem.ui.terminal.json_shown)."""

from __future__ import annotations

import json
from typing import Any


def json_text(value: Any, indent: int | None = 2) -> str:
    """The text `json.dumps(value, indent=indent, ensure_ascii=False)` writes, as json_shown
    leaves it. Indented, written by msgspec where it is loaded already: json indents in pure
    Python, many times slower on a round's replay. The values printed hold no floats (which the two write
    differently: 1e+16 and 1e16); one that msgspec does not write (keys that are not text, a
    lone surrogate) goes through json."""
    from pbem.ui.terminal import json_shown

    import sys

    if indent is None or "msgspec" not in sys.modules:  # a small value (status): not worth loading msgspec
        return json_shown(json.dumps(value, indent=indent, ensure_ascii=False))
    import msgspec

    try:
        text = msgspec.json.format(msgspec.json.encode(value), indent=indent).decode()
    except (TypeError, UnicodeEncodeError):
        text = json.dumps(value, indent=indent, ensure_ascii=False)
    return json_shown(text)
