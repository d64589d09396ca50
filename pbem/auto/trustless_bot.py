"""A bot on one seat of a trustless game, through a shared folder, holding only its own key.

It joins with its key shares, follows the chain, checks every proof, shuffles when its turn
in the setup comes, sends its deal tokens, and opens its own role and hand. Play after the
deal is not built yet (docs/trustless.md §9): the bot says so once and stops.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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
        if c.ts.table.step() == "move":
            _, hand = c.ts.hand()
            if all(card is not None for card in hand):
                self.log(f"round 1 dealt: my role and {len(hand)} cards are open to me; "
                         "play after the deal is not built yet (docs/trustless.md section 9)")
                return True
        return False
