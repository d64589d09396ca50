"""The audit of a round's renewals (docs/replay.md, "What the audit checks"): the packets the
archive lists as `renewed` against the packets themselves.

A renewal is a fresh packet of the position waiting that names a deadline the packet before
named none (docs/protocol.md, "Deadlines"); a move made for the packet before counts at it, and
a seat holding the renewal says so to its player (pbem.protocol.timeout: `renews`, the one rule
of what a renewal looks like, and `renewal_of`). The audit replays the moves by the archive's
list (timeout.renewed_to), so the list must be the packets': a host that published a renewal
without listing it (the seat was told its move still counts, then the host refused it or played
for the seat), or that listed a packet that is no renewal of the packet before it (to apply a
seat's move made for that packet at another position, or after a handover), is caught at that
packet. Only the packets found in the source can be checked; a listed one not found is a note.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pbem.errors import msg, ranges
from pbem.protocol.timeout import renewal_of, renews
from pbem.replay.hostmoves import host_packet
from pbem.replay.report import AuditFailed

if TYPE_CHECKING:
    from pbem.protocol.documents import Archive, Packet, Signed
    from pbem.replay.report import Report

RENEWAL = "renewal"  # the check a fault names


class BadRenewal(AuditFailed):
    """The archive's list of renewals and the round's packets disagree."""


def check_renewals(rep: Report, doc: Archive, host_key: str, chain: dict[int, str],
                   blocks: dict[str, Signed[Packet]]) -> set[int]:
    """Fault every packet of the round's chain that is a renewal (`timeout.renews`) but not in
    the archive's `renewed`, and every packet listed there that is not a renewal of the packet
    right before it (`timeout.renewal_of`). Returns the round's renewals, those listed and
    those the packets show: a move made for the packet before either counts at it."""
    found = {seq: host_packet(blocks.get(h), host_key) for seq, h in chain.items()}
    listed = set(doc.renewed or [])
    shown = {seq for seq, packet in found.items() if packet is not None and renews(packet)}
    for seq in sorted(shown - listed):
        rep.fault_at_packet(seq, RENEWAL, BadRenewal(msg(
            "it renews packet {before} to name a deadline, so a move made for packet {before} counts at it, but the "
            "archive does not list it as renewed", before=seq - 1)))
    first, last = min(chain, default=0), max(chain, default=0)
    unseen = []
    for seq in sorted(s for s in listed if s > first):  # (the host lists the game's earlier renewals too)
        packet, before = found.get(seq), found.get(seq - 1)
        if seq > last:
            rep.fault(None, RENEWAL, BadRenewal(msg("the archive lists packet {seq} as renewed, which is not in the "
                                                    "round's chain", seq=seq)))
        elif packet is None:
            unseen.append(seq)
        elif seq not in shown:
            rep.fault_at_packet(seq, RENEWAL, BadRenewal(msg(
                "the archive lists it as renewed, but it is no renewal (one carries no moves and no handover and names "
                "the deadline of the seat to move): a move made for packet {before} would count at it", before=seq - 1)))
        elif packet.prev != chain.get(seq - 1) or (before is not None and not renewal_of(packet, before)):
            rep.fault_at_packet(seq, RENEWAL, BadRenewal(msg(
                "the archive lists it as renewed, but it does not renew packet {before} (a renewal follows the packet it "
                "renews, which names no deadline, and names the same seat to move)", before=seq - 1)))
        else:
            rep.passed(RENEWAL)
    if unseen:
        rep.notes.append(msg("packets {seqs}, which the archive lists as renewed, are not in the source: that they are "
                             "renewals was not checked", seqs=ranges(unseen)))
    return listed | shown
