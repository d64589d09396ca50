"""The host (referee): one game of a store, taking join, move, request and handover files.

A `Host` opens each change as one transaction (its row locked) that pbem.host.moving,
round_store and timekeeper work on: it writes the next packet row, or raises and changes
nothing. Publishers (pbem.host.publish) deliver packets after the commit and mark how far
they got, so a crash between the two loses nothing. Games are made by pbem.host.creation.

Per move the host does only that move's work: the game's fixed facts (seats, decoded keys)
and the round secrets are read once per `Host`; the live state and the round so far (as its
archive lists it: `RoundLog`) are kept in memory from one move to the next while the game's
head is unchanged, so they are read and opened only when another process moved the game on;
each packet's `prev` and each move's `why` are stored, so a round's archive reads only the
hashes of its chain and no stored move file is parsed again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar, cast

from sqlalchemy import bindparam, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import BindParameter

from engine.position import load
from engine.state import RoundState
from engine.views import load_view
from pbem.errors import BadPacket, BadSignature, StaleMove, UsageError, kind_word, msg
from pbem.host import delivery, moving, requests, timekeeper
from pbem.host import talk as table_talk
from pbem.host.change import Facts, GameRow, Seat
from pbem.host.clock import REAL, Clock, stamp
from pbem.host.creation import create_game as create_game  # where callers of the host find it
from pbem.host.creation import host_info, new_box_key, open_store
from pbem.host.deadlines import Timing
from pbem.host.game_change import GameChange
from pbem.host.interface import Closing, GameStatus, HostNotice, Outbox, Outcome, Release, TalkRelease
from pbem.host.memo import Kept, RoundLog
from pbem.host.settings import (
    MailMark,
    Settings,
    Standing,
    clock_next,
    encode,
    memo_of,
    replaced,
    settings_of,
    standing_of,
)
from pbem.host.store import Located, Store
from pbem.host.tables import GAME_ROW, PACKET_HASH, SEAT_ROWS, games, packets, rounds, seats
from pbem.host.tables import talk as talk_table
from pbem.names import HOST
from pbem.protocol.crypto import Identity, OwnBox, PublicKey
from pbem.protocol.documents import (
    Handover,
    Join,
    Packet,
    RecentMove,
    SeatMove,
    Signed,
    Talk,
    open_json,
    read_blocks,
    sign,
)

_Said = TypeVar("_Said")


# --- the host at work -----------------------------------------------------------------------


# The statements of the hot path, built once: building a statement costs more than running it.
_GAME: BindParameter[str] = bindparam("b_game")
_HEAD = select(games.c.seq, games.c.status).where(games.c.id == _GAME)
_SET_GAME = update(games).where(games.c.id == _GAME)
_SEAT_EMAILS = select(seats.c.name, seats.c.email).where(seats.c.game_id == _GAME).order_by(seats.c.idx)


class Host(Closing):
    """One game of a store, as its referee. A context manager: `with Host(...) as host:`.

    `store` is a Store, a URL or a SQLite path (then the Host opens it and closes it);
    `game` is the game's name or id, None for the only game of the store, or the game as the
    store located it (not looked up again). Every time it
    stamps or acts on (deadlines) comes from `clock` (pbem/host/clock.py).
    """

    def __init__(self, store: Store | Path | str, identity: Identity | None = None, clock: Clock = REAL, *,
                 game: str | Located | None = None) -> None:
        self.store, self._owns_store = open_store(store)
        try:
            # its own read, before this one: one connection, not two at once
            game_id, trustless = game if isinstance(game, Located) else self.store.locate(game)
            if trustless:
                raise UsageError(msg("game {game} is a trustless game: its host is blind", game=repr(game)))
            with self.store.read() as c:
                self.facts = self._read_facts(c, game_id)
        except BaseException:
            self.close()
            raise
        self.identity = identity
        self.clock = clock
        self._secrets: list[bytes] | None = None
        self._checked_key = False
        self._box: tuple[str | None, OwnBox] | None = None  # (games.box_key, its box), opened once
        self._kept: Kept | None = None  # what our last change left, at the head it left (pbem.host.memo)
        self._here = Kept("")  # the change under way's: what it took of `_kept`, and its own

    def now(self) -> str:
        return stamp(self.clock.now())

    def close(self) -> None:
        if self._owns_store:
            self.store.close()

    def _read_facts(self, c: Connection, game_id: str) -> Facts:
        g = c.execute(GAME_ROW, {"b_game": game_id}).one()
        rows = c.execute(SEAT_ROWS, {"b_game": game_id}).all()
        return Facts(g.id, g.name, g.ruleset, tuple(json.loads(g.options)), g.host_name, g.host_key,
                     g.invitation, g.invitation_hash, tuple(Seat(r.idx, r.name, PublicKey.decode(r.key)) for r in rows),
                     _handovers(g.memo))

    def me(self) -> Identity:
        if self.identity is None:
            raise UsageError(msg("this command needs the host's key"))
        if not self._checked_key:
            if self.identity.public.encode() != self.facts.host_key:
                raise BadSignature(msg("key {name} is not the host key of game {game}", name=repr(self.identity.name),
                                     game=self.facts.id), hint=msg("the host is {name}", name=repr(self.facts.host_name)))
            self._checked_key = True
        return self.identity

    def own_box(self, sealed_key: str | None) -> OwnBox:
        """The host's own box of this game (its key as `games.box_key` holds it), opened once."""
        if self._box is None or self._box[0] != sealed_key:
            me = self.me()
            info = host_info(self.facts.id, "box key")
            key = None if sealed_key is None else bytes.fromhex(open_json(sealed_key, me, info))
            self._box = (sealed_key, OwnBox(key, me))
        return self._box[1]

    def sealing_box(self, g: GameRow) -> OwnBox:
        """The box to seal into in the change under way; a game made before it had a box key
        gets one now (written with the change)."""
        if g["box_key"] is None:
            g["box_key"] = new_box_key(self.facts.id, self.me().public)
        return self.own_box(g["box_key"])

    # queries (no key needed)

    @property
    def name(self) -> str:
        return self.facts.name

    @property
    def url(self) -> str:
        return self.store.url

    def game_id(self) -> str:
        return self.facts.id

    def host_name(self) -> str:
        """The name of the host's key, as given to `game new --host`."""
        return self.facts.host_name

    def version(self) -> int | None:
        return self.store.version()

    def head(self) -> tuple[int, str]:
        """(latest packet number, status): the cheap question a watch loop asks."""
        with self.store.read() as c:
            row = c.execute(_HEAD, {"b_game": self.facts.id}).one()
        return int(row.seq), str(row.status)

    def status(self) -> GameStatus:
        return self.store.status(self.facts.id)

    def seat_emails(self) -> list[tuple[str, str | None]]:
        """(seat, its mail address or None) in seat order: what mail needs of `status`."""
        with self.store.read() as c:
            return [(r.name, r.email) for r in c.execute(_SEAT_EMAILS, {"b_game": self.facts.id})]

    def packets(self, since: int = 0, until: int | None = None) -> list[tuple[int, str]]:
        """The armoured packets after `since` (up to `until`, if given), oldest first."""
        where = [packets.c.game_id == self.facts.id, packets.c.seq > since]
        if until is not None:
            where.append(packets.c.seq <= until)
        with self.store.read() as c:
            rows = c.execute(select(packets.c.seq, packets.c.armored).where(*where).order_by(packets.c.seq))
            return [(r.seq, r.armored) for r in rows]

    def packet(self, seq: int) -> str | None:
        with self.store.read() as c:
            return c.execute(select(packets.c.armored).where(packets.c.game_id == self.facts.id,
                                                             packets.c.seq == seq)).scalar()

    def public_view(self, seq: int) -> RoundState | None:
        armored = self.packet(seq)
        return None if armored is None else load_view(read_blocks(armored)[0].expect(Packet).doc.public)

    def invitation(self) -> str:
        return self.facts.invitation

    def settings(self) -> Settings:
        """How the game is run (pbem.host.settings.Settings)."""
        with self.store.read() as c:
            return settings_of(c.execute(select(games.c.settings).where(games.c.id == self.facts.id)).scalar_one())

    def standings(self) -> dict[str, Standing]:
        """Each seat's standing with the clock (missed deadlines, absent, resigned, away)."""
        with self.store.read() as c:
            return {r.name: standing_of(r) for r in c.execute(SEAT_ROWS, {"b_game": self.facts.id})}

    def set_settings(self, **changes: Any) -> Settings:
        """Change settings in one transaction (None: back to the default)."""
        return self.change_settings(lambda s: (replaced(s, **changes),) * 2)

    def change_settings(self, change: Callable[[Settings], tuple[Settings, _Said]]) -> _Said:
        """Read the settings and write `change`'s new ones back in one transaction (the game's
        row locked): `change(old) -> (new, what to return)`."""
        with self.store.write() as c:
            return self._change_settings(c, change)

    def _change_settings(self, c: Connection, change: Callable[[Settings], tuple[Settings, _Said]]) -> _Said:
        new, said = change(settings_of(self.store.lock_game(c, self.facts.id).settings))
        c.execute(_SET_GAME, {"b_game": self.facts.id, "settings": encode(new)})
        return said

    def set_email(self, name: str, address: str | None) -> None:
        """Set (or with None remove) the mail address of a seat (seats.email) or of the host
        ('host': its settings)."""
        f = self.facts
        if f.seat(name) is None and name != HOST:
            raise UsageError(msg("no seat {name} in game {game}", name=repr(name), game=f.id),
                             hint=msg("seats: {list}", list=", ".join(s.name for s in f.seats)) + msg("; or 'host'"))
        if name == HOST:
            self.change_settings(lambda s: (replaced(s, emails={**s.emails, HOST: address} if address else {}),) * 2)
            return
        with self.store.write() as c:
            self.store.lock_game(c, f.id)
            c.execute(update(seats).where(seats.c.game_id == f.id, seats.c.name == name).values(email=address))

    def archives(self) -> dict[int, str]:
        with self.store.read() as c:
            rows = c.execute(select(rounds.c.round_no, rounds.c.archive)
                             .where(rounds.c.game_id == self.facts.id, rounds.c.archive.is_not(None))
                             .order_by(rounds.c.round_no))
            return {r.round_no: r.archive for r in rows}

    def set_timing(self, timing: Timing) -> Timing:
        """Change the deadline rules; a game in play restarts the current packet's clock now."""
        with self._change() as ch:
            return timekeeper.set_timing(ch, timing)

    def pause(self) -> Outcome:
        """Pause the game: deadlines stop counting until `resume` (the host's key)."""
        with self._change() as ch:
            return requests.pause(ch)

    def resume(self) -> Outcome:
        """Resume a paused game: the time that was left is left again."""
        with self._change() as ch:
            return requests.resume(ch)

    def reseat_document(self, seat: str, key: PublicKey) -> Signed[Handover]:
        """The host's signed handover of `seat` to `key` (checked when applied)."""
        seq, _ = self.head()
        return sign(Handover(game=self.facts.id, seat=seat, key=key.encode(), seq=seq), self.me())

    def notices(self, after: int = 0) -> list[HostNotice]:
        """The host's signed notices of this game after notice `after`, oldest first."""
        with self.store.read() as c:
            return delivery.notices_after(c, self.facts.id, after)

    # publishing: what a channel has not delivered yet, and marking it delivered

    def delivered(self, channel: str) -> int:
        """The highest seq `channel` has delivered (0: the invitation), -1 for nothing yet."""
        with self.store.read() as c:
            return delivery.delivered(c, self.facts.id, channel)

    def releases(self, after: int) -> list[Release]:
        """The invitation (when after < 0) and every packet after `after`, in order."""
        out = [Release(0, self.invitation())] if after < 0 else []
        with self.store.read() as c:
            return out + delivery.releases(c, self.facts.id, after)

    def outbox(self, channel: str) -> Outbox:
        """What `channel` has not delivered yet, in one read (a daemon asks for every game it
        serves, before and after each change)."""
        return delivery.outbox(self.store, self.facts.id, channel, self.invitation)

    def mark_delivered(self, channel: str, seq: int, book: dict[str, MailMark] | None = None) -> None:
        """Raise `channel`'s mark to `seq` (never lower it: two daemons may race), and change
        the mail's book as the delivery changed it in the same transaction."""
        with self.store.write() as c:
            if book is None:
                delivery.raise_mark(c, self.facts.id, channel, seq)
                return
            self._change_settings(c, lambda s: (replaced(s, mail_book=book), None))
            delivery.set_mark(c, self.facts.id, channel, seq)

    # changes (one transaction each)

    @contextmanager
    def _change(self) -> Iterator[GameChange]:
        """One change of the game: its row locked and read as `g` (a dict the change edits),
        the edited columns written back, all in one transaction. What a change leaves (the
        state it published, the round so far, the last public moves) is kept for the next
        change, which uses it only if nobody else moved the game on (Kept.at: one rule)."""
        facts = self.facts
        kept, self._kept = self._kept, None
        try:
            with self.store.write() as c:
                g = cast(GameRow, dict(self.store.lock_game(c, facts.id)._mapping))
                here = self._here = Kept.at(kept, g["head"])
                before: dict[str, Any] = dict(g)
                if _handovers(g["memo"]) != facts.handovers:  # another process handed a seat over
                    self.facts = self._read_facts(c, facts.id)
                ch = GameChange(self, c, g)
                yield ch
                ch.commit()
                changed = {k: v for k, v in g.items() if before[k] != v}
                if changed:
                    c.execute(_SET_GAME, {**changed, "b_game": facts.id})
        except BaseException:  # e.g. a handover that did not commit: nothing of it is kept
            self.facts, self._here = facts, Kept("")
            raise
        if ch.made is not None:  # a packet published: what it left, at its head
            state, log = ch.made
            here = Kept(g["head"], state, log, here.recent)
        self._kept, self._here = here, Kept("")

    def kept_state(self, g: GameRow) -> RoundState:
        """The round's live state at `g`'s head: the one kept from our last change when nobody
        moved the game on since, else opened from the store. Taken, not shared: the change
        under way may fail half-way through changing it."""
        state, self._here.state = self._here.state, None
        return state if state is not None else self._open_state(g["box_key"], g["state_sealed"])

    def recent_window(self, c: Connection, g: GameRow) -> list[RecentMove]:
        """The game's last public moves (timekeeper.RECENT_LIMIT), oldest first, with the change
        under way's own: kept from our last change while nobody moved the game on, else read."""
        if self._here.recent is None:
            self._here.recent = timekeeper.read_recent(c, g)
        return self._here.recent

    def kept_recent(self) -> list[RecentMove] | None:
        """The last public moves as kept, if read in the change under way or kept current."""
        return self._here.recent

    def kept_log(self) -> RoundLog | None:
        """The round so far as kept from our last change, if nobody moved the game on since
        (taken, as the state is)."""
        log, self._here.log = self._here.log, None
        return log

    def accept(self, block: Signed[Any]) -> Outcome:
        """Apply one join, move, request or handover block, or refuse it without changing anything."""
        f = self.facts
        if block.game != f.id:
            raise BadPacket(msg("this {kind} is for game {other}, not {game}", kind=kind_word(block.kind), other=repr(block.game),
                              game=repr(f.id)), hint=msg("a file of another game goes to that game's host"))
        if block.kind not in ("join", "move", "request", "handover", "talk"):
            raise BadPacket(msg("a host takes join, move, request, handover and talk files, not {a_kind}",
                              a_kind=kind_word(block.kind, article=True)))
        with self._change() as ch:
            if isinstance(block.doc, Talk):
                return self._talk(ch, block)
            if isinstance(block.doc, Join):
                return moving.take_join(ch, block)
            if isinstance(block.doc, SeatMove):
                try:
                    return moving.take_move(ch, block)
                except StaleMove as exc:
                    # refused, but it says an absent seat is back: that is kept (the move is not)
                    back = timekeeper.back_by_move(ch, block)
                    if back is None:
                        raise
                    stale = StaleMove(exc.message + msg("clause sep") + back, hint=exc.hint)
            elif block.kind == "request":
                return requests.request(ch, block)
            else:
                return requests.handover(ch, block)
        raise stale

    def tick(self) -> list[Outcome]:
        """Act on the clock: everything due by now (reminders, late notices, absences, timeout
        moves: pbem/host/timekeeper.py), each step in its own change (a seat played for at once
        may be followed by another). A game with nothing on the clock is seen with one read,
        without a lock (a club host ticks every game on every pass)."""
        with self.store.read() as c:
            row = c.execute(timekeeper.CLOCK, {"b_game": self.facts.id}).one()

            def gone(seat: str) -> bool:
                st = c.execute(timekeeper.OUT, {"b_game": self.facts.id, "b_name": seat}).one()
                return st.absent is not None or bool(st.resigned)

            if not timekeeper.may_act(memo_of(row.memo), row.status, row.seq, gone):
                return []
        out: list[Outcome] = []
        for _ in range(timekeeper.MAX_ACTIONS):
            with self._change() as ch:
                step = timekeeper.tick_once(ch)
            out += step
            if not any(o.kind == "applied" for o in step):
                break
        return out

    def next_tick(self) -> datetime | None:
        """When `tick` next has something to do for the packet waiting (None: nothing on the clock)."""
        read = select(games.c.status, games.c.seq, games.c.memo, games.c.settings).where(games.c.id == self.facts.id)
        with self.store.read() as c:
            row = c.execute(read).one()
        memo = memo_of(row.memo)
        if not timekeeper.may_act(memo, row.status, row.seq, lambda seat: False):
            return None
        return clock_next(settings_of(row.settings).rules(), memo.clock, self.clock.now(), plays=True)

    def _talk(self, ch: GameChange, block: Signed[Talk]) -> Outcome:
        """A seat's line of table talk, kept to relay (pbem/host/talk.py); no packet comes of it."""
        ch.seat_of(block)
        answered = ch.c.execute(PACKET_HASH, {"b_game": self.facts.id, "b_seq": block.doc.seq}).scalar()
        return table_talk.take(ch.c, talk_table, {"game_id": self.facts.id}, block,
                               tuple(s.name for s in self.facts.seats), answered, self.now())

    def talk(self, after: int = 0) -> list[TalkRelease]:
        """The seats' lines of table talk after line `after`, in the order they were taken."""
        with self.store.read() as c:
            return table_talk.lines_after(c, talk_table, {"game_id": self.facts.id}, after)

    def round_secret(self, round_no: int) -> bytes:
        if self._secrets is None:
            sealed = select(games.c.secrets_sealed).where(games.c.id == self.facts.id)
            with self.store.read() as c:
                text = c.execute(sealed).scalar_one()
            self._secrets = [bytes.fromhex(x) for x in open_json(text, self.me(), host_info(self.facts.id, "secrets"))]
        return self._secrets[round_no - 1]

    def live_state(self) -> RoundState:
        """The true state of the round in play, every hand open (needs the host's key)."""
        with self.store.read() as c:
            row = c.execute(select(games.c.state_sealed, games.c.box_key).where(games.c.id == self.facts.id)).one()
        return self._open_state(row.box_key, row.state_sealed)

    def _open_state(self, box_key: str | None, sealed: str | None) -> RoundState:
        if sealed is None:
            raise UsageError(msg("no round has been dealt yet"))
        return load(open_json(sealed, self.own_box(box_key), host_info(self.facts.id, "state")))


def _handovers(memo: str) -> int:
    """How many seats of a game were handed to a new key (its memo's `handovers`)."""
    if '"handovers"' not in memo:  # the common case, without decoding the memo
        return 0
    return len(memo_of(memo).handovers)
