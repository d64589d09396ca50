"""A player's list of games: every game joined with this key home, and whose turn it is.

Read from the key home alone (no key unlocked): the invitation kept on joining names the
seats and the host; the newest packet kept (every packet a seat opens or follows is kept,
whether mail, a folder or a file brought it) says the round and whose turn it is and by
when (its signed deadline); a move file kept for that packet (or for the packet it renews,
pbem.protocol.timeout.answered_by) says it was answered. A trustless game's packet says
instead which step its table waits for and from whom (`waiting`); 'pbem turn GAME' sends
what this seat owes, however often it is run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pbem.errors import PbemError
from pbem.protocol.documents import Packet, Waiting, read_blocks
from pbem.protocol.timeout import answered_by
from pbem.seat import keys
from pbem.seat.home import (
    joined_games,
    latest_saved_packet,
    load_invitation,
    move_path,
    received_invitation_path,
    saved_packets,
)


def my_keys(home: Path) -> set[str]:
    """The public key lines of every identity in the key home."""
    return {k.encode() for _, k in keys.list_identities(home)}


def my_games(home: Path) -> list[dict[str, Any]]:
    mine = my_keys(home)
    out = []
    for game in joined_games(home):
        try:
            signed = load_invitation(home, game)
        except PbemError:
            continue
        inv = signed.doc
        seat = next((s.name for s in inv.seats if s.key in mine), None)
        row: dict[str, Any] = {"game": game, "name": inv.name, "seat": seat, "host": inv.host.name, "round": None,
                               "seq": None, "to_move": None, "phase": None, "due": None, "yours": False,
                               "answered": False}
        latest = latest_saved_packet(home, game)
        if latest is not None:
            try:
                doc: Packet | None = read_blocks(latest.read_text(encoding="utf-8"))[0].expect(Packet).doc
            except (PbemError, IndexError, OSError):
                doc = None
            if doc is not None and seat is None and doc.handovers:  # a seat handed to this key home's key
                from pbem.seat.player import seat_keys_at

                try:
                    seat = next((n for n, k in seat_keys_at(doc, signed)[0].items() if k in mine), None)
                except PbemError:
                    seat = None
                row["seat"] = seat
            if doc is not None and doc.waiting is not None:  # a trustless table: the step it waits for, from whom
                over = doc.phase == "game-over"
                answered = bool(seat and _answered_step(home, game, seat, doc.seq, doc.waiting))
                step, waited = doc.waiting.step, list(doc.waiting.seats)
                row.update(round=doc.round, seq=doc.seq, phase=doc.phase, waiting={"step": step, "seats": waited},
                           to_move=waited[0] if step == "move" and waited else None,
                           due=doc.waiting.due if not over and seat in doc.waiting.seats else None,
                           answered=answered, yours=bool(not over and seat in doc.waiting.seats and not answered))
            elif doc is not None:
                over = doc.phase == "game-over"
                # a move file kept for the packet, or for the one it renews (which the host applies at it)
                answered = bool(seat and any(move_path(home, game, seat, p).exists() for p in answered_by(doc)))
                row.update(round=doc.round, seq=doc.seq, phase=doc.phase, to_move=None if over else doc.to_move,
                           due=doc.deadline.due if doc.deadline is not None and not over else None,
                           answered=answered, yours=bool(not over and seat and doc.to_move == seat and not answered))
        out.append(row)
    return out


def invitations(home: Path) -> list[dict[str, Any]]:
    """The invitations 'pbem inbox' kept of games this key home has not joined: each game, its
    host (name and key fingerprint: anyone can mail an invitation) and the seat it offers this
    key home's keys, if any (a seat handed over by a packet kept beside it: 'pbem mail-join')."""
    from pbem.protocol.crypto import PublicKey
    from pbem.protocol.documents import Invitation
    from pbem.seat.player import offered_seat

    kept = Path(home) / "invitations"
    joined = set(joined_games(home))
    mine = {k.encode() for _, k in keys.list_identities(home)}
    out = []
    for path in sorted(kept.glob("*.pbem")) if kept.is_dir() else []:
        try:
            inv = read_blocks(received_invitation_path(home, path.stem).read_text(encoding="utf-8"))[0].expect(Invitation)
        except (PbemError, IndexError, OSError, UnicodeDecodeError):
            continue
        if inv.game in joined:
            continue
        seat = next((s.name for s in inv.doc.seats if s.key in mine), None)
        latest = latest_saved_packet(home, inv.game)
        if seat is None and latest is not None:
            try:
                offer = offered_seat(home, read_blocks(latest.read_text(encoding="utf-8"))[0].expect(Packet))
            except (PbemError, IndexError, OSError, UnicodeDecodeError):
                offer = None
            seat = offer[0] if offer is not None else None
        out.append({"game": inv.game, "name": inv.doc.name, "host": inv.doc.host.name,
                    "host_key": PublicKey.decode(inv.doc.host.key).fingerprint(), "seat": seat})
    return out


def _answered_step(home: Path, game: str, seat: str, latest: int, waiting: Waiting) -> bool:
    """Whether the seat's last block (kept by the packet that opened its step) answers the step
    packet `latest` waits for (`waiting`): every packet saved since that one waits for the same
    step from it."""
    kept = sorted(int(p.stem.rsplit("-", 1)[1]) for p in move_path(home, game, seat, 0).parent.glob(f"{seat}-*.pbem")
                  if p.stem.rsplit("-", 1)[1].isdigit())
    if not kept or kept[-1] > latest:
        return False
    for seq, path in saved_packets(home, game):
        if kept[-1] <= seq <= latest:
            try:
                w = read_blocks(path.read_text(encoding="utf-8"))[0].expect(Packet).doc.waiting
            except (PbemError, IndexError, OSError):
                return False
            if w is None or w.step != waiting.step or seat not in w.seats:
                return False
    return True
