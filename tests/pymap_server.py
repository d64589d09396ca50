"""pymap as the tests run it: `python tests/pymap_server.py ARGS` with pymap's own arguments.

While a client IDLEs, pymap's Maildir backend looks at the folder for new mail once a second
(its mail arrives as files the SMTP server writes, which pymap cannot be told of). A real server
tells an idling client within moments (Dovecot: half a second, by inotify), so here it looks every
IDLE_CHECK seconds: whole games can wait for each mail by IDLE, as pbem does by default, rather
than by polling.

pymap keeps a moved or expunged message's uid in the folder's uid list (until a CHECK), and then
lists the folder's files again for each such uid on every look: a host's inbox that had held a
few hundred mails cost more at each look than all the rest. Here a moved or expunged message
leaves the uid list at once, as it leaves a real server's index.

A full look (pymap re-reads the folder's uid list and every message's file name, for each idling
client) fifty times a second was most of the CPU a whole game took. So each tick first stats the
folder's new/ and cur/ directories, as inotify would tell of them: pymap looks only when one of
them changed since its last look (a file delivered, moved, renamed by a flag, removed), when that
change is too recent for the directory's time stamp to tell a second one from it, or, as pymap
does anyway, once a second.
"""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Iterable

from pymap.backend.maildir.mailbox import MailboxData
from pymap.backend.maildir.uidlist import UidList
from pymap.backend.session import BaseSession
from pymap.concurrent import Event
from pymap.main import main
from pymap.selected import SelectedMailbox

IDLE_CHECK = 0.02  # seconds: each move waits for two IDLE wake-ups; a stat of two directories is cheap
LOOK_ANYWAY = 1.0  # seconds: pymap's own period
UNSETTLED = 0.05  # seconds: a directory changed this recently may change again within its time stamp's tick

Stamp = tuple[int, ...] | None  # None: look now
_looked: weakref.WeakKeyDictionary[BaseSession, dict[str, Stamp]] = weakref.WeakKeyDictionary()
_check_mailbox = BaseSession.check_mailbox


def _stamp(folder: str) -> Stamp:
    """When the folder's new/ and cur/ last changed; None if that was a moment ago (or unknown)."""
    try:
        times = tuple(os.stat(os.path.join(folder, sub)).st_mtime_ns for sub in ("new", "cur"))
    except OSError:
        return None
    return None if time.time_ns() - max(times) < UNSETTLED * 1e9 else times


async def _check_mailbox_on_change(self: BaseSession, selected: SelectedMailbox, *,
                                   wait_on: Event | None = None, housekeeping: bool = False) -> SelectedMailbox:
    if wait_on is not None:  # an IDLE tick
        mailboxes = self.mailbox_set
        folder = mailboxes._layout.get_path(selected.lookup, mailboxes.delimiter)  # type: ignore[attr-defined]
        looked = _looked.setdefault(self, {})
        before = looked.get(selected.lookup)
        give_up = time.monotonic() + LOOK_ANYWAY
        while True:
            await wait_on.wait(timeout=IDLE_CHECK)
            now = _stamp(folder)
            if wait_on.is_set() or now is None or now != before or time.monotonic() >= give_up:
                break
        looked[selected.lookup] = now  # taken before the look: a change from here on is the next tick's
    return await _check_mailbox(self, selected, housekeeping=housekeeping)


BaseSession.check_mailbox = _check_mailbox_on_change  # type: ignore[method-assign]

_move, _delete = MailboxData.move, MailboxData.delete


async def _forget(mbx: MailboxData, uids: Iterable[int]) -> None:
    async with UidList.with_write(mbx._path) as uidl:
        for uid in uids:
            try:
                uidl.remove(uid)
            except KeyError:
                pass  # another session's move or expunge forgot it first


async def _move_and_forget(self: MailboxData, uid: int, destination: MailboxData, *, recent: bool = False) -> int | None:
    moved = await _move(self, uid, destination, recent=recent)
    if moved is not None:
        await _forget(self, [uid])
    return moved


async def _delete_and_forget(self: MailboxData, uids: Iterable[int]) -> None:
    uids = list(uids)
    await _delete(self, uids)
    await _forget(self, uids)


MailboxData.move = _move_and_forget  # type: ignore[method-assign]
MailboxData.delete = _delete_and_forget  # type: ignore[method-assign]

if __name__ == "__main__":
    main()
