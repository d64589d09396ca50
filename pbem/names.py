"""Every name that becomes a path or an identifier, checked whole and in one place.

A name is checked before anything is written: `game new ../x`, `a/b`, `ünï`, a trailing
newline or a NUL never reach the file system. Names typed by a person raise `BadName`
(a UsageError); names read from a file someone sent raise `BadNameRead` (a BadPacket).
pbem.ui.failures says them in the reader's language.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Final

from pbem.errors import BadName, BadNameRead

# What a host types after `pbem game new`: it names saves/NAME.db and saves/NAME/.
GAME_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
# The game id a host mints (NAME-8 hex digits), as read from any document: it names the
# player's games/<id>/ folder, so it must be a plain file name on every system.
GAME_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
# A seat: lower-case, so that the same player is not two seats on a case-blind disk.
SEAT_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
# An identity in a key home (keys/NAME.key).
IDENTITY_NAME = re.compile(r"[a-z0-9_-]{1,32}")

HOST: Final = "host"
TABLE = "table"  # the shared folder's packets/table/
# Names that Windows refuses as files; a Dropbox peer on Windows would choke.
WINDOWS_RESERVED = frozenset({"con", "prn", "aux", "nul"} | {f"{p}{i}" for p in ("com", "lpt") for i in range(1, 10)})


@cache
def reserved_seats() -> frozenset[str]:
    """The words no seat may be called: the notation's (engine.moves: the goals, "nobody"),
    pbem's own and the names Windows refuses. Made on first use: engine.moves loads the card
    catalog, which a help page or a key's command never needs."""
    from engine.moves import RESERVED_NAMES

    return frozenset(RESERVED_NAMES | {HOST, TABLE} | WINDOWS_RESERVED)


def _whole(pattern: re.Pattern[str], name: object) -> bool:
    return isinstance(name, str) and pattern.fullmatch(name) is not None


def check_game_name(name: str) -> str:
    if not _whole(GAME_NAME, name) or name in WINDOWS_RESERVED:
        raise BadName("game", name)
    return name


def check_game_name_read(name: object) -> str:
    """A game's name as an invitation someone sent says it (what its host gave `game new`):
    every list of games shows it, so it is held to the rule `game new` applies."""
    if not _whole(GAME_NAME, name) or str(name) in WINDOWS_RESERVED:
        raise BadNameRead("game name", name)
    return str(name)


def check_game_id(game: object) -> str:
    if not _whole(GAME_ID, game) or str(game).lower() in WINDOWS_RESERVED:
        raise BadNameRead("game", game)
    return str(game)


def check_seat_name(name: str) -> str:
    if not _whole(SEAT_NAME, name) or name in reserved_seats():
        raise BadName("seat", name)
    return name


def check_contact_name(name: str) -> str:
    """A contact's name: the seat `--player NAME` gives it, so held to the seat rule."""
    if not _whole(SEAT_NAME, name) or name in reserved_seats():
        raise BadName("contact", name)
    return name


def check_seat_id(name: object) -> str:
    """A seat name read from a document someone sent (an invitation, a packet): it names
    files in the key home (join-SEAT.pbem, moves/SEAT-SEQ.pbem) and in the current folder."""
    if not _whole(SEAT_NAME, name) or name in reserved_seats():
        raise BadNameRead("seat", name)
    return str(name)


def check_identity_id(name: object) -> str:
    """An identity's name in a document someone sent (the host's, in an invitation): shown as
    who hosts the game, held to the rule `key new` applies."""
    if not _whole(IDENTITY_NAME, name) or str(name) in WINDOWS_RESERVED:
        raise BadNameRead("identity", name)
    return str(name)


def check_identity_name(name: str) -> str:
    if not _whole(IDENTITY_NAME, name) or name in WINDOWS_RESERVED:
        raise BadName("identity", name)
    return name
