"""A seat's side: join a game, read a packet with one's own key, write signed moves.

A player's machine trusts the invitation it joined (kept in the key home under
games/<game>/) and checks every packet against it: the host's signature, and the chain of
packet hashes it has seen, so a forked or replayed packet is noticed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from engine.moves import Move
from engine.state import RoundState
from engine.views import load_view
from pbem.atomic import write_atomic
from pbem.errors import BadPacket, BadSignature, ForkedChain, PbemError, SeatHandedOver, StaleMove, UsageError
from pbem.names import HOST
from pbem.protocol import fairness
from pbem.protocol.crypto import Identity, PublicKey
from pbem.protocol.documents import (
    MOVE_NONCE_LEN,
    Handover,
    Invitation,
    Join,
    Packet,
    Part,
    PublicMove,
    RecentMove,
    Request,
    SealedMove,
    SeatMove,
    Signed,
    b64,
    move_commitment,
    open_as,
    parse,
    read_blocks,
    seal_info,
    seal_json,
    sign,
    unb64,
)
from pbem.seat.home import invitation_path, load_invitation, move_path, received_invitation_path, save_packet, seen_path
from pbem.ui.hints import legal_for
from pbem.ui.words import t


def seat_of(invitation: Signed[Invitation], identity: Identity) -> str:
    """The seat this key holds in the invitation (seat names are checked when it is read)."""
    seat = invitation.doc.seat_of_key(identity.public.encode())
    if seat is None:
        raise UsageError(t("key {name} holds no seat in game {game}", name=repr(identity.name), game=invitation.game),
                         hint=t("use --as with the key you gave the host"))
    return seat


def seat_in(doc: Packet, invitation: Signed[Invitation], identity: Identity) -> str:
    """The seat `identity` holds at this packet: the invitation's seats, then each handover
    the packet lists, in order (each signed by the host or by the seat's key before it)."""
    keys, former = seat_keys_at(doc, invitation)
    mine = identity.public.encode()
    for name, key in keys.items():
        if key == mine:
            return name
    if mine in former:
        seat, at = former[mine]
        raise SeatHandedOver(t("seat {seat} was handed over to another key at packet {seq}; key {name} no longer "
                               "plays it", seat=seat, seq=at, name=repr(identity.name)))
    return seat_of(invitation, identity)


def seat_keys_at(doc: Packet, invitation: Signed[Invitation]) -> tuple[dict[str, str], dict[str, tuple[str, int]]]:
    """Each seat's key at this packet (the invitation's, then the packet's handovers in order,
    each checked), and each former key's (seat, packet it was handed over at)."""
    keys = invitation.doc.seat_keys()
    host_key = invitation.doc.host.key
    former: dict[str, tuple[str, int]] = {}
    for h in doc.handovers or []:
        if h.seat not in keys:
            raise BadPacket(t("the packet lists a handover of a seat the game does not have"))
        block = parse("handover", unb64(h.document, "handover document")).expect(Handover)
        seat = h.seat
        if block.game != invitation.game or block.doc.seat != seat or block.doc.key != h.key:
            raise BadPacket(t("the packet's handover of seat {seat} does not match its signed document", seat=seat))
        if block.signer.encode() not in (host_key, keys[seat]):
            raise BadSignature(t("the handover of seat {seat} is signed by neither the host nor the seat's key",
                                 seat=seat))
        former[keys[seat]] = (seat, h.at)
        keys[seat] = h.key
    return keys, former


def offered_seat(home: Path, packet: Signed[Packet]) -> tuple[str, Signed[Invitation]] | None:
    """A packet of a game this key home never joined but holds the invitation of (mailed with
    it) that hands a seat to one of its keys: (that seat, the invitation), else None. Nothing is written:
    anyone who knows a public key can make a game that hands it a seat, so the seat is only
    taken when its player says so (take_handed_seat, by 'pbem mail-join GAME')."""
    from pbem.seat.keys import list_identities

    return _handing(home, packet, {public.encode() for _, public in list_identities(home)})


def _handing(home: Path, packet: Signed[Packet], mine: set[str]) -> tuple[str, Signed[Invitation]] | None:
    """(the seat the packet hands to one of the keys `mine`, the game's received invitation)."""
    received = received_invitation_path(home, packet.game)
    if invitation_path(home, packet.game).exists() or not received.is_file():
        return None
    invitation = read_blocks(received.read_text(encoding="utf-8"))[0].expect(Invitation)
    if packet.signer.encode() != invitation.doc.host.key or not packet.doc.handovers:
        return None
    keys, _ = seat_keys_at(packet.doc, invitation)
    seat = next((name for name, key in keys.items() if key in mine), None)
    return (seat, invitation) if seat is not None else None


def take_handed_seat(home: Path, game: str, identity: Identity) -> tuple[str, int, bool] | None:
    """The seat that the latest packet saved of `game` hands to `identity`, taken: the received
    invitation becomes the game's trust anchor, as a join makes it. (seat, packet number,
    whether it was taken now rather than before), or None when no saved packet hands this
    key a seat."""
    from pbem.seat.home import latest_saved_packet

    latest = latest_saved_packet(home, game)
    if latest is None:
        return None
    packet = read_blocks(latest.read_text(encoding="utf-8"))[0].expect(Packet)
    if invitation_path(home, game).exists():  # taken before, or joined
        try:
            return seat_in(packet.doc, load_invitation(home, game), identity), packet.doc.seq, False
        except PbemError:
            return None
    found = _handing(home, packet, {identity.public.encode()})
    if found is None:
        return None
    keep_anchor(home, found[1])
    return found[0], packet.doc.seq, True


def keep_anchor(home: Path, invitation: Signed[Invitation]) -> None:
    """The invitation kept as the game's trust anchor, unless one is kept already (a join, or
    a seat handed to a key of this home: found in a folder's packet or mailed with the packet)."""
    anchor = invitation_path(home, invitation.game)
    if not anchor.exists():
        anchor.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(anchor, invitation.armored().encode(), mode=0o644)


def make_request(invitation: Signed[Invitation], seat: str, identity: Identity,
                 action: Literal["away", "resign", "back"], until: str | None = None,
                 at: str | None = None) -> Signed[Request]:
    """A seat's signed request to the host: `away` (with `until`), `resign`, or `back` (with
    `at`, the time it is made: a seat the host marked absent is present again)."""
    return sign(Request(game=invitation.game, seat=seat, action=action, until=until, at=at), identity)


def make_handover(invitation: Signed[Invitation], seat: str, identity: Identity, key: PublicKey) -> Signed[Handover]:
    """A seat hands itself to another key (signed by the seat's current key)."""
    if key.encode() == identity.public.encode():
        raise UsageError(t("that is your own key"), hint=t("--key takes the new player's public key line"))
    return sign(Handover(game=invitation.game, seat=seat, key=key.encode()), identity)


def join(invitation: Signed[Invitation], identity: Identity, home: Path) -> Signed[Join]:
    """Accept an invitation: remember it as the trust anchor and write a signed join."""
    invitation.expect(Invitation)
    if invitation.signer.encode() != invitation.doc.host.key:
        raise BadSignature(t("the invitation is not signed by the host it names"))
    seat = seat_of(invitation, identity)
    anchor = invitation_path(home, invitation.game)
    if anchor.exists():
        old = read_blocks(anchor.read_text(encoding="utf-8"))[0]
        if old.hash != invitation.hash:
            raise BadPacket(t("you already joined game {game} with a different invitation", game=invitation.game))
    else:
        keep_anchor(home, invitation)
    if invitation.doc.trustless:  # the join carries the seat's key shares (docs/trustless.md)
        from pbem.seat import trustless

        return trustless.join(invitation, identity, seat)
    return sign(Join(game=invitation.game, seat=seat, invitation=invitation.hash,
                     contribution=b64(fairness.seat_contribution(identity, invitation.game, invitation.hash))),
                identity)


@dataclass
class SeatPacket:
    """A packet opened by one seat: the public document plus that seat's sealed part."""

    packet: Signed[Packet]
    invitation: Signed[Invitation]
    seat: str
    part: Part
    view: RoundState
    identity: Identity
    newest_seen: int = 0  # the highest packet number this key home has fully verified
    home: Path | None = None  # the key home it was opened from (the seat's kept moves)

    @property
    def old(self) -> bool:
        """A packet older than one already seen: history, not the table now."""
        return self.newest_seen > self.doc.seq

    @property
    def doc(self) -> Packet:
        return self.packet.doc

    @property
    def my_turn(self) -> bool:
        return self.doc.phase != "game-over" and self.doc.to_move == self.seat

    def summary(self) -> dict[str, Any]:
        """The stable `pbem show --json` contract."""
        doc, public, v = self.doc, self.doc.public, self.view
        return {
            "game": self.packet.game,
            "seq": doc.seq,
            "round": doc.round,
            "phase": doc.phase,
            "to_move": doc.to_move,
            "me": self.seat,
            "my_turn": doc.to_move == self.seat and not self.old,
            "old": self.old,
            "newest_seen": max(self.newest_seen, doc.seq),
            "role": self.part.role,
            "hand": self.part.hand,
            "knowledge": self.part.knowledge,
            "board": public["board"],
            "goals": {g: (public["goals"][g] if g in public["revealed"] else None) for g in public["goals"]},
            "in_front": public["in_front"],
            "hand_sizes": {p: len(h) for p, h in v.hands.items()},
            "deck_size": len(v.deck),
            "gold": public["gold"],
            "moves": doc.moves_json(),
            "events": doc.events,
            "private_events": self.part.events,
            "result": doc.result.shown() if doc.result is not None else None,
            "standings": msgspec.to_builtins(doc.standings) if doc.standings is not None else None,
            "deadline": msgspec.to_builtins(doc.deadline) if doc.deadline is not None else None,
            "paused": doc.paused,
            "absent": doc.absent or [],
            "away": doc.away or {},
            "since_my_turn": [msgspec.to_builtins(m) for m in self.since_my_turn()],
            "played_over": [msgspec.to_builtins(m) for m in self.played_over()],
            "legal": legal_for(v, self.seat) if self.my_turn and not self.old else [],
        }

    def played_over(self) -> list[RecentMove]:
        """The host's moves for this seat, among the packet's recent moves, for packets the
        seat had answered (its move for that packet is kept in its key home)."""
        if self.home is None:
            return []
        return [m for m in self.doc.recent or [] if m.seat == self.seat and m.by == HOST
                and move_path(self.home, self.packet.game, self.seat, m.seq).is_file()]

    def since_my_turn(self) -> list[PublicMove]:
        """Every public move since this seat's own last move (the packet's `recent`)."""
        return self.doc.since_last_move_of(self.seat)


def open_packet(packet: Signed[Packet], identity: Identity, home: Path, *, remember: bool = True) -> SeatPacket:
    doc = packet.expect(Packet).doc
    invitation = load_invitation(home, packet.game)
    if packet.signer.encode() != invitation.doc.host.key:
        raise BadSignature(t("packet {seq} is not signed by the host of game {game}", seq=doc.seq, game=packet.game))
    seat = seat_in(doc, invitation, identity)
    seen = _check_chain(home, packet, invitation)
    sealed = doc.parts.get(seat)
    if sealed is None:
        raise BadPacket(t("packet {seq} has no part for seat {seat}", seq=doc.seq, seat=repr(seat)))
    part = open_as(Part, sealed, identity, seal_info(packet.game, doc.seq, HOST, seat, "part"))
    public = json.loads(json.dumps(doc.public))
    try:
        if public.get("phase") == "playing":
            public["hands"][seat] = part.hand
            public["roles"][seat] = part.role
            public["knowledge"] = {seat: part.knowledge}
        state = load_view(public)
        newest = max((int(k) for k in seen if k.isdigit()), default=0)
        sp = SeatPacket(packet, invitation, seat, part, state, identity, newest, home)
        sp.summary()  # everything `show` will read is there
    except Exception as exc:  # a packet whose public state the engine cannot read
        raise BadPacket(t("packet {seq} holds an unreadable position: {error}", seq=doc.seq,
                          error=str(exc)[:80])) from None
    # Only now, with the signature, the chain, the sealed part and the position all checked,
    # is the packet remembered as seen.
    if remember and str(doc.seq) not in seen:
        seen[str(doc.seq)] = packet.hash
        write_atomic(seen_path(home, packet.game), json.dumps(seen, sort_keys=True).encode(), mode=0o644)
    if remember and doc.seq >= newest:  # the newest packet opened, whatever brought it: what 'pbem games' reads
        save_packet(home, packet, invitation.doc.host.key)  # (the host's key as read above: the invitation once)
    return sp


def seen_packets(home: Path, game: str) -> dict[str, str]:
    """The hash of every packet of `game` this key home verified, by packet number (as text)."""
    path = seen_path(home, game)
    try:
        seen = json.loads(path.read_text()) if path.exists() else {}
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadPacket(t("{path} is damaged", path=path), hint=_delete_seen()) from None
    if not isinstance(seen, dict):
        raise BadPacket(t("{path} is damaged", path=path), hint=_delete_seen())
    return seen


def _check_chain(home: Path, packet: Signed[Packet], invitation: Signed[Invitation]) -> dict[str, str]:
    """Refuse a packet that contradicts one seen before (a fork or a replay); returns the
    hashes seen so far, by packet number."""
    seen = seen_packets(home, packet.game)
    seq, prev = packet.doc.seq, packet.doc.prev
    if seen.get(str(seq), packet.hash) != packet.hash:
        raise ForkedChain(t("the host sent two different packets numbered {seq}", seq=seq), hint=_forked())
    expected_prev = invitation.hash if seq == 1 else seen.get(str(seq - 1))
    if expected_prev is not None and expected_prev != prev:
        raise BadPacket(t("packet {seq} does not follow packet {before} you saw", seq=seq, before=seq - 1),
                        hint=_forked())
    return seen


def _delete_seen() -> str:
    return t("delete it to trust the next packet you open")


def _forked() -> str:
    return t("the game has forked; tell the host")


def make_move(sp: SeatPacket, text: str) -> Signed[SeatMove]:
    """Check `text` against the seat's view and write the signed, sealed move."""
    from pbem.ui.card_names import check_typed  # the rules load only to move: `pbem show` draws, checks nothing

    refuse_stale(sp)
    return sign_move(sp, check_typed(sp.view, text))


def sign_move(sp: SeatPacket, move: Move) -> Signed[SeatMove]:
    """The signed move, its words sealed to the host, for a move already checked against the seat's view."""
    seq = sp.doc.seq
    nonce = os.urandom(MOVE_NONCE_LEN)
    host_key = PublicKey.decode(sp.invitation.doc.host.key)
    info = seal_info(sp.packet.game, seq, sp.seat, HOST, "move")
    return sign(SeatMove(game=sp.packet.game, seat=sp.seat, seq=seq, packet=sp.packet.hash,
                     commit=move_commitment(nonce, str(move)),
                     sealed=seal_json(SealedMove(move=str(move), nonce=b64(nonce)), host_key, info, pad="move")),
                sp.identity)


def refuse_stale(sp: SeatPacket) -> None:
    """StaleMove unless this packet is the table now and it is this seat's turn."""
    if sp.doc.phase == "game-over":
        raise StaleMove(t("the game is over"))
    if sp.old:
        raise StaleMove(t("old packet", seq=sp.doc.seq, newest=sp.newest_seen),
                        hint=t("old packet hint", newest=sp.newest_seen))
    if sp.doc.to_move != sp.seat:
        raise StaleMove(t("it is {player}'s turn, not yours ({seat})", player=sp.doc.to_move, seat=sp.seat),
                        hint=t("wait for the packet that says it is your turn"))
