"""The host (referee): creates a game, takes join and move files, deals, publishes packets.

A `Host` is one game of a store. Each change is one transaction: it locks the game's row,
checks the input against the head, changes the state and writes the next packet row, or
raises and changes nothing. Publishers (pbem.host.publish) deliver packets after the
commit and mark how far they got, so a crash between the two loses nothing and the next
run delivers only what is new.

Per move the host does only that move's work: the game's fixed facts (seats, decoded keys)
and the round secrets are read once per `Host`; the live state and the round so far (as its
archive lists it: `RoundLog`) are kept in memory from one move to the next while the game's
head is unchanged, so they are read and opened only when another process moved the game on;
each packet's `prev` and each move's `why` are stored, so a round's archive reads only the
hashes of its chain and no stored move file is parsed again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar, cast

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import BindParameter

from engine.catalog import RULESETS, Ruleset, is_ruleset
from engine.dealer import SeededDealer
from engine.game import Carry, carry_after, standings_winners
from engine.position import dump, load
from engine.rules import apply as apply_move
from engine.rules import check as check_move
from engine.state import OPTIONS, OVER, PLAYER_RANGE, ROUNDS_PER_GAME, RoundState
from engine.views import events_for, view
from pbem.errors import BadPacket, BadSignature, Conflict, StaleMove, UsageError
from pbem.host import timekeeper
from pbem.host.change import Facts, GameRow, Seat
from pbem.host.clock import REAL, Clock, stamp
from pbem.host.deadlines import Timing
from pbem.host.interface import GameStatus, HostNotice, Outcome, Release
from pbem.host.memo import Kept, RoundLog
from pbem.host.paths import as_url
from pbem.host.store import GAME_ROW, Store, deliveries, games, joins, moves, notices, packets, rounds, seats
from pbem.names import HOST, check_game_name, check_seat_name
from pbem.protocol import fairness
from pbem.protocol.contents import round_result, seat_part
from pbem.protocol.crypto import Identity, OwnBox, PublicKey
from pbem.protocol.documents import (
    MOVE_NONCE_LEN,
    Archive,
    ArchivedMove,
    Carried,
    Handover,
    HandoverRecord,
    HostParty,
    Invitation,
    Join,
    Link,
    Move,
    Packet,
    Party,
    PublicMove,
    RecentMove,
    Result,
    SealedMove,
    Signed,
    Standings,
    b64,
    mail_address_ok,
    move_commitment,
    move_nonce,
    open_as,
    open_json,
    seal_info,
    seal_json,
    sign,
    to_json,
    unb64,
)
from pbem.protocol.timeout import policy_move
from pbem.ui import when
from pbem.ui.words import game_status, join, kind_name, t


def _archived(n: int, seat: str, text: str, nonce: str, envelope: bytes, why: str | None) -> ArchivedMove:
    """A move as the archive lists it (`why`: why the host made it; None: the seat's own)."""
    return ArchivedMove(n=n, seat=seat, text=text, nonce=nonce, envelope=b64(envelope), by=HOST if why else None, why=why)


# --- creating a game ------------------------------------------------------------------------


def _open(store: Store | Path | str, *, create: bool = False) -> tuple[Store, bool]:
    """(the store, whether we opened it and so must close it)."""
    if isinstance(store, Store):
        return store, False
    return Store(as_url(store), create=create), True


def check_new_game(path: Path | None, name: str, ruleset: str, seats: list[tuple[str, PublicKey]],
                   options: list[str]) -> Ruleset:
    """What `game new` refuses, for every kind of host; the ruleset, checked. `path`: a game
    that needs a file of its own (the blind host's) refuses one that exists."""
    check_game_name(name)
    if not is_ruleset(ruleset):
        raise UsageError(t("unknown ruleset {name}", name=repr(ruleset)), hint=t("use one of: {choices}", choices=", ".join(RULESETS)))
    lo, hi = PLAYER_RANGE[ruleset]
    if not lo <= len(seats) <= hi:
        raise UsageError(t("{ruleset} is played by {lo}-{hi} players, not {n}", ruleset=ruleset, lo=lo, hi=hi, n=len(seats)))
    names = [n for n, _ in seats]
    for n in names:
        check_seat_name(n)
    if len(set(names)) != len(names):
        raise UsageError(t("two seats have the same name"))
    if len({k.encode() for _, k in seats}) != len(seats):
        raise UsageError(t("two seats have the same public key"))
    bad = set(options) - set(OPTIONS)
    if bad:
        raise UsageError(t("unknown option {name}", name=repr(sorted(bad)[0])), hint=t("use one of: {choices}", choices=", ".join(OPTIONS)))
    if path is not None and path.exists():
        raise UsageError(t("{path} already exists", path=repr(str(path))), hint=t("choose another game name or --db"))
    return ruleset


def check_host_mail(address: str | None) -> str | None:
    """The host's mail address as an invitation may sign it (None: none given)."""
    if address is not None and not mail_address_ok(address):
        raise UsageError(t("{address} is no mail address the invitation can name", address=repr(address)),
                         hint=t("write it as user@example.org"))
    return address


def create_game(
    store: Store | Path | str,
    name: str,
    host: Identity,
    ruleset: str,
    seat_keys: list[tuple[str, PublicKey]],
    options: list[str],
    emails: dict[str, str] | None = None,
    timing: dict[str, Any] | None = None,
    clock: Clock = REAL,
    host_mail: str | None = None,
) -> Signed:
    """Add a game to the store (created if it does not exist) and return its invitation.

    `timing` is the game's deadline rules (pbem.host.deadlines.Timing.to_config()), if any.
    `host_mail` (else `emails["host"]`) is signed into the invitation: the address seats mail."""
    ruleset = check_new_game(None, name, ruleset, seat_keys, options)
    host_mail = check_host_mail(host_mail or (emails or {}).get(HOST))
    st, owned = _open(store, create=True)
    try:
        game_id = f"{name}-{os.urandom(4).hex()}"
        secrets = fairness.new_secrets(ROUNDS_PER_GAME)
        commitments = [fairness.commitment(game_id, k + 1, s) for k, s in enumerate(secrets)]
        invitation = sign(Invitation(game=game_id, name=name, ruleset=ruleset, options=sorted(options),
                                     host=HostParty(name=host.name, key=host.public.encode(), mail=host_mail),
                                     seats=[Party(name=n, key=k.encode()) for n, k in seat_keys],
                                     commitments=commitments, created=stamp(clock.now())), host)
        taken = UsageError(t("store {store} already has a game called {name}", store=repr(st.label), name=repr(name)),
                           hint=t("choose another game name (pbem games lists them)"))
        try:
            with st.write() as c:
                if c.execute(select(games.c.id).where(games.c.name == name)).first() is not None:
                    raise taken
                c.execute(insert(games).values(
                    id=game_id, name=name, ruleset=ruleset, options=json.dumps(sorted(options)), host_name=host.name,
                    host_key=host.public.encode(), created_at=stamp(clock.now()), invitation=invitation.armored(),
                    invitation_hash=invitation.hash, commitments=json.dumps(commitments),
                    secrets_sealed=seal_json([x.hex() for x in secrets], host.public, _host_info(game_id, "secrets"),
                                             pad="secrets"),
                    box_key=_new_box_key(game_id, host.public), state_sealed=None, public="{}", status="joining",
                    round_no=0, move_no=0, seq=0,
                    head=invitation.hash,
                    config=json.dumps({"emails": emails or {}, **({"timing": timing} if timing else {})})))
                c.execute(insert(seats), [{"game_id": game_id, "idx": i, "name": n, "key": k.encode(),
                                           "email": (emails or {}).get(n)} for i, (n, k) in enumerate(seat_keys)])
        except IntegrityError:  # another process took the name between our check and insert
            raise taken from None
    finally:
        if owned:
            st.close()
    return invitation


_Said = TypeVar("_Said")


def _host_info(game_id: str, purpose: str) -> bytes:
    return seal_info(game_id, 0, HOST, HOST, purpose)


def _new_box_key(game_id: str, host: PublicKey) -> str:
    """A new key for the host's own box of a game, sealed to the host's key."""
    return seal_json(os.urandom(OwnBox.KEY_LEN).hex(), host, _host_info(game_id, "box key"), pad="secrets")


# --- the host at work -----------------------------------------------------------------------


# The statements of the hot path, built once: building a statement costs more than running it.
_GAME: BindParameter[str] = bindparam("b_game")
_HEAD = select(games.c.seq, games.c.status).where(games.c.id == _GAME)
_MOVE_SEEN = select(moves.c.id).where(moves.c.file_hash == bindparam("b_hash"))
_ADD_MOVE = insert(moves)
_TOUCH_SEAT = (update(seats).where(seats.c.game_id == _GAME, seats.c.name == bindparam("b_name"))
               .values(last_activity=bindparam("b_at")))
_ADD_PACKET = insert(packets)
_SET_GAME = update(games).where(games.c.id == _GAME)
_CHANNEL = (deliveries.c.game_id == _GAME) & (deliveries.c.channel == bindparam("b_channel"))
_DELIVERED = select(deliveries.c.seq).where(_CHANNEL)
_ADD_DELIVERY = insert(deliveries)
_RAISE_DELIVERY = update(deliveries).where(_CHANNEL).values(seq=bindparam("b_seq"))
_NOTICES = (select(notices.c.id, notices.c.seq, notices.c.kind, notices.c.seat, notices.c.armored)
            .where(notices.c.game_id == _GAME, notices.c.id > bindparam("b_after")).order_by(notices.c.id))
_SEAT_EMAILS = select(seats.c.name, seats.c.email).where(seats.c.game_id == _GAME).order_by(seats.c.idx)
_ROUND_KEY = (rounds.c.game_id == _GAME) & (rounds.c.round_no == bindparam("b_round"))
_ROUND = (select(rounds.c.first_seq, rounds.c.start_state_sealed, rounds.c.carried, rounds.c.secret, games.c.invitation)
          .select_from(rounds.join(games, games.c.id == rounds.c.game_id)).where(_ROUND_KEY))
_ROUND_MOVES = (select(moves.c.n, moves.c.seat, moves.c.text_sealed, moves.c.envelope, moves.c.why)
                .where(moves.c.game_id == _GAME, moves.c.round_no == bindparam("b_round")).order_by(moves.c.n))
_CHAIN = (select(packets.c.seq, packets.c.hash, packets.c.prev)
          .where(packets.c.game_id == _GAME, packets.c.seq >= bindparam("b_from")).order_by(packets.c.seq))
_JOINS = select(joins.c.envelope).where(joins.c.game_id == _GAME)
_SET_ARCHIVE = update(rounds).where(_ROUND_KEY).values(archive=bindparam("b_archive"))
_CONTRIBUTIONS = select(seats.c.contribution).where(seats.c.game_id == _GAME).order_by(seats.c.idx)
_ADD_ROUND = insert(rounds)
_END_ROUND = update(rounds).where(_ROUND_KEY)
_RELEASES = (select(packets.c.seq, packets.c.armored, rounds.c.round_no, rounds.c.archive)
             .select_from(packets.outerjoin(rounds, (rounds.c.game_id == packets.c.game_id)
                                            & (rounds.c.last_seq == packets.c.seq)))
             .where(packets.c.game_id == _GAME, packets.c.seq > bindparam("b_after")).order_by(packets.c.seq))


class GameChange:
    """One change of a game (pbem.host.change.Change): its transaction `c`, the game's row `g`
    that it edits, and the Host whose key signs and whose kept state it uses."""

    __slots__ = ("host", "c", "g")

    def __init__(self, host: Host, c: Connection, g: GameRow) -> None:
        self.host, self.c, self.g = host, c, g

    @property
    def facts(self) -> Facts:
        return self.host.facts

    @property
    def clock(self) -> Clock:
        return self.host.clock

    def now(self) -> str:
        return self.host.now()

    def signer(self) -> Identity:
        return self.host._me()

    def state(self) -> RoundState:
        return self.host._state(self.g)

    def seat_of(self, block: Signed[Any]) -> Seat:
        return self.host._seat(self.g, block)

    def recent_window(self) -> list[RecentMove]:
        return self.host.recent_window(self.c, self.g)

    def publish(self, state: RoundState, *, handover: HandoverRecord | None = None) -> int:
        return self.host._publish(self.c, self.g, state, moves=[], events=[], handover=handover)

    def play_for(self, seat: Seat, why: str, text: str | None = None) -> Outcome:
        return self.host.play_for(self.c, self.g, seat, self.state(), why, text)

    def hand_over(self, seat: str, key: PublicKey, handovers: int) -> None:
        """The Host's facts say `seat` is held by `key`; Host._change restores the old facts
        if the change does not commit."""
        f = self.host.facts
        self.host.facts = replace(f, seats=tuple(replace(s, key=key) if s.name == seat else s for s in f.seats),
                                  handovers=handovers)


class Host:
    """One game of a store, as its referee. A context manager: `with Host(...) as host:`.

    `store` is a Store, a URL or a SQLite path (then the Host opens it and closes it);
    `game` is the game's name or id, or None for the only game of the store. Every time it
    stamps or acts on (deadlines) comes from `clock` (pbem/host/clock.py).
    """

    def __init__(self, store: Store | Path | str, identity: Identity | None = None, clock: Clock = REAL, *,
                 game: str | None = None) -> None:
        self.store, self._owns_store = _open(store)
        try:
            game_id = self.store.find(game)  # its own read, before this one: one connection, not two at once
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
        self._made: tuple[RoundState, RoundLog | None] | None = None  # what the change under way published
        self._dealt: RoundLog | None = None  # the round the change under way dealt

    def now(self) -> str:
        return stamp(self.clock.now())

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owns_store:
            self.store.close()

    def _read_facts(self, c: Connection, game_id: str) -> Facts:
        g = c.execute(GAME_ROW, {"b_game": game_id}).one()
        rows = c.execute(select(seats.c.idx, seats.c.name, seats.c.key).where(seats.c.game_id == game_id)
                         .order_by(seats.c.idx)).all()
        return Facts(g.id, g.name, g.ruleset, tuple(json.loads(g.options)), g.host_name, g.host_key,
                     g.invitation_hash, tuple(Seat(r.idx, r.name, PublicKey.decode(r.key)) for r in rows),
                     _handovers(g.config))

    def _me(self) -> Identity:
        if self.identity is None:
            raise UsageError(t("this command needs the host's key"))
        if not self._checked_key:
            if self.identity.public.encode() != self.facts.host_key:
                raise BadSignature(t("key {name} is not the host key of game {game}", name=repr(self.identity.name),
                                     game=self.facts.id), hint=t("the host is {name}", name=repr(self.facts.host_name)))
            self._checked_key = True
        return self.identity

    def _own_box(self, sealed_key: str | None) -> OwnBox:
        """The host's own box of this game (its key as `games.box_key` holds it), opened once."""
        if self._box is None or self._box[0] != sealed_key:
            me = self._me()
            info = _host_info(self.facts.id, "box key")
            key = None if sealed_key is None else bytes.fromhex(open_json(sealed_key, me, info))
            self._box = (sealed_key, OwnBox(key, me))
        return self._box[1]

    def _sealing_box(self, g: GameRow) -> OwnBox:
        """The box to seal into in the change under way; a game made before it had a box key
        gets one now (written with the change)."""
        if g["box_key"] is None:
            g["box_key"] = _new_box_key(self.facts.id, self._me().public)
        return self._own_box(g["box_key"])

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

    def invitation(self) -> str:
        with self.store.read() as c:
            return str(c.execute(select(games.c.invitation).where(games.c.id == self.facts.id)).scalar_one())

    def config(self) -> dict[str, Any]:
        """The game's settings (emails, SMTP settings without password, transport)."""
        with self.store.read() as c:
            return dict(json.loads(c.execute(select(games.c.config).where(games.c.id == self.facts.id)).scalar_one()))

    def set_config(self, **changes: Any) -> dict[str, Any]:
        """Change top-level config keys in one transaction (None removes a key)."""
        with self.store.write() as c:
            return self._set_config(c, json.loads(self.store.lock_game(c, self.facts.id).config), changes)

    def update_config(self, key: str, change: Callable[[Any], tuple[Any, _Said]]) -> _Said:
        """Read one config key and write `change`'s new value back in one transaction (the
        game's row locked): `change(old) -> (new, what to return)`."""
        with self.store.write() as c:
            config = json.loads(self.store.lock_game(c, self.facts.id).config)
            new, said = change(config.get(key))
            self._set_config(c, config, {key: new})
        return said

    def _set_config(self, c: Connection, config: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
        for key, value in changes.items():
            if value is None:
                config.pop(key, None)
            else:
                config[key] = value
        c.execute(_SET_GAME, {"b_game": self.facts.id, "config": json.dumps(config, sort_keys=True)})
        return dict(config)

    def set_email(self, name: str, address: str | None) -> None:
        """Set (or with None remove) the mail address of a seat or of the host ('host')."""
        f = self.facts
        if f.seat(name) is None and name != HOST:
            raise UsageError(t("no seat {name} in game {game}", name=repr(name), game=f.id),
                             hint=t("seats: {list}", list=", ".join(s.name for s in f.seats)) + t("; or 'host'"))
        with self.store.write() as c:
            config = json.loads(self.store.lock_game(c, f.id).config)
            if name != HOST:
                c.execute(update(seats).where(seats.c.game_id == f.id, seats.c.name == name).values(email=address))
            emails = dict(config.get("emails") or {})
            if address is None:
                emails.pop(name, None)
            else:
                emails[name] = address
            config["emails"] = emails
            c.execute(update(games).where(games.c.id == f.id).values(config=json.dumps(config, sort_keys=True)))

    def archives(self) -> dict[int, str]:
        with self.store.read() as c:
            rows = c.execute(select(rounds.c.round_no, rounds.c.archive)
                             .where(rounds.c.game_id == self.facts.id, rounds.c.archive.is_not(None))
                             .order_by(rounds.c.round_no))
            return {r.round_no: r.archive for r in rows}

    def set_timing(self, timing: Timing) -> dict[str, Any]:
        """Change the deadline rules; a game in play restarts the current packet's clock now."""
        with self._change() as ch:
            return timekeeper.set_timing(ch, timing)

    def pause(self) -> Outcome:
        """Pause the game: deadlines stop counting until `resume` (the host's key)."""
        with self._change() as ch:
            return timekeeper.pause(ch)

    def resume(self) -> Outcome:
        """Resume a paused game: the time that was left is left again."""
        with self._change() as ch:
            return timekeeper.resume(ch)

    def reseat_document(self, seat: str, key: PublicKey) -> Signed[Handover]:
        """The host's signed handover of `seat` to `key` (checked when applied)."""
        seq, _ = self.head()
        return sign(Handover(game=self.facts.id, seat=seat, key=key.encode(), seq=seq), self._me())

    def notices(self, after: int = 0) -> list[HostNotice]:
        """The host's signed notices of this game after notice `after`, oldest first."""
        with self.store.read() as c:
            rows = c.execute(_NOTICES, {"b_game": self.facts.id, "b_after": after}).all()
        return [HostNotice(r.id, r.seq, r.kind, r.seat, r.armored) for r in rows]

    # publishing: what a channel has not delivered yet, and marking it delivered

    def delivered(self, channel: str) -> int:
        """The highest seq `channel` has delivered (0: the invitation), -1 for nothing yet."""
        with self.store.read() as c:
            seq = c.execute(_DELIVERED, {"b_game": self.facts.id, "b_channel": channel}).scalar()
        return -1 if seq is None else int(seq)

    def releases(self, after: int) -> list[Release]:
        """The invitation (when after < 0) and every packet after `after`, in order."""
        out = [Release(0, self.invitation())] if after < 0 else []
        with self.store.read() as c:
            rows = c.execute(_RELEASES, {"b_game": self.facts.id, "b_after": after}).all()
        for r in rows:
            out.append(Release(r.seq, r.armored, (r.round_no, r.archive) if r.archive else None))
        return out

    def mark_delivered(self, channel: str, seq: int, config: dict[str, Any] | None = None) -> None:
        """Raise `channel`'s mark to `seq` (never lower it: two daemons may race), and change
        the `config` keys the delivery changed (the mail's book) in the same transaction."""
        key = {"b_game": self.facts.id, "b_channel": channel}
        with self.store.write() as c:
            row = self.store.lock_game(c, self.facts.id)
            if config:
                self._set_config(c, json.loads(row.config), config)
            old = c.execute(_DELIVERED, key).scalar()
            if old is None:
                c.execute(_ADD_DELIVERY, {"game_id": self.facts.id, "channel": channel, "seq": seq})
            elif seq > old:
                c.execute(_RAISE_DELIVERY, {**key, "b_seq": seq})

    # changes (one transaction each)

    @contextmanager
    def _change(self) -> Iterator[GameChange]:
        """One change of the game: its row locked and read as `g` (a dict the change edits),
        the edited columns written back, all in one transaction. What a change leaves (the
        state it published, the round so far, the last public moves) is kept for the next
        change, which uses it only if nobody else moved the game on (Kept.at: one rule)."""
        facts = self.facts
        self._made = self._dealt = None
        kept, self._kept = self._kept, None
        try:
            with self.store.write() as c:
                g = cast(GameRow, dict(self.store.lock_game(c, facts.id)._mapping))
                here = self._here = Kept.at(kept, g["head"])
                before: dict[str, Any] = dict(g)
                if _handovers(g["config"]) != facts.handovers:  # another process handed a seat over
                    self.facts = self._read_facts(c, facts.id)
                yield GameChange(self, c, g)
                changed = {k: v for k, v in g.items() if before[k] != v}
                if changed:
                    c.execute(_SET_GAME, {**changed, "b_game": facts.id})
        except BaseException:  # e.g. a handover that did not commit: nothing of it is kept
            self.facts, self._made, self._dealt, self._here = facts, None, None, Kept("")
            raise
        if self._made is not None:  # a packet published: what it left, at its head
            state, log = self._made
            here = Kept(g["head"], state, log, here.recent)
        self._kept, self._made, self._here = here, None, Kept("")

    def _state(self, g: GameRow) -> RoundState:
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

    def _round_log(self, g: GameRow) -> RoundLog | None:
        """The round so far as kept from our last change, if nobody moved the game on since
        (taken, as the state is)."""
        log, self._here.log = self._here.log, None
        return log

    def accept(self, block: Signed[Any]) -> Outcome:
        """Apply one join, move, request or handover block, or refuse it without changing anything."""
        f = self.facts
        if block.game != f.id:
            raise BadPacket(t("this {kind} is for game {other}, not {game}", kind=kind_name(block.kind), other=repr(block.game),
                              game=repr(f.id)), hint=t("a file of another game goes to that game's host"))
        if block.kind not in ("join", "move", "request", "handover"):
            raise BadPacket(t("a host takes join, move, request and handover files, not {a_kind}",
                              a_kind=kind_name(block.kind, article=True)))
        with self._change() as ch:
            if isinstance(block.doc, Join):
                return self._join(ch.c, ch.g, block)
            if isinstance(block.doc, Move):
                try:
                    return self._move(ch.c, ch.g, block)
                except StaleMove as exc:
                    # refused, but it says an absent seat is back: that is kept (the move is not)
                    back = timekeeper.back_by_move(ch, block)
                    if back is None:
                        raise
                    stale = StaleMove(f"{exc}{t('clause sep')}{back}", hint=exc.hint)
            elif block.kind == "request":
                return timekeeper.request(ch, block)
            else:
                return timekeeper.handover(ch, block)
        raise stale

    def tick(self) -> list[Outcome]:
        """Act on the clock: everything due by now (reminders, late notices, absences, timeout
        moves: pbem/host/timekeeper.py), each step in its own change (a seat played for at once
        may be followed by another). A game with nothing on the clock is seen with one read,
        without a lock (a club host ticks every game on every pass)."""
        with self.store.read() as c:
            row = c.execute(timekeeper.CLOCK, {"b_game": self.facts.id}).one()
        if not timekeeper.may_act(json.loads(row.config), row.status, row.seq):
            return []
        out: list[Outcome] = []
        for _ in range(timekeeper.MAX_ACTIONS):
            with self._change() as ch:
                step = timekeeper.tick_once(ch)
            out += step
            if not any(o.kind == "applied" for o in step):
                break
        return out

    def _seat(self, g: GameRow, block: Signed[Any]) -> Seat:
        name = block.doc.seat
        seat = self.facts.seat(name)
        if seat is None:
            raise BadPacket(t("no seat {name} in game {game}", name=repr(name), game=self.facts.id))
        if block.signer.encode() != seat.key.encode():
            timekeeper.refuse_former_key(g, seat, block)
            raise BadSignature(t("{kind} for seat {name} is signed by key {fingerprint}, not the seat's key", kind=kind_name(block.kind),
                                 name=repr(name), fingerprint=block.signer.fingerprint()))
        return seat

    def _join(self, c: Connection, g: GameRow, block: Signed[Join]) -> Outcome:
        seat = self._seat(g, block)
        if c.execute(select(joins.c.file_hash).where(joins.c.file_hash == block.hash)).first() is not None:
            return Outcome("duplicate", t("{seat}'s join was already applied; nothing changed", seat=seat.name))
        if block.doc.invitation != self.facts.invitation_hash:
            raise BadPacket(t("{seat}'s join answers another invitation", seat=seat.name))
        where = (seats.c.game_id == self.facts.id) & (seats.c.name == seat.name)
        if c.execute(select(seats.c.joined_at).where(where)).scalar() is not None:
            raise Conflict(t("{seat} has already joined with a different join file", seat=seat.name))
        contribution = unb64(block.doc.contribution, "contribution")
        if len(contribution) != fairness.CONTRIBUTION_BYTES:
            raise BadPacket(t("{seat}'s contribution has {n} bytes, not {want}", seat=seat.name, n=len(contribution),
                              want=fairness.CONTRIBUTION_BYTES))
        at = self.now()
        c.execute(update(seats).where(where).values(contribution=b64(contribution), joined_at=at, last_activity=at))
        c.execute(insert(joins).values(file_hash=block.hash, game_id=self.facts.id, seat=seat.name, envelope=block.payload))
        waiting = [r.name for r in c.execute(select(seats.c.name).where(seats.c.game_id == self.facts.id,
                                                                        seats.c.joined_at.is_(None)).order_by(seats.c.idx))]
        if waiting:
            return Outcome("joined", t("{seat} joined; waiting for {waiting}", seat=seat.name, waiting=join(waiting)))
        state = self._deal(c, g, 1, Carry())
        seq = self._publish(c, g, state, moves=[], events=[])
        return Outcome("dealt", t("{seat} joined; everyone is in: round 1 dealt, packet {seq}", seat=seat.name, seq=seq), seq)

    def _round_secret(self, round_no: int) -> bytes:
        if self._secrets is None:
            sealed = select(games.c.secrets_sealed).where(games.c.id == self.facts.id)
            with self.store.read() as c:
                text = c.execute(sealed).scalar_one()
            self._secrets = [bytes.fromhex(x) for x in open_json(text, self._me(), _host_info(self.facts.id, "secrets"))]
        return self._secrets[round_no - 1]

    def _deal(self, c: Connection, g: GameRow, round_no: int, carried: Carry) -> RoundState:
        f = self.facts
        secret = self._round_secret(round_no)
        contributions = [unb64(x, "contribution") for x in c.execute(
            _CONTRIBUTIONS, {"b_game": f.id}).scalars()]
        if not is_ruleset(f.ruleset):
            raise BadPacket(t("the game's ruleset {name} is unknown", name=repr(f.ruleset)))
        dealer = SeededDealer(fairness.round_chance(f.id, round_no, secret, contributions))
        state = dealer.deal(f.ruleset, tuple(s.name for s in f.seats), options=frozenset(f.options), round_no=round_no,
                            first_seat=carried.first_seat, gold=carried.gold, nuggets=carried.nuggets)
        g["status"], g["round_no"], g["move_no"] = "playing", round_no, 0
        said = ({"gold": carried.gold, "nuggets": carried.nuggets, "first": state.players[carried.first_seat]}
                if round_no > 1 else {})
        start = dump(state)
        c.execute(_ADD_ROUND, dict(game_id=f.id, round_no=round_no, first_seq=g["seq"] + 1,
                                   start_state_sealed=self._seal_state(g, start), carried=json.dumps(said)))
        self._dealt = RoundLog(round_no, start, [])
        return state

    def _seal_state(self, g: GameRow, state: dict[str, Any]) -> str:
        """A state (dumped), in the host's own box."""
        return seal_json(state, self._sealing_box(g), _host_info(self.facts.id, "state"), pad="state")

    def live_state(self) -> RoundState:
        """The true state of the round in play, every hand open (needs the host's key)."""
        with self.store.read() as c:
            row = c.execute(select(games.c.state_sealed, games.c.box_key).where(games.c.id == self.facts.id)).one()
        return self._open_state(row.box_key, row.state_sealed)

    def _open_state(self, box_key: str | None, sealed: str | None) -> RoundState:
        if sealed is None:
            raise UsageError(t("no round has been dealt yet"))
        return load(open_json(sealed, self._own_box(box_key), _host_info(self.facts.id, "state")))

    def _move(self, c: Connection, g: GameRow, block: Signed[Move]) -> Outcome:
        f = self.facts
        seat = self._seat(g, block)
        # A move applied before answered a packet that is no longer the head (applying it made
        # the next one): only a move that does not answer the head may be one already applied.
        answers_head = block.doc.seq == g["seq"] and block.doc.packet == g["head"]
        if not answers_head and c.execute(_MOVE_SEEN, {"b_hash": block.hash}).first() is not None:
            return Outcome("duplicate", t("this move by {seat} was already applied; nothing changed", seat=seat.name))
        if g["status"] != "playing":
            raise StaleMove(t("game {game} is {status}; it takes no moves now", game=f.id, status=game_status(g["status"])))
        if block.doc.by is not None:
            raise BadPacket(t("{seat}'s move says it was made by the {by}; only the host marks its own moves", seat=seat.name,
                              by=block.doc.by))
        answered = block.doc.seq
        if not answers_head:
            raise StaleMove(t("{seat}'s move answers packet {answered}, but the game is at packet {seq}", seat=seat.name,
                              answered=answered, seq=g["seq"]), hint=t("show the latest packet and move again"))
        state = self._state(g)
        if state.player != seat.name:
            raise StaleMove(t("it is {player}'s turn, not {seat}'s", player=state.player, seat=seat.name))
        sealed = open_as(SealedMove, block.doc.sealed, self._me(), seal_info(f.id, g["seq"], seat.name, HOST, "move"))
        text = sealed.move
        nonce = move_nonce(sealed.nonce)
        if move_commitment(nonce, text) != block.doc.commit:
            raise BadPacket(t("{seat}'s move file does not match its commitment", seat=seat.name))
        return self._apply(c, g, seat, state, text, nonce, block)

    def play_for(self, c: Connection, g: GameRow, seat: Seat, state: RoundState, why: str,
                 text: str | None = None) -> Outcome:
        """The host plays the timeout policy's move for `seat` (`why`: timeout, absent or
        resigned), signed as the host's own move file with the time it was made, marked `by:
        host` so that packet, archive, audit and replay all say so. Refused (Conflict, nothing
        changes) when the game's rules let the host play for nobody now
        (timekeeper.may_play_for), and when `text` is given and is not the policy's own move."""
        f = self.facts
        me = self._me()
        policy = timekeeper.may_play_for(GameChange(self, c, g), seat.name, why)
        if state.player != seat.name:
            raise Conflict(t("it is {player}'s turn, not {seat}'s", player=state.player, seat=seat.name))
        chosen = policy_move(view(state, seat.name), seat.name, policy, f.id, g["seq"])
        if text is not None and text != chosen:
            raise Conflict(t("the host may play only its timeout policy's move for {seat}: {policy} plays {move}, "
                             "not {other}", seat=seat.name, policy=policy, move=repr(chosen), other=repr(text)))
        nonce = os.urandom(MOVE_NONCE_LEN)
        info = seal_info(f.id, g["seq"], seat.name, HOST, "move")
        block = sign(Move(game=f.id, seat=seat.name, seq=g["seq"], packet=g["head"],
                          commit=move_commitment(nonce, chosen), by=HOST, why=why, at=self.now(),
                          sealed=seal_json(SealedMove(move=chosen, nonce=b64(nonce)), me.public, info, pad="move")), me)
        return self._apply(c, g, seat, state, chosen, nonce, block, by=why)

    def _apply(self, c: Connection, g: GameRow, seat: Seat, state: RoundState, text: str, nonce: bytes,
               block: Signed[Move], by: str | None = None) -> Outcome:
        f = self.facts
        move = check_move(state, text)  # the canonical, resolved move
        if str(move) != text:
            raise BadPacket(t("{seat}'s move {text} is not in canonical form", seat=seat.name, text=repr(text)),
                            hint=t("write moves with 'pbem move'"))
        events = apply_move(state, move)
        said = str(move.public())
        g["move_no"] += 1
        at = self.now()
        c.execute(_ADD_MOVE, dict(
            game_id=f.id, round_no=g["round_no"], n=g["move_no"], seat=seat.name, public_text=said,
            text_sealed=seal_json({"text": text, "nonce": b64(nonce)}, self._sealing_box(g), _host_info(f.id, "move"),
                                  pad="move"),
            envelope=block.payload, file_hash=block.hash, answered_seq=g["seq"], applied_at=at, why=by))
        window = self._here.recent
        if window is not None:  # else read with this move, when a packet lists them
            window.append(RecentMove(round=g["round_no"], n=g["move_no"], seat=seat.name, text=said, seq=g["seq"],
                                     by=HOST if by else None, why=by))
            del window[: -timekeeper.RECENT_LIMIT]
        archived = _archived(g["move_no"], seat.name, text, b64(nonce), block.payload, by)
        moved = [PublicMove(round=g["round_no"], n=g["move_no"], seat=seat.name, text=said,
                            by=HOST if by else None, why=by)]
        if by is None:
            c.execute(_TOUCH_SEAT, {"b_game": f.id, "b_name": seat.name, "b_at": at})
            timekeeper.moved(GameChange(self, c, g), seat.name)
        result = None
        ended = state
        if state.phase == OVER:
            result, state = self._end_round(c, g, state)
        seq = self._publish(c, g, state, moves=moved, events=events, result=result,
                            ended=ended if result is not None else None, archived=archived)
        if by:
            told = t("applied the host's move for {seat} ({why}): {move}; packet {seq}", seat=seat.name,
                     why=when.reason(by), move=said, seq=seq)
        else:
            told = t("applied {seat}'s move: {move}; packet {seq}", seat=seat.name, move=said, seq=seq)
        if result is not None:  # the host's apply and the daemon's log say when a round or the game ends
            told += t("clause sep") + t("round {n} is over: winners {winners}", n=result.round,
                             winners=join(list(result.winners)) if result.winners else t("nobody"))
        if g["status"] == "over":
            told += t("clause sep") + t("the game is over: {winners} won", winners=join(standings_winners(ended.gold)))
        return Outcome("applied", told, seq)

    def _end_round(self, c: Connection, g: GameRow, state: RoundState) -> tuple[Result, RoundState]:
        secret = self._round_secret(state.round_no)
        result = round_result(state, secret)
        c.execute(_END_ROUND, {"b_game": self.facts.id, "b_round": state.round_no, "last_seq": g["seq"] + 1,
                               "secret": secret.hex(), "result": to_json(result).decode()})
        if state.round_no >= ROUNDS_PER_GAME:
            g["status"] = "over"
            return result, state
        nxt = self._deal(c, g, state.round_no + 1, carry_after(state.players, state))
        return result, nxt

    def _archive(self, c: Connection, g: GameRow, final: RoundState, last: Signed[Packet],
                 log: RoundLog | None) -> Signed[Archive]:
        """Sign the ended round's archive (docs/protocol.md); `last` is the round's last packet,
        `log` the round as this Host kept it (None: read and open every move of the round)."""
        f = self.facts
        me = self._me()
        key = {"b_game": f.id, "b_round": final.round_no}
        rnd = c.execute(_ROUND, key).one()
        if log is None:
            box = self._own_box(g["box_key"])
            info = _host_info(f.id, "move")
            played = []
            for m in c.execute(_ROUND_MOVES, key):
                sealed = open_json(m.text_sealed, box, info)  # its text and nonce, sealed by this host
                played.append(_archived(m.n, m.seat, sealed["text"], sealed["nonce"], m.envelope, m.why))
            start = open_json(rnd.start_state_sealed, box, _host_info(f.id, "state"))
        else:
            played, start = log.moves, log.start
        if log is not None and log.chain is not None:
            chain = list(log.chain)
        else:
            chain = [Link(seq=r.seq, hash=r.hash, prev=r.prev)
                     for r in c.execute(_CHAIN, {"b_game": f.id, "b_from": rnd.first_seq - 1})]
        chain.append(Link(seq=last.doc.seq, hash=last.hash, prev=last.doc.prev))
        carried = json.loads(rnd.carried)
        archive = sign(Archive(
            game=f.id,
            round=final.round_no,
            invitation=rnd.invitation,
            joins=sorted(b64(e) for e in c.execute(_JOINS, key).scalars()),
            secret=rnd.secret,
            carried=Carried(**carried) if carried else Carried(),
            start=start,
            moves=played,
            chain=chain,
            handovers=timekeeper.archive_handovers(g),
            final=dump(final),
        ), me)
        c.execute(_SET_ARCHIVE, {**key, "b_archive": archive.armored()})
        return archive

    def _publish(self, c: Connection, g: GameRow, state: RoundState, *, moves: list[PublicMove], events: list,
                 result: Result | None = None, ended: RoundState | None = None,
                 handover: HandoverRecord | None = None, archived: ArchivedMove | None = None) -> int:
        """Sign and store the next packet; `archived`: the move it answers, as the round's
        archive lists it (appended to the round kept in memory)."""
        f = self.facts
        log = self._round_log(g)
        if archived is not None:
            played = ended.round_no if ended is not None else state.round_no
            if log is not None and log.round_no == played and len(log.moves) == archived.n - 1:
                log.moves.append(archived)
            else:
                log = None
        me = self._me()
        seq = g["seq"] + 1
        public = dump(view(state, None))
        parts: dict[str, str] = {}
        for st in f.seats:
            part = seat_part(state, st.name, events)
            parts[st.name] = seal_json(part, st.key, seal_info(f.id, seq, HOST, st.name, "part"), pad="part")
        over = g["status"] == "over"
        to_move = None if over else state.player
        doc = Packet(game=f.id, seq=seq, prev=g["head"], round=state.round_no,
                     phase="game-over" if over else "round-over" if result else "playing",
                     to_move=to_move, public=public, moves=moves,
                     events=cast("list[dict[str, Any]]", events_for(events, None)), parts=parts, result=result,
                     standings=Standings(gold=state.gold, winners=standings_winners(state.gold)) if over else None,
                     **timekeeper.packet_extras(GameChange(self, c, g), seq, to_move, handover))
        packet = sign(doc, me)
        armored = packet.armored()
        if ended is not None:
            armored += self._archive(c, g, ended, packet, log).armored()
        if self._dealt is not None:  # a round dealt by this change: its log starts now
            before = log.chain[-1:] if log is not None and log.chain else []
            self._dealt.chain = [] if g["seq"] == 0 else before if before and before[0].seq == g["seq"] else None
            log, self._dealt = self._dealt, None
        if log is not None and log.chain is not None:
            log.chain.append(Link(seq=seq, hash=packet.hash, prev=g["head"]))
        c.execute(_ADD_PACKET, dict(game_id=f.id, seq=seq, hash=packet.hash, prev=g["head"],
                                    round_no=state.round_no, armored=armored, created_at=self.now()))
        g["state_sealed"] = self._seal_state(g, dump(state))
        g["seq"], g["head"], g["public"] = seq, packet.hash, json.dumps({**public, "to_move": to_move})
        self._made = (state, log)
        return seq


def _handovers(config: str) -> int:
    """How many seats of a game were handed to a new key (its config's `handovers`)."""
    if '"handovers"' not in config:  # the common case, without parsing the config
        return 0
    return len(json.loads(config).get("handovers") or [])
