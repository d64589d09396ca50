"""One round of a trustless game as the blind host and every seat see it: the public position.

The position is the engine's spectator view (engine.views.view with no player: every hand,
role and the deck hidden as "?"), changed only by what the messages show: a played card is
put in place of one hidden card of its player's hand, opened by public tokens, before
`rules.apply`; a face-down discard takes hidden cards; every draw gives a hidden card. So
the same rules check every move on the same facts at the host and at every seat.

A placement that reaches a face-down goal nobody has opened cannot be applied on a view
(the engine raises UnknownGoal): the move waits (`pending`) while every seat sends its token
for those goals in one parallel round; then the goals are known, and the move is applied
(again, if the maze goes on to reach another unknown goal). When the round ends on the view,
its payout is not known yet: every seat reveals its round key, and `finish` replays the
round on the opened deal (audit.open_round) to get the real one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from engine.board import GOAL_CELLS
from engine.catalog import HIDDEN
from engine.dealer import OPEN_DECK
from engine.errors import InvalidMove, UnknownGoal
from engine.events import Event
from engine.moves import Move, parse
from engine.rules import apply, check
from engine.state import PLAYING, RoundState
from engine.views import view
from pbem.errors import BadPacket, msg
from pbem.protocol.trustless.play import Ledger
from pbem.protocol.trustless.table import TrustlessGame, deal_in_order
from pbem.protocol.trustless.tokens import Slot


class Unseen:
    """The view's drawer: the top card leaves the deck, hidden (its tokens go to the drawer)."""

    def draw(self, state: RoundState) -> str | None:
        if not state.deck:
            return None
        state.deck.pop(0)
        return HIDDEN


UNSEEN = Unseen()


@dataclass
class Pending:
    """A placement waiting for the goals it reaches to be opened."""

    mover: str
    move: Move
    card: str


@dataclass
class PublicRound:
    game: TrustlessGame
    round_no: int
    state: RoundState  # the spectator's view
    ledger: Ledger
    first_seat: int = 0
    record: list[str | tuple[list[Slot], Move]] = field(default_factory=list)  # a play's text, or a face-down
    # discard's slots and public move
    pending: Pending | None = None
    wanted: list[str] = field(default_factory=list)  # goals the pending move needs opened
    events: list[Event] = field(default_factory=list)  # the public events of the last move

    @classmethod
    def deal(cls, game: TrustlessGame, round_no: int, *, first_seat: int = 0, gold: dict[str, int] | None = None,
             pile: int | None = None) -> PublicRound:
        stand_in = {s.label: list(s.cards) for s in game.stacks}  # any order: all of it is masked
        nuggets = None if pile is None else [HIDDEN] * pile
        state = view(deal_in_order(game, round_no, stand_in, first_seat=first_seat, gold=gold, nuggets=nuggets), None)
        return cls(game, round_no, state, Ledger.new(game, round_no), first_seat)

    @property
    def mover(self) -> str:
        return self.state.player

    @property
    def over(self) -> bool:
        return self.state.phase != PLAYING

    def moves(self) -> int:
        return len(self.record)

    # --- a move -------------------------------------------------------------------------------

    def play(self, mover: str, slot: Slot, card: str, text: str | None) -> None:
        """`mover` plays the card opened in `slot` (one it holds) as the move `text`."""
        self.check_slots(mover, [slot])
        trial = self.state.copy()
        hand = trial.hands[mover]
        hand[hand.index(HIDDEN)] = card
        move = check(trial, text or "")
        if move.verb == "discard" or move.card != card:
            raise BadPacket(msg("{seat}'s move {move} does not play the card it opens ({card}, slot {slot})", seat=mover,
                              move=repr(str(text)[:80]), card=card, slot=f"{slot[0]} #{slot[1]}"))
        self.ledger.play(mover, slot)
        self.record.append(str(move))
        self.pending = Pending(mover, move, card)
        self.resume()

    def discard(self, mover: str, slots: list[Slot], text: str | None) -> None:
        """A face-down discard (a pass, or the expansion's discard 2 to remove a card in front of
        the mover): the slots only; the view loses as many hidden cards."""
        self.check_slots(mover, slots)
        try:
            move = parse(text or "", public=True)
        except InvalidMove:
            move = Move("play")
        if move.verb != "discard" or move.cards != (HIDDEN,) * len(slots) or str(move) != text:
            expected = Move("discard", cards=(HIDDEN,) * len(slots), remove=move.remove)
            raise BadPacket(msg("{seat}'s face-down discard says {move}, not {expected}", seat=mover,
                              move=repr(str(text)[:80]), expected=repr(str(expected))))
        for s in slots:
            self.ledger.play(mover, s)
        self.record.append((list(slots), move))
        self._apply(mover, move, None)

    def check_slots(self, mover: str, slots: list[Slot]) -> None:
        """`mover` is the seat to move and holds every one of `slots`."""
        if len(set(slots)) != len(slots):
            raise BadPacket(msg("{seat} names one slot twice", seat=mover))
        if mover != self.mover:
            raise BadPacket(msg("{seat} moves, but it is {mover}'s turn", seat=mover, mover=self.mover))
        for s in slots:
            if s not in self.ledger.holdings[mover]:
                raise BadPacket(msg("{seat} plays slot {slot}, which is not in its hand", seat=mover, slot=f"{s[0]} #{s[1]}"))

    def resume(self) -> None:
        """Apply the pending move, unless it reaches goals nobody has opened (then it waits)."""
        p = self.pending
        assert p is not None
        self.wanted = self._apply(p.mover, p.move, p.card)
        if not self.wanted:
            self.pending = None

    def _apply(self, mover: str, move: Move, card: str | None) -> list[str]:
        trial = self.state.copy()
        if card is not None:
            hand = trial.hands[mover]
            hand[hand.index(HIDDEN)] = card
        try:
            events = apply(trial, move, UNSEEN)
        except UnknownGoal as e:
            return e.goals
        self.state = trial
        self.events = events
        self.ledger.follow(cast(list[dict[str, Any]], events))
        return []

    def know_goal(self, name: str, card: str) -> None:
        self.state.board.know_goal(name, card)

    def goal_slots(self) -> list[Slot]:
        return [self.ledger.layout.goals[g] for g in self.wanted]

    # --- the round's end ----------------------------------------------------------------------

    def replay(self, orders: dict[str, list[str]], *, gold: dict[str, int] | None,
               nuggets: list[str] | None) -> tuple[RoundState, list[tuple[str, str]], RoundState]:
        """The round on its opened deal: every move again, face-down discards by their slots'
        cards. Returns the deal, each move as (seat, text), and the end."""
        start = deal_in_order(self.game, self.round_no, orders, first_seat=self.first_seat, gold=gold, nuggets=nuggets)
        true, played = start.copy(), []
        for what in self.record:
            text = what if isinstance(what, str) else str(what[1]._replace(
                cards=tuple(sorted(orders[s[0]][s[1]] for s in what[0]))))
            played.append((true.player, text))
            apply(true, text, OPEN_DECK)
        if true.phase == PLAYING:
            raise BadPacket(msg("round {round} replayed on its opened deal does not end where the table ended it",
                              round=self.round_no))
        if true.board.cells.keys() != self.state.board.cells.keys() or any(
                true.board.cells[g].card != self.state.board.cells[g].card for g in GOAL_CELLS.values()
                if not self.state.board.cells[g].hidden):
            raise BadPacket(msg("round {round} replayed on its opened deal is not the maze the table saw", round=self.round_no))
        return start, played, true
