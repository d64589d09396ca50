"""pymap as the tests run it: `python tests/pymap_server.py ARGS` with pymap's own arguments.

While a client IDLEs, pymap's Maildir backend looks at the folder for new mail once a second
(its mail arrives as files the SMTP server writes, which pymap cannot be told of). A real server
tells an idling client within moments (Dovecot: half a second, by inotify), so here the kernel
tells (inotify, on the folder's new/ and cur/) and the folder is looked at as soon as a file came,
left, or was renamed (a flag): whole games can wait for each mail by IDLE, as pbem does by
default, rather than by polling. Between changes an idling client costs next to nothing (a look
at two directories fifty times a second cost pymap 3 ms of CPU a second for each idling client);
pymap's own look once a second stays.

pymap keeps a moved or expunged message's uid in the folder's uid list (until a CHECK), and then
lists the folder's files again for each such uid on every look: a host's inbox that had held a
few hundred mails cost more at each look than all the rest. Here a moved or expunged message
leaves the uid list at once, as it leaves a real server's index.

A message is fetched as the bytes its file holds (lines ended by LF, as pymap serves them), as a
real server serves it: pymap parsed each file with the email package and wrote it out again
(folding long headers anew) before its own parse: a tenth of its CPU for each mail a client reads.
"""

from __future__ import annotations

import ctypes
import os
import select
import threading
import weakref
from collections.abc import Iterable

from pymap.backend.maildir.mailbox import LoadedMessage, MailboxData, Message
from pymap.backend.maildir.uidlist import UidList
from pymap.backend.session import BaseSession
from pymap.concurrent import Event, _ThreadingEvent
from pymap.main import main
from pymap.mime import MessageContent
from pymap.parsing.specials import FetchRequirement
from pymap.selected import SelectedMailbox

LOOK_ANYWAY = 1.0  # seconds: pymap's own period
# inotify(7): a file made, removed or renamed in (or into, or out of) the directory
_CHANGES = 0x100 | 0x200 | 0x40 | 0x80  # IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO
_libc = ctypes.CDLL(None, use_errno=True)


def _watch(folder: str) -> int:
    """An inotify descriptor that becomes readable when the folder's new/ or cur/ changes."""
    fd = _libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "inotify_init1")
    for sub in ("new", "cur"):
        if _libc.inotify_add_watch(fd, os.path.join(folder, sub).encode(), _CHANGES) < 0:
            os.close(fd)
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {folder}/{sub}")
    return fd


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 65536):
            pass
    except BlockingIOError:
        pass


# each idling session's watch of each folder it selected, closed when the session goes
_watches: weakref.WeakKeyDictionary[BaseSession, dict[str, int]] = weakref.WeakKeyDictionary()
# an IDLE's end (the client's DONE, set from pymap's event loop) wakes the wait at once
_wakers: weakref.WeakKeyDictionary[Event, int] = weakref.WeakKeyDictionary()
_wakers_lock = threading.Lock()  # a waker is never written once closed (its number may be another file's)
_check_mailbox = BaseSession.check_mailbox
_threading_set = _ThreadingEvent.set


async def _check_mailbox_on_change(self: BaseSession, selected: SelectedMailbox, *,
                                   wait_on: Event | None = None, housekeeping: bool = False) -> SelectedMailbox:
    if wait_on is not None:  # an IDLE tick: in a thread of pymap's own (its Maildir backend's)
        mailboxes = self.mailbox_set
        folder = mailboxes._layout.get_path(selected.lookup, mailboxes.delimiter)  # type: ignore[attr-defined]
        watches = _watches.get(self)
        if watches is None:
            watches = _watches[self] = {}
            weakref.finalize(self, lambda w: [os.close(fd) for fd in w.values()], watches)
        fd = watches.get(selected.lookup)
        if fd is None:  # the first wait on this folder: look now, told of every change from here on
            watches[selected.lookup] = _watch(folder)
        else:
            waker = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
            with _wakers_lock:
                _wakers[wait_on] = waker
            try:
                if not wait_on.is_set():  # else DONE came before the waker was there
                    select.select([fd, waker], [], [], LOOK_ANYWAY)
            finally:
                with _wakers_lock:
                    del _wakers[wait_on]
                    os.close(waker)
            _drain(fd)  # taken before the look: a change from here on is the next tick's
    return await _check_mailbox(self, selected, housekeeping=housekeeping)


def _set_and_wake(self: _ThreadingEvent) -> None:
    _threading_set(self)
    with _wakers_lock:
        waker = _wakers.get(self)
        if waker is not None:
            os.eventfd_write(waker, 1)


BaseSession.check_mailbox = _check_mailbox_on_change  # type: ignore[method-assign]
_ThreadingEvent.set = _set_and_wake  # type: ignore[method-assign]

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


async def _load_as_stored(self: Message, requirement: FetchRequirement) -> LoadedMessage:
    if self._key is None or self._maildir is None or requirement.has_none(FetchRequirement.CONTENT):
        return LoadedMessage(self, requirement, None)
    try:
        raw = self._maildir.get_bytes(self._key)
    except (KeyError, FileNotFoundError):
        return LoadedMessage(self, requirement, None)
    return LoadedMessage(self, requirement, MessageContent.parse(raw.replace(b"\r\n", b"\n")))


Message.load_content = _load_as_stored  # type: ignore[method-assign]

if __name__ == "__main__":
    main()
