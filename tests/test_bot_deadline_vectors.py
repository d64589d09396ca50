"""Golden vectors of a round whose host played a silent seat's turn with the search bot
(tests/vectors/protocol/bot-deadline.*, written by make_bot_deadline.py there): the packet that
names the bot's budget in its deadline (`bot_turns`), the host's move and the round's archive.
Each decodes and encodes to exactly its stored bytes, signs again to the same payload, and one
byte changed is refused; the archive audits clean, the audit playing the bot again at the budget.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from vector_checks import KEYS, assert_one_byte_changed_is_refused, fixed_identity

from pbem.protocol.documents import SIG_LEN, Archive, Packet, SeatMove, read_blocks, sign, to_json
from pbem.replay.audit import audit

V = Path(__file__).parent / "vectors" / "protocol"
FACTS = json.loads((V / "bot-deadline.json").read_text(encoding="utf-8"))
REFEREE = KEYS["referee"]


def _blocks():
    return read_blocks((V / "bot-deadline.pbem").read_text(encoding="utf-8"))


def test_each_block_decodes_and_encodes_to_the_same_bytes() -> None:
    blocks = _blocks()
    assert [type(b.doc) for b in blocks] == [Packet, SeatMove, Archive]
    assert "\n".join(b.armored() for b in blocks) == (V / "bot-deadline.pbem").read_text(encoding="utf-8")
    assert [b.hash for b in blocks] == FACTS["hashes"]
    assert [len(b.armored().encode()) for b in blocks] == FACTS["bytes"]
    referee = fixed_identity("referee")
    for b in blocks:
        assert to_json(b.doc) == b.payload[SIG_LEN:]
        assert b.doc.signer == REFEREE["line"]
        assert sign(msgspec.structs.replace(b.doc, signer=""), referee).payload == b.payload


def test_the_packet_names_the_bots_budget_and_the_host_moved_for_the_silent_seat() -> None:
    packet, move, archive = (b.doc for b in _blocks())
    assert packet.to_move == "cat" and packet.deadline is not None
    assert (packet.deadline.seat, packet.deadline.on_timeout, packet.deadline.bot_turns) == ("cat", "bot",
                                                                                             FACTS["bot_turns"])
    assert (move.seat, move.by, move.why, move.seq) == ("cat", "host", "timeout", packet.seq)
    assert [m.seat for m in archive.moves if m.by == "host"] == ["cat"]
    report = audit(_blocks()[2].payload)
    assert report.ok, [f.line() for f in report.faults]


@pytest.mark.parametrize("index", range(3))
def test_one_byte_changed_in_any_block_is_refused(index: int) -> None:
    assert_one_byte_changed_is_refused(_blocks()[index])
