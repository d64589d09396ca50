"""A seat of a trustless game playing through a shared folder (docs/trustless.md).

The folder is only the transport of a `TrustlessClient` (pbem/seat/trustless_client.py): it
reads the folder's packets in chain order and writes each block the seat owes into the inbox.
"""

from __future__ import annotations

from pathlib import Path

from pbem.folder.layout import GameFolder
from pbem.folder.play import folder_notices, read_invitation
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Invitation
from pbem.seat import player
from pbem.seat.trustless_client import TrustlessClient


def folder_seat(dir: Path, identity: Identity, home: Path) -> TrustlessClient[Path]:
    """The seat of `identity` in the trustless game folder at `dir` (UsageError: not laid out yet)."""
    folder = GameFolder.open(Path(dir))
    inv = read_invitation(folder).expect(Invitation)
    seat = player.seat_of(inv, identity)
    client: TrustlessClient[Path] = TrustlessClient(
        inv, identity, Path(home), lambda: folder.packets(None, client.ts.head[0]),  # those it has not followed
        lambda key, data: folder.submit_move(seat, key, data), lambda: folder_notices(folder, inv))
    return client
