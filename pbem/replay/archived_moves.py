"""The audit of a round's moves, one by one (pbem.replay.audit runs it among its checks): each
move's number, its signed move file (signer, commitment, the packet it answers), the order of
the packets the moves answer, and the move itself, applied by the engine as `pbem replay` does
(pbem.replay.rounds.step), up to the archive's final position."""

from __future__ import annotations

from engine.errors import BadPosition, MoveError
from engine.position import dump, load
from engine.state import OVER, RoundState
from pbem.errors import PbemError, msg, reason_word
from pbem.names import HOST
from pbem.protocol.documents import (
    Archive,
    ArchivedMove,
    Invitation,
    SeatMove,
    Signed,
    move_commitment,
    move_nonce,
    parse,
    unb64,
)
from pbem.protocol.timeout import renewed_to
from pbem.replay.report import CHAIN, COMMIT, ENGINE, ENVELOPE, FINAL, ORDER, Report
from pbem.replay.rounds import NotTheirTurn, Replay, Step, step
from pbem.replay.told import Keys
from pbem.ui.engine_words import move_error_msg


def check_moves(rep: Report, doc: Archive, invitation: Signed[Invitation], key_at: Keys,
                 chain: dict[int, str]) -> Replay | None:
    """Re-apply every move, as `pbem replay` does (rounds.step), faulting each thing wrong;
    returns the replay (None if the moves do not replay, or a move's packet is unknown)."""
    rep.moves = len(doc.moves)
    # A handover, or a deadline renewed, publishes a new packet at once: the packet before it is
    # answered by no move.
    handed = {h.at - 1 for h in doc.handovers or []} | {seq - 1 for seq in doc.renewed or []}
    try:
        start: RoundState | None = load(doc.start)
    except (BadPosition, KeyError, TypeError) as exc:
        rep.fault(0, ENGINE, msg("the starting position is unreadable: {error}", error=exc))
        start = None
    state = start
    steps: list[Step] = []
    unanswered = False  # a move whose packet is unknown: the packets cannot be matched to steps
    last_seq: int | None = None
    i = 0
    for m in doc.moves:
        i = _numbered(rep, i, m)
        seq = _check_envelope(rep, i, m, key_at, chain, doc.game, doc.signer)
        unanswered = unanswered or seq is None
        if seq is not None:
            seq = renewed_to(seq, doc.renewed or ())  # a move for the packet a renewal replaced is applied at it
            _check_follows(rep, i, seq, last_seq, handed)
            last_seq = seq
        if state is not None:
            state = _applied(rep, state, steps, i, m, seq or 0)
    if state is None or start is None:
        return None
    if last_seq is not None and last_seq + 1 != max(chain, default=0):
        rep.fault(i, CHAIN, msg("the chain does not end with the packet of the last move"))
    got = dump(state)
    if state.phase != OVER:
        rep.fault(i, FINAL, msg("the moves do not end the round"))
    elif got != doc.final:
        keys = sorted(k for k in set(got) | set(doc.final) if got.get(k) != doc.final.get(k))
        rep.fault(i, FINAL, msg("the moves do not lead to the archive's final position ({fields} differ)",
                                fields=", ".join(keys)))
    else:
        rep.passed("final")
        return None if unanswered else Replay(doc.game, doc.round, None, invitation, start, steps)
    return None


def _numbered(rep: Report, i: int, m: ArchivedMove) -> int:
    """The number of move `m`, the one after move `i`: faulted if the archive skips or repeats."""
    if m.n != i + 1:
        if m.n > i + 1:
            rep.fault(i + 1, ORDER, msg("move {n} is missing: the archive goes from move {before} to move {after}",
                                        n=i + 1, before=i, after=m.n))
        else:
            rep.fault(i + 1, ORDER, msg("move {n} is out of order: the archive numbers it {said}", n=i + 1,
                                        said=repr(m.n)))
    return m.n if m.n > i else i + 1


def _applied(rep: Report, state: RoundState, steps: list[Step], i: int, m: ArchivedMove, seq: int) -> RoundState | None:
    """The position after move `i` (`m`, answering packet `seq`), its step added to `steps`;
    None, faulted, if the engine refuses it."""
    try:
        steps.append(step(state, i, m.seat, m.text, m.by, m.why, seq))
    except NotTheirTurn as exc:
        if exc.player is None:
            rep.fault(i, ENGINE, msg("is by {seat}, but nobody was to move", seat=m.seat))
        else:
            rep.fault(i, ENGINE, msg("is by {seat}, but {player} was to move", seat=m.seat, player=exc.player))
        return None
    except MoveError as exc:
        rep.fault(i, ENGINE, msg("{move} is illegal here: {error}", move=repr(m.text), error=move_error_msg(exc)))
        return None
    rep.passed("engine")
    return steps[-1].state


def _check_follows(rep: Report, i: int, seq: int, last_seq: int | None, handed: set[int]) -> None:
    """Move i answers packet `seq`, the move before it `last_seq`: the next packet, unless the
    ones between were handovers or renewed deadlines (answered by no move)."""
    if last_seq is None or seq == last_seq + 1 or set(range(last_seq + 1, seq)) <= handed:
        return
    if seq > last_seq + 1:
        rep.fault(i, CHAIN, msg("answers packet {seq}, but the move before it answered packet {before}: a "
                                "move between them is missing", seq=seq, before=last_seq))
    else:
        rep.fault(i, CHAIN, msg("answers packet {seq}, but the move before it answered packet {before}",
                                seq=seq, before=last_seq))


def _check_envelope(rep: Report, i: int, m: ArchivedMove, key_at: Keys, chain: dict[int, str],
                    game: str, host_key: str) -> int | None:
    """The seat's signed move file (or the host's, for a seat that did not move in time): its
    signer, commitment and packet. Returns the packet it answers."""
    try:
        env = parse("move", unb64(m.envelope, msg("move {n}'s envelope", n=i)))
    except PbemError as exc:
        rep.fault(i, ENVELOPE, msg("the signed move file is unusable: {error}", error=exc))
        return None
    move: SeatMove = env.doc
    ok = True
    if move.by != m.by:
        rep.fault(i, ENVELOPE, msg("the archive and the move file disagree on who made the move"))
        ok = False
    if move.by == HOST:
        if env.signer.encode() != host_key:
            rep.fault(i, ENVELOPE, msg("a move marked as the host's is signed by key {fingerprint}, not the host's",
                                       fingerprint=env.signer.fingerprint()))
            ok = False
        else:
            rep.passed("host-move")
            rep.notes.append(msg("move {n}: played by the host for {seat} ({why})", n=i, seat=m.seat, why=reason_word(move.why)))
    elif env.signer.encode() != key_at(m.seat, move.seq):
        rep.fault(i, ENVELOPE, msg("the move file is signed by key {fingerprint}, not by seat {seat}'s key",
                                   fingerprint=env.signer.fingerprint(), seat=m.seat))
        ok = False
    if move.seat != m.seat or env.game != game:
        rep.fault(i, ENVELOPE, msg("the move file is {seat}'s in game {game}, not {expected}'s in {expected_game}",
                                   seat=move.seat, game=env.game, expected=m.seat, expected_game=game))
        ok = False
    try:
        if move_commitment(move_nonce(m.nonce), m.text) != move.commit:
            rep.fault(i, COMMIT, msg("the text {move} is not the move the seat committed to", move=repr(m.text)))
        else:
            rep.passed("commit")
    except PbemError as exc:
        rep.fault(i, COMMIT, exc)
    if chain.get(move.seq) != move.packet:
        rep.fault(i, CHAIN, msg("answers packet {seq}, which is not in the archive's chain", seq=move.seq))
    if ok:
        rep.passed("envelope")
    return move.seq
