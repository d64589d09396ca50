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
from typing import Any

from engine.rules import check
from engine.state import RoundState
from engine.views import load_view
from pbem.atomic import write_atomic
from pbem.errors import BadPacket, BadSignature, StaleMove, UsageError
from pbem.names import HOST, check_game_id, check_seat_id
from pbem.protocol import fairness
from pbem.protocol.crypto import Identity, PublicKey
from pbem.protocol.documents import (Signed, b64, move_commitment, open_json, parse, read_blocks, seal_info, seal_json,
                                     sign, unb64)
from pbem.seat.home import invitation_path, load_invitation, seen_path
from pbem.ui import words


def seat_of(invitation: Signed, identity: Identity) -> str:
    """The seat this key holds; its name is checked, since it names files (join-SEAT.pbem)."""
    mine = identity.public.encode()
    check_game_id(invitation.game)
    seats = invitation.doc.get("seats")
    if not isinstance(seats, list):
        raise BadPacket(f"the invitation to {invitation.game} has no list of seats")
    for seat in seats:
        if isinstance(seat, dict) and seat.get("key") == mine:
            return check_seat_id(seat.get("name"))
    raise UsageError(f"key {identity.name!r} holds no seat in game {invitation.game}",
                     hint="use --as with the key you gave the host")


def seat_in(doc: dict[str, Any], invitation: Signed, identity: Identity) -> str:
    """The seat `identity` holds at this packet: the invitation's seats, then each handover
    the packet lists, in order (each signed by the host or by the seat's key before it)."""
    keys = {str(st["name"]): str(st["key"]) for st in invitation.doc.get("seats", [])}
    host_key = invitation.doc.get("host", {}).get("key")
    former: dict[str, tuple[str, Any]] = {}
    for h in doc.get("handovers") or []:
        if not isinstance(h, dict) or h.get("seat") not in keys:
            raise BadPacket("the packet lists a handover of a seat the game does not have")
        block = parse("handover", unb64(h.get("document"), "handover document"))
        seat = str(h["seat"])
        if block.game != invitation.game or block.doc.get("seat") != seat or block.doc.get("key") != h.get("key"):
            raise BadPacket(f"the packet's handover of seat {seat} does not match its signed document")
        if block.signer.encode() not in (host_key, keys[seat]):
            raise BadSignature(f"the handover of seat {seat} is signed by neither the host nor the seat's key")
        former[keys[seat]] = (seat, h.get("at"))
        keys[seat] = str(h["key"])
    mine = identity.public.encode()
    for name, key in keys.items():
        if key == mine:
            return name
    if mine in former:
        seat, at = former[mine]
        raise UsageError(f"seat {seat} was handed over to another key at packet {at}; key {identity.name!r} no longer plays it")
    return seat_of(invitation, identity)


def make_request(invitation: Signed, seat: str, identity: Identity, action: str, **fields: Any) -> Signed:
    """A seat's signed request to the host: `away` (with `until`) or `resign`."""
    return sign("request", {"game": invitation.game, "seat": seat, "action": action, **fields}, identity)


def make_handover(invitation: Signed, seat: str, identity: Identity, key: PublicKey) -> Signed:
    """A seat hands itself to another key (signed by the seat's current key)."""
    if key.encode() == identity.public.encode():
        raise UsageError("that is your own key", hint="--key takes the new player's public key line")
    return sign("handover", {"game": invitation.game, "seat": seat, "key": key.encode()}, identity)


def join(invitation: Signed, identity: Identity, home: Path) -> Signed:
    """Accept an invitation: remember it as the trust anchor and write a signed join."""
    if invitation.kind != "invitation":
        raise BadPacket(f"expected an invitation, got a {invitation.kind}")
    host = invitation.doc.get("host", {})
    if invitation.signer.encode() != host.get("key"):
        raise BadSignature("the invitation is not signed by the host it names")
    seat = seat_of(invitation, identity)
    anchor = invitation_path(home, invitation.game)
    anchor.parent.mkdir(parents=True, exist_ok=True)
    if anchor.exists():
        old = read_blocks(anchor.read_text(encoding="utf-8"))[0]
        if old.hash != invitation.hash:
            raise BadPacket(f"you already joined game {invitation.game} with a different invitation")
    else:
        write_atomic(anchor, invitation.armored().encode(), mode=0o644)
    return sign(
        "join",
        {"game": invitation.game, "seat": seat, "invitation": invitation.hash,
         "contribution": b64(fairness.seat_contribution(identity, invitation.game, invitation.hash))},
        identity,
    )


@dataclass
class SeatPacket:
    """A packet opened by one seat: the public document plus that seat's sealed part."""

    packet: Signed
    invitation: Signed
    seat: str
    part: dict[str, Any]
    view: RoundState
    identity: Identity
    newest_seen: int = 0  # the highest packet number this key home has fully verified

    @property
    def old(self) -> bool:
        """A packet older than one already seen: history, not the table now."""
        return self.newest_seen > int(self.doc["seq"])

    @property
    def doc(self) -> dict[str, Any]:
        return self.packet.doc

    def summary(self) -> dict[str, Any]:
        """The stable `pbem show --json` contract."""
        public = self.doc["public"]
        v = self.view
        return {
            "game": self.packet.game,
            "seq": self.doc["seq"],
            "round": self.doc["round"],
            "phase": self.doc["phase"],
            "to_move": self.doc["to_move"],
            "me": self.seat,
            "my_turn": self.doc["to_move"] == self.seat and not self.old,
            "old": self.old,
            "newest_seen": max(self.newest_seen, int(self.doc["seq"])),
            "role": self.part.get("role"),
            "hand": self.part.get("hand", []),
            "knowledge": self.part.get("knowledge", []),
            "board": public["board"],
            "goals": {g: (public["goals"][g] if g in public["revealed"] else None) for g in public["goals"]},
            "in_front": public["in_front"],
            "hand_sizes": {p: len(h) for p, h in v.hands.items()},
            "deck_size": len(v.deck),
            "gold": public["gold"],
            "moves": self.doc.get("moves", []),
            "events": self.doc.get("events", []),
            "private_events": self.part.get("events", []),
            "result": {k: v2 for k, v2 in self.doc["result"].items() if k != "final"} if "result" in self.doc else None,
            "standings": self.doc.get("standings"),
            "deadline": self.doc.get("deadline"),
            "paused": bool(self.doc.get("paused")),
            "absent": self.doc.get("absent", []),
            "away": self.doc.get("away", {}),
            "since_my_turn": self.since_my_turn(),
        }

    def since_my_turn(self) -> list[dict[str, Any]]:
        """Every public move since this seat's own last move (the packet's `recent`)."""
        recent = self.doc.get("recent")
        if not isinstance(recent, list):
            return list(self.doc.get("moves", []))
        mine = [i for i, m in enumerate(recent) if isinstance(m, dict) and m.get("seat") == self.seat]
        return [m for m in recent[(mine[-1] + 1 if mine else 0):] if isinstance(m, dict)]


PACKET_FIELDS: dict[str, tuple[type, ...]] = {
    "seq": (int,), "prev": (str,), "round": (int,), "phase": (str,), "to_move": (str, type(None)),
    "public": (dict,), "parts": (dict,), "moves": (list,), "events": (list,),
}
PHASES = ("playing", "round-over", "game-over")


def check_packet_doc(doc: dict[str, Any]) -> None:
    """The packet's shape, before anything reads it: a broken packet is refused, not a crash."""
    for key, types in PACKET_FIELDS.items():
        value = doc.get(key)
        if not isinstance(value, types) or isinstance(value, bool):
            raise BadPacket(f"packet field {key!r} is malformed: {str(value)[:40]!r}")
    if doc["seq"] < 1 or doc["phase"] not in PHASES:
        raise BadPacket(f"packet {doc['seq']} has a bad number or phase {doc['phase']!r}")
    for key in ("result", "standings", "deadline", "away"):
        if key in doc and not isinstance(doc[key], dict):
            raise BadPacket(f"packet field {key!r} is malformed")
    for key in ("recent", "absent", "handovers"):
        if key in doc and not isinstance(doc[key], list):
            raise BadPacket(f"packet field {key!r} is malformed")
    if "deadline" in doc and not (isinstance(doc["deadline"].get("due"), str) and isinstance(doc["deadline"].get("seat"), str)):
        raise BadPacket("packet field 'deadline' is malformed")


def open_packet(packet: Signed, identity: Identity, home: Path, *, remember: bool = True) -> SeatPacket:
    if packet.kind != "packet":
        raise BadPacket(f"expected a packet, got a {packet.kind}")
    check_packet_doc(packet.doc)
    invitation = load_invitation(home, packet.game)
    host_key = invitation.doc["host"]["key"]
    if packet.signer.encode() != host_key:
        raise BadSignature(f"packet {packet.doc.get('seq')} is not signed by the host of game {packet.game}")
    seat = seat_in(packet.doc, invitation, identity)
    seq = int(packet.doc["seq"])
    seen = _check_chain(home, packet, invitation)
    sealed = packet.doc.get("parts", {}).get(seat)
    if sealed is None:
        raise BadPacket(f"packet {seq} has no part for seat {seat!r}")
    part = open_json(str(sealed), identity, seal_info(packet.game, seq, HOST, seat, "part"))
    doc = json.loads(json.dumps(packet.doc["public"]))
    try:
        if doc.get("phase") == "playing":
            doc["hands"][seat] = part["hand"]
            doc["roles"][seat] = part["role"]
            doc["knowledge"] = {seat: part["knowledge"]}
        state = load_view(doc)
        newest = max((int(k) for k in seen if k.isdigit()), default=0)
        sp = SeatPacket(packet, invitation, seat, part, state, identity, newest)
        sp.summary()  # everything `show` will read is there
    except Exception as exc:  # a packet whose public state the engine cannot read
        raise BadPacket(f"packet {seq} holds an unreadable position: {str(exc)[:80]}") from None
    # Only now, with the signature, the chain, the sealed part and the position all checked,
    # is the packet remembered as seen.
    if remember and str(seq) not in seen:
        seen[str(seq)] = packet.hash
        write_atomic(seen_path(home, packet.game), json.dumps(seen, sort_keys=True).encode(), mode=0o644)
    return sp


def _check_chain(home: Path, packet: Signed, invitation: Signed) -> dict[str, str]:
    """Refuse a packet that contradicts one seen before (a fork or a replay); returns the
    hashes seen so far, by packet number."""
    path = seen_path(home, packet.game)
    try:
        seen = json.loads(path.read_text()) if path.exists() else {}
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadPacket(f"{path} is damaged", hint="delete it to trust the next packet you open") from None
    if not isinstance(seen, dict):
        raise BadPacket(f"{path} is damaged", hint="delete it to trust the next packet you open")
    seq = int(packet.doc["seq"])
    prev = str(packet.doc.get("prev", ""))
    if seen.get(str(seq), packet.hash) != packet.hash:
        raise BadPacket(f"the host sent two different packets numbered {seq}", hint="the game has forked; tell the host")
    expected_prev = invitation.hash if seq == 1 else seen.get(str(seq - 1))
    if expected_prev is not None and expected_prev != prev:
        raise BadPacket(f"packet {seq} does not follow packet {seq - 1} you saw", hint="the game has forked; tell the host")
    return seen


def make_move(sp: SeatPacket, text: str) -> Signed:
    """Check `text` against the seat's view and write the signed, sealed move."""
    if sp.doc["phase"] == "game-over":
        raise UsageError("the game is over")
    if sp.old:
        raise StaleMove(words.t("old packet", seq=sp.doc["seq"], newest=sp.newest_seen),
                        hint=words.t("old packet hint", newest=sp.newest_seen))
    if sp.doc["to_move"] != sp.seat:
        raise UsageError(f"it is {sp.doc['to_move']}'s turn, not yours ({sp.seat})")
    move = check(sp.view, text)
    seq = int(sp.doc["seq"])
    nonce = os.urandom(16)
    host_key = PublicKey.decode(sp.invitation.doc["host"]["key"])
    info = seal_info(sp.packet.game, seq, sp.seat, HOST, "move")
    return sign(
        "move",
        {"game": sp.packet.game, "seat": sp.seat, "seq": seq, "packet": sp.packet.hash,
         "commit": move_commitment(nonce, str(move)),
         "sealed": seal_json({"move": str(move), "nonce": b64(nonce)}, host_key, info)},
        sp.identity,
    )
