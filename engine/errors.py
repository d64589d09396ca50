"""The engine's exceptions. Each message quotes the input it refuses."""

from __future__ import annotations

from typing import ClassVar


class EngineError(Exception):
    """Base of every error the rules raise."""


class MoveError(EngineError):
    """A move that is refused: `InvalidMove` (not a move at all) or `IllegalMove` (against the rules)."""

    what: ClassVar[str] = "move"  # (a ClassVar: compiled by mypyc, a plain class attribute would be an instance's)

    def __init__(self, move: str, reason: str, suggestion: str | None = None) -> None:
        super().__init__(f"{self.what} {move!r}: {reason}")
        self.move = move
        self.reason = reason
        self.suggestion = suggestion  # a corrected move the player may have meant, if one is clear


class InvalidMove(MoveError):
    """Text that does not parse as a move (RULES.md §7): a typo, a missing word, an unknown card."""

    what = "not a move"


class IllegalMove(MoveError):
    """A well-formed move that the rules forbid in this state (or a card the mover does not hold)."""

    what = "illegal move"


class BadPosition(EngineError):
    """A position document that does not describe a legal moment of a round."""


class UnknownGoal(EngineError):
    """A view reaches a face-down goal whose card it does not know (a trustless table opens it
    first, with every seat's token, then plays the move again: pbem/protocol/trustless/round.py)."""

    def __init__(self, goals: list[str]) -> None:
        super().__init__(f"the maze reaches the {', '.join(goals)} goal, whose card this view does not know")
        self.goals = goals
