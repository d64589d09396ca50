"""What the host told the table, checked against the round replayed from its archive.

A packet carries the public table, the moves and events since the last packet, the round's
result and each seat's sealed part. The archive proves the round (deal, moves, final
position); this module checks every packet of the round against that proof, so a host that
signs an honest archive but lied inside a packet (a goal shown as gold to one seat, false
winners, a move it made itself for a silent seat passed off as the seat's own) is caught at
the packet where it lied. With a seat's key, that seat's sealed parts are opened and checked
too: only the seat can see what it was told.

Packet p shows the table after every move that answered a packet before p: the round's deal
packet shows step 0, the packet after the one move i answered shows step i, and a packet the
host published for a seat handover (no move) shows the same step as the packet before it.
The packet after the last move closes the round (`result`); its table is the next round's
deal (checked by that round's audit as its step 0), or the final table when the game is over.

The deadline fields are the host's word about the clock (when a packet is due, who is away):
the replay cannot prove a time, so only what it can is checked (the deadline names the seat
to move; `recent` lists this round's moves as they were made; `handovers` and `handover` are
the archive's).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from engine.events import Event
from engine.game import standings_winners
from engine.moves import parse as parse_move
from engine.position import dump
from engine.state import RoundState
from engine.views import events_for, view
from pbem.errors import Msg, PbemError, Text, listed, msg, ranges
from pbem.names import HOST
from pbem.protocol.contents import round_result, seat_part
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import (
    HandoverRecord,
    Packet,
    Part,
    PublicMove,
    Signed,
    check_signature,
    open_as,
    seal_info,
)
from pbem.replay.rounds import Replay, Step

# Names of checks (as `pbem audit --json` lists them), not words for a person.
PACKET, PART = "packet", "part"

Keys = Callable[[str, int], "str | None"]  # (seat, packet) -> the key that seat held then


def public_move(step: Step, round_no: int) -> PublicMove:
    """A replayed move as the packets list it: its public text, and the host's if it made it."""
    return PublicMove(round=round_no, n=step.n, seat=step.seat, text=str(parse_move(step.text).public()),
                      by="host" if step.by == HOST else None, why=step.why)


def _plain(obj: Any) -> Any:
    """JSON-normalised (typed documents, tuples and lists compare alike)."""
    return msgspec.json.decode(msgspec.json.encode(obj))


def expected_part(state: RoundState, seat: str, events: list[Event] | None) -> dict[str, Any]:
    part = _plain(seat_part(state, seat, events or []))
    if events is None:  # not known here (the events that dealt this round are the last round's)
        del part["events"]
    return part


@dataclass
class PacketCheck:
    """Checks the packets of one round; faults and passed checks go into the audit's Report."""

    report: Any
    game: str
    round: int
    host_key: str
    secret: bytes
    key_at: Keys
    handovers: list[HandoverRecord] = field(default_factory=list)
    seat: tuple[str, Identity] | None = None

    def fault(self, seq: int, check: str, message: Text) -> None:
        self.report.fault_at_packet(seq, check, message)

    def run(self, replay: Replay, deal: int, blocks: dict[int, Signed[Packet]], game_over: bool) -> None:
        """`replay`: the round's moves replayed; `deal`: the packet showing the deal; `blocks`:
        the packets found, by number, as read (their signatures are checked here)."""
        steps = replay.steps
        # what dealing the round caused: nothing in round 1; in a later round, events of the
        # round before (not known here)
        dealt: list[Event] | None = [] if self.round == 1 else None
        if not blocks:
            self.report.notes.append(msg("no packet files of round {round} in the source: what the host told the "
                                       "table in its packets was not checked", round=self.round))
            return
        closing = steps[-1].answered + 1 if steps else deal
        missing = []
        for seq in range(deal, closing + 1):
            i = sum(1 for st in steps if st.answered < seq)  # the moves this packet shows made
            block = blocks.get(seq)
            if block is None:
                missing.append(seq)
                continue
            doc = self._packet(seq, block)
            if doc is None:
                continue
            state = replay.state(i)
            if seq == closing:
                self._closing(seq, doc, state, game_over)
            else:
                self._table(seq, doc, state, i, dealt_here=seq == deal)
            moved = [st for st in steps if st.answered == seq - 1]  # what happened since the packet before
            if seq != deal or self.round == 1:  # a later round's deal packet closed the round before
                self._moves(seq, doc, moved, steps)
            # A packet with no move (a seat handover) seals the same table with no events.
            events = (steps[i - 1].events if i else dealt) if moved or seq == deal else []
            self._part(seq, doc, state, events, seq == closing and not game_over)
        if missing:
            self.report.notes.append(msg("packets {seqs} of round {round} are not in the source: what the host told "
                                       "the table in them was not checked", seqs=ranges(missing), round=self.round))

    def _packet(self, seq: int, packet: Signed[Packet]) -> Packet | None:
        try:
            check_signature(packet)
        except PbemError as exc:
            self.fault(seq, PACKET, msg("the packet is unusable: {error}", error=exc))
            return None
        if packet.signer.encode() != self.host_key:
            self.fault(seq, PACKET, msg("the packet is not signed by the game's host"))
            return None
        if packet.game != self.game or packet.doc.seq != seq:
            self.fault(seq, PACKET, msg("the packet is packet {seq} of game {game}", seq=packet.doc.seq,
                                        game=packet.game))
            return None
        return packet.doc

    def _table(self, seq: int, doc: Packet, state: RoundState, i: int, dealt_here: bool) -> None:
        """A packet during the round: its phase, number, whose turn, deadline and public table
        (`dealt_here`: the packet that showed the deal, in rounds 2 and 3 the one closing the
        round before)."""
        want_phase = "round-over" if dealt_here and self.round > 1 else "playing"
        wrong: list[Msg] = []
        if doc.phase != want_phase:
            wrong.append(_phase(doc.phase, want_phase))
        if doc.round != self.round:
            wrong.append(msg("it says round {said}, not {round}", said=doc.round, round=self.round))
        if doc.to_move != state.player:
            wrong.append(msg("it says {said} is to move, but it is {player}", said=doc.to_move, player=state.player))
        if doc.deadline is not None and doc.deadline.seat != state.player:
            wrong.append(msg("its deadline is {said}'s, but {player} is to move", said=doc.deadline.seat,
                           player=state.player))
        wrong += _differences(msg("the public table"), _plain(doc.public), _plain(dump(view(state, None))))
        self._say(seq, "table", wrong, msg("after move {n}", n=i) if i else msg("at the deal"))

    def _closing(self, seq: int, doc: Packet, final: RoundState, game_over: bool) -> None:
        """The packet that ends the round: its result (winners, payout, gold...) and standings."""
        wrong: list[Msg] = []
        want_phase = "game-over" if game_over else "round-over"
        if doc.phase != want_phase:
            wrong.append(_phase(doc.phase, want_phase))
        expected = _plain(round_result(final, self.secret))
        if doc.result is None:
            wrong.append(msg("it holds no result of the round"))
        else:
            wrong += _differences(msg("the result"), _plain(doc.result), expected)
        if game_over:
            standings = {"gold": final.gold, "winners": standings_winners(final.gold)}
            wrong += _differences(msg("the standings"), _plain(doc.standings), _plain(standings))
            wrong += _differences(msg("the public table"), _plain(doc.public), _plain(dump(view(final, None))))
        elif doc.round != self.round + 1:
            wrong.append(msg("it says round {said}, not {round} (the next round's deal)", said=doc.round,
                           round=self.round + 1))
        self._say(seq, "result", wrong, msg("closing the round"))

    def _moves(self, seq: int, doc: Packet, moved: list[Step], steps: list[Step]) -> None:
        """The moves and public events the packet reports (who made each: the seat, or the host
        for it), its list of recent moves, and the seat handovers so far."""
        wrong = _differences(msg("the moves"), _plain(doc.moves), _plain([public_move(st, self.round) for st in moved]))
        caused = moved[-1].events if moved else []
        wrong += _differences(msg("the events"), _plain(doc.events), _plain(events_for(caused, None)))
        by_n = {st.n: st for st in steps}
        for m in doc.recent or []:
            if m.round != self.round:
                continue  # a move of an earlier round: that round's audit has it
            st = by_n.get(m.n)
            if st is None or st.answered >= seq:
                wrong.append(msg("its recent moves list move {n}, which was not made before this packet", n=m.n))
                continue
            expected = {**_plain(public_move(st, self.round)), "seq": st.answered}
            wrong += _differences(msg("recent move {n}", n=m.n), _plain(m), expected)
        handed = [h for h in self.handovers if h.at <= seq]
        if (doc.handovers or []) != handed:
            wrong.append(msg("it lists {said} seat handovers, the archive {n} by then", said=len(doc.handovers or []),
                           n=len(handed)))
        now = next((h.seat for h in handed if h.at == seq), None)
        if doc.handover != now:
            wrong.append(msg("it says {said} was handed over here, the archive {seat}", said=doc.handover or msg("no seat"),
                           seat=now or msg("none")))
        self._say(seq, "moves", wrong, msg("after move {n}", n=moved[-1].n) if moved else msg("with no move"))

    def _part(self, seq: int, doc: Packet, state: RoundState, events: list[Event] | None, closing_round: bool) -> None:
        """The seat's sealed part: its role, hand, knowledge and private events."""
        if self.seat is None:
            return
        name, identity = self.seat
        if self.key_at(name, seq) != identity.public.encode():
            return  # the seat was held by another key at this packet
        sealed = doc.parts.get(name)
        if sealed is None:
            self.fault(seq, PART, msg("the packet holds no part for {seat}", seat=name))
            return
        try:
            part = open_as(Part, sealed, identity, seal_info(self.game, seq, HOST, name, "part"))
        except PbemError as exc:
            self.fault(seq, PART, msg("{seat}'s part does not open: {error}", seat=name, error=exc))
            return
        # The part of the packet closing a round shows the next round's hand; here only its
        # events belong to this round (the next round's audit checks the rest as its deal).
        expected = expected_part(state, name, events)
        if closing_round:
            expected = {k: v for k, v in expected.items() if k == "events"}
        got = {k: v for k, v in _plain(part).items() if k in expected}
        wrong = _differences(msg("what {seat} was told", seat=name), got, expected)
        self._say(seq, "part", wrong, msg("in {seat}'s sealed part", seat=name))
        if not wrong:
            self.report.passed("part")

    def _say(self, seq: int, check: str, wrong: list[Msg], where: Msg) -> None:
        if wrong:
            self.fault(seq, check, msg("{where}, the packet differs from the replay: {differences}", where=where,
                                     differences=listed(wrong, how="clauses")))
        else:
            self.report.passed(f"packet-{check}")


def _differences(what: Msg, got: Any, expected: Any) -> list[Msg]:
    """Which keys differ, with the values where they are short (a goal, a winner list...)."""
    if got == expected:
        return []
    if isinstance(got, dict) and isinstance(expected, dict):
        out = []
        for key in sorted(set(got) | set(expected)):
            g, e = got.get(key), expected.get(key)
            if g == e:
                continue
            if isinstance(g, dict) and isinstance(e, dict):
                inner = sorted(k for k in set(g) | set(e) if g.get(k) != e.get(k))
                out.append(msg("{what}: {key} ({keys})", what=what, key=key, keys=", ".join(map(str, inner))))
            else:
                out.append(msg("{what}: {key} is {got}, the replay has {expected}", what=what, key=key, got=_short(g),
                             expected=_short(e)))
        return out
    return [msg("{what} is {got}, the replay has {expected}", what=what, got=_short(got), expected=_short(expected))]


def _phase(said: str, want: str) -> Msg:
    return msg("its phase is {said}, not {want}", said=repr(said), want=repr(want))


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."
