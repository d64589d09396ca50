"""One change of a game as the referee opens it (pbem.host.change.Change): its transaction,
the game's row it edits, what it decodes once (settings, memo, standings) and writes back
once when it commits, and what the Host kept from its last change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from msgspec.structs import replace
from sqlalchemy import bindparam, update

from pbem.errors import BadPacket, BadSignature, kind_word, msg
from pbem.host import moving, requests, round_store
from pbem.host import settings as kept
from pbem.host.settings import Memo, Settings, Standing
from pbem.host.tables import SEAT_ROWS, seats

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from engine.state import RoundState
    from pbem.host.change import Facts, GameRow, Seat
    from pbem.host.clock import Clock
    from pbem.host.deadlines import Timing
    from pbem.host.interface import Outcome
    from pbem.host.memo import RoundLog
    from pbem.protocol.crypto import Identity, OwnBox, PublicKey
    from pbem.protocol.documents import HandoverRecord, RecentMove, Signed

_SET_STANDING = update(seats).where(seats.c.game_id == bindparam("b_game"), seats.c.name == bindparam("b_name"))


class HostSide(Protocol):
    """What a change uses of the Host that opened it: the game's facts, its clock, the host's
    key and box, and what the Host kept from its last change at the same head (taken)."""

    facts: Facts
    clock: Clock

    def now(self) -> str: ...

    def me(self) -> Identity: ...

    def own_box(self, sealed_key: str | None) -> OwnBox: ...

    def sealing_box(self, g: GameRow) -> OwnBox: ...

    def round_secret(self, round_no: int) -> bytes: ...

    def kept_state(self, g: GameRow) -> RoundState: ...

    def kept_log(self) -> RoundLog | None: ...

    def kept_recent(self) -> list[RecentMove] | None: ...

    def recent_window(self, c: Connection, g: GameRow) -> list[RecentMove]: ...


class GameChange:
    """One change of a game (pbem.host.change.Change): its transaction `c`, the game's row `g`
    that it edits, and the Host whose key signs and whose kept state it uses; `made` and
    `dealt` are what the change published and dealt, kept by the Host once it commits."""

    __slots__ = ("host", "c", "g", "clock", "made", "dealt", "_settings", "_memo", "_standings")

    def __init__(self, host: HostSide, c: Connection, g: GameRow) -> None:
        self.host, self.c, self.g = host, c, g
        self.clock: Clock = host.clock
        self.made: tuple[RoundState, RoundLog | None] | None = None
        self.dealt: RoundLog | None = None
        self._settings: Settings | None = None
        self._memo: Memo | None = None
        self._standings: tuple[dict[str, Standing], dict[str, dict[str, Any]]] | None = None  # and as read

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = kept.settings_of(self.g["settings"])
        return self._settings

    @property
    def memo(self) -> Memo:
        if self._memo is None:
            self._memo = kept.memo_of(self.g["memo"])
        return self._memo

    def standings(self) -> dict[str, Standing]:
        if self._standings is None:
            rows = self.c.execute(SEAT_ROWS, {"b_game": self.g["id"]}).all()
            self._standings = ({r.name: kept.standing_of(r) for r in rows}, {r.name: kept.standing_row(kept.standing_of(r)) for r in rows})
        return self._standings[0]

    def standing(self, seat: str) -> Standing:
        return self.standings()[seat]

    def set_timing(self, timing: Timing) -> None:
        self._settings = kept.replaced(self.settings, timing=timing)
        self.g["settings"] = kept.encode(self._settings)

    def commit(self) -> None:
        """What the change decoded, encoded once into its row and the seats' rows."""
        if self._memo is not None:
            self.g["memo"] = kept.encode(self._memo)
        if self._standings is not None:
            now, read = self._standings
            for name, st in now.items():
                row = kept.standing_row(st)
                if row != read[name]:
                    self.c.execute(_SET_STANDING, {**row, "b_game": self.g["id"], "b_name": name})

    @property
    def facts(self) -> Facts:
        return self.host.facts

    def now(self) -> str:
        return self.host.now()

    def signer(self) -> Identity:
        return self.host.me()

    def own_box(self) -> OwnBox:
        return self.host.own_box(self.g["box_key"])

    def sealing_box(self) -> OwnBox:
        return self.host.sealing_box(self.g)

    def round_secret(self, round_no: int) -> bytes:
        return self.host.round_secret(round_no)

    def state(self) -> RoundState:
        return self.host.kept_state(self.g)

    def round_log(self) -> RoundLog | None:
        return self.host.kept_log()

    def kept_recent(self) -> list[RecentMove] | None:
        return self.host.kept_recent()

    def seat_of(self, block: Signed[Any]) -> Seat:
        name = block.doc.seat
        seat = self.facts.seat(name)
        if seat is None:
            raise BadPacket(msg("no seat {name} in game {game}", name=repr(name), game=self.facts.id))
        if block.signer.encode() != seat.key.encode():
            requests.refuse_former_key(self, seat, block)
            raise BadSignature(msg("{kind} for seat {name} is signed by key {fingerprint}, not the seat's key",
                                 kind=kind_word(block.kind), name=repr(name), fingerprint=block.signer.fingerprint()))
        return seat

    def recent_window(self) -> list[RecentMove]:
        return self.host.recent_window(self.c, self.g)

    def publish(self, state: RoundState, *, handover: HandoverRecord | None = None) -> int:
        return round_store.publish(self, state, moves=[], events=[], handover=handover)

    def play_for(self, seat: Seat, why: str, text: str | None = None) -> Outcome:
        return moving.play_for(self, seat, self.state(), why, text)

    def hand_over(self, seat: str, key: PublicKey, handovers: int) -> None:
        """The Host's facts say `seat` is held by `key`; Host._change restores the old facts
        if the change does not commit."""
        f = self.host.facts
        self.host.facts = replace(f, seats=tuple(replace(s, key=key) if s.name == seat else s for s in f.seats),
                                  handovers=handovers)
