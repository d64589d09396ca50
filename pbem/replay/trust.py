"""Whom an audit trusts (pbem.replay.audit): the invitation it anchors to, from a file given, the
key home's joined copy, or the host's own signature; and the seat whose sealed parts the
auditor's key opens."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pbem.errors import BadSignature, PbemError, UsageError
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Invitation, Signed, check_signature, read_one
from pbem.replay.sources import Source
from pbem.seat.home import invitation_path, load_invitation
from pbem.seat.player import seat_in, seat_of
from pbem.ui.words import t


@dataclass(frozen=True)
class Trust:
    """What the auditor brings: the invitation it trusts (and where it came from), and a seat's
    key to open that seat's sealed parts."""

    anchor: Signed[Invitation] | None = None
    anchor_origin: str = ""
    seat: tuple[str, Identity] | None = None
    home: Path | None = None  # the seat's key home: the moves it made (a host move for one is a fault)


def anchor_for(game: str, home: Path, invitation_file: Path | None, src: Source | None = None
               ) -> tuple[Signed[Invitation] | None, str]:
    """The invitation to trust: the one given, else the one joined (the key home's copy), else
    one of `src` signed by a key of this key home (a host auditing its own game)."""
    if invitation_file is not None:
        given = read_one(invitation_file, "invitation")
        if given.game != game:
            raise UsageError(t("{path} invites to game {other}, not {game}", path=repr(str(invitation_file)),
                               other=given.game, game=game))
        if given.signer.encode() != given.expect(Invitation).doc.host.key:
            raise BadSignature(t("{path} is not signed by the host it names", path=repr(str(invitation_file))))
        return given, t("the invitation {path}", path=invitation_file)
    try:
        path = invitation_path(home, game)
    except PbemError:  # a game id that cannot be a folder name: never joined
        return None, ""
    if path.is_file():
        return load_invitation(home, game), t("the invitation you joined ({path})", path=path)
    return _own_invitation(game, home, src)


def _own_invitation(game: str, home: Path, src: Source | None) -> tuple[Signed[Invitation] | None, str]:
    """An invitation of `src` signed by a key of this key home: the host's own word, as good an
    anchor as an invitation joined."""
    from pbem.protocol.documents import parse
    from pbem.seat.keys import list_identities

    if src is None or not src.invitations.get(game):
        return None, ""
    mine = {key.encode(): name for name, key in list_identities(home)}
    for payload in src.invitations[game].values():
        try:
            inv = parse("invitation", payload).expect(Invitation)
        except PbemError:
            continue  # a damaged or forged one: the audit says so
        name = mine.get(inv.signer.encode())
        if name is not None and inv.signer.encode() == inv.doc.host.key:
            return inv, t("the invitation your key {name} signed as the host", name=name)
    return None, ""


def auditor_seat(src: Source, game: str, anchor: Signed[Invitation], identity: Identity) -> str:
    """The seat whose parts `identity` opens: its seat in the invitation, or, for a key handed a
    seat during the game, the seat the newest packet of the source (signed by the invitation's
    host) gives it through its handovers."""
    try:
        return seat_of(anchor, identity)
    except UsageError:
        found = src.packets.get(game, {})
        newest = next(iter(found[max(found)]), None) if found else None
        if newest is None:
            raise
        packet = src.blocks[newest]
        try:
            check_signature(packet)
        except PbemError:
            raise UsageError(t("key {name} holds no seat in game {game}", name=repr(identity.name), game=game)) from None
        if packet.signer.encode() != anchor.doc.host.key:
            raise
        return seat_in(packet.doc, anchor, identity)
