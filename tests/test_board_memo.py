"""What the bots work out from a maze is kept in the board's own memo: emptied by every change
of the board and never shared with a copy, so no module-level table keyed by id() outlives it."""

from __future__ import annotations

from engine.bots.maze import Distance, _distance, distance, goal_weights
from engine.bots.suspicion import maze_evidence
from engine.chance import SeededChance
from engine.moves import Move
from engine.state import deal


def test_the_distance_is_kept_until_the_board_changes() -> None:
    board = deal("classic", ("ann", "bob", "cid"), SeededChance("board-memo")).board
    weights = goal_weights(board)
    first = distance(board, weights)
    assert distance(board, weights) is first  # kept
    assert board.copy().memo() == {}  # a copy starts with nothing worked out
    board.place((1, 0), "straight-ew.1", False)  # the maze grows towards the goals
    after = distance(board, weights)
    assert after is not first and after == _distance(board, weights, board.reach())
    assert after.value() < first.value()
    assert isinstance(after, Distance)


def test_the_evidence_of_a_move_is_kept_by_the_maze_before_it() -> None:
    before = deal("classic", ("ann", "bob", "cid"), SeededChance("board-memo")).board
    after = before.copy()
    after.place((1, 0), "straight-ew.1", False)
    move = Move("play", "straight-ew.1", at=(1, 0))
    value = maze_evidence(before, after, "play straight-ew.1 at 1,0", move)
    assert before.memo()[("evidence", "play straight-ew.1 at 1,0")] == (after, value)
    other = after.copy()  # another maze after the same text: judged afresh, not taken from the memo
    assert maze_evidence(before, other, "play straight-ew.1 at 1,0", move) == value
    assert before.memo()[("evidence", "play straight-ew.1 at 1,0")][0] is other
    assert after.memo().get(("evidence", "play straight-ew.1 at 1,0")) is None  # (the maze after keeps none)
