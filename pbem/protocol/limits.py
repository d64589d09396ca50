"""Size limits on everything read from outside, so that no input can cost unbounded time or memory.

The figures are far above what a real game writes (the largest packet of a 12-player game
is about 60 KB, a round's archive about 400 KB) and far below what would hurt.
"""

from __future__ import annotations

from pbem.errors import BadPacket, Text, msg

KIB = 1024
MIB = 1024 * KIB
MAX_BLOCK = 4 * MIB  # one block's payload (signature and document)
MAX_FILE = 16 * MIB  # one file a reader is given (packet, move, archive, join, invitation)
MAX_MAIL = 16 * MIB  # one mail message
MAX_MAIL_PARTS = 64  # parts of one mail (a pbem mail has two; a forwarded one a few more)
MAX_MAIL_NESTING = 16  # multipart and message/* parts in one mail (each one a level the reader descends)
MAX_TEXT = 16 * MIB  # characters of armoured text searched for blocks
MAX_BLOCKS = 2000  # blocks in one text (a mailbox of a whole game holds a few hundred)


def check_size(size: int, limit: int, what: Text) -> None:
    if size > limit:
        raise BadPacket(msg("{what} is {size} bytes, over the limit of {limit}", what=what, size=f"{size:,}",
                          limit=f"{limit:,}"),
                        hint=msg("pbem never writes anything this large; it was not made by pbem"))

# Table talk (docs/protocol.md, "Table talk"): characters in a line, lines a seat says at one packet.
TALK_CHARS = 500
TALK_PER_PACKET = 5
