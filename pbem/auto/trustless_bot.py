"""A bot on one seat of a trustless game, through a shared folder, holding only its own key.

It joins with its key shares, follows the chain, checks every proof, shuffles when its turn
in the setup comes, sends its deal tokens, opens its own role and hand, and then plays: the
engine's bot chooses on the seat's view; the seat sends the tokens it owes with each move,
alone when the player to move waits for them, its goal tokens when a goal is reached, and
its round key at each round's end, until the game is over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engine.bots import make_bot
from pbem.auto.host_runner import Log, stamp_log
from pbem.errors import UsageError
from pbem.folder.trustless import TrustlessFolderSeat
from pbem.protocol.crypto import Identity


@dataclass
class TrustlessFolderBot:
    dir: Path
    identity: Identity
    home: Path
    log: Log = field(default=stamp_log("bot"))
    bot: str = "smart"
    seed: str = "0"
    client: TrustlessFolderSeat | None = None
    resent: set[int] = field(default_factory=set)

    def step(self) -> bool:
        """One look at the folder; True when there is nothing more this bot can do."""
        if self.client is None:
            try:
                self.client = TrustlessFolderSeat.open(self.dir, self.identity, self.home)
            except UsageError:
                return False  # the folder is not laid out yet
            self.log(f"playing seat {self.client.seat} of trustless game {self.client.inv.game}")
            self.client.ts.choose = make_bot(self.bot, self.client.seat, self.seed).choose
        c = self.client
        if not c.joined():
            path, _ = c.join()
            self.log(f"joined with key shares: {path.name}")
        for line in c.sync():
            self.log(line)
        key = c.step_key()
        out = c.answer() if key not in self.resent else None  # once a step (again once after a restart)
        if out is not None:
            path, new = out
            self.resent.add(key)
            self.log(f"packet {c.ts.head[0]}: {'sent' if new else 'sent again'} {path.name}")
        if c.ts.table.step() == "over":
            gold = c.ts.table.ended[-1].gold
            self.log(f"the game is over: gold {', '.join(f'{p} {g}' for p, g in gold.items())}")
            return True
        return False
