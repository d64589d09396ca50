"""Crash-safe, never-overwriting file writes for shared and synced folders, and the one
bounded reader of files that come from outside.

Readers (and sync tools) must never see a half-written file, so every write
goes to a hidden temp file in the target directory and is renamed into place,
the way Maildir delivers mail. Only a regular file is ever replaced (never a device
node, a folder or a link: `-o /dev/null` is refused), and the temp files of a writer
that was killed are removed by the next write into the same folder.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import time
from functools import cache
from pathlib import Path
from typing import Literal

from pbem.errors import BadName, CannotRead, CannotWrite, ContentConflict, NotARegularFile

TMP_PREFIX = "."
TMP_SUFFIX = ".tmp"
HASH_LEN = 12
# A temp file is `.<target>.<host>-<pid>-<random>.tmp`: the host (a hash of the machine's
# name) and pid say whether its writer is still running, so a later run can remove what a
# killed one left. A temp file from another machine (NFS), or in the older
# `.<target>.<random>.tmp` form, is removed only once it is older than STALE_AFTER.
STALE_AFTER = 3600.0
# (A string: re compiles it the first time it is used, when a folder is swept.)
_TMP = r"^\..+\.(?:([0-9a-f]{8})-(\d+)-)?[0-9a-f]{16}" + re.escape(TMP_SUFFIX) + "$"


@cache
def _host() -> str:
    """This machine in a temp file's name: a hash of its name (uname's nodename, which
    platform.node and socket.gethostname give, without loading either)."""
    if hasattr(os, "uname"):
        node = os.uname().nodename
    else:  # Windows
        import platform

        node = platform.node()
    from hashlib import sha256  # here: `pbem --help` and a key's commands load no OpenSSL for it

    return sha256(node.encode("utf-8", "replace")).hexdigest()[:8]


_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))
_CHUNK = 1 << 20


def _not_regular(mode: int) -> Literal["link", "folder", "special"] | None:
    if stat.S_ISREG(mode):
        return None
    return "link" if stat.S_ISLNK(mode) else "folder" if stat.S_ISDIR(mode) else "special"


def read_bounded(path: Path | str, limit: int, *, head: bool = False) -> bytes:
    """The bytes of the regular file `path`, never more than `limit` of them in memory.

    Anyone who can write to a shared folder (or name a file) chooses what is there: a link to
    /dev/zero or /proc/self/mem, a FIFO nobody writes to, a sparse file of terabytes. So the last
    name is not followed (O_NOFOLLOW), the open never waits (O_NONBLOCK: a FIFO opens at once),
    what was opened is checked to be a regular file (fstat of the open file, so nothing can be
    swapped in after the check), and at most `limit` + 1 bytes are read whatever its size says
    (/proc files say 0). With `head`, the first `limit` bytes of a longer file are its answer.
    Raises CannotRead (`missing` when the file is not there)."""
    name = str(path)
    if not hasattr(os, "O_NOFOLLOW"):  # Windows: no O_NOFOLLOW; check the name first
        try:
            kind = _not_regular(os.lstat(name).st_mode)
        except OSError as exc:
            raise CannotRead(name, "os", reason=exc.strerror or str(exc), errno=exc.errno) from None
        if kind == "link":
            raise CannotRead(name, "link")
    try:
        fd = os.open(name, _READ_FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a link (EMLINK: the BSDs)
            raise CannotRead(name, "link") from None
        raise CannotRead(name, "os", reason=exc.strerror or str(exc), errno=exc.errno) from None
    try:
        st = os.fstat(fd)
        kind = _not_regular(st.st_mode)
        if kind is not None:
            raise CannotRead(name, kind)
        if st.st_size > limit and not head:
            raise CannotRead(name, "large", limit=limit)
        chunks: list[bytes] = []
        left = limit + (not head)
        while left > 0:
            chunk = os.read(fd, min(left, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0 and not head:
            raise CannotRead(name, "large", limit=limit)
        return b"".join(chunks)
    except OSError as exc:  # EIO and the like while reading
        raise CannotRead(name, "os", reason=exc.strerror or str(exc), errno=exc.errno) from None
    finally:
        os.close(fd)


def content_hash(data: bytes) -> str:
    from hashlib import sha256

    return sha256(data).hexdigest()


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable; Windows cannot open a directory, and it
    # is only an optimisation there, so skip quietly.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _open_temp(directory: Path, name: str) -> tuple[Path, int]:
    # os.open with 0o666 honours the umask, unlike mkstemp's 0o600, which
    # matters when several Unix users share an NFS folder and because
    # Syncthing copies permission bits to the other peers.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = directory / f"{TMP_PREFIX}{name}.{_host()}-{os.getpid()}-{os.urandom(8).hex()}{TMP_SUFFIX}"
        try:
            return tmp, os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # someone else's process, or we cannot tell: leave its file alone
    return True


def _stale(directory: Path, name: str, now: float) -> bool:
    m = re.match(_TMP, name)
    if m is None:
        return False
    host, pid = m.group(1), m.group(2)
    if host == _host() and pid is not None and int(pid) != os.getpid() and not _alive(int(pid)):
        return True
    try:
        return now - os.lstat(directory / name).st_mtime > STALE_AFTER
    except OSError:
        return False


def clean_temp_files(directory: Path) -> list[Path]:
    """Remove the temp files that killed writers left in ``directory``; returns them."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    now = time.time()
    removed = []
    for name in names:
        if name.startswith(TMP_PREFIX) and name.endswith(TMP_SUFFIX) and _stale(Path(directory), name, now):
            try:
                os.unlink(Path(directory) / name)
                removed.append(Path(directory) / name)
            except OSError:
                pass
    return removed


def _check_replaceable(path: Path) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise CannotWrite(str(path), exc.strerror or str(exc), exc.errno) from None
    if not stat.S_ISREG(st.st_mode):
        raise NotARegularFile(str(path), "folder" if stat.S_ISDIR(st.st_mode) else "link" if stat.S_ISLNK(st.st_mode)
                              else "special")


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new file, never a mix.

    ``mode`` sets the permissions exactly (e.g. 0o600 for a private key) before any byte
    is written; without it the umask decides. Missing parent folders are created. A path
    that exists and is not a regular file raises NotARegularFile before anything is written.
    """
    path = Path(path)
    _check_replaceable(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_temp_files(path.parent)
    tmp, fd = _open_temp(path.parent, path.name)
    try:
        if mode is not None and hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        _check_replaceable(path)  # it may have appeared meanwhile
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(path.parent)


def same_content(path: Path, data: bytes) -> bool:
    """Whether the regular file `path` holds exactly `data` (read bounded by its length)."""
    try:
        return read_bounded(path, len(data)) == data
    except CannotRead:  # gone, not a regular file, or longer than data
        return False


def write_new(dir: Path, stem: str, suffix: str, data: bytes) -> Path:
    """Write ``data`` as ``<stem>-<sha256[:12]><suffix>`` in ``dir`` without overwriting anything.

    The name is derived from the content, so writing the same bytes twice
    (a retry, two machines publishing the same packet) lands on the same file
    and is harmless, while different content gets a different name.
    """
    dir = Path(dir)
    if not stem or "/" in stem or "\\" in stem or stem.startswith("."):
        raise BadName("file", stem)
    dir.mkdir(parents=True, exist_ok=True)
    digest = content_hash(data)
    # The full-hash name only matters if the short name is already taken by
    # other bytes (a damaged file or a 48-bit collision): we still never
    # overwrite, we step aside.
    for h in (digest[:HASH_LEN], digest):
        target = dir / f"{stem}-{h}{suffix}"
        if os.path.lexists(target):
            if same_content(target, data):
                return target
            continue
        # Another writer racing us can only be writing the same name, hence
        # the same bytes, so replacing its file changes nothing.
        write_atomic(target, data)
        return target
    raise ContentConflict(str(dir / f"{stem}-{digest}{suffix}"))
