"""Waiting for a seat's turn (`pbem turn --wait`; docs/playing.md).

The seat's table is read as `pbem turn` reads it (pbem.auto.turn.open_turn), again and again,
until it waits for this seat's move or the game is over; between two reads it waits for a
change instead of looking every few seconds: the kernel says when a game folder's packets
change (pbem.watch: inotify on Linux), an IMAP server when mail comes (IDLE), and the watch
is set up before the first read, so a packet published in between wakes it. A mail server
that drops the connection is tried again with back-off; `timeout` ends the wait with
`WaitTimedOut` (exit 12).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pbem.auto.polling import backoff
from pbem.auto.turn import MailLink, Turn, open_turn
from pbem.errors import UsageError, WaitTimedOut, msg
from pbem.mail.imap import MailboxDown
from pbem.protocol.crypto import Identity
from pbem.ui.words import t
from pbem.watch import POLL, Doorbell, Watch

Told = Callable[[Turn | None, str], None]  # a read that did not end the wait: the turn (None: it failed) and a line


def wait_turn(target: str, me: Identity, home: Path, mail: MailLink, *, timeout: float | None = None,
              told: Told = lambda turn, line: None) -> Turn:
    """The seat's turn at TARGET once it asks for a move or the game is over. Each read
    before that is `told`, with the line that says what the wait is for."""
    watch = _watch(target, mail)
    end = None if timeout is None else time.monotonic() + timeout
    failures = 0
    followed: list[str] = []  # a trustless table's news, each read's: all shown with the table at the end
    try:
        while True:
            turn: Turn | None = None
            try:
                turn = open_turn(target, me, home, mail)
                failures = 0
            except MailboxDown as exc:
                failures += 1
                told(None, t("{error}; trying again", error=exc))
            if turn is not None:
                followed += turn.followed
                if turn.asks() or turn.ended():
                    turn.followed = followed
                    return turn
                if watch is None:
                    raise UsageError(msg("--wait is for a game folder or a mail game: {target} is one packet file",
                                         target=target), hint=msg("the host's next packet is a new file"))
                told(turn, _waiting_line(turn))
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                raise WaitTimedOut(msg("not your turn after {seconds} s of waiting", seconds=f"{timeout:g}"),
                                   hint=msg("wait longer with --timeout S, or without it"))
            try:
                if turn is None or watch is None:
                    time.sleep(min(backoff(POLL, failures), left if left is not None else float("inf")))
                else:
                    watch.wait(left if left is not None else float("inf"))
            except MailboxDown as exc:
                failures += 1
                told(None, t("{error}; trying again", error=exc))
    finally:
        if watch is not None:
            watch.close()


def _watch(target: str, mail: MailLink) -> Watch | None:
    """What says that the seat's table may have changed: a game folder's packets and notices, or
    new mail (UsageError: a mail game whose mail is read from nowhere). None: a packet file."""
    path = Path(target)
    if (path / "pbem-folder.json").exists():
        return Doorbell([path, path / "packets"], subfolders=True, safety=True).arm()
    if path.exists():
        return None
    watch = mail.watch()
    if watch is None:
        raise UsageError(msg("--wait reads new mail, and none is set up"),
                         hint=msg("set up your mail once with 'pbem mail setup --imap URL' (or pass --maildir DIR)"))
    return watch


def _waiting_line(turn: Turn) -> str:
    """What the wait is for, after the first read."""
    if not turn.started:
        return t("waiting for every seat to join, then for your turn")
    if turn.answered():
        if turn.client is not None:  # a trustless seat sends its shuffle and tokens too, not only moves
            return t("waiting for the host to take what you sent, then for your turn")
        return t("waiting for the host to take your move, then for your turn")
    if turn.sp is not None and not turn.sp.old:
        return t("waiting for your turn: {player} is to move", player=turn.sp.doc.to_move)
    return t("waiting for your turn")
