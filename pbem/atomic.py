"""Crash-safe, never-overwriting file writes for shared and synced folders.

Readers (and sync tools) must never see a half-written file, so every write
goes to a hidden temp file in the target directory and is renamed into place,
the way Maildir delivers mail.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

from pbem.errors import Conflict

TMP_PREFIX = "."
TMP_SUFFIX = ".tmp"
HASH_LEN = 12


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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
        tmp = directory / f"{TMP_PREFIX}{name}.{secrets.token_hex(8)}{TMP_SUFFIX}"
        try:
            return tmp, os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new file, never a mix.

    ``mode`` sets the permissions exactly (e.g. 0o600 for a private key) before any byte
    is written; without it the umask decides. Missing parent folders are created.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp, fd = _open_temp(path.parent, path.name)
    try:
        if mode is not None and hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(path.parent)


def _same_content(path: Path, data: bytes) -> bool:
    try:
        if path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except FileNotFoundError:
        return False


def write_new(dir: Path, stem: str, suffix: str, data: bytes) -> Path:
    """Write ``data`` as ``<stem>-<sha256[:12]><suffix>`` in ``dir`` without overwriting anything.

    The name is derived from the content, so writing the same bytes twice
    (a retry, two machines publishing the same packet) lands on the same file
    and is harmless, while different content gets a different name.
    """
    dir = Path(dir)
    if not stem or "/" in stem or "\\" in stem or stem.startswith("."):
        raise ValueError(f"bad file stem {stem!r}")
    dir.mkdir(parents=True, exist_ok=True)
    digest = content_hash(data)
    # The full-hash name only matters if the short name is already taken by
    # other bytes (a damaged file or a 48-bit collision): we still never
    # overwrite, we step aside.
    for h in (digest[:HASH_LEN], digest):
        target = dir / f"{stem}-{h}{suffix}"
        if target.exists():
            if _same_content(target, data):
                return target
            continue
        # Another writer racing us can only be writing the same name, hence
        # the same bytes, so replacing its file changes nothing.
        write_atomic(target, data)
        return target
    raise Conflict(f"{dir / (stem + '-' + digest + suffix)} exists with different content")
