"""Table talk in a finished round (docs/protocol.md, "Table talk"): each line found with the round
checked against its archive (signed by its speaker's key at its packet, said at a packet of the
round's chain under that hash) and placed between the moves where it was said, for `pbem replay`;
what does not check is a fault for `pbem audit`.

A line said at packet s was said after the move that packet shows and before the move that
answers it: in the replay it follows frame k, k being the number of the round's moves that
answered a packet before s.
"""

from __future__ import annotations

from dataclasses import dataclass

from pbem.errors import Msg, PbemError, msg
from pbem.protocol import talk
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import (
    Archive,
    Invitation,
    Packet,
    Signed,
    Talk,
    check_signature,
    parse,
    parse_relayed,
    unb64,
)
from pbem.protocol.talk import Line


@dataclass(frozen=True)
class Placed:
    """A line of the round: the frame it follows (0: the deal), and what it said (None: a whisper
    not opened here)."""

    frame: int
    speaker: str
    to: tuple[str, ...] | None
    seq: int
    line: Line | None


def _answered(archive: Archive) -> list[int]:
    """The packet each move of the round answered, in order (from its signed envelope)."""
    out = []
    for m in archive.moves:
        try:
            out.append(parse("move", unb64(m.envelope, "envelope"), check_signature=False).doc.seq)
        except PbemError:
            out.append(0)
    return out


def _key_at(archive: Archive, invitation: Invitation, seat: str, seq: int) -> str | None:
    """The key that held `seat` at packet `seq` (the invitation's, then the archive's handovers)."""
    key = invitation.seat_keys().get(seat)
    for h in archive.handovers or []:
        if h.seat == seat and h.at <= seq:
            key = h.key
    return key


def _verified(block: Signed[Talk], chain: dict[int, str], key: str | None,
              reader: tuple[str, Identity] | None) -> tuple[Line | None, Msg | None]:
    """(the line as `reader` reads it, None) or (None, why it does not check): said at a packet
    of `chain` under that hash, signed by `key` (its seat's key at that packet)."""
    doc = block.doc
    if chain[doc.seq] != doc.packet:
        return None, msg("{seat}'s line {n} names packet {seq} {hash}, not the chain's {chain}", seat=doc.seat, n=doc.n,
                       seq=doc.seq, hash=doc.packet[:12], chain=chain[doc.seq][:12])
    try:
        check_signature(block)
        return talk.read(block, key or "", reader[0] if reader else "", reader[1] if reader else None), None
    except PbemError as exc:
        return None, msg("{seat}'s line {n}: {error}", seat=doc.seat, n=doc.n, error=exc)


def check(blocks: list[Signed[Talk]], archive: Archive, invitation: Invitation,
          reader: tuple[str, Identity] | None = None) -> tuple[list[Placed], list[tuple[int, Msg]]]:
    """The round's lines, placed, oldest first; and the faults: (packet, why) for each line said
    at a packet of the round that is not signed by its seat's key or names another hash.
    `reader`: a seat and its key, to open the whispers sealed to it."""
    chain = {link.seq: link.hash for link in archive.chain}  # a line at a round-over packet ends one round, opens the next
    answered = _answered(archive)
    placed: list[tuple[Line | None, Signed[Talk]]] = []
    faults: list[tuple[int, Msg]] = []
    for block in blocks:
        doc = block.doc
        if doc.game != archive.game or doc.seq not in chain:
            continue  # another game's, or said in another round
        line, fault = _verified(block, chain, _key_at(archive, invitation, doc.seat, doc.seq), reader)
        if fault is not None:
            faults.append((doc.seq, fault))
        else:
            placed.append((line, block))
    out = [Placed(sum(a < b.doc.seq for a in answered), b.doc.seat, None if b.doc.to is None else tuple(b.doc.to),
                  b.doc.seq, line) for line, b in placed]
    order = {id(p): (p.seq, placed[i][1].doc.at, p.speaker, placed[i][1].doc.n) for i, p in enumerate(out)}
    return sorted(out, key=lambda p: order[id(p)]), faults


def check_chain(blocks: list[Signed[Talk]], chain: dict[int, str], invitation: Invitation) -> tuple[int, list[Msg]]:
    """A trustless game's lines against its chain (its seats never change keys): how many check,
    and why each other one does not ("packet N: ...")."""
    keys = invitation.seat_keys()
    ok = 0
    faults: list[Msg] = []
    for block in sorted(blocks, key=lambda b: (b.doc.seq, b.doc.seat, b.doc.n)):
        if block.doc.game != invitation.game:
            continue
        if block.doc.seq not in chain:
            faults.append(msg("packet {seq}: {error}", seq=block.doc.seq, error=msg(
                "{seat}'s line {n} names a packet the chain does not have", seat=block.doc.seat, n=block.doc.n)))
            continue
        _, fault = _verified(block, chain, keys.get(block.doc.seat), None)
        if fault is None:
            ok += 1
        else:
            faults.append(msg("packet {seq}: {error}", seq=block.doc.seq, error=fault))
    return ok, faults


def on_chain(blocks: list[Signed[Talk]], packets: dict[int, Signed[Packet]], round_no: int, invitation: Invitation,
             reader: tuple[str, Identity] | None = None) -> list[Placed]:
    """A trustless round's lines, placed: a line at packet s follows the moves of the round the
    chain relayed up to s (each packet relays one block; a move is a `move` step); a line said
    once the round ended, before the next one's first move, follows its last move. `packets`:
    the chain by number, followed and checked already."""
    chain = {seq: p.hash for seq, p in packets.items()}
    frames: dict[int, int] = {}  # packet -> the round's moves relayed up to it
    done = 0
    for seq in sorted(packets):
        doc = packets[seq].doc
        moved = _moves_in(doc)
        if doc.round == round_no:
            done += moved
        elif doc.round < round_no:
            continue
        elif doc.round > round_no + 1 or moved:
            break  # the next round is being played
        frames[seq] = done
    keys = invitation.seat_keys()
    out: list[tuple[Placed, tuple[int, str, str, int]]] = []
    for block in blocks:
        talk_doc = block.doc
        if talk_doc.game != invitation.game or talk_doc.seq not in frames:
            continue
        line, fault = _verified(block, chain, keys.get(talk_doc.seat), reader)
        if fault is None:
            out.append((Placed(frames[talk_doc.seq], talk_doc.seat, None if talk_doc.to is None else tuple(talk_doc.to),
                               talk_doc.seq, line), (talk_doc.seq, talk_doc.at, talk_doc.seat, talk_doc.n)))
    return [p for p, _ in sorted(out, key=lambda e: e[1])]


def _moves_in(packet: Packet) -> int:
    """How many moves a trustless packet relays (0 or 1)."""
    n = 0
    for relayed in packet.relayed or []:
        if relayed.kind == "mental":
            try:
                n += parse_relayed(relayed, "block", check_signature=False).doc.step == "move"
            except PbemError:
                pass
    return n
