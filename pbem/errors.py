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

import errno as _errno
from typing import Literal

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
    10: "a mail server refuses what pbem needs (an IMAP folder it cannot create, a message it cannot move)",
    11: "a mail server's TLS certificate cannot be verified (untrusted CA, self-signed, expired, wrong host)",
    70: "internal error (a bug; PBEM_DEBUG=1 shows the traceback)",
    130: "interrupted (Ctrl-C: 128 + SIGINT, as shells report it)",
}


EXIT_USAGE = 2
EXIT_STALE = 5
EXIT_INVALID_MOVE = 2  # engine.errors.InvalidMove: text that is not a move is a usage error
EXIT_ILLEGAL_MOVE = 6  # engine.errors.IllegalMove (the engine knows no exit codes)
EXIT_ILLEGAL = EXIT_ILLEGAL_MOVE
EXIT_BAD_POSITION = 7  # engine.errors.BadPosition
EXIT_AUDIT_FAILED = 8
EXIT_STORE = 9
EXIT_MAIL_SERVER = 10
EXIT_CERTIFICATE = 11
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


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


class MailServerRefused(PbemError):
    """A mail server answered NO/BAD to what pbem needs of it: waiting does not mend it."""

    exit_code = EXIT_MAIL_SERVER


class CertificateFailure(PbemError):
    """A mail server's certificate did not verify: waiting does not mend it."""

    exit_code = EXIT_CERTIFICATE


# --- errors of the base modules (pbem/names.py, pbem/atomic.py) --------------------------------
# They sit below pbem.ui and cannot speak through its catalogs: each keeps what it is about as
# fields (the input quoted as given) and an English message; pbem.ui.failures says it in the
# reader's language, and the CLI prints that.

NameKind = Literal["game", "seat", "identity", "file"]
_NAME_HINTS: dict[str, str] = {
    "game": "use 1 to 32 characters from a-z, 0-9, '-' and '_', starting with a letter or digit",
    "seat": "lower-case letters, digits, - and _, starting with a letter; not top/middle/bottom/nobody/host/table",
    "identity": "use 1 to 32 characters from a-z, 0-9, '_' and '-'",
}


class BadName(UsageError):
    """A name a person typed that cannot become a file, a folder or a seat."""

    def __init__(self, what: NameKind, name: str) -> None:
        self.what = what
        self.name = name
        super().__init__(f"bad {what} name {name!r}", hint=_NAME_HINTS.get(what))


class BadNameRead(BadPacket):
    """A game id, seat, game or identity name in a document someone sent that breaks the rule
    for such names (cut to 80)."""

    def __init__(self, what: Literal["game", "seat", "game name", "identity"], name: object) -> None:
        self.what = what
        self.name = str(name)[:80]
        super().__init__(f"bad game id {self.name!r}" if what == "game" else f"bad {what} name {self.name!r} in a document")


class CannotWrite(UsageError):
    """The operating system refused to write `path` (`reason`: its strerror; `errno`, said in
    the reader's language by pbem.ui.failures.os_reason)."""

    def __init__(self, path: str, reason: str, errno: int | None = None) -> None:
        self.path = path
        self.reason = reason
        self.errno = errno
        super().__init__(f"cannot write {path!r}: {reason}")


class NotARegularFile(UsageError):
    """pbem replaces only regular files; `path` is a folder, a link or a special file."""

    def __init__(self, path: str, what: Literal["folder", "link", "special"]) -> None:
        self.path = path
        self.what = what
        said = {"folder": "a folder", "link": "a link", "special": "a device or special file"}[what]
        super().__init__(f"{path!r} is {said}, not a regular file: pbem only replaces regular files",
                         hint="write to a new or ordinary file (or leave out -o to print)")


ReadRefusal = Literal["os", "link", "folder", "special", "large"]


class CannotRead(BadPacket):
    """pbem did not read `path` (pbem.atomic.read_bounded): the system refused (`what` "os":
    `reason` its strerror, `errno`), it is not a regular file ("link", "folder", "special"), or
    it holds more than `limit` bytes ("large")."""

    def __init__(self, path: str, what: ReadRefusal, *, reason: str = "", errno: int | None = None,
                 limit: int = 0) -> None:
        self.path = path
        self.what = what
        self.reason = reason
        self.errno = errno
        self.limit = limit
        said = {"os": f"cannot read {path!r}: {reason}",
                "link": f"{path!r} is a link: pbem reads only regular files",
                "folder": f"{path!r} is a folder: pbem reads only regular files",
                "special": f"{path!r} is a device or special file: pbem reads only regular files",
                "large": f"{path!r} is over the limit of {limit:,} bytes"}[what]
        super().__init__(said, hint="pbem never writes anything this large; it was not made by pbem"
                         if what == "large" else None)

    @property
    def missing(self) -> bool:
        """The file is not there (any more): another process may have moved it."""
        return self.what == "os" and self.errno == _errno.ENOENT


class ContentConflict(Conflict):
    """A file named after its content holds other bytes (damaged, or a hash collision)."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(f"{path} exists with different content")


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
    "BadName",
    "BadNameRead",
    "CannotRead",
    "CannotWrite",
    "NotARegularFile",
    "ContentConflict",
]
