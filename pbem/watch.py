"""Waiting for files to change: inotify on Linux, a re-read every few seconds elsewhere.

`watch_paths(paths)` gives a `Watch`: `wait(seconds)` returns once something in those
folders may have changed (a file was written, renamed in or removed) or `seconds` passed.
`pbem turn --wait` waits on a game folder's packets this way, and on a Maildir's new mail.
`arrivals()` gives an `Arrivals`: which of many folders had a file arrive (`pbem host run
--all` reads only the inboxes that did, and every inbox once a poll period).

On Linux the kernel says when a file changes (inotify, through libc with ctypes: the
standard library has no binding, and the three calls it takes do not warrant a dependency).
A change made on another machine of a network filesystem (NFS, SMB) reaches no inotify
watch, so even then the folders are read again once every `SAFETY` seconds. Where inotify is
missing (macOS, Windows; a kernel out of watches), `wait` returns every `POLL` seconds and
the caller reads again.
"""

from __future__ import annotations

import os
import select
import struct
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

POLL = 2.0  # seconds between reads where the platform cannot tell
SAFETY = 60.0  # seconds: a change inotify cannot see (a network filesystem) is found this late at most

# <sys/inotify.h>
IN_MODIFY = 0x2
IN_CLOSE_WRITE = 0x8
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_Q_OVERFLOW = 0x4000
IN_ONLYDIR = 0x01000000
_MASK = IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE
_EVENT = struct.Struct("iIII")


class Watch(Protocol):
    """Something that can wait for a change: a folder's files, a mailbox's new mail."""

    def wait(self, seconds: float) -> bool:
        """Until something may have changed (True) or `seconds` passed (False)."""

    def close(self) -> None: ...


class Polling:
    """No word from the platform: every `every` seconds, the caller looks again."""

    def __init__(self, every: float = POLL) -> None:
        self.every = every

    def wait(self, seconds: float) -> bool:
        step = min(seconds, self.every)
        time.sleep(max(step, 0.0))
        return step < seconds  # a look is due before the time asked for ends

    def close(self) -> None:
        pass


class _Kernel:
    """An inotify instance (through libc with ctypes): watches added and removed, and which of
    them had events."""

    def __init__(self) -> None:
        import ctypes
        import ctypes.util

        self._libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        self.fd: int | None = fd

    def add(self, d: Path, mask: int) -> int | None:
        """The watch descriptor of folder `d` (None: not there, not a folder, out of watches)."""
        if self.fd is None:
            return None
        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(d), mask | IN_ONLYDIR)
        return wd if wd >= 0 else None

    def remove(self, wd: int) -> None:
        if self.fd is not None:
            self._libc.inotify_rm_watch(self.fd, wd)

    def ready(self, seconds: float) -> bool:
        """Whether an event came within `seconds`."""
        assert self.fd is not None
        ready, _, _ = select.select([self.fd], [], [], max(seconds, 0.0))
        return bool(ready)

    def read(self) -> set[int] | None:
        """The watch descriptors that had events since the last read; None when the kernel's
        queue overflowed (any of them may have)."""
        assert self.fd is not None
        wds: set[int] = set()
        try:
            while data := os.read(self.fd, 64 * 1024):
                at = 0
                while at + _EVENT.size <= len(data):  # struct inotify_event: wd, mask, cookie, len, name[len]
                    wd, mask, _cookie, size = _EVENT.unpack_from(data, at)
                    if mask & IN_Q_OVERFLOW:
                        return None
                    wds.add(wd)
                    at += _EVENT.size + size
        except BlockingIOError:
            pass
        return wds

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class Inotify:
    """The folders `dirs` (each folder given, and every folder directly inside it when it is
    read again: a seat's packet folder made after the wait began) watched by the kernel."""

    def __init__(self, dirs: list[Path]) -> None:
        self.kernel = _Kernel()
        self.dirs = dirs
        self.watched: set[Path] = set()
        self._add_all()

    def _add_all(self) -> None:
        for d in self.dirs:
            self._add(d)
            try:
                subs = [d / e.name for e in os.scandir(d) if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            for sub in subs:
                self._add(sub)

    def _add(self, d: Path) -> None:
        if d not in self.watched and self.kernel.add(d, _MASK) is not None:
            self.watched.add(d)

    def wait(self, seconds: float) -> bool:
        if not self.kernel.ready(min(seconds, SAFETY)):
            return seconds > SAFETY  # the safety re-read (a network filesystem) is due
        time.sleep(0.05)  # a writer renames a packet and then its neighbours: one wake for them all
        self.kernel.read()
        self._add_all()
        return True

    def close(self) -> None:
        self.kernel.close()


class Arrivals:
    """Which of a changing set of folders had a file arrive (written and closed, or renamed in),
    as the kernel says: a daemon serving many games reads only the inboxes that changed. Only
    on Linux (`arrivals()` gives None elsewhere: the caller looks at every folder each time); a
    folder on a network filesystem changed from another machine is seen only by that look."""

    def __init__(self) -> None:
        self.kernel = _Kernel()
        self.by_wd: dict[int, Path] = {}
        self.wd_of: dict[Path, int] = {}

    def watch(self, d: Path) -> bool:
        """Watch folder `d` (not the folders inside it); False when the kernel would not."""
        if d in self.wd_of:
            return True
        wd = self.kernel.add(d, IN_CLOSE_WRITE | IN_MOVED_TO)
        if wd is None:
            return False
        self.by_wd[wd], self.wd_of[d] = d, wd
        return True

    def unwatch(self, d: Path) -> None:
        wd = self.wd_of.pop(d, None)
        if wd is not None:
            self.by_wd.pop(wd, None)
            self.kernel.remove(wd)

    def wait(self, seconds: float) -> set[Path] | None:
        """The watched folders a file arrived in, once one did or `seconds` passed (an empty set);
        None when the kernel lost count (any may have)."""
        if not self.kernel.ready(seconds):
            return set()
        wds = self.kernel.read()
        return None if wds is None else {self.by_wd[wd] for wd in wds if wd in self.by_wd}

    def close(self) -> None:
        self.kernel.close()


def arrivals() -> Arrivals | None:
    """An `Arrivals` where the kernel can tell (Linux, unless PBEM_WATCH=poll), else None."""
    if not sys.platform.startswith("linux") or os.environ.get("PBEM_WATCH") == "poll":
        return None
    try:
        return Arrivals()
    except (OSError, AttributeError):  # no libc inotify, out of instances
        return None


def watch_paths(paths: Iterable[Path]) -> Watch:
    """A watch on the folders `paths` (a file: the folder it is in; a folder not there yet is
    watched once it is made inside another watched one), by inotify where there is one, else by
    looking again every POLL seconds."""
    dirs = []
    for p in paths:
        d = p.parent if p.is_file() else p
        if d not in dirs:
            dirs.append(d)
    if sys.platform.startswith("linux") and os.environ.get("PBEM_WATCH") != "poll":
        try:
            watch = Inotify(dirs)
        except (OSError, AttributeError):  # no libc inotify, out of instances
            return Polling()
        if watch.watched:
            return watch
        watch.close()  # none of the folders is there (yet), or the kernel is out of watches
    return Polling()
