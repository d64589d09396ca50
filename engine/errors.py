"""The engine's exceptions. Each message quotes the input it refuses."""

from __future__ import annotations


class EngineError(Exception):
    """Base of every error the rules raise."""


class IllegalMove(EngineError):
    """A move that the rules forbid in this state (or cannot even parse)."""

    def __init__(self, move: str, reason: str) -> None:
        super().__init__(f"illegal move {move!r}: {reason}")
        self.move = move
        self.reason = reason


class BadPosition(EngineError):
    """A position document that does not describe a legal moment of a round."""
