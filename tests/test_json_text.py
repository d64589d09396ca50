"""A command's --json text (pbem/cli/jsonout.py): what json.dumps(indent=2, ensure_ascii=False)
wrote, byte for byte, for every value a command prints, written by msgspec, but for the
characters that act on a terminal, written as JSON escapes (pbem.ui.terminal.json_shown)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.cli.jsonout import json_text
from pbem.ui.terminal import json_shown, shown

# what the commands print: text (any character, escapes included), integers, booleans, null,
# lists and objects; keys that are not text go through json, as they did
_printed = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=6) | st.integers(-5, 5), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(_printed)
def test_json_text_is_what_json_wrote(value) -> None:  # type: ignore[no-untyped-def]
    wrote = json.dumps(value, indent=2, ensure_ascii=False)
    text = json_text(value)
    assert text == json_shown(wrote) and shown(text) == text  # nothing in it acts on a terminal
    assert json.loads(text) == json.loads(wrote)  # and a JSON reader reads the same values
    assert json_text(value, None) == json_shown(json.dumps(value, ensure_ascii=False))


def test_empty_containers_and_escapes() -> None:
    value = {"a": [], "b": {}, "c": [{}], "\x00\x7f\n\"\\é\u2028": "\ud800 lone \x9b\u202e"}
    assert json_text(value) == ('{\n  "a": [],\n  "b": {},\n  "c": [\n    {}\n  ],\n'
                                '  "\\u0000\\u007f\\n\\"\\\\é\\u2028": "\\ud800 lone \\u009b\\u202e"\n}')
    assert json.loads(json_text(value)) == value
