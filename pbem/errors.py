"""Typed errors shared by every pbem module.

Each error carries a process exit code so that the CLI (and scripts driving
it) can tell *why* a command failed without parsing messages:

    0  ok
    1  unexpected internal error (a bug: please report it)
    2  UsageError       bad arguments, bad name, missing passphrase source;
       (engine.errors.InvalidMove: move text that does not parse)
    3  BadPacket        malformed, truncated, tampered or foreign input
       BadSignature     (a BadPacket) signature does not verify
    4  WrongKey         sealed part / key does not match this identity or context
       WrongPassphrase  passphrase does not unlock the key file
       KeyNotFound      no such identity or public key
    5  StaleMove        old sequence number, out of turn, or duplicate
       Conflict         forked history: two different moves claim the same place

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
    70: "internal error (a bug; PBEM_DEBUG=1 shows the traceback)",
}


EXIT_INVALID_MOVE = 2  # engine.errors.InvalidMove: text that is not a move is a usage error
EXIT_ILLEGAL_MOVE = 6  # engine.errors.IllegalMove


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
    exit_code = 2


class SeatHandedOver(UsageError):
    """A packet signed by the game's host says this key's seat now belongs to another key."""


class BadPacket(PbemError):
    exit_code = 3


class BadSignature(BadPacket):
    pass


class WrongKey(PbemError):
    exit_code = 4


class WrongPassphrase(PbemError):
    exit_code = 4


class KeyNotFound(PbemError):
    exit_code = 4


class StaleMove(PbemError):
    exit_code = 5


class Conflict(PbemError):
    exit_code = 5


__all__ = [
    "EXIT_CODES",
    "EXIT_INVALID_MOVE",
    "EXIT_ILLEGAL_MOVE",
    "move_exit_code",
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
]
