"""The audit of the moves a host made for a seat (docs/replay.md, "What the audit checks").

A host may play for a seat only as the game's rules say (docs/playing.md §7): after the
deadline and grace its packet carries, for a seat that packet lists as absent or resigned,
never under the policy `wait`, and only the policy's own move, which is deterministic and is
recomputed here from the seat's view once the round's secrets are open. What the packet
names is checked, not the game's rules now: the host keeps a waiting packet's deadline as
it was published (pbem.protocol.timeout.takeovers, not_before). With a seat's key
home (`audit --as SEAT`), a host move for a packet the seat had answered before the host
moved is a fault too: the seat's own move file, kept in its key home, says so.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from engine.views import view
from pbem.errors import PbemError, date_word, msg, reason_word
from pbem.host.clock import parse_time
from pbem.names import HOST
from pbem.protocol.documents import Archive, Packet, Signed, check_signature, parse, unb64
from pbem.protocol.timeout import (
    MAX_TAKEOVER_TURNS,
    REASONS,
    budget_allowed,
    named_for,
    not_before,
    policy_move,
    renewed_from,
    takeovers,
)
from pbem.replay.rounds import Replay
from pbem.seat.home import move_path

if TYPE_CHECKING:
    from collections.abc import Collection

    from pbem.replay.report import Report

TIMEOUT = "timeout"  # the check a fault names


def check_host_moves(rep: Report, doc: Archive, host_key: str, replay: Replay, chain: dict[int, str],
                     blocks: dict[str, Signed[Packet]], renewed: Collection[int], seat: str | None = None,
                     home: Path | None = None) -> None:
    """Fault every host move the rules did not allow, or that is not its policy's move.
    `replay`: the round's moves replayed; `renewed`: the round's renewals (pbem.replay.renewals:
    those the archive lists and those its packets show); `seat`/`home`: the auditor's seat and
    key home, whose kept move files show what the seat had answered."""
    for n, m in enumerate(doc.moves, 1):
        if m.by != HOST:
            continue
        step = replay.steps[n - 1]
        envelope = parse("move", unb64(m.envelope, msg("move {n}'s envelope", n=n))).doc
        packet = host_packet(blocks.get(chain.get(step.answered, "")), host_key)
        if packet is None:
            rep.notes.append(msg("move {n}: packet {seq} is not in the source: the host's move for {seat} was not "
                               "checked against its deadline", n=n, seq=step.answered, seat=m.seat))
            continue
        faults = len(rep.faults)
        _check_allowed(rep, n, m.seat, str(m.why), envelope.at, packet)
        if seat == m.seat and home is not None:
            _check_answered(rep, n, doc.game, m.seat, step.answered, envelope.at, home, renewed)
        deadline = named_for(packet.deadline, m.seat)
        if deadline is not None and deadline.bot_turns is not None and \
                not budget_allowed(deadline.bot_turns):  # not played: it could keep the auditor for days
            rep.fault(n, TIMEOUT, msg("packet {seq} names a bot budget of {turns} simulated turns, beyond the 1 to "
                                      "{most} a game may set", seq=step.answered, turns=deadline.bot_turns,
                                      most=MAX_TAKEOVER_TURNS))
            continue
        policies = takeovers(deadline)  # what the packet named: the host plays from the same
        seen = view(replay.state(n - 1), m.seat)
        chosen = [policy_move(seen, m.seat, p, doc.game, step.answered, turns) for p, turns in policies.items()]
        if chosen and m.text not in chosen:
            rep.fault(n, TIMEOUT, msg("the host played {move} for {seat}, but its timeout policy {policy} plays "
                                    "{chosen}", move=repr(m.text), seat=m.seat, policy="/".join(policies),
                                    chosen=" / ".join(repr(c) for c in chosen)))
        if len(rep.faults) == faults:
            rep.passed(TIMEOUT)


def host_packet(block: Signed[Packet] | None, host_key: str) -> Packet | None:
    """A packet of the chain, if found and signed by the host (the packet checks say the rest)."""
    if block is None or block.signer.encode() != host_key:
        return None
    try:
        check_signature(block)
    except PbemError:
        return None
    return block.doc


def _check_allowed(rep: Report, n: int, seat: str, why: str, at: str | None, packet: Packet) -> None:
    deadline = named_for(packet.deadline, seat)
    absent = seat in (packet.absent or [])
    seq = packet.seq
    if why not in REASONS:
        rep.fault(n, TIMEOUT, msg("the host played for {seat} at packet {seq} for no reason the rules know ({why})",
                                seat=seat, seq=seq, why=repr(why[:40])))
    elif deadline is not None and not takeovers(deadline):
        rep.fault(n, TIMEOUT, msg("the host played for {seat} at packet {seq}, whose timeout policy is {policy}: the "
                                "host plays for nobody", seat=seat, seq=seq, policy=deadline.on_timeout))
    elif why != "timeout":
        if not absent:
            rep.fault(n, TIMEOUT, msg("the host played for {seat} at packet {seq} as {why}, but that packet does not "
                                    "list {seat} as absent", seat=seat, seq=seq, why=reason_word(why)))
    elif deadline is None:
        rep.fault(n, TIMEOUT, msg("the host played for {seat} at packet {seq} for lack of time, but that packet has no "
                                "deadline", seat=seat, seq=seq))
    elif at is None:
        rep.fault(n, TIMEOUT, msg("the host's move for {seat} at packet {seq} does not say when it was made",
                                seat=seat, seq=seq))
    else:
        until = not_before(deadline)
        try:
            early = parse_time(at) < parse_time(until)
        except PbemError as exc:
            rep.fault(n, TIMEOUT, exc)
            return
        if early:
            rep.fault(n, TIMEOUT, msg("the host played for {seat} at {at}, before packet {seq}'s deadline and grace "
                                    "ran out ({until})", seat=seat, at=date_word(at), seq=seq, until=date_word(until)))


def _check_answered(rep: Report, n: int, game: str, seat: str, seq: int, at: str | None, home: Path,
                    renewed: Collection[int]) -> None:
    """The auditor's own seat: a move it had made for the packet before the host moved (or for a
    packet that packet renewed: the host applies that move at it, timeout.renewed_to)."""
    times = []
    for p in renewed_from(seq, renewed):
        try:
            kept = move_path(home, game, seat, p)
            if kept.is_file():
                times.append(datetime.fromtimestamp(kept.lstat().st_mtime).astimezone())
        except (OSError, PbemError):
            continue
    if not times:
        return
    made = min(times)
    if at is None or made < parse_time(at):
        rep.fault(n, TIMEOUT, msg("the host played for {seat} at packet {seq}, which {seat} had answered at {when} "
                                "(the move file kept in your key home)", seat=seat, seq=seq, when=date_word(made)))
