"""SeededChance.shuffled draws all its words at once and checks them in one go; a refused word
(chance below n / 2**64, so never seen in play) sends it word by word. Both give the stream the
golden vectors (tests/test_protocol_vectors.py) fix: the same words, refused and taken, in order."""

from __future__ import annotations

import pytest

import engine.chance as chance
from engine.chance import SeededChance


def _word_by_word(c: SeededChance, size: int) -> list[int]:
    """Fisher-Yates from the end with below() per swap: the stream's definition (docs/protocol.md)."""
    out = list(range(size))
    for i in range(size - 1, 0, -1):
        j = c.below(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


SIZES = (0, 1, 2, 3, 5, 44, 71, 107, 511, 512, 600)  # (limits up to 511 come from a table)


@pytest.mark.parametrize("seed", ["a", "bench/classic/5/0", "trace/expansion/12/3"])
def test_shuffles_take_the_words_below_does(seed: str) -> None:
    fast, slow = SeededChance(seed), SeededChance(seed)
    for size in SIZES:
        assert fast.shuffled(range(size)) == _word_by_word(slow, size), size
    assert fast.below(1000) == slow.below(1000)  # and leave the stream at the same word


@pytest.mark.pure_engine  # (it patches chance._limits)
def test_after_a_refusal_the_words_drawn_go_back_and_are_taken_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # Make the one-go check refuse words (limits of 2**62: three words in four): the shuffle must
    # put back every word it drew and take them word by word, as below() does.
    monkeypatch.setattr(chance, "_limits", lambda sizes: (1 << 62 for _ in sizes))
    fast, slow = SeededChance("refusals"), SeededChance("refusals")
    for size in SIZES:
        assert fast.shuffled(range(size)) == _word_by_word(slow, size), size
