"""Games made by the CLI and played by its daemons: host and bots as real processes or bots in
threads of this process, by shared folder or by IMAP mail."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from folder_games import SEATS, keys_here
from processes import PBEM, cli_env, new_keys, pbem, start

from pbem.seat import keys

if TYPE_CHECKING:
    from mailservers import MailServers

    from pbem.auto.trustless_bot import TrustlessBot


def cli_game(root: Path, seats: list[str] = SEATS, *, trustless: bool = False,
             here: Callable[..., subprocess.CompletedProcess] | None = None) -> tuple[Path, Path, dict[str, Path]]:
    """Keys made with 'pbem key new --no-passphrase', the game with 'pbem game new', the
    folder with 'pbem folder init': all real processes; with `here` (the fixture), the same
    commands run in this process (for a test whose point comes after the set-up)."""
    homes = {n: root / f"home-{n}" for n in ["referee", *seats]}
    db = root / "saves" / "t.db"
    folder = root / "shared"
    pubs = keys_here(homes) if here else new_keys(homes)
    players = [a for s in seats for a in ("--player", f"{s}={pubs[s]}")]
    commands = [["game", "new", "t", "--host", "referee", *players, "--db", db, *(["--trustless"] if trustless else [])],
                ["folder", "init", "t", folder, "--db", db]]
    for args in commands:
        (here or pbem)(*args, home=homes["referee"], cwd=root, ok=True)
    return db, folder, homes


def start_host(db: Path, folder: Path, home: Path, log: Path, poll: float = 0.5) -> subprocess.Popen:
    """`pbem host run --folder` as a process of its own. A file arriving in the inbox wakes it
    (pbem.watch), so `poll` is only how often it looks at the clock (deadlines) when nothing came."""
    return start([*PBEM, "host", "run", "t", "--db", db, "--folder", folder, "--poll", str(poll)],
                 env=cli_env(home), stdout=log.open("ab"), stderr=subprocess.STDOUT)


def start_bots(folder: Path, homes: dict[str, Path], root: Path, seats: list[str] = SEATS,
               kind: str = "smart", poll: float = 1.0) -> dict[str, subprocess.Popen]:
    """`pbem bot run --folder` for each of `seats`, as processes of their own. A bot waits for the
    kernel's word that a packet came (inotify: test_autohost.py shows it answers at once even
    with --poll 60), so `poll` is only how often it looks when nothing came: at 0.02 s each idle
    bot took a few percent of a core for the whole game, doing nothing."""
    return {s: start([*PBEM, "bot", "run", "--as", s, "--folder", folder, "--bot", kind,
                      "--seed", f"seed-{s}", "--poll", str(poll)],
                     env=cli_env(homes[s]), stdout=(root / f"bot-{s}.log").open("ab"), stderr=subprocess.STDOUT)
            for s in seats}


class BotHere:
    """`pbem bot run --as SEAT --folder DIR --bot KIND --seed seed-SEAT --poll POLL` (the FolderBot
    that command runs, in pbem.auto.seat_bot's loop) in a thread of this process, with what the
    tests use of a subprocess.Popen: poll(), wait(), terminate(), kill(), returncode (0 once the
    game is over or, as the command exits at a SIGTERM, once stopped; 1 if the loop raised). For a
    test whose point is the host's processes (a daemon killed, leases), not the players': a
    bot's process costs its start-up alone more CPU than its share of the game. `pace`: seconds
    each step waits first (a stop ends the wait), so that a game lasts as long as what the test
    does to its daemons meanwhile needs: in threads, bots play a hundred packets in a few seconds."""

    def __init__(self, folder: Path, seat: str, home: Path, log: Path, kind: str = "smart", poll: float = 1.0,
                 pace: float = 0.0) -> None:
        from pbem.auto import seat_bot

        self.args = ["bot", "run", "--as", seat, "--folder", str(folder), "--bot", kind, "--poll", str(poll)]
        self.returncode: int | None = None
        self.pace = pace
        self._stopping = threading.Event()
        self._out = log.open("a", encoding="utf-8")
        from pbem.folder.play import is_trustless

        me = keys.load_identity(home, seat, None)
        self._bot: seat_bot.FolderBot | TrustlessBot
        if is_trustless(folder):  # as the command, the trustless game's bot for such a folder
            from pbem.auto.trustless_bot import folder_bot
            from pbem.protocol.mental.group import base_mul

            base_mul(1)  # the group's library loaded here, once, before bots in threads use it
            self._bot = folder_bot(folder, me, home, self._log, kind, f"seed-{seat}", think=0.1)
        else:
            self._bot = seat_bot.FolderBot(folder, me, home, kind, f"seed-{seat}", self._log, think=0.1)
        self._thread = threading.Thread(target=self._run, args=(poll,), name=f"bot {seat}", daemon=True)
        self._thread.start()

    def _log(self, line: str) -> None:
        print(line, file=self._out, flush=True)

    def step(self) -> bool:
        if self.pace:
            self._stopping.wait(self.pace)
        if self._stopping.is_set():
            from pbem.auto.polling import Stopped

            raise Stopped()  # what a SIGTERM raises in the command's loop
        return self._bot.step()

    def _run(self, poll: float) -> None:
        from pbem.auto import seat_bot

        code = 1
        try:
            seat_bot.run(_Stepper(self.step, self._bot.wait), poll=poll, log=self._log)
            code = 0
        except BaseException:
            import traceback

            self._log(traceback.format_exc())
        finally:
            watch = self._bot.watch if isinstance(self._bot, seat_bot.FolderBot) else self._bot.bell
            if watch is not None:
                watch.close()
            self._out.close()
            self.returncode = code

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def terminate(self) -> None:
        self._stopping.set()

    def send_signal(self, sig: int) -> None:
        self.terminate()

    def kill(self) -> None:
        self.terminate()


@dataclass
class _Stepper:
    """What seat_bot.run steps and waits on."""
    step: Callable[[], bool]
    wait: Callable[[float], bool]


def bots_here(folder: Path, homes: dict[str, Path], root: Path, seats: list[str] = SEATS, kind: str = "smart",
              poll: float = 1.0, pace: float = 0.0) -> dict[str, BotHere]:
    """start_bots, each bot in a thread of this process (BotHere); its log in root/bot-SEAT.log."""
    return {s: BotHere(folder, s, homes[s], root / f"bot-{s}.log", kind, poll, pace) for s in seats}


def imap_game(root: Path, s: MailServers, *options: str,
              here: Callable[..., subprocess.CompletedProcess] | None = None) -> tuple[Path, dict[str, Path]]:
    """Keys, the game with everyone's address, and the host's SMTP settings, all by the CLI
    (`options` for 'pbem game new', e.g. --trustless): real processes; with `here` (the
    fixture), the same commands run in this process (for a test whose point comes after the set-up)."""
    homes = {n: root / f"home-{n}" for n in ["host", *SEATS]}
    # the host's key is "referee", its mailbox "host"
    named = {"referee" if n == "host" else n: h for n, h in homes.items()}
    pubs = keys_here(named) if here else new_keys(named)
    db = root / "saves" / "t.db"
    args = [a for p in SEATS for a in ("--player", f"{p}={pubs[p]}", "--email", f"{p}={s.address(p)}")]
    commands = [["game", "new", "t", "--host", "referee", *args, "--email", f"host={s.address('host')}", "--db", db,
                 *options],
                ["game", "smtp", "t", "--db", db, "--server", "127.0.0.1", "--port", s.smtp_port, "--security", "none",
                 "--from", s.address("host")]]
    for command in commands:
        (here or pbem)(*command, home=homes["host"], cwd=root, ok=True)
    return db, homes


def start_imap(s: MailServers, who: str, args: list[str], home: Path, log: Path) -> subprocess.Popen:
    """`pbem ARGS` for `who`, reading its mailbox on the IMAP server of `s`, as a process of its own."""
    # Each waits for its mail by IDLE, as pbem does by default: the tests' pymap
    # (tests/pymap_server.py) tells an idling client of new mail within moments, and a process
    # that waits costs nothing meanwhile (polling made every idle seat ask the server ten times
    # a second). --poll is then the first pause after a failed step (the server restarted).
    env = {**cli_env(home), "PBEM_IMAP_PASSWORD": f"pw-{who}"}
    return start([*PBEM, *args, "--imap", s.imap.url(who), "--poll", "0.1"], env=env,
                 stdin=subprocess.DEVNULL, stdout=log.open("ab"), stderr=subprocess.STDOUT)
