"""The blind host of a trustless game (docs/trustless.md): it orders, signs and relays, and
holds no secret of the game.

It keeps only public facts: the invitation, the joins, and the chain of packets it signed.
Each packet relays the seats' blocks the host accepted (the joins all at once in packet 1,
then one mental block a packet), says what the table waits for (`waiting`), and names the
packet before it, so every seat follows one chain and a host that shows two seats different
packets is caught. The host checks every block as a seat would (`PublicTable`: step, turn,
every proof), so a bad shuffle or token is refused at the door, not discovered later.

It is a `pbem.host.interface.GameHost`, as the referee of a classic game is: the commands,
the publishers and the automatic host serve both alike.
Storage: the store's trustless tables (pbem.host.store: trustless_games and the rows keyed by
its id; the chain is the game's whole state, beside the host's settings), on SQLite or
PostgreSQL as any game. Where the chain stands (status, round, what the table waits for, each
ended round's public result) is written beside it with each join and packet (blind_facts), and
a status is read from there (blind_status). Each accept is one transaction that locks the game's row (SQLite:
BEGIN IMMEDIATE; PostgreSQL: FOR UPDATE), so two hosts on one game take every block once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from sqlalchemy import Connection, bindparam, delete, func, insert, select
from sqlalchemy.sql.elements import BindParameter

from engine.state import RoundState
from pbem.errors import BadPacket, BadSignature, Conflict, UsageError, kind_word, listed, msg, notice_word, step_word
from pbem.host import blind_facts, blind_gone, blind_settings, blind_status
from pbem.host import talk as table_talk
from pbem.host.blind_file import check_no_seat_rules as check_no_seat_rules  # where callers of the host find them
from pbem.host.blind_file import check_timing
from pbem.host.blind_file import create_game as create_game
from pbem.host.clock import REAL, Clock, stamp
from pbem.host.creation import open_store
from pbem.host.deadlines import Timing
from pbem.host.interface import (
    Closing,
    GameStatus,
    HostNotice,
    Outbox,
    Outcome,
    Release,
    TalkRelease,
)
from pbem.host.publish import notices_channel, talk_channel
from pbem.host.settings import MailMark, PacketClock, Settings, clock_next, clock_says, replaced
from pbem.host.store import Located, Store
from pbem.host.tables import trustless_activity as ACTIVITY
from pbem.host.tables import trustless_games as GAMES
from pbem.host.tables import trustless_joins as JOINS
from pbem.host.tables import trustless_notices as NOTICES
from pbem.host.tables import trustless_packets as PACKETS
from pbem.host.tables import trustless_talk as TALK
from pbem.names import HOST
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import (
    Gone,
    Invitation,
    Join,
    Mental,
    Notice,
    NoticeKind,
    Packet,
    Relayed,
    RelayPacket,
    Signed,
    Talk,
    parse,
    read_blocks,
    relay,
    sign,
)
from pbem.protocol.trustless.public import PublicTable

# What a channel may owe, in one statement (as pbem.host.delivery reads a referee's): the game's
# newest packet and status, and its newest notice and line of talk. Built once.
_GAME: BindParameter[str] = bindparam("b_game")
_NEWEST = select(GAMES.c.seq, GAMES.c.status,
                 select(func.max(NOTICES.c.id)).where(NOTICES.c.game_id == _GAME).scalar_subquery().label("notice"),
                 select(func.max(TALK.c.id)).where(TALK.c.game_id == _GAME).scalar_subquery().label("line")
                 ).where(GAMES.c.id == _GAME)

_Said = TypeVar("_Said")


class BlindHost(Closing):
    """The trustless game `game` (name or id; None: the store's only game; or as the store
    located it) of `store` (a path: a SQLite store, such as a blind host's file of an older
    pbem, which opening upgrades)."""

    def __init__(self, store: Store | Path | str, identity: Identity | None = None, clock: Clock = REAL, *,
                 game: str | Located | None = None) -> None:
        self.store, self._owns_store = open_store(store)
        try:
            game_id, trustless = game if isinstance(game, Located) else self.store.locate(game)
            if not trustless:
                raise UsageError(msg("game {game} is not a trustless game", game=repr(game or game_id)))
            with self.store.read() as c:
                row = c.execute(select(GAMES).where(GAMES.c.id == game_id)).one()
        except BaseException:
            self.close()
            raise
        self.id = game_id
        self.identity = identity
        self.clock = clock
        self.inv: Signed[Invitation] = read_blocks(row.invitation)[0].expect(Invitation)
        self._host_name = row.host_name
        self._known: tuple[PublicTable, int, str] | None = None  # the table as of a packet, to follow on from
        self._stored: tuple[PublicTable, int, str] | None = None  # the table of the packet being stored
        self._at = blind_settings.SettingsAtVersion(self.store, game_id)
        self.name = str(row.name)

    def close(self) -> None:
        if self._owns_store:
            self.store.close()

    # --- publishing, as pbem.host.publish asks a host ------------------------------------------

    def version(self) -> int | None:
        return self.store.version()

    def head(self) -> tuple[int, str]:
        with self._at.read() as c:
            return self._head(c)

    def _head(self, c: Connection) -> tuple[int, str]:
        row = c.execute(select(GAMES.c.seq, GAMES.c.status).where(GAMES.c.id == self.id)).one()
        return int(row.seq), str(row.status)

    def delivered(self, channel: str) -> int:
        return self.settings().delivered.get(channel, -1)

    def mark_delivered(self, channel: str, seq: int, book: dict[str, MailMark] | None = None) -> None:
        """Kept in the file, as a store keeps its marks: a host restarted after mailing a
        packet does not mail it again (a folder is written idempotently, mail is not). The
        mail's book as the delivery changed it is stored in the same transaction."""
        with self._at.transaction() as c:
            old, _ = self._at.get(c)
            marks = old.delivered if seq <= old.delivered.get(channel, -1) else {**old.delivered, channel: seq}
            self._at.put(c, replaced(old, delivered=marks, **({"mail_book": book} if book is not None else {})))

    @property
    def url(self) -> str:
        return self.store.url

    def releases(self, after: int) -> list[Release]:
        with self._at.read() as c:
            return self._releases(c, after)

    def _releases(self, c: Connection, after: int) -> list[Release]:
        """The invitation (as seq 0, when nothing was delivered: `after` -1) and the packets after `after`."""
        out = [Release(0, self.invitation())] if after < 0 else []
        return out + [Release(seq, armored) for seq, armored in self._packets(c, max(after, 0))]

    def outbox(self, channel: str) -> Outbox:
        """What `channel` has not delivered yet, in one read (a host's every look asks it)."""
        with self._at.read() as c:
            marks = self._at.get(c)[0].delivered
            newest = c.execute(_NEWEST, {"b_game": self.id}).one()
            after, told, heard = (marks.get(ch, -1) for ch in (channel, notices_channel(channel), talk_channel(channel)))
            # only what is newer than its mark is read
            owed = self._releases(c, after) if newest.seq > after else []
            notices = self._notices(c, told) if newest.notice is not None and newest.notice > told else []
            lines = (table_talk.lines_after(c, TALK, {"game_id": self.id}, heard)
                     if newest.line is not None and newest.line > heard else [])
        return Outbox(owed, notices, lines, (int(newest.seq), str(newest.status)))

    # --- queries ---------------------------------------------------------------------------------

    def game_id(self) -> str:
        return self.inv.game

    def host_name(self) -> str:
        return self._host_name

    def invitation(self) -> str:
        return self.inv.armored()

    def packets(self, since: int = 0, until: int | None = None) -> list[tuple[int, str]]:
        """The armoured packets after `since` (up to `until`, if given), oldest first."""
        with self._at.read() as c:
            return self._packets(c, since, until)

    def _packets(self, c: Connection, since: int, until: int | None = None) -> list[tuple[int, str]]:
        where = [PACKETS.c.game_id == self.id, PACKETS.c.seq > since] + ([PACKETS.c.seq <= until] if until is not None else [])
        return [(r.seq, r.armored) for r in c.execute(select(PACKETS.c.seq, PACKETS.c.armored).where(*where)
                                                      .order_by(PACKETS.c.seq))]

    def packet(self, seq: int) -> str | None:
        return dict(self.packets(seq - 1, until=seq)).get(seq)

    def public_view(self, seq: int) -> RoundState | None:
        table, head, _ = self.table()
        return table.round.state if head == seq and table.round is not None else None

    def settings(self) -> Settings:
        """The host's settings: `transport` (the folder or mailbox it serves), the mail's
        (`emails`, `smtp`, `digest`, `languages`, `mail_book`) and the delivery marks."""
        with self._at.read() as c:
            return self._at.get(c)[0]

    def set_settings(self, **changes: Any) -> Settings:
        return self.change_settings(lambda s: (replaced(s, **changes),) * 2)

    def change_settings(self, change: Callable[[Settings], tuple[Settings, _Said]]) -> _Said:
        """Read the settings and write `change`'s new ones back in one transaction."""
        with self._at.transaction() as c:
            new, said = change(self._at.get(c)[0])
            self._at.put(c, new)
        return said

    def set_email(self, name: str, address: str | None) -> None:
        """Set (or with None remove) the mail address of a seat or of the host ('host')."""
        seats = [p.name for p in self.inv.doc.seats]
        if name not in seats and name != HOST:
            raise UsageError(msg("no seat {name} in game {game}", name=repr(name), game=self.inv.game),
                             hint=msg("seats: {list}", list=", ".join(seats)) + msg("; or 'host'"))
        def change(s: Settings) -> tuple[Settings, None]:
            emails = {k: v for k, v in s.emails.items() if k != name}
            return replaced(s, emails={**emails, name: address} if address else emails), None

        self.change_settings(change)

    def archives(self) -> dict[int, str]:
        return {}  # a round of a trustless game is audited from its chain (docs/trustless.md §9)

    # --- the clock (docs/trustless.md §10) ---------------------------------------------------------

    def set_timing(self, timing: Timing) -> Timing:
        """The game's deadline rules (`pbem game new --trustless --deadline ...`): the host can
        remind and report, never answer for a seat (it holds none of its keys)."""
        check_timing(timing, shared=bool(self.inv.doc.threshold))
        with self._at.transaction() as c:
            settings = replaced(self._at.get(c)[0], timing=timing)
            self._at.put(c, settings, PacketClock())  # the step waiting now restarts its clock
            table, seq, _ = self.table(c)
            if seq:
                self._clock(c, table, seq)
        return timing

    def notices(self, after: int = 0) -> list[HostNotice]:
        with self._at.read() as c:
            return self._notices(c, after)

    def _notices(self, c: Connection, after: int) -> list[HostNotice]:
        rows = c.execute(select(NOTICES).where(NOTICES.c.game_id == self.id, NOTICES.c.id > after)
                         .order_by(NOTICES.c.id)).all()
        return [HostNotice(r.id, r.seq, r.kind, r.seat, r.armored) for r in rows]

    def talk(self, after: int = 0) -> list[TalkRelease]:
        with self._at.read() as c:
            return table_talk.lines_after(c, TALK, {"game_id": self.id}, after)

    def _notice(self, c: Connection, me: Identity, seq: int, kind: NoticeKind, seat: str, **fields: Any) -> Outcome:
        block = sign(Notice(game=self.inv.game, seq=seq, notice=kind, seat=seat, at=stamp(self.clock.now()),
                            **fields), me)
        c.execute(insert(NOTICES).values(game_id=self.id, seq=seq, kind=kind, seat=seat, armored=block.armored()))
        return Outcome("notice", msg("notice: {line}", line=notice_word(block.doc, self.clock.now())))

    def _clock(self, c: Connection, table: PublicTable, seq: int) -> str | None:
        """The due time of the step packet `seq` waits for (None: no deadlines). A packet that
        opens a new step starts its clock; one more answer to a parallel step keeps it."""
        settings, clock = self._at.get(c)
        timing = settings.rules()
        if timing.deadline is None or table.step() == "over":
            if clock != PacketClock():
                self._at.put(c, clock=PacketClock())
            return None
        if clock.stage != table.opened_at:
            now = self.clock.now()
            due = timing.due(now)
            assert due is not None
            clock = PacketClock(stage=table.opened_at, start=stamp(now), due=stamp(due))
            self._at.put(c, clock=clock)
        return str(clock.due)

    def tick(self) -> list[Outcome]:
        """Reminders to the seats the table waits for, then a late notice to everyone naming each
        seat still waited for at the deadline; under `--on-timeout discard`, past the grace too,
        a packet declaring them gone (blind_gone; docs/trustless.md §10-11). One transaction; a
        restarted host says nothing twice."""
        with self._at.read() as c:
            settings, clock = self._at.get(c)
        timing = settings.rules()
        if not clock.due or self.identity is None:
            return []
        now = self.clock.now()
        if clock_says(timing, clock, now) == [] and (
                blind_gone.declaration(self.table()[0], timing, self._signed_due(), now) is None):
            return []  # nothing due: seen without a write lock
        me = self._me()
        out = []
        with self._at.transaction() as c:
            _, clock = self._at.get(c)
            if not clock.due:
                return []
            table, seq, head = self.table(c)
            w = table.waiting()
            policy = {"policy": "discard"} if timing.on_timeout == "discard" else {}
            for said in clock_says(timing, clock, now):  # "reminder" to each seat, or "late" about each
                out += [self._notice(c, me, seq, "reminder" if said == "reminder" else "late", seat, due=clock.due,
                                     step=w.step, **(policy if said == "late" else {})) for seat in w.seats]
            self._at.put(c, clock=clock)
            gone = blind_gone.declaration(table, timing, self._signed_due(c), now)
            if gone is not None:
                self._known, self._stored = None, None
                line = table.declare(gone, seq + 1)
                self._publish(c, me, table, [], seq + 1, head, gone=gone)
                out.append(Outcome("applied", msg("{line}: packet {seq}", line=line, seq=seq + 1), seq + 1))
        if self._stored is not None:
            self._known, self._stored = self._stored, None
        return out

    def next_tick(self) -> datetime | None:
        """When `tick` next has a reminder, a late notice or (under `--on-timeout discard`) seats
        to declare gone (None: nothing on the clock)."""
        with self._at.read() as c:
            settings, clock = self._at.get(c)
        return clock_next(settings.rules(), clock, self.clock.now(), plays=True)

    def _signed_due(self, c: Connection | None = None) -> str | None:
        """The due time the last packet signed (None: none)."""
        if c is None:
            with self._at.read() as conn:
                return self._signed_due(conn)
        row = c.execute(select(PACKETS.c.armored).where(PACKETS.c.game_id == self.id)
                        .order_by(PACKETS.c.seq.desc()).limit(1)).first()
        waiting = read_blocks(row.armored)[0].expect(Packet).doc.waiting if row is not None else None
        return waiting.due if waiting is not None else None

    def table(self, c: Connection | None = None) -> tuple[PublicTable, int, str]:
        """The public table rebuilt from the chain (proofs were checked when each block came in).

        The table of the last packet this host saw is kept and followed on from (the chain
        only grows); a caller that changes it must call `_forget` unless its change is stored.
        """
        if c is None:
            with self._at.read() as conn:
                return self.table(conn)
        table, seq, head = blind_facts.follow(c, self.id, self.inv.doc, self.inv.hash, self._known)
        if seq:
            self._known = (table, seq, head)
        return table, seq, head

    def seat_emails(self) -> list[tuple[str, str | None]]:
        """(seat, its address or None) in seat order: a trustless game keeps them in its settings."""
        emails = self.settings().emails
        return [(name, emails.get(name)) for name in self.inv.doc.seat_names()]

    def status(self) -> GameStatus:
        """Read from the game's row, which each join and packet wrote (blind_facts.record)."""
        with self._at.read() as c:
            return blind_status.statuses(c, self.id)[0][0]

    # --- taking blocks -----------------------------------------------------------------------------

    def _me(self) -> Identity:
        if self.identity is None:
            raise UsageError(msg("this command needs the host's key"))
        if self.identity.public.encode() != self.inv.doc.host.key:
            raise BadSignature(msg("key {name} is not the host key of game {game}", name=repr(self.identity.name),
                                 game=self.inv.game))
        return self.identity

    def _check_signer(self, block: Signed[Any]) -> str:
        seat = block.doc.seat
        keys = self.inv.doc.seat_keys()
        if seat not in keys:
            raise BadPacket(msg("no seat {seat} in game {game}", seat=repr(seat[:40]), game=self.inv.game))
        if block.signer.encode() != keys[seat]:
            raise BadSignature(msg("{kind} for seat {name} is signed by key {fingerprint}, not the seat's key",
                                 kind=kind_word(block.kind), name=repr(seat), fingerprint=block.signer.fingerprint()))
        return str(seat)

    def accept(self, block: Signed[Any]) -> Outcome:
        """Take one join or mental block, or refuse it without changing anything."""
        me = self._me()
        if block.game != self.inv.game:
            raise BadPacket(msg("this {kind} is for game {other}, not {game}", kind=kind_word(block.kind), other=repr(block.game),
                              game=repr(self.inv.game)))
        if not isinstance(block.doc, (Join, Mental, Talk)):
            raise BadPacket(msg("the host of a trustless game takes join files, table messages and table talk, not "
                              "{a_kind}", a_kind=kind_word(block.kind, article=True)))
        seat = self._check_signer(block)
        self._stored = None
        with self._at.transaction() as c:  # taking a block forgets the table it changes (_join, _mental)
            if isinstance(block.doc, Talk):
                answered = c.execute(select(PACKETS.c.hash).where(PACKETS.c.game_id == self.id,
                                                                  PACKETS.c.seq == block.doc.seq)).scalar()
                return table_talk.take(c, TALK, {"game_id": self.id}, block, self.inv.doc.seat_names(), answered,
                                       stamp(self.clock.now()))
            if isinstance(block.doc, Join):
                out = self._join(c, me, block, seat)
            else:
                out = self._mental(c, me, block, seat)
            if out.kind != "duplicate":
                c.execute(delete(ACTIVITY).where(ACTIVITY.c.game_id == self.id, ACTIVITY.c.seat == seat))
                c.execute(insert(ACTIVITY).values(game_id=self.id, seat=seat, at=stamp(self.clock.now())))
        if self._stored is not None:  # stored: the table as of the new packet is the one to follow on from
            self._known, self._stored = self._stored, None
        return out

    def _join(self, c: Connection, me: Identity, block: Signed[Join], seat: str) -> Outcome:
        old = c.execute(select(JOINS).where(JOINS.c.game_id == self.id, JOINS.c.seat == seat)).first()
        if old is not None:
            if old.hash == block.hash:
                return Outcome("duplicate", msg("{seat}'s join was already applied; nothing changed", seat=seat))
            raise Conflict(msg("{seat} has already joined with a different join file", seat=seat))
        if block.doc.invitation != self.inv.hash:
            raise BadPacket(msg("{seat}'s join answers another invitation", seat=seat))
        table, _, _ = self.table(c)
        self._known = None
        table.check_proofs = True
        table.take_join(block.doc)  # checks the key shares' proofs
        c.execute(insert(JOINS).values(game_id=self.id, seat=seat, hash=block.hash, payload=block.payload))
        joined = {r.seat: r.payload for r in c.execute(select(JOINS).where(JOINS.c.game_id == self.id))}
        waiting = [p for p in table.players if p not in joined]
        if waiting:
            blind_facts.record(c, self.id, table, self.inv.doc, 0, stamp(self.clock.now()))
            return Outcome("joined", msg("{seat} joined (key shares checked); waiting for {seats}", seat=seat,
                                        seats=listed(waiting)))
        relayed = [relay(parse("join", joined[p])) for p in table.players]
        seq = self._publish(c, me, table, relayed, 1, self.inv.hash)
        return Outcome("dealt", msg("{seat} joined; everyone is in: packet {seq}, {first} shuffles first", seat=seat,
                                   seq=seq, first=table.players[0]), seq)

    def _mental(self, c: Connection, me: Identity, block: Signed[Mental], seat: str) -> Outcome:
        doc = block.doc
        if c.execute(select(PACKETS.c.seq).where(PACKETS.c.game_id == self.id,
                                                 PACKETS.c.relayed == block.hash)).first() is not None:
            return Outcome("duplicate", msg("{seat}'s {step} was already relayed; nothing changed", seat=seat,
                                           step=step_word(doc.step)))
        answered = c.execute(select(PACKETS.c.hash).where(PACKETS.c.game_id == self.id, PACKETS.c.seq == doc.seq)).first()
        if answered is None or answered.hash != doc.packet:
            raise BadPacket(msg("{seat}'s {step} answers packet {seq} {hash}, which this host never sent", seat=seat,
                              step=step_word(doc.step), seq=doc.seq, hash=doc.packet[:12]))
        table, seq, head = self.table(c)
        self._known = None
        line = table.take(doc, seq)
        out = self._publish(c, me, table, [relay(block)], seq + 1, head,
                            relayed_hash=block.hash)
        return Outcome("applied", msg("{line}: packet {seq}", line=line, seq=out), out)

    def _publish(self, c: Connection, me: Identity, table: PublicTable, relayed: list[Relayed], seq: int, prev: str,
                 relayed_hash: str = "", gone: Gone | None = None) -> int:
        over = table.step() == "over"
        due = self._clock(c, table, seq)
        waiting = msgspec.structs.replace(table.waiting(), due=due) if due else table.waiting()
        packet = sign(RelayPacket(game=self.inv.game, seq=seq, prev=prev, round=table.round_no,
                             phase="game-over" if over else "playing", to_move=None,
                             public={}, moves=[], events=[], parts={}, relayed=relayed, waiting=waiting, gone=gone), me)
        at = stamp(self.clock.now())
        c.execute(insert(PACKETS).values(game_id=self.id, seq=seq, hash=packet.hash, armored=packet.armored(),
                                         relayed=relayed_hash or (f"gone {seq}" if gone else f"joins {seq}"),
                                         created_at=at))
        blind_facts.record(c, self.id, table, self.inv.doc, seq, at)
        self._stored = (table, seq, packet.hash)
        return seq
