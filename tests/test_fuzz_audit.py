"""An archive the host signed but filled with nonsense is reported as faults, never a crash."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from table_games import make_table, play_until

from pbem.errors import PbemError
from pbem.protocol.documents import read_blocks, sign_json
from pbem.replay.audit import audit

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
FIELDS = ["round", "invitation", "joins", "secret", "carried", "start", "moves", "chain", "final"]


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    table = make_table(tmp_path_factory.mktemp("fuzz-audit"), ["ann", "bob", "cat"])
    play_until(table, lambda p: p.doc.phase != "playing", seed=2)
    doc = msgspec.to_builtins(read_blocks(table.host.archives()[1])[0].doc)
    return table, {k: v for k, v in doc.items() if k not in ("format", "signer")}


def test_the_untouched_archive_passes(archive) -> None:
    table, doc = archive
    assert audit(sign_json("archive", doc, table.ids["referee"])).ok


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.dictionaries(st.sampled_from(FIELDS), json_values, min_size=1, max_size=3),
       move_change=st.tuples(st.sampled_from(["n", "seat", "text", "nonce", "envelope"]), json_values))
def test_a_nonsense_archive_is_faulted_not_crashed(archive, changes, move_change) -> None:
    table, doc = archive
    broken = {**doc, **changes}
    if isinstance(doc.get("moves"), list) and "moves" not in changes:
        key, value = move_change
        broken["moves"] = [{**doc["moves"][0], key: value}, *doc["moves"][1:]]
    try:
        report = audit(sign_json("archive", broken, table.ids["referee"]))
    except PbemError:
        return
    assert not report.ok
