"""What a start of pbem needs, built from its own files, kept as marshal data in a __pycache__
folder beside them (as Python keeps compiled modules), stamped with each file's size and
modification time, so that an edited file is read again and nothing kept is ever stale.

The catalogs' words (pbem.ui.catalog: parsing pbem.pot took ~10 ms of every command, a Chinese
catalog's parse and compile ~25 ms more) and the commands the root help page lists (pbem.cli:
importing every command module, ~6 ms of `pbem --help`) are kept so (issue 16.1). Nothing is
written when Python writes no bytecode (PYTHONDONTWRITEBYTECODE, -B) or the folder is
read-only: every start then builds, as before.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

FORMAT = 1  # a new layout of the kept data: raise it, and old files are read no more


def kept(file: Path, sources: Iterable[Path], build: Callable[[], Any], salt: str = "") -> Any:
    """What `build` makes of `sources`, kept in `file` (marshal data) and read from it while
    every source has the size and time it had, and `salt` (say, a library's version) is the same."""
    stamp: tuple[Any, ...] = (FORMAT, salt, *((st.st_size, st.st_mtime_ns) for st in map(os.stat, sources)))
    # (stated before reading: a file changed while it is read is read again next time)
    try:
        if not stat.S_ISREG(file.lstat().st_mode):  # a link, a folder, a pipe: not ours, never read nor replaced
            return build()
        kept_stamp, data = marshal.loads(file.read_bytes())
        if kept_stamp == stamp:
            return data
    except (OSError, ValueError, EOFError, TypeError):  # none yet, or not ours: build it
        pass
    data = build()
    if not sys.dont_write_bytecode:
        part = file.with_name(f"{file.name}.{os.getpid()}.part")
        try:
            file.parent.mkdir(exist_ok=True)
            part.write_bytes(marshal.dumps((stamp, data)))
            os.replace(part, file)  # whole or not at all: another pbem may be reading it
        except OSError:  # read-only, full, or something in the way: what was built is right all the same
            with contextlib.suppress(OSError):
                part.unlink()
    return data
