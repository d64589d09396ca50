"""A bot on one seat of a trustless game, holding only its own key, over a folder or mail.

It joins with its key shares, follows the chain, checks every proof, shuffles when its turn
in the setup comes, sends its deal tokens, opens its own role and hand, and then plays: the
engine's bot chooses on the seat's view; the seat sends the tokens it owes with each move,
alone when the player to move waits for them, its goal tokens when a goal is reached, and
its round key at each round's end, until the game is over. The transport is the client's
(pbem/seat/trustless_client.py): `open` gives it once the game can be played.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.bots import THINK, make_bot
from pbem.auto.polling import Log, stamp_log
from pbem.errors import UsageError
from pbem.names import TABLE
from pbem.protocol.crypto import Identity
from pbem.seat.trustless_client import TrustlessClient
from pbem.ui.words import step_name, t
from pbem.watch import Doorbell


@dataclass
class TrustlessBot:
    open: Callable[[], TrustlessClient[Any] | None]  # None: the game cannot be played yet
    log: Log = field(default=stamp_log("bot"))
    bot: str = "smart"
    seed: str = "0"
    think: float | None = None  # the search bot's seconds a decision (None: its default)
    client: TrustlessClient[Any] | None = None
    resent: set[int] = field(default_factory=set)
    bell: Doorbell | None = None  # rings when a packet may have come (a game folder's): waited on

    def wait(self, seconds: float) -> bool:
        """Until a packet may have come or `seconds` passed (the loop's poll period)."""
        if self.client is None or self.bell is None:  # no game to follow yet, or no folder to watch
            time.sleep(seconds)
            return False
        return self.bell.wait(seconds)

    def step(self) -> bool:
        """One look at the transport; True when there is nothing more this bot can do."""
        if self.client is None:
            self.client = self.open()
            if self.client is None:
                return False
            self.log(t("playing seat {seat} of trustless game {game}", seat=self.client.seat, game=self.client.game))
            think = THINK if self.think is None else self.think
            self.client.ts.choose = make_bot(self.bot, self.client.seat, self.seed, think, clock=time.monotonic).choose
        c = self.client
        if not c.joined():
            where, _ = c.join()
            self.log(t("joined with key shares: {path}", path=_short(where)))
        for line in c.sync():
            self.log(line)
        key, step = c.step_key(), c.ts.table.step()
        out = c.answer() if key not in self.resent else None  # once a step (again once after a restart)
        if out is not None:
            where, new = out
            self.resent.add(key)
            said = t("packet {seq}: {step} sent: {path}") if new else t("packet {seq}: {step} sent again: {path}")
            self.log(said.format(seq=c.ts.head[0], step=step_name(step), path=_short(where)))
        if c.ts.table.step() == "over":
            gold = c.ts.table.ended[-1].gold
            self.log(t("the game is over: gold {gold}", gold=t("list sep").join(f"{p} {g}" for p, g in gold.items())))
            return True
        return False


def _short(where: object) -> str:
    return where.name if isinstance(where, Path) else str(where)


def folder_bot(dir: Path, identity: Identity, home: Path, log: Log, bot: str = "smart",
               seed: str = "0", think: float | None = None) -> TrustlessBot:
    """A bot on this key's seat of the trustless game folder at `dir`."""
    from pbem.folder.trustless import folder_seat

    def open_seat() -> TrustlessClient[Any] | None:
        try:
            return folder_seat(dir, identity, home)
        except UsageError:
            return None  # the folder is not laid out yet

    return TrustlessBot(open_seat, log, bot, seed, think, bell=Doorbell([Path(dir) / "packets" / TABLE]))
