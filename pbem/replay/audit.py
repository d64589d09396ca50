"""Audits of finished rounds: is a round's archive the honest record of the round?

Every check of docs/replay.md ("What the audit checks") runs; each fault found is reported
with its move number (0: the deal; None: the archive as a whole) or its packet instead of
stopping at the first, so a report says everything that is wrong. The packets found in the
source are checked against the replay (pbem.replay.told); the archive's invitation against
the one the auditor joined, when there is one (the anchor: pbem.replay.trust). `AuditFailed`
(pbem.replay.report; exit code 8) is raised by the CLI when a report holds any fault.
"""

from __future__ import annotations

from typing import Any

from engine.game import Carry, carry
from engine.position import dump
from engine.state import ROUNDS_PER_GAME, deal
from pbem.errors import BadSignature, PbemError, listed, msg
from pbem.protocol import fairness
from pbem.protocol.crypto import PublicKey
from pbem.protocol.documents import (
    Archive,
    Carried,
    Handover,
    Invitation,
    Join,
    Link,
    Packet,
    Signed,
    Talk,
    check_signature,
    parse,
    unb64,
)
from pbem.replay.archived_moves import check_moves
from pbem.replay.hostmoves import check_host_moves
from pbem.replay.renewals import check_renewals
from pbem.replay.report import (
    ANCHOR,
    ARCHIVE,
    CHAIN,
    DEAL,
    HANDOVER,
    INVITATION,
    JOIN,
    SECRET,
    SIGNATURE,
    TALK,
    Report,
)
from pbem.replay.rounds import invitation_of
from pbem.replay.sources import Source
from pbem.replay.told import Keys, PacketCheck
from pbem.replay.trust import Trust

DEAL_KEYS = ("ruleset", "options", "players", "roles", "goals", "hands", "deck", "removed", "aside", "nuggets", "gold",
             "to_move", "round")


def audit_source(src: Source, game: str, rounds: list[int], trust: Trust | None = None) -> list[Report]:
    """Audit the given rounds of `game` in a source (packet files found there are cross-checked)."""
    reports = []
    packets = src.packets.get(game, {})
    for r in rounds:
        previous = None
        if (game, r - 1) in src.archives and len(src.archives[(game, r - 1)]) == 1:
            prev_payload, _ = src.archive(game, r - 1)
            try:
                previous = parse("archive", prev_payload, check_signature=False).doc.final
            except PbemError:
                previous = None
        versions = src.archives[(game, r)]
        for payload, origin in versions.values():
            report = audit(payload, origin=origin, previous_final=previous, packets=packets, blocks=src.blocks,
                           trust=trust)
            if len(versions) > 1:
                report.fault(None, CHAIN, msg("{source} holds {n} different archives of this round", source=src.label,
                                              n=len(versions)))
            _check_talk(report, payload, list(src.talk.get(game, {}).values()))
            reports.append(report)
    return reports


def _check_talk(rep: Report, payload: bytes, lines: list[Signed[Talk]]) -> None:
    """Every line of table talk said during the round: signed by its seat's key at its packet,
    said at a packet of the round's chain under that hash (pbem.replay.talk)."""
    from pbem.replay.talk import check

    if not lines:
        return
    try:
        doc = parse("archive", payload, check_signature=False).doc
        invitation = invitation_of(doc)
    except PbemError:
        return  # the archive's own fault is reported already
    placed, faults = check(lines, doc, invitation.doc)
    for seq, why in faults:
        rep.fault_at_packet(seq, TALK, why)
    if placed:
        rep.passed(TALK, len(placed))


def audit(payload: bytes, *, origin: str = "", previous_final: dict[str, Any] | None = None,
          packets: dict[int, dict[str, str]] | None = None, blocks: dict[str, Signed[Packet]] | None = None,
          trust: Trust | None = None) -> Report:
    """Check one archive block (its raw payload, so that a broken signature is a fault, not a crash).

    `packets` (seq -> hash -> origin) and `blocks` (hash -> the packet read, its signature not
    yet checked: Source.blocks) are the packet files found with it; `trust` anchors the audit and may open one seat's parts."""
    trust = trust or Trust()
    try:
        block = parse("archive", payload, check_signature=False)
    except PbemError as exc:
        rep = Report("?", 0, origin)
        rep.fault(None, ARCHIVE, msg("the archive is malformed: {error}", error=exc))
        return rep
    doc: Archive = block.doc
    rep = Report(doc.game, doc.round, origin)
    rep.anchor = trust.anchor_origin if trust.anchor is not None else None
    rep.seat = trust.seat[0] if trust.seat else None
    try:
        check_signature(block)
        rep.passed("signature")
    except BadSignature:
        rep.fault(None, SIGNATURE, msg("the archive's signature does not verify: it was changed after the host signed it"))
    try:
        invitation = invitation_of(doc)
    except PbemError as exc:
        rep.fault(None, INVITATION, msg("the invitation inside the archive is unusable: {error}", error=exc))
        return rep
    if trust.anchor is not None and trust.anchor.hash != invitation.hash:
        rep.fault(None, ANCHOR, msg("the archive holds another invitation than the one you trust ({anchor}): host "
                                    "{host} instead of {trusted}; this is not the game you joined",
                                    anchor=trust.anchor_origin, host=_host_of(invitation), trusted=_host_of(trust.anchor)))
        return rep
    try:
        _check_all(rep, doc, invitation, previous_final, packets, blocks or {}, trust)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # Nonsense inside a well-typed archive (its positions are engine data) is a fault, not a crash.
        rep.fault(None, ARCHIVE, msg("the archive holds data that cannot be checked: {kind}: {error}",
                                     kind=type(exc).__name__, error=exc))
    return rep


def _host_of(invitation: Signed[Invitation]) -> str:
    host = invitation.doc.host
    try:
        return f"{host.name} ({PublicKey.decode(host.key).fingerprint()})"
    except PbemError:
        return host.name


def _check_all(rep: Report, doc: Archive, invitation: Signed[Invitation], previous_final: dict[str, Any] | None,
               packets: dict[int, dict[str, str]] | None, blocks: dict[str, Signed[Packet]], trust: Trust) -> None:
    _check_invitation(rep, doc, invitation)
    seats = invitation.doc.seat_keys()
    contributions = _check_joins(rep, doc, invitation, seats)
    keys = _check_handovers(rep, doc, invitation, seats)
    secret = _check_secret(rep, doc, invitation)
    if secret is not None and contributions is not None:
        _check_deal(rep, doc, invitation, secret, contributions, previous_final)
    chain = _check_chain(rep, doc, invitation, packets or {})
    renewed = check_renewals(rep, doc, invitation.doc.host.key, chain, blocks)
    replay = check_moves(rep, doc, invitation, keys, chain)
    if replay is not None:
        check_host_moves(rep, doc, invitation.doc.host.key, replay, chain, blocks, renewed,
                         trust.seat[0] if trust.seat else None, trust.home)
    if replay is not None and secret is not None:
        found = {seq: blocks[h] for seq, h in chain.items() if h in blocks}
        check = PacketCheck(rep, invitation.game, rep.round, invitation.doc.host.key, secret, keys,
                            doc.handovers or [], trust.seat)
        check.run(replay, _deal_packet(doc), found, game_over=rep.round >= ROUNDS_PER_GAME)


def _check_handovers(rep: Report, doc: Archive, invitation: Signed[Invitation], seats: dict[str, str]) -> Keys:
    """Each handover's signed document (by the host, or by the seat's key before it), and from
    which packet on each key held its seat."""
    host_key = invitation.doc.host.key
    current = dict(seats)
    spans: dict[str, list[tuple[int, str]]] = {name: [(0, key)] for name, key in seats.items()}
    for h in doc.handovers or []:
        seat, at = h.seat, h.at
        if seat not in current:
            rep.fault(None, HANDOVER, msg("a handover names seat {seat} at packet {seq}, which the game does not have",
                                          seat=repr(seat), seq=at))
            continue
        try:
            block = parse("handover", unb64(h.document, msg("{seat}'s handover", seat=seat))).expect(Handover)
        except PbemError as exc:
            rep.fault(None, HANDOVER, msg("the handover of seat {seat} at packet {seq} is unusable: {error}", seat=seat,
                                          seq=at, error=exc))
            continue
        if block.game != invitation.game or block.doc.seat != seat or block.doc.key != h.key:
            rep.fault(None, HANDOVER, msg("the handover of seat {seat} at packet {seq} does not match its signed "
                                          "document", seat=seat, seq=at))
            continue
        signer = block.signer.encode()
        if signer not in (host_key, current[seat]):
            rep.fault(None, HANDOVER, msg("the handover of seat {seat} at packet {seq} is signed by key {fingerprint}, "
                                          "neither the host's nor the seat's", seat=seat, seq=at,
                                          fingerprint=block.signer.fingerprint()))
            continue
        current[seat] = h.key
        spans[seat].append((at, current[seat]))
        fingerprint = PublicKey.decode(current[seat]).fingerprint()
        if signer == host_key:
            rep.notes.append(msg("seat {seat} was handed over to key {fingerprint} from packet {seq} on (signed by the "
                               "host)", seat=seat, fingerprint=fingerprint, seq=at))
        else:
            rep.notes.append(msg("seat {seat} was handed over to key {fingerprint} from packet {seq} on (signed by the "
                               "seat's old key)", seat=seat, fingerprint=fingerprint, seq=at))
        rep.passed("handover")

    def key_at(seat: str, seq: int) -> str | None:
        held = [key for start, key in spans.get(seat, []) if start <= seq]
        return held[-1] if held else None

    return key_at


def _check_invitation(rep: Report, doc: Archive, invitation: Signed[Invitation]) -> None:
    host = invitation.doc.host
    try:
        rep.host = f"{host.name} ({PublicKey.decode(host.key).fingerprint()})"
    except PbemError:
        rep.host = host.name
    if invitation.signer.encode() != host.key:
        rep.fault(None, INVITATION, msg("the invitation is not signed by the host it names"))
    if doc.signer != host.key:
        rep.fault(None, SIGNATURE, msg("the archive is not signed by the game's host {host}", host=repr(host.name)))
    if invitation.game != doc.game:
        rep.fault(None, INVITATION, msg("the archive of game {game} holds the invitation of game {other}", game=doc.game,
                                        other=invitation.game))


def _check_joins(rep: Report, doc: Archive, invitation: Signed[Invitation], seats: dict[str, str]) -> list[bytes] | None:
    found: dict[str, bytes] = {}
    for i, text in enumerate(doc.joins, 1):
        try:
            block = parse("join", unb64(text, msg("join {n}", n=i)))
        except PbemError as exc:
            rep.fault(0, JOIN, msg("join {n} is unusable: {error}", n=i, error=exc))
            continue
        join: Join = block.doc
        seat = join.seat
        if seat not in seats:
            rep.fault(0, JOIN, msg("join {n} is for seat {seat}, which the invitation does not have", n=i,
                                   seat=repr(seat)))
        elif join.signer != seats[seat]:
            rep.fault(0, JOIN, msg("{seat}'s join is signed by key {fingerprint}, not the seat's key", seat=seat,
                                   fingerprint=block.signer.fingerprint()))
        elif join.invitation != invitation.hash or join.game != invitation.game:
            rep.fault(0, JOIN, msg("{seat}'s join answers another invitation", seat=seat))
        elif seat in found:
            rep.fault(0, JOIN, msg("{seat} has two joins", seat=seat))
        else:
            try:
                found[seat] = unb64(join.contribution, msg("{seat}'s contribution", seat=seat))
                rep.passed("join")
            except PbemError as exc:
                rep.fault(0, JOIN, exc)
    missing = [s for s in seats if s not in found]
    if missing:
        rep.fault(0, JOIN, msg("no valid join of {seats}: the deal cannot be recomputed", seats=", ".join(missing)))
        return None
    return [found[s] for s in seats]


def _check_secret(rep: Report, doc: Archive, invitation: Signed[Invitation]) -> bytes | None:
    commitments = invitation.doc.commitments
    if not 1 <= rep.round <= len(commitments):
        rep.fault(None, SECRET, msg("the invitation commits to {n} rounds, not to round {round}", n=len(commitments),
                                    round=rep.round))
        return None
    try:
        secret = bytes.fromhex(doc.secret)
    except ValueError:
        rep.fault(0, SECRET, msg("the revealed secret is not hex"))
        return None
    if not fairness.secret_matches(invitation.game, rep.round, secret, commitments[rep.round - 1]):
        rep.fault(0, SECRET, msg("the revealed secret does not match the invitation's commitment for round {round}",
                                 round=rep.round))
        return None
    rep.passed("secret")
    return secret


def _check_deal(rep: Report, doc: Archive, invitation: Signed[Invitation], secret: bytes, contributions: list[bytes],
                previous: dict[str, Any] | None) -> None:
    start = doc.start
    players = invitation.doc.seat_names()
    carried = doc.carried if doc.carried not in (None, Carried()) else None
    said: tuple[object, Any, Any] | None  # the next round's start as the archives say it (None: round 1's)
    if rep.round == 1:
        said = None
    elif carried is not None:
        # The archive names what round k-1 handed over; check it against k-1 when we have it.
        said = (carried.first, carried.gold, carried.nuggets)
        if previous is not None and (previous.get("gold") != carried.gold or previous.get("nuggets") != carried.nuggets
                                     or previous.get("next_start") != carried.first):
            rep.fault(0, DEAL, msg("what round {round} says it carried over differs from how round {before} ended",
                                   round=rep.round, before=rep.round - 1))
    elif previous is not None:
        said = (previous.get("next_start"), previous.get("gold"), previous.get("nuggets"))
    else:
        # Without the previous round's archive, the pile that was shuffled is unknown: take the
        # carried gold and first seat from `start` and compare the pile only as a set of cards.
        said = (start.get("to_move"), start.get("gold"), start.get("nuggets"))
        rep.notes.append(msg("round {round}'s archive is not in the source: the order of the nugget pile, the carried "
                           "gold and the first player were taken from the archive, not checked", round=rep.round - 1))
    try:
        begins = Carry() if said is None else carry(players, *said)
        dealt = dump(deal(invitation.doc.ruleset, players,
                          fairness.round_chance(invitation.game, rep.round, secret, contributions),
                          options=frozenset(invitation.doc.options), round_no=rep.round, first_seat=begins.first_seat,
                          gold=begins.gold, nuggets=begins.nuggets))
    except (KeyError, ValueError, TypeError) as exc:
        rep.fault(0, DEAL, msg("the deal cannot be recomputed: {error}", error=exc))
        return
    if rep.round > 1 and previous is None and carried is None:
        dealt["nuggets"] = sorted(dealt["nuggets"])
        start = {**start, "nuggets": sorted(start.get("nuggets", []))}
    differ = []
    for key in DEAL_KEYS:
        if dealt.get(key) != start.get(key):
            if isinstance(dealt.get(key), dict) and isinstance(start.get(key), dict):
                who = sorted(k for k in set(dealt[key]) | set(start[key]) if dealt[key].get(k) != start[key].get(k))
                differ.append(f"{key} ({', '.join(who)})")
            else:
                differ.append(key)
    if differ:
        rep.fault(0, DEAL, msg("the starting position is not the deal of the secret and the contributions: "
                               "{fields} differ", fields=listed(differ, how="clauses")))
    else:
        rep.passed("deal")


def _check_chain(rep: Report, doc: Archive, invitation: Signed[Invitation],
                 packets: dict[int, dict[str, str]]) -> dict[int, str]:
    """seq -> hash of the chain's packets; each links to the one before it."""
    chain: dict[int, str] = {}
    before: Link | None = None
    for entry in doc.chain:
        seq, h, prev = entry.seq, entry.hash, entry.prev
        if before is None:
            if seq == 1 and prev != invitation.hash:
                rep.fault(None, CHAIN, msg("packet 1 does not follow the invitation"))
        elif seq != before.seq + 1 or prev != before.hash:
            rep.fault(None, CHAIN, msg("packet {seq} does not follow packet {before} in the archive's chain", seq=seq,
                                       before=before.seq))
        chain[seq] = h
        before = entry
        rep.passed("chain")
        for other, where in packets.get(seq, {}).items():
            if other != h:
                rep.fault(None, CHAIN, msg("packet {seq} in {where} is not the packet {seq} of the archive's chain",
                                           seq=seq, where=where))
            else:
                rep.passed("packet-file")
    if not chain:
        rep.fault(None, CHAIN, msg("the archive holds no packet chain"))
    return chain


def _deal_packet(doc: Archive) -> int:
    """The packet that shows the round's deal: the chain starts with the packet before it
    (round 1: with packet 1 itself, the invitation comes before it)."""
    start = min((link.seq for link in doc.chain), default=1)
    return start if doc.round == 1 else start + 1
