"""Replays of finished rounds (docs/replay.md).

A round's signed archive comes from a source (pbem.replay.sources: a host's store, an archive
file, or a player's folder of received files; the last packet of a round carries it). `load_replay` (pbem.replay.load) finds one
round's archive, checks its signatures and re-applies its moves through the engine; a
`Replay` then answers "what did the table look like after move i, as seat X saw it then".

Steps are numbered 0 (the deal) to len(replay) (after the last move). A seat's perspective
at step i is `engine.views.view(state_i, seat)`: while the round is being played that masks
every other hand, role, the deck and the face-down goals; once the round is over the view is
the full state (everything is open at the end of a round).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.errors import BadPosition, MoveError
from engine.events import Event
from engine.moves import public_text
from engine.position import dump, load
from engine.rules import apply as apply_move
from engine.state import OVER, PLAYING, RoundState
from engine.views import events_for, view
from pbem.errors import BadPacket, BadSignature, UsageError
from pbem.names import HOST
from pbem.protocol.documents import Archive, Invitation, Signed, parse, read_blocks
from pbem.replay.sources import ALL, audit_hint
from pbem.ui import failures, move_words, when
from pbem.ui.words import t

if TYPE_CHECKING:
    from pbem.replay.talk import Placed

# --- checking an archive ---------------------------------------------------------------------


def invitation_of(doc: Archive) -> Signed[Invitation]:
    blocks = [b for b in read_blocks(doc.invitation) if isinstance(b.doc, Invitation)]
    if len(blocks) != 1:
        raise BadPacket(t("the archive does not hold its game's invitation"))
    return blocks[0]


def verify_archive(payload: bytes) -> tuple[Signed[Archive], Signed[Invitation]]:
    """The archive and its invitation, both signed by the host the invitation names."""
    archive = parse("archive", payload)
    invitation = invitation_of(archive.doc)
    host_key = invitation.doc.host.key
    if invitation.signer.encode() != host_key:
        raise BadSignature(t("the invitation inside the archive is not signed by the host it names"), hint=audit_hint())
    if archive.signer.encode() != host_key:
        raise BadSignature(t("the archive is signed by key {fingerprint}, not by the host of game {game}",
                             fingerprint=archive.signer.fingerprint(), game=archive.game), hint=audit_hint())
    if invitation.game != archive.game:
        raise BadPacket(t("the archive of game {game} holds the invitation of game {other}", game=archive.game,
                          other=invitation.game))
    return archive, invitation


# --- the replay ------------------------------------------------------------------------------


@dataclass
class Step:
    """One move of a round replayed through the engine (the replay's and the audit's)."""

    n: int  # move number, from 1
    seat: str
    text: str  # full canonical notation
    events: list[Event]
    state: RoundState  # after the move
    by: str | None = None  # "host": the host played it for the seat (as the archive says it)
    why: str | None = None  # then why: timeout, absent, resigned
    answered: int = 0  # the packet the move answered (0: not known here)

    @property
    def by_host(self) -> str | None:
        """Why the host played it for the seat (timeout for an archive too old to say); None: the seat's own."""
        return (self.why or "timeout") if self.by == HOST else None


class NotTheirTurn(Exception):
    """A move by a seat that was not to move; `player` was (None: nobody, the round is over)."""

    def __init__(self, player: str | None) -> None:
        super().__init__(player)
        self.player = player


def step(before: RoundState, n: int, seat: str, text: str, by: str | None = None, why: str | None = None,
         answered: int = 0) -> Step:
    """Move `n` (`seat` plays `text`) applied to a copy of `before`, the table it was made at.
    Raises NotTheirTurn, or the engine's MoveError for a move the rules refuse."""
    if before.phase == OVER or before.player != seat:
        raise NotTheirTurn(None if before.phase == OVER else before.player)
    state = before.copy()
    events = apply_move(state, text)
    return Step(n, seat, text, events, state, by, why, answered)


@dataclass
class Replay:
    game: str
    round: int
    archive: Signed[Archive] | None  # None: a trustless round, whose chain is its record (pbem.replay.trustless)
    invitation: Signed[Invitation]
    start: RoundState
    steps: list[Step]
    origin: str = ""
    talk: list[Placed] = field(default_factory=list)  # the round's table talk, placed between the moves

    def _heard(self, who: str) -> list[Placed]:
        """The table talk `who` may read: the public lines, and a seat's whispers opened with its key."""
        return [p for p in self.talk if p.line is not None and (p.to is None or who in (p.speaker, *p.to))]

    def said(self, i: int, who: str) -> list[str]:
        """The table talk said after frame i (0: the deal) that `who` may read, in words."""
        from pbem.ui import talk_words

        return [talk_words.line(p.speaker, p.seq, p.to, p.line.text) for p in self._heard(who)
                if p.frame == i and p.line is not None]

    def talk_json(self, who: str, upto: int | None = None) -> list[dict[str, Any]]:
        """`--json`'s "talk": each line `who` may read (up to frame `upto`), with the frame it follows."""
        return [{**p.line.json(), "after": p.frame} for p in self._heard(who)
                if p.line is not None and (upto is None or p.frame <= upto)]

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def players(self) -> tuple[str, ...]:
        return self.start.players

    @property
    def perspectives(self) -> list[str]:
        return [ALL, *self.players]

    @property
    def final(self) -> RoundState:
        return self.state(len(self))

    def perspective(self, who: str | None) -> str:
        """Check a --as value: 'all' or a seat name."""
        who = (who or ALL).lower()
        if who not in self.perspectives:
            raise UsageError(t("no seat {seat} in game {game}", seat=repr(who), game=self.game),
                             hint=t("use --as all or one of: {seats}", seats=", ".join(self.players)))
        return who

    def state(self, i: int) -> RoundState:
        if not 0 <= i <= len(self):
            raise UsageError(t("no move {n}: round {round} has moves 1..{last} (0 is the deal)", n=i, round=self.round,
                               last=len(self)))
        return self.start if i == 0 else self.steps[i - 1].state

    def is_open(self, i: int, who: str) -> bool:
        """Whether everything is visible at step i: perspective 'all', or the round is over."""
        return who == ALL or self.state(i).phase != PLAYING

    def view(self, i: int, who: str) -> RoundState:
        """Step i as `who` saw it then (the full state for 'all' and once the round is over)."""
        s = self.state(i)
        return s if who == ALL else view(s, who)

    # --- one move as someone saw it at step `at` (default: right after it) ---

    def _full(self, n: int, who: str, at: int | None) -> bool:
        return self.steps[n - 1].seat == who or self.is_open(n if at is None else at, who)

    def notation(self, n: int, who: str, at: int | None = None) -> str:
        step = self.steps[n - 1]
        return step.text if self._full(n, who, at) else public_text(step.text)

    def events(self, n: int, who: str, at: int | None = None) -> list[Event]:
        step = self.steps[n - 1]
        if self.is_open(n if at is None else at, who):
            return step.events
        return events_for(step.events, who)

    def sentences(self, n: int, who: str, at: int | None = None) -> list[str]:
        """The move in words, then what it caused that `who` could know."""
        step = self.steps[n - 1]
        shown = self.events(n, who, at)
        lines = [move_words.describe_move(step.text, step.seat, shown, reveal=self._full(n, who, at))]
        if step.by_host:
            lines[0] = when.by_host(lines[0], step.by_host)
        open_ = self.is_open(n if at is None else at, who)
        for e in shown:
            if e.get("event") == "move":
                continue
            line = move_words.describe_event(e, reveal=open_ or e.get("player") == who)
            if line:
                lines.append(line)
        return lines

    def move_json(self, n: int, who: str, at: int | None = None) -> dict[str, Any]:
        step = self.steps[n - 1]
        return {"n": n, "seat": step.seat, "text": self.notation(n, who, at), "words": self.sentences(n, who, at),
                "events": self.events(n, who, at), **({"by": "host", "why": step.by_host} if step.by_host else {})}

    def to_json(self, i: int, who: str) -> dict[str, Any]:
        """`--to N --json`: the position after move i as `who` saw it, and the moves up to it."""
        return {**self._head(who), "step": i, "position": dump(self.view(i, who)),
                "moves": [self.move_json(n, who, at=i) for n in range(1, i + 1)], "talk": self.talk_json(who, i)}

    def all_json(self, who: str) -> dict[str, Any]:
        """`--all --json`: the deal, then every move with the position after it."""
        return {**self._head(who), "start": dump(self.view(0, who)),
                "moves": [{**self.move_json(n, who), "position": dump(self.view(n, who))} for n in range(1, len(self) + 1)],
                "talk": self.talk_json(who)}

    def _head(self, who: str) -> dict[str, Any]:
        return {"game": self.game, "round": self.round, "as": who, "moves_total": len(self)}


def build(archive: Signed[Archive], invitation: Signed[Invitation], origin: str = "") -> Replay:
    """Re-apply the archive's moves through the engine, from its start to its final position."""
    doc = archive.doc
    try:
        start = load(doc.start)
    except (BadPosition, KeyError, TypeError) as exc:
        raise BadPacket(t("the archive's starting position is unreadable: {error}", error=exc),
                        hint=audit_hint()) from None
    moves = [(m.seat, str(m.text), m.by, m.why) for m in doc.moves]
    return replayed(archive.game, doc.round, start, moves, doc.final, invitation, archive, origin)


def replayed(game: str, round_no: int, start: RoundState,
             moves: Sequence[tuple[str, str, str | None, str | None]], final: dict[str, Any],
             invitation: Signed[Invitation], archive: Signed[Archive] | None = None, origin: str = "") -> Replay:
    """A round's moves (seat, text, by, why: as an archive says them) applied through the engine
    from its deal; they must end it at `final` (a dumped position)."""
    state, steps = start, []
    for i, (seat, text, by, why) in enumerate(moves, 1):
        try:
            steps.append(step(state, i, seat, text, by, why))
        except NotTheirTurn as exc:
            to_move = exc.player or t("nobody (the round is over)")
            raise BadPacket(t("move {n} of the archive is by {seat}, but {player} was to move", n=i, seat=seat,
                              player=to_move), hint=audit_hint()) from None
        except MoveError as exc:
            raise BadPacket(t("move {n} of the archive ({move}) is illegal: {error}", n=i, move=repr(text),
                              error=failures.message(exc)),
                            hint=audit_hint()) from None
        state = steps[-1].state
    if state.phase != OVER or dump(state) != final:
        raise BadPacket(t("the archive's moves do not lead to its final position"), hint=audit_hint())
    return Replay(game, round_no, archive, invitation, start, steps, origin)
