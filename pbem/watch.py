"""Waiting for files to arrive in folders: inotify on Linux, a sleep elsewhere.

A `Doorbell` is the wait of one command or daemon on a few folders: `wait(seconds)` returns
once a file may have arrived or `seconds` passed. The host of a game folder waits on its inbox,
a trustless seat's bot on the table's packets; a seat bot and `pbem turn --wait` on a game
folder's packets and the seats' folders in them (`subfolders`), and on a Maildir's new mail.
`arrivals()` gives the `Arrivals` under it: which of many folders had a file arrive (`pbem host
run --all` reads only the inboxes that did, and every inbox once a poll period).

On Linux the kernel says when a file arrives (inotify, through libc with ctypes: the standard
library has no binding, and the three calls it takes do not warrant a dependency). A change
made on another machine of a network filesystem (NFS, SMB) reaches no inotify watch: a caller
that looks now and then anyway (a daemon's poll period) finds it then; one that would wait
without end (`pbem turn --wait`) asks for the `safety` look, once every `SAFETY` seconds.
Where inotify is missing (macOS, Windows; a kernel out of watches), a wait is a sleep: of the
caller's `seconds`, or with `safety` of `POLL` seconds at most, and the caller reads again.
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

POLL = 2.0  # seconds between reads where the platform cannot tell (with `safety`)
SAFETY = 60.0  # seconds: a change inotify cannot see (a network filesystem) is found this late at most (with `safety`)
SETTLE = 0.05  # seconds: a writer renames a packet and then its neighbours: one wake for them all, within this
QUIET = 0.005  # seconds: once no file came for this long, the neighbours are in (a fixed wait was a packet's lag)

# <sys/inotify.h>
IN_CLOSE_WRITE = 0x8
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_MASK_ADD = 0x20000000
IN_ISDIR = 0x40000000
_GONE = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED  # the watched folder itself removed or moved away
_EVENT = struct.Struct("iIII")


class Watch(Protocol):
    """Something that can wait for a change: a folder's files, a mailbox's new mail."""

    def wait(self, seconds: float) -> bool:
        """Until something may have changed (True) or `seconds` passed (False)."""

    def close(self) -> None: ...


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

    def read(self) -> list[tuple[int, int, str]] | None:
        """The events since the last read, each (watch descriptor, mask, the name of the file in
        the watched folder, "" for the folder itself); None when the kernel's queue overflowed
        (any watch may have had any event)."""
        assert self.fd is not None
        events: list[tuple[int, int, str]] = []
        try:
            while data := os.read(self.fd, 64 * 1024):
                at = 0
                while at + _EVENT.size <= len(data):  # struct inotify_event: wd, mask, cookie, len, name[len]
                    wd, mask, _cookie, size = _EVENT.unpack_from(data, at)
                    if mask & IN_Q_OVERFLOW:
                        return None
                    name = data[at + _EVENT.size:at + _EVENT.size + size].rstrip(b"\0")
                    events.append((wd, mask, os.fsdecode(name)))
                    at += _EVENT.size + size
        except BlockingIOError:
            pass
        return events

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class Arrivals:
    """Which of a changing set of folders had a file arrive (written and closed, or renamed in),
    as the kernel says: a daemon serving many games reads only the inboxes that changed. A hidden
    file (a name that begins with a dot: pbem's own temporary files, written and then renamed to
    their real name) is no arrival; its rename is. A folder removed (or moved away) and made again
    is watched again as soon as it is there, and said to have had an arrival then: the kernel
    watches its parent meanwhile for the name to come back. Only on Linux (`arrivals()` gives None
    elsewhere: the caller looks at every folder each time); a folder on a network filesystem
    changed from another machine is seen only by that look."""

    def __init__(self) -> None:
        self.kernel = _Kernel()
        self.by_wd: dict[int, Path] = {}
        self.wd_of: dict[Path, int] = {}
        self.gone: dict[int, set[Path]] = {}  # a parent's watch -> the watched folders gone from it
        self.trees: set[Path] = set()  # the folders watched with the folders directly in them

    def watch(self, d: Path, subfolders: bool = False) -> bool:
        """Watch folder `d`; False when the kernel would not (the folder is not there, or the
        kernel is out of watches): watched once it is there again, or (its parent not there
        either) when asked again. With `subfolders`, every folder directly in `d` too (a seat's
        packet folder), now and as each is made; in these a file made counts as an arrival as
        well (a mail a Maildir's delivery links into new/). A watch adds to any the folder has
        (IN_MASK_ADD: it may be another's parent, watched for that one's name)."""
        if subfolders:
            self.trees.add(d)
        return self._watch(d)

    def _watch(self, d: Path) -> bool:
        if d not in self.wd_of:
            mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_MASK_ADD
            if self._made_counts(d):
                mask |= IN_CREATE
            wd = self.kernel.add(d, mask)
            if wd is None:
                self._await(d)
                wd = self.kernel.add(d, mask)  # made between the first try and the parent's watch
                if wd is None:
                    return False
            self._awaited(d)
            self.by_wd[wd], self.wd_of[d] = d, wd
        if d in self.trees:
            for sub in _folders_in(d):
                self._watch(sub)
        return True

    def _made_counts(self, d: Path) -> bool:
        return d in self.trees or d.parent in self.trees

    def unwatch(self, d: Path) -> None:
        """No longer watch folder `d` (nor, watched with it, the folders in it)."""
        if d in self.trees:
            self.trees.discard(d)
            for sub in [s for s in self.wd_of if s.parent == d and s not in self.trees]:
                self.unwatch(sub)
        self._awaited(d)
        wd = self.wd_of.pop(d, None)
        if wd is not None:
            self.by_wd.pop(wd, None)
            if wd not in self.gone:
                self.kernel.remove(wd)

    def wait(self, seconds: float) -> set[Path] | None:
        """The watched folders a file arrived in, once one did or `seconds` passed (an empty set);
        None when the kernel lost count (any may have: every folder is watched anew)."""
        if not self.kernel.ready(seconds):
            return set()
        events = self.kernel.read()
        if events is None:
            every, trees = [*self.wd_of, *(d for ds in self.gone.values() for d in ds)], set(self.trees)
            for d in every:
                self.unwatch(d)
            self.trees = trees
            for d in every:
                self._watch(d)
            return None
        out: set[Path] = set()
        for wd, mask, name in events:
            back = [d for d in self.gone.get(wd, ()) if d.name == name]
            out.update(d for d in back if self._watch(d))  # made again: what is in it already arrived
            if mask & IN_IGNORED and wd in self.gone:  # the parent itself is gone: watch() retries
                del self.gone[wd]
            folder = self.by_wd.get(wd)
            if folder is None:
                continue
            if mask & _GONE:
                if self._lost(folder, wd):
                    out.add(folder)
            elif name.startswith("."):
                continue
            elif mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO) and folder in self.trees:
                self._watch(folder / name)  # a folder made in it: what is in it already arrived
                out.add(folder)
            elif mask & (IN_CLOSE_WRITE | IN_MOVED_TO) or (mask & IN_CREATE and self._made_counts(folder)):
                out.add(folder)
        return out

    def _lost(self, d: Path, wd: int) -> bool:
        """Folder `d` was removed or moved away: its parent is watched for its name; True when
        it is back already (made again before this read)."""
        del self.by_wd[wd], self.wd_of[d]
        self.kernel.remove(wd)  # a folder moved away keeps its watch: the name is what is served
        for orphan in self.gone.pop(wd, ()):  # folders awaited in `d`: awaited again (from d's parent on)
            self._watch(orphan)
        return self._watch(d)

    def _await(self, d: Path) -> None:
        """Watch the parent of the missing folder `d` for its name (added to the parent's own
        watch, if it has one: IN_MASK_ADD)."""
        if any(d in ds for ds in self.gone.values()):
            return
        wd = self.kernel.add(d.parent, IN_CREATE | IN_MOVED_TO | IN_MASK_ADD)
        if wd is not None:
            self.gone.setdefault(wd, set()).add(d)

    def _awaited(self, d: Path) -> None:
        """`d` is watched (or no longer wanted): its parent's watch for it ends."""
        for wd, ds in list(self.gone.items()):
            if d in ds:
                ds.discard(d)
                if not ds:
                    del self.gone[wd]
                    if wd not in self.by_wd:
                        self.kernel.remove(wd)

    def close(self) -> None:
        self.kernel.close()


class Doorbell:
    """A file arriving in some folders (`Arrivals`), for one command or daemon that waits on
    them (a `Watch`); where the kernel cannot tell, a wait is a sleep. A loop that waits on it
    looks at the folders when a file came or its poll period passed: it answers at once, and
    idle it reads nothing. With `subfolders`, the folders directly in each are watched too;
    with `safety`, a wait ends (and says to look) every `SAFETY` seconds at the latest, every
    `POLL` seconds where the kernel cannot tell: for a caller that would otherwise wait without
    end, on folders a network filesystem may change unseen."""

    def __init__(self, folders: Iterable[Path], *, subfolders: bool = False, safety: bool = False) -> None:
        self.folders = list(dict.fromkeys(folders))
        self.subfolders = subfolders
        self.safety = safety
        self.arrivals: Arrivals | None = None
        self.armed = False

    def arm(self) -> Doorbell:
        """Make the watch now (else the first wait makes it and ends at once: the look after it
        misses nothing that came meanwhile). None of the folders there, nor a parent of one to
        wait for it in: no watch, a sleep."""
        if not self.armed:
            self.armed = True
            self.arrivals = arrivals()
            if self.arrivals is not None:
                for d in self.folders:
                    self.arrivals.watch(d, self.subfolders)
                if not (self.arrivals.wd_of or self.arrivals.gone):
                    self.close()
        return self

    def wait(self, seconds: float) -> bool:
        """Until a file may have arrived or a look is due (True) or `seconds` passed (False)."""
        if not self.armed:
            self.arm()
            return True
        most = (SAFETY if self.arrivals is not None else POLL) if self.safety else seconds
        span = max(min(seconds, most), 0.0)
        if self.arrivals is None:
            time.sleep(span)
            return span < seconds
        end = time.monotonic() + span
        while (came := self.arrivals.wait(max(end - time.monotonic(), 0.0))) is not None and not came:
            if time.monotonic() >= end:  # nothing came (a hidden file's events are none)
                return span < seconds
        settled = time.monotonic() + SETTLE  # the events of the files that come with it
        while self.arrivals.wait(QUIET) != set() and time.monotonic() < settled:
            pass
        return True

    def close(self) -> None:
        if self.arrivals is not None:
            self.arrivals.close()
            self.arrivals = None


def arrivals() -> Arrivals | None:
    """An `Arrivals` where the kernel can tell (Linux, unless PBEM_WATCH=poll), else None."""
    if not sys.platform.startswith("linux") or os.environ.get("PBEM_WATCH") == "poll":
        return None
    try:
        return Arrivals()
    except (OSError, AttributeError):  # no libc inotify, out of instances
        return None


def _folders_in(d: Path) -> list[Path]:
    """The folders directly in `d` but hidden ones (none: `d` is not there)."""
    try:
        return [d / e.name for e in os.scandir(d) if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")]
    except OSError:
        return []
