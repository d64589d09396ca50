"""Typed errors shared by every pbem module.

Each error carries a process exit code so that the CLI (and scripts driving
it) can tell *why* a command failed without parsing messages. EXIT_CODES is
the one table of them; docs/protocol.md ("Exit codes") shows the same table,
and a test keeps the two equal. (engine.errors.InvalidMove, move text that does
not parse, is a usage error: 2.)

Messages quote the offending input (a name, a path, a line) and `hint`
says what the user can do about it.
"""

from __future__ import annotations

from engine.errors import InvalidMove, MoveError

EXIT_CODES: dict[int, str] = {
    0: "ok",
    1: "other error",
    2: "usage error (bad arguments or names; move text that does not parse: engine.errors.InvalidMove)",
    3: "bad packet (malformed, truncated, tampered or not ours) or bad signature",
    4: "wrong key, wrong passphrase or key not found",
    5: "stale move or conflicting history",
    6: "illegal move (engine.errors.IllegalMove)",
    7: "bad position file (engine.errors.BadPosition)",
    8: "audit failed",
    9: "store error (the host's store cannot be reached, is not a pbem store, has a newer schema, or holds a game name twice)",
    70: "internal error (a bug; PBEM_DEBUG=1 shows the traceback)",
}


EXIT_USAGE = 2
EXIT_STALE = 5
EXIT_INVALID_MOVE = 2  # engine.errors.InvalidMove: text that is not a move is a usage error
EXIT_ILLEGAL_MOVE = 6  # engine.errors.IllegalMove (the engine knows no exit codes)
EXIT_ILLEGAL = EXIT_ILLEGAL_MOVE
EXIT_BAD_POSITION = 7  # engine.errors.BadPosition
EXIT_AUDIT_FAILED = 8
EXIT_STORE = 9
EXIT_INTERNAL = 70


def move_exit_code(exc: MoveError) -> int:
    """The exit code of a refused move: 2 when the text does not parse, 6 when the rules forbid it."""
    return EXIT_INVALID_MOVE if isinstance(exc, InvalidMove) else EXIT_ILLEGAL_MOVE


class PbemError(Exception):
    """Base of every error pbem expects and explains to the user."""

    exit_code: int = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class UsageError(PbemError):
    exit_code = EXIT_USAGE


class SeatHandedOver(UsageError):
    """A packet signed by the game's host says this key's seat now belongs to another key."""


class BadPacket(PbemError):
    exit_code = 3


class BadSignature(BadPacket):
    pass


class ForkedChain(BadPacket):
    """The host sent two different packets with one number: never skipped over, always said."""


class WrongKey(PbemError):
    exit_code = 4


class WrongPassphrase(PbemError):
    exit_code = 4


class KeyNotFound(PbemError):
    exit_code = 4


class StaleMove(PbemError):
    exit_code = EXIT_STALE


class Conflict(PbemError):
    exit_code = EXIT_STALE


class StoreError(PbemError):
    exit_code = EXIT_STORE


__all__ = [
    "EXIT_CODES",
    "EXIT_INVALID_MOVE",
    "EXIT_ILLEGAL_MOVE",
    "move_exit_code",
    "ForkedChain",
    "PbemError",
    "UsageError",
    "SeatHandedOver",
    "BadPacket",
    "BadSignature",
    "WrongKey",
    "WrongPassphrase",
    "KeyNotFound",
    "StaleMove",
    "Conflict",
    "StoreError",
]
