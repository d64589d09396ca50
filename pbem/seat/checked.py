"""How far this seat checked a trustless game's chain before, so a new process need not check
every proof of it again (docs/trustless.md §"A person's seat").

A seat follows the whole chain in every process (`pbem turn`, `pbem show`, a bot started
again), and checking its proofs (every shuffle, every token) is most of that work. Once a
seat has followed the chain to a packet with every check, the key home keeps that packet's
number and hash (`checked-SEAT.txt`), signed by the seat's own key. A later process that finds
the same packet at that number in the chain follows the packets up to it without checking
their proofs again: each packet names the hash of the one before, and the follower checks
that link, so the packets up to the head are byte for byte the ones checked. Everything after
the head, and everything of a chain whose packet there differs, is checked in full.

The record is only a hint: one that is missing, damaged, a link or a special file, too long,
for another game, seat or invitation, or not signed by this seat's key is no record. So a file
a stranger put in the key home (or one copied from another seat's home) cannot make this seat
skip a check.
"""

from __future__ import annotations

import base64
from pathlib import Path

from pbem.atomic import read_bounded, write_atomic
from pbem.errors import BadSignature, CannotRead
from pbem.protocol.crypto import Identity, verify
from pbem.protocol.documents import Invitation, Packet, Signed
from pbem.seat.home import checked_path

LABEL = b"pbem-checked-chain/1\n"
LIMIT = 512  # a number, a hash and a signature


def _statement(inv: Signed[Invitation], seat: str, seq: int, head: str) -> bytes:
    return LABEL + f"{inv.game}\n{seat}\n{inv.hash}\n{seq}\n{head}".encode()


Head = tuple[int, str]  # a packet's number and hash


def read_checked(home: Path, identity: Identity, inv: Signed[Invitation], seat: str) -> Head | None:
    """The head of the chain this seat checked before, as its key home keeps it (None: no record)."""
    try:
        seq_text, head, sig = read_bounded(checked_path(home, inv.game, seat), LIMIT).decode("ascii").split()
        seq = int(seq_text)
        verify(identity.public, _statement(inv, seat, seq, head), base64.b64decode(sig, validate=True))
    except (CannotRead, ValueError, BadSignature):  # UnicodeDecodeError and a bad base64 are ValueErrors
        return None
    return seq, head


def checked_in(head: Head | None, chain: list[Signed[Packet]], after: int) -> int:
    """The packet of `chain` up to which its proofs were checked before (0: none): the head, if
    `chain` holds that very packet and every one from packet `after` + 1 to it (with a gap, the
    packets before it would not be tied to it by their hashes)."""
    if head is None:
        return 0
    seqs = [p.doc.seq for p in chain]
    held = head[0] - after
    if held <= 0 or seqs[:held] != list(range(after + 1, head[0] + 1)) or chain[held - 1].hash != head[1]:
        return 0
    return head[0]


def mark_checked(home: Path, identity: Identity, inv: Signed[Invitation], seat: str, packet: Signed[Packet]) -> Head:
    """Keep that this seat followed the chain to `packet` with every check; returns its head."""
    seq = packet.doc.seq
    sig = base64.b64encode(identity.sign(_statement(inv, seat, seq, packet.hash))).decode()
    write_atomic(checked_path(home, inv.game, seat), f"{seq} {packet.hash} {sig}\n".encode())
    return seq, packet.hash


def ties_to(head: Head | None, packet: Signed[Packet], later: list[Signed[Packet]], host: str) -> bool:
    """Whether `later` (the packets after `packet`, in chain order) ties `packet` to the checked
    `head`: each signed by the host's key `host`, numbered one after the other and naming the
    hash of the one before, the last the head itself. Then `packet` and every one before it in
    the same chain are byte for byte the ones checked (`pbem show` of an older packet)."""
    prev = packet
    for p in later:
        if p.signer.encode() != host or p.doc.seq != prev.doc.seq + 1 or p.doc.prev != prev.hash:
            return False
        prev = p
    return head is not None and (prev.doc.seq, prev.hash) == head
