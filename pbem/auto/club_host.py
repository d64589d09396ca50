"""The store's daemon: every game of one store in one watch loop, each over its own
transport, shared with other daemons on the store by leases (`pbem host run --all`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.exc import DBAPIError

from pbem.auto.host_runner import FolderHost, MailHost, Transport, no_transport
from pbem.auto.polling import Log, stamp_log
from pbem.errors import PbemError
from pbem.host.interface import GameHost
from pbem.host.leases import Leases
from pbem.host.paths import beside, sqlite_file, store_folder
from pbem.host.referee import Host
from pbem.host.store import Store
from pbem.protocol.crypto import Identity
from pbem.ui import failures
from pbem.ui.words import t
from pbem.watch import Arrivals, arrivals


@dataclass
class ClubHost:
    """Every game of one store in one watch loop, each over its own transport: classic and
    trustless games alike, and the trustless games' files beside the store (made apart).

    Each pass lists the store's games (a query per kind) and the trustless games' files, renews its
    leases when due (pbem.host.leases: with other daemons on the store, each serves its share),
    starts serving the games it holds that are new or were not ready, and steps each; a game whose step fails
    (bad input that is not even a move, a folder gone, SMTP down) is logged and tried again
    next pass, and the others go on. The host keys are unlocked once per key name. Between two
    such passes (a poll period), a file that arrives in the inbox of a game it serves wakes it
    at once, and only that game is stepped (`wait`). Never done: it serves until stopped.
    """

    store: Store
    unlock: Callable[[str], Identity]
    home: Path  # the key home: its mail profile sends for games without their own SMTP settings
    log: Log = field(default=stamp_log())
    leases: Leases | None = None  # the games this daemon may serve (shared with other daemons); None: all
    serving: dict[str, FolderHost | MailHost] = field(default_factory=dict)
    finished: set[str] = field(default_factory=set)
    waiting: dict[str, str] = field(default_factory=dict)  # game id -> why it is not served (said once)
    keys: dict[str, Identity] = field(default_factory=dict)
    blind: dict[Path, tuple[str, str, str]] = field(default_factory=dict)  # a trustless game's file -> id, name, status
    said: tuple[int, int, int] | None = None  # the lease round last logged: held, active, daemons
    lease_trouble: str | None = None
    arrivals: Arrivals | None = field(default_factory=arrivals)  # which served inboxes had a file arrive
    inboxes: dict[Path, str] = field(default_factory=dict)  # a watched inbox -> its game's id
    arrived: set[str] | None = None  # the games a file arrived for since the last step; None: look at every game
    full_at: float = 0.0  # time.monotonic() when the next look at every game is due (-1: once the wait begins)

    def step(self) -> bool:
        every = self.arrived is None or time.monotonic() >= self.full_at  # a look at every game is due
        if not every and not (self.leases is not None and self.leases.due()):
            for game_id in sorted(self.arrived or ()):  # only the games a file arrived for
                stepper = self.serving.get(game_id)
                if stepper is not None and (self.leases is None or self.leases.holds(game_id)):
                    self._step_game(game_id, stepper)
            return False
        # the games listed: every one is looked at, or (a lease round due) only the ones a file
        # arrived for and those this daemon has just taken
        games: list[tuple[str, str, str, Path | bool]] = [
            (game_id, name, status, False) for game_id, name, status in self.store.game_list()]
        games += [(game_id, name, status, True) for game_id, name, status in self.store.trustless_list()]
        listed = [g for g in games + self._blind_games()
                  if g[0] not in self.finished and (g[2] != "over" or g[0] in self.serving)]
        for game_id, name, _status, where in listed:
            if self.leases is not None and self.leases.due():  # also within a long pass: renewed in time
                self._lease_round([g[0] for g in listed])
            if self.leases is not None and not self.leases.holds(game_id):
                self._drop(game_id)  # another daemon's, or this one's lease ran out: its inbox is not read
                continue
            stepper = self.serving.get(game_id)
            if stepper is None:
                stepper = self._start(game_id, name, stamp_log(f"host {name}"), where)
            elif not every and game_id not in (self.arrived or ()):
                continue
            elif every:
                self._watch(game_id, stepper)  # its inbox and the folder above it both gone a while: watched again
            if stepper is not None:
                self._step_game(game_id, stepper)
        if every:
            self.full_at = -1.0  # set by the wait that follows, a poll period from its start
        return False

    def wait(self, seconds: float) -> bool:
        """Until the next step: at once when a file arrives in the inbox of a game this daemon
        serves (that step reads those inboxes alone), else when the next look at every game is
        due (`seconds` after the last) or the next lease round. Without the kernel's word
        (pbem.watch.arrivals), every step looks at every game, `seconds` apart."""
        if self.arrivals is None:
            time.sleep(seconds)
            return True
        now = time.monotonic()
        if self.full_at < 0:  # a look at every game just ended
            self.full_at = now + seconds
        end = self.full_at if self.leases is None else min(self.full_at, self.leases.next_round)
        changed = self.arrivals.wait(end - now) if end > now else set()
        self.arrived = None if changed is None else {self.inboxes[d] for d in changed if d in self.inboxes}
        return True

    def _step_game(self, game_id: str, stepper: FolderHost | MailHost) -> None:
        try:
            if stepper.step():
                self.finished.add(game_id)
                self._drop(game_id)
        except Exception as exc:  # one game's trouble never stops the others
            stepper.log(t("step failed ({why}); retrying next pass", why=f"{type(exc).__name__}: {exc}"))

    def _lease_round(self, active: list[str]) -> None:
        assert self.leases is not None
        try:
            held = self.leases.refresh(active)
        except Exception as exc:  # the store unreachable: what is held is served until its lease runs out
            why = f"{type(exc).__name__}: {failures.message(exc) if isinstance(exc, PbemError) else exc}"
            if self.lease_trouble != why:
                self.lease_trouble = why
                self.log(t("could not renew the leases ({why}); will retry", why=why))
            return
        self.lease_trouble = None
        now = (len(held), len(active), self.leases.live)
        if now != self.said:
            self.said = now
            self.log(t("holding {held} of {active} active games; {daemons} daemon(s) share the store",
                       held=now[0], active=now[1], daemons=now[2]))

    def _drop(self, game_id: str) -> None:
        stepper = self.serving.pop(game_id, None)
        if stepper is None:
            return
        if isinstance(stepper, MailHost):
            stepper.source.close()
        elif self.arrivals is not None:
            self.arrivals.unwatch(stepper.folder.inbox_dir)
            self.inboxes.pop(stepper.folder.inbox_dir, None)
        stepper.host.close()

    def close(self) -> None:
        """Stop serving: every game's stepper closed, the leases given back for the others to take now."""
        for game_id in list(self.serving):
            self._drop(game_id)
        if self.arrivals is not None:
            self.arrivals.close()
        if self.leases is not None:
            try:
                self.leases.release()
            except Exception as exc:  # they run out by themselves within a lease period
                self.log(t("could not renew the leases ({why}); will retry", why=f"{type(exc).__name__}: {exc}"))

    def _blind_games(self) -> list[tuple[str, str, str, Path | bool]]:
        """The trustless games' files beside the store; each is opened once to learn its game and
        whether it is over (one that ends while served is then in `finished`)."""
        from pbem.host import blind

        out: list[tuple[str, str, str, Path | bool]] = []
        here = sqlite_file(self.store.url)
        for path in beside(store_folder(self.store.url)):
            if here is not None and path.resolve() == here.resolve():
                continue
            if path not in self.blind:
                try:
                    with blind.BlindHost(path) as host:
                        self.blind[path] = (host.game_id(), host.name, host.head()[1])
                except (PbemError, OSError, DBAPIError):  # e.g. a file being written: look again next pass
                    continue
            game_id, name, status = self.blind[path]
            out.append((game_id, name, status, path))
        return out

    def _start(self, game_id: str, name: str, log: Log, where: Path | bool = False) -> FolderHost | MailHost | None:
        """Serve the game: a classic game of the store (`where` False), a trustless one (True) or
        the trustless game of a file beside the store (its path)."""
        from pbem.host.blind import BlindHost

        host: GameHost | None = None
        try:
            if isinstance(where, Path):
                host = BlindHost(where, game=game_id)
            else:
                host = BlindHost(self.store, game=game_id) if where else Host(self.store, game=game_id)
            key = host.host_name()
            if key not in self.keys:
                self.keys[key] = self.unlock(key)
            host.identity = self.keys[key]
            transport = Transport.of(host)
            if transport is None:
                raise no_transport(name)
            stepper = transport.stepper(host, log, self.home)
        except (PbemError, OSError) as exc:
            if host is not None:
                host.close()
            why = failures.message(exc)
            if self.waiting.get(game_id) != why:
                self.waiting[game_id] = why
                self.log(t("not serving {game} yet: {why}", game=name, why=why))
            return None
        self.waiting.pop(game_id, None)
        self.serving[game_id] = stepper
        self._watch(game_id, stepper)
        return stepper

    def _watch(self, game_id: str, stepper: FolderHost | MailHost) -> None:
        """A folder game's inbox watched by the kernel (a file that arrives wakes the loop): now,
        or once the inbox is there again."""
        if isinstance(stepper, FolderHost) and self.arrivals is not None:
            self.inboxes[stepper.folder.inbox_dir] = game_id
            self.arrivals.watch(stepper.folder.inbox_dir)
