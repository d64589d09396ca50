"""The host (referee): creates a game, takes join and move files, deals, publishes packets.

Each public function is one transaction: it reads the head, checks the input against it,
changes the state and writes the next packet row, or raises and changes nothing. Packet
files are written after the commit from the stored rows, so a crash between the two loses
nothing: `pbem packet` (or the next command) writes them again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from engine.catalog import RULESETS, Ruleset, is_ruleset
from engine.dealer import SeededDealer
from engine.events import Event
from engine.game import standings_winners
from engine.position import dump, load
from engine.rules import apply as apply_move
from engine.rules import check as check_move
from engine.state import OPTIONS, OVER, PLAYER_RANGE, ROUNDS_PER_GAME, RoundState
from engine.views import events_for, secret_events, view
from pbem.errors import BadPacket, BadSignature, Conflict, StaleMove, UsageError
from pbem.host import timekeeper
from pbem.host.clock import REAL, Clock, stamp
from pbem.host.store import (
    GameRow,
    JoinRow,
    MoveRow,
    PacketRow,
    RoundRow,
    SeatRow,
    open_engine,
    the_game,
    transaction,
)
from pbem.names import HOST, check_game_name, check_seat_name
from pbem.protocol import fairness
from pbem.protocol.crypto import Identity, PublicKey
from pbem.protocol.documents import (
    Archive,
    ArchivedMove,
    Carried,
    HandoverRecord,
    HostParty,
    Invitation,
    Join,
    Link,
    Move,
    Packet,
    Part,
    Party,
    PublicMove,
    Result,
    SealedMove,
    Signed,
    Standings,
    b64,
    move_commitment,
    open_as,
    open_json,
    read_blocks,
    seal_info,
    seal_json,
    sign,
    to_json,
    unb64,
)
from pbem.ui import when
from pbem.ui.words import article, join, t


@dataclass
class Outcome:
    """What happened to one input block, in a line a person can read."""

    kind: str  # joined, dealt, applied, duplicate
    message: str
    seq: int | None = None


def _archived(m: MoveRow, sealed: dict[str, str]) -> ArchivedMove:
    """A stored move as the archive lists it (`sealed`: its text and nonce, sealed by this host)."""
    why = timekeeper.host_made(m.envelope)
    return ArchivedMove(n=m.n, seat=m.seat, text=sealed["text"], nonce=sealed["nonce"], envelope=b64(m.envelope),
                        by=HOST if why else None, why=why)


def seat_part(state: RoundState, seat: str, events: list[Event]) -> Part:
    """What a packet seals to one seat (docs/protocol.md, "Packet"); audits rebuild it too."""
    return Part(seat=seat, role=state.role(seat),
                hand=dump(view(state, None))["hands"][seat] if state.phase != "playing" else sorted(state.hands[seat]),
                knowledge=state.knowledge.get(seat, []),
                events=cast("list[dict[str, Any]]", secret_events(events, seat)))


def round_result(state: RoundState, secret: bytes) -> Result:
    """The `result` of the packet that closes a round; audits rebuild it from the replay."""
    return Result(round=state.round_no, secret=secret.hex(), finder=state.finder, winners=state.winners,
                  payout=state.payout, gold=state.gold, next_start=state.next_start, final=dump(state))


# --- creating a game ------------------------------------------------------------------------


def check_new_game(path: Path, name: str, ruleset: str, seats: list[tuple[str, PublicKey]], options: list[str]) -> Ruleset:
    """What `game new` refuses, for every kind of host; the ruleset, checked."""
    check_game_name(name)
    if not is_ruleset(ruleset):
        raise UsageError(f"unknown ruleset {ruleset!r}", hint=f"use one of: {', '.join(RULESETS)}")
    lo, hi = PLAYER_RANGE[ruleset]
    if not lo <= len(seats) <= hi:
        raise UsageError(f"{ruleset} is played by {lo}-{hi} players, not {len(seats)}")
    names = [n for n, _ in seats]
    for n in names:
        check_seat_name(n)
    if len(set(names)) != len(names):
        raise UsageError("two seats have the same name")
    if len({k.encode() for _, k in seats}) != len(seats):
        raise UsageError("two seats have the same public key")
    bad = set(options) - set(OPTIONS)
    if bad:
        raise UsageError(f"unknown option {sorted(bad)[0]!r}", hint=f"options: {', '.join(OPTIONS)}")
    if path.exists():
        raise UsageError(f"{str(path)!r} already exists", hint="choose another game name or --db")
    return ruleset


def create_game(
    path: Path,
    name: str,
    host: Identity,
    ruleset: str,
    seats: list[tuple[str, PublicKey]],
    options: list[str],
    emails: dict[str, str] | None = None,
    timing: dict[str, Any] | None = None,
    clock: Clock = REAL,
) -> Signed:
    ruleset = check_new_game(path, name, ruleset, seats, options)
    game_id = f"{name}-{os.urandom(4).hex()}"
    secrets = fairness.new_secrets(ROUNDS_PER_GAME)
    commitments = [fairness.commitment(game_id, k + 1, s) for k, s in enumerate(secrets)]
    invitation = sign(Invitation(game=game_id, name=name, ruleset=ruleset, options=sorted(options),
                                 host=HostParty(name=host.name, key=host.public.encode()),
                                 seats=[Party(name=n, key=k.encode()) for n, k in seats],
                                 commitments=commitments, created=stamp(clock.now())), host)
    engine = open_engine(path, create=True)
    with transaction(engine) as s:
        s.add(
            GameRow(
                id=game_id,
                name=name,
                ruleset=ruleset,
                options=json.dumps(sorted(options)),
                host_name=host.name,
                host_key=host.public.encode(),
                invitation=invitation.armored(),
                invitation_hash=invitation.hash,
                commitments=json.dumps(commitments),
                secrets_sealed=seal_json([x.hex() for x in secrets], host.public, _host_info(game_id, "secrets"),
                                          pad="secrets"),
                head=invitation.hash,
                config=json.dumps({"emails": emails or {}, **({"timing": timing} if timing else {})}),
            )
        )
        for i, (n, k) in enumerate(seats):
            s.add(SeatRow(game_id=game_id, idx=i, name=n, key=k.encode(), email=(emails or {}).get(n)))
    engine.dispose()
    return invitation


def _host_info(game_id: str, purpose: str) -> bytes:
    return seal_info(game_id, 0, HOST, HOST, purpose)


# --- the host at work -----------------------------------------------------------------------


class Host:
    def __init__(self, path: Path, identity: Identity | None = None, clock: Clock = REAL) -> None:
        self.path = path
        self.engine: Engine = open_engine(path)
        self.identity = identity
        self.clock = clock

    def now(self) -> str:
        return stamp(self.clock.now())

    def close(self) -> None:
        self.engine.dispose()

    def _me(self, game: GameRow) -> Identity:
        if self.identity is None:
            raise UsageError("this command needs the host's key")
        if self.identity.public.encode() != game.host_key:
            raise BadSignature(f"key {self.identity.name!r} is not the host key of game {game.id}",
                               hint=f"the host is {game.host_name!r}")
        return self.identity

    # queries (no key needed)

    def game_id(self) -> str:
        with Session(self.engine) as s:
            return the_game(s).id

    def host_name(self) -> str:
        """The name of the host's key, as given to `game new --host`."""
        with Session(self.engine) as s:
            return the_game(s).host_name

    def status(self) -> dict[str, Any]:
        with Session(self.engine) as s:
            g = the_game(s)
            public = json.loads(g.public)
            return {
                **timekeeper.status_extras(g),
                "game": g.id,
                "name": g.name,
                "ruleset": g.ruleset,
                "options": g.option_list(),
                "status": g.status,
                "round": g.round_no,
                "seq": g.seq,
                "to_move": public.get("to_move") if g.status == "playing" else None,
                "gold": public.get("gold", {}),
                "seats": [
                    {"name": st.name, "joined": st.joined_at is not None, "last_activity": st.last_activity,
                     "email": st.email, "fingerprint": PublicKey.decode(st.key).fingerprint()}
                    for st in g.seats
                ],
            }

    def packets(self, since: int = 0) -> list[tuple[int, str]]:
        with Session(self.engine) as s:
            rows = s.scalars(select(PacketRow).where(PacketRow.seq > since).order_by(PacketRow.seq))
            return [(r.seq, r.armored) for r in rows]

    def invitation(self) -> str:
        with Session(self.engine) as s:
            return the_game(s).invitation

    def config(self) -> dict[str, Any]:
        """The game's settings (emails, SMTP settings without password, mail progress)."""
        with Session(self.engine) as s:
            return the_game(s).config_dict()

    def set_config(self, **changes: Any) -> dict[str, Any]:
        """Change top-level config keys in one transaction (None removes a key)."""
        with transaction(self.engine) as s:
            game = the_game(s)
            config = game.config_dict()
            for key, value in changes.items():
                if value is None:
                    config.pop(key, None)
                else:
                    config[key] = value
            game.config = json.dumps(config, sort_keys=True)
            return config

    def set_email(self, name: str, address: str | None) -> None:
        """Set (or with None remove) the mail address of a seat or of the host ('host')."""
        with transaction(self.engine) as s:
            game = the_game(s)
            seat = next((st for st in game.seats if st.name == name), None)
            if seat is None and name != HOST:
                raise UsageError(f"no seat {name!r} in game {game.id}",
                                 hint=f"seats: {', '.join(st.name for st in game.seats)}; or 'host'")
            if seat is not None:
                seat.email = address
            config = game.config_dict()
            emails = dict(config.get("emails") or {})
            if address is None:
                emails.pop(name, None)
            else:
                emails[name] = address
            config["emails"] = emails
            game.config = json.dumps(config, sort_keys=True)

    # changes (one transaction each)

    def accept(self, block: Signed[Any]) -> Outcome:
        """Apply one join, move, request or handover block, or refuse it without changing anything."""
        with transaction(self.engine) as s:
            game = the_game(s)
            if block.game != game.id:
                raise BadPacket(t("this {kind} is for game {other}, not {game}", kind=block.kind, other=repr(block.game),
                                  game=repr(game.id)), hint=t("a file of another game goes to that game's host"))
            if isinstance(block.doc, Join):
                return self._join(s, game, block)
            if isinstance(block.doc, Move):
                return self._move(s, game, block)
            if block.kind == "request":
                return timekeeper.request(self, s, game, block)
            if block.kind == "handover":
                return timekeeper.handover(self, s, game, block)
            raise BadPacket(t("a host takes join, move, request and handover files, not {a_kind}",
                              a_kind=article(block.kind)))

    def tick(self) -> list[Outcome]:
        """Act on the clock: reminders, late notices, timeouts (pbem/host/timekeeper.py)."""
        return timekeeper.tick(self)

    def _seat(self, game: GameRow, block: Signed[Any]) -> SeatRow:
        name = block.doc.seat
        seat = next((st for st in game.seats if st.name == name), None)
        if seat is None:
            raise BadPacket(f"no seat {name!r} in game {game.id}")
        if block.signer.encode() != seat.key:
            timekeeper.refuse_former_key(game, seat, block)
            raise BadSignature(f"{block.kind} for seat {name!r} is signed by key {block.signer.fingerprint()}, not the seat's key")
        return seat

    def _join(self, s: Session, game: GameRow, block: Signed[Join]) -> Outcome:
        seat = self._seat(game, block)
        if s.get(JoinRow, block.hash) is not None:
            return Outcome("duplicate", t("{seat}'s join was already applied; nothing changed", seat=seat.name))
        if block.doc.invitation != game.invitation_hash:
            raise BadPacket(f"{seat.name}'s join answers another invitation")
        if seat.joined_at is not None:
            raise Conflict(f"{seat.name} has already joined with a different join file")
        contribution = unb64(block.doc.contribution, "contribution")
        if len(contribution) != fairness.CONTRIBUTION_BYTES:
            raise BadPacket(f"{seat.name}'s contribution has {len(contribution)} bytes, not {fairness.CONTRIBUTION_BYTES}")
        seat.contribution = b64(contribution)
        seat.joined_at = seat.last_activity = self.now()
        s.add(JoinRow(file_hash=block.hash, game_id=game.id, seat=seat.name, envelope=block.payload))
        waiting = [st.name for st in game.seats if st.joined_at is None]
        if waiting:
            return Outcome("joined", t("{seat} joined; waiting for {waiting}", seat=seat.name, waiting=join(waiting)))
        state = self._deal(s, game, 1, first_seat=0, gold=None, nuggets=None)
        seq = self._publish(s, game, state, moves=[], events=[])
        return Outcome("dealt", t("{seat} joined; everyone is in: round 1 dealt, packet {seq}", seat=seat.name, seq=seq), seq)

    def _secrets(self, game: GameRow) -> list[bytes]:
        return [bytes.fromhex(x) for x in open_json(game.secrets_sealed, self._me(game), _host_info(game.id, "secrets"))]

    def _deal(self, s: Session, game: GameRow, round_no: int, *, first_seat: int, gold, nuggets) -> RoundState:
        secret = self._secrets(game)[round_no - 1]
        contributions = [unb64(st.contribution, "contribution") for st in game.seats]
        dealer = SeededDealer(fairness.round_chance(game.id, round_no, secret, contributions))
        ruleset = game.ruleset
        if not is_ruleset(ruleset):
            raise BadPacket(f"the game's ruleset {ruleset!r} is unknown")
        state = dealer.deal(
            ruleset,
            tuple(st.name for st in game.seats),
            options=frozenset(game.option_list()),
            round_no=round_no,
            first_seat=first_seat,
            gold=gold,
            nuggets=nuggets,
        )
        game.status = "playing"
        game.round_no = round_no
        game.move_no = 0
        carried = {"gold": gold, "nuggets": nuggets, "first": state.players[first_seat]} if round_no > 1 else {}
        s.add(RoundRow(game_id=game.id, round_no=round_no, first_seq=game.seq + 1,
                       start_state_sealed=self._seal_state(game, state), carried=json.dumps(carried)))
        return state

    def _seal_state(self, game: GameRow, state: RoundState) -> str:
        return seal_json(dump(state), self._me(game).public, _host_info(game.id, "state"), pad="state")

    def load_state(self, game: GameRow) -> RoundState:
        if game.state_sealed is None:
            raise UsageError("no round has been dealt yet")
        return load(open_json(game.state_sealed, self._me(game), _host_info(game.id, "state")))

    def _move(self, s: Session, game: GameRow, block: Signed[Move]) -> Outcome:
        seat = self._seat(game, block)
        if s.scalars(select(MoveRow).where(MoveRow.file_hash == block.hash)).first() is not None:
            return Outcome("duplicate", t("this move by {seat} was already applied; nothing changed", seat=seat.name))
        if game.status != "playing":
            raise StaleMove(f"game {game.id} is {game.status}; it takes no moves now")
        if block.doc.by is not None:
            raise BadPacket(f"{seat.name}'s move says it was made by the {block.doc.by}; only the host marks its own moves")
        answered = block.doc.seq
        if answered != game.seq or block.doc.packet != game.head:
            raise StaleMove(f"{seat.name}'s move answers packet {answered}, but the game is at packet {game.seq}",
                            hint="show the latest packet and move again")
        state = self.load_state(game)
        if state.player != seat.name:
            raise StaleMove(f"it is {state.player}'s turn, not {seat.name}'s")
        info = seal_info(game.id, game.seq, seat.name, HOST, "move")
        sealed = open_as(SealedMove, block.doc.sealed, self._me(game), info)
        text = sealed.move
        nonce = unb64(sealed.nonce, "move nonce")
        if move_commitment(nonce, text) != block.doc.commit:
            raise BadPacket(f"{seat.name}'s move file does not match its commitment")
        return self._apply(s, game, seat, state, text, nonce, block)

    def play_for(self, s: Session, game: GameRow, seat: SeatRow, text: str, why: str) -> Outcome:
        """The host plays `text` for `seat` (timeout policy), signed as the host's own move
        file, marked `by: host` so that packet, archive, audit and replay all say so."""
        me = self._me(game)
        state = self.load_state(game)
        text = str(check_move(state, text))
        nonce = os.urandom(16)
        info = seal_info(game.id, game.seq, seat.name, HOST, "move")
        block = sign(Move(game=game.id, seat=seat.name, seq=game.seq, packet=game.head,
                          commit=move_commitment(nonce, text), by=HOST, why=why,
                          sealed=seal_json(SealedMove(move=text, nonce=b64(nonce)), me.public, info, pad="move")), me)
        return self._apply(s, game, seat, state, text, nonce, block, by=why)

    def _apply(self, s: Session, game: GameRow, seat: SeatRow, state: RoundState, text: str, nonce: bytes,
               block: Signed[Move], by: str | None = None) -> Outcome:
        move = check_move(state, text)  # the canonical, resolved move
        if str(move) != text:
            raise BadPacket(f"{seat.name}'s move {text!r} is not in canonical form", hint="write moves with 'pbem move'")
        events = apply_move(state, move)
        game.move_no += 1
        s.add(MoveRow(game_id=game.id, round_no=game.round_no, n=game.move_no, seat=seat.name,
                      public_text=str(move.public()),
                      text_sealed=seal_json({"text": text, "nonce": b64(nonce)}, self._me(game).public,
                                            _host_info(game.id, "move"), pad="move"),
                      envelope=block.payload, file_hash=block.hash, answered_seq=game.seq,
                      applied_at=self.now()))
        moves = [PublicMove(round=game.round_no, n=game.move_no, seat=seat.name, text=str(move.public()),
                            by=HOST if by else None, why=by)]
        if by is None:
            seat.last_activity = self.now()
            timekeeper.moved(self, s, game, seat.name)
        result = None
        ended = state
        if state.phase == OVER:
            result, state = self._end_round(s, game, state)
        seq = self._publish(s, game, state, moves=moves, events=events, result=result)
        if result is not None:
            self._archive(s, game, ended)
        if by:
            said = t("applied the host's move for {seat} ({why}): {move}; packet {seq}", seat=seat.name,
                     why=when.reason(by), move=move.public(), seq=seq)
        else:
            said = t("applied {seat}'s move: {move}; packet {seq}", seat=seat.name, move=move.public(), seq=seq)
        if result is not None:  # the host's apply and the daemon's log say when a round or the game ends
            said += "; " + t("round {n} is over: winners {winners}", n=result.round,
                             winners=join(list(result.winners)) if result.winners else t("nobody"))
        if game.status == "over":
            said += "; " + t("the game is over: {winners} won", winners=join(standings_winners(ended.gold)))
        return Outcome("applied", said, seq)

    def _end_round(self, s: Session, game: GameRow, state: RoundState) -> tuple[Result, RoundState]:
        secret = self._secrets(game)[state.round_no - 1]
        result = round_result(state, secret)
        row = s.get(RoundRow, (game.id, state.round_no))
        assert row is not None
        row.last_seq = game.seq + 1
        row.secret = secret.hex()
        row.result = to_json(result).decode()
        if state.round_no >= ROUNDS_PER_GAME:
            game.status = "over"
            return result, state
        nxt = self._deal(s, game, state.round_no + 1, first_seat=state.players.index(state.next_start or state.players[0]),
                         gold=state.gold, nuggets=state.nuggets)
        return result, nxt

    def _archive(self, s: Session, game: GameRow, final: RoundState) -> Signed:
        """Sign the ended round's archive (docs/protocol.md) and attach it to the last packet."""
        me = self._me(game)
        row = s.get(RoundRow, (game.id, final.round_no))
        assert row is not None and row.secret is not None and row.last_seq is not None
        moves = s.scalars(select(MoveRow).where(MoveRow.game_id == game.id, MoveRow.round_no == final.round_no)
                          .order_by(MoveRow.n))
        packets = s.scalars(select(PacketRow).where(PacketRow.game_id == game.id,
                                                    PacketRow.seq >= row.first_seq - 1,
                                                    PacketRow.seq <= row.last_seq).order_by(PacketRow.seq))
        chain = []
        for p in packets:
            prev = read_blocks(p.armored)[0].doc.prev
            chain.append(Link(seq=p.seq, hash=p.hash, prev=prev))
        joins = s.scalars(select(JoinRow).where(JoinRow.game_id == game.id))
        carried = json.loads(row.carried)
        archive = sign(Archive(
            game=game.id,
            round=final.round_no,
            invitation=game.invitation,
            joins=sorted(b64(j.envelope) for j in joins),
            secret=row.secret,
            carried=Carried(**carried) if carried else Carried(),
            start=open_json(row.start_state_sealed, me, _host_info(game.id, "state")),
            moves=[_archived(m, open_json(m.text_sealed, me, _host_info(game.id, "move"))) for m in moves],
            chain=chain,
            handovers=timekeeper.archive_handovers(game),
            final=dump(final),
        ), me)
        row.archive = archive.armored()
        last = s.get(PacketRow, (game.id, row.last_seq))
        assert last is not None
        last.armored = last.armored + archive.armored()
        return archive

    def archives(self) -> dict[int, str]:
        with Session(self.engine) as s:
            rows = s.scalars(select(RoundRow).where(RoundRow.archive.is_not(None)).order_by(RoundRow.round_no))
            return {r.round_no: r.archive for r in rows if r.archive}

    def _publish(self, s: Session, game: GameRow, state: RoundState, *, moves: list[PublicMove], events: list,
                 result: Result | None = None, handover: HandoverRecord | None = None) -> int:
        me = self._me(game)
        seq = game.seq + 1
        public = dump(view(state, None))
        parts: dict[str, str] = {}
        for st in game.seats:
            part = seat_part(state, st.name, events)
            parts[st.name] = seal_json(part, PublicKey.decode(st.key), seal_info(game.id, seq, HOST, st.name, "part"),
                                       pad="part")
            st.part_sealed = parts[st.name]
        over = game.status == "over"
        to_move = None if over else state.player
        doc = Packet(game=game.id, seq=seq, prev=game.head, round=state.round_no,
                     phase="game-over" if over else "round-over" if result else "playing",
                     to_move=to_move, public=public, moves=moves,
                     events=cast("list[dict[str, Any]]", events_for(events, None)), parts=parts, result=result,
                     standings=Standings(gold=state.gold, winners=standings_winners(state.gold)) if over else None,
                     **timekeeper.packet_extras(self, s, game, seq, to_move, handover))
        packet = sign(doc, me)
        game.seq = seq
        game.head = packet.hash
        game.state_sealed = self._seal_state(game, state)
        game.public = json.dumps({**public, "to_move": doc.to_move})
        s.add(PacketRow(game_id=game.id, seq=seq, hash=packet.hash, round_no=state.round_no, armored=packet.armored(),
                        created_at=self.now()))
        return seq
