"""A command's --json text (pbem/cli/jsonout.py): what json.dumps(indent=2, ensure_ascii=False)
wrote, byte for byte, for every value a command prints, written by msgspec."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.cli.jsonout import json_text

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
    assert json_text(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_empty_containers_and_escapes() -> None:
    value = {"a": [], "b": {}, "c": [{}], "\x00\x7f\n\"\\é\u2028": "\ud800 lone"}
    assert json_text(value) == json.dumps(value, indent=2, ensure_ascii=False)
