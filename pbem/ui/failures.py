"""The base modules' errors (pbem/names.py, pbem/atomic.py) in the reader's language.

Those modules sit below pbem.ui, so their typed errors (pbem/errors.py) carry their input as
fields and an English message; `message` and `hint` say them through the catalogs. Any other
error is said as it was raised (its words went through t() where it was made), except the
engine's refusals, which pbem/ui/engine_words.py says through the catalogs.
"""

from __future__ import annotations

import errno

from engine.errors import MoveError
from pbem.errors import BadName, BadNameRead, CannotRead, CannotWrite, ContentConflict, NotARegularFile, PbemError
from pbem.ui.words import N_, t

_OS_REASONS = {
    errno.ENOENT: N_("no such file or folder"),
    errno.EACCES: N_("permission denied"),
    errno.EPERM: N_("operation not permitted"),
    errno.EISDIR: N_("it is a folder"),
    errno.ENOTDIR: N_("a part of the path is not a folder"),
    errno.ENOSPC: N_("no space left on the device"),
    errno.EROFS: N_("the file system is read-only"),
    errno.EEXIST: N_("it exists already"),
    errno.ENAMETOOLONG: N_("the name is too long"),
    errno.ELOOP: N_("too many levels of links"),
}


def os_reason(exc: OSError | int | None, fallback: str = "") -> str:
    """Why the operating system refused (an OSError or its errno), in the reader's language;
    an errno not listed says the system's own words."""
    code = exc.errno if isinstance(exc, OSError) else exc
    if code in _OS_REASONS:
        return t(_OS_REASONS[code])
    return (exc.strerror or str(exc)) if isinstance(exc, OSError) else fallback


def message(exc: BaseException) -> str:
    if isinstance(exc, BadName):
        name = repr(exc.name)
        return {"game": lambda: t("bad game name {name}", name=name),
                "seat": lambda: t("bad seat name {name}", name=name),
                "identity": lambda: t("bad identity name {name}", name=name),
                "file": lambda: t("bad file name {name}", name=name)}[exc.what]()
    if isinstance(exc, BadNameRead):
        name = repr(exc.name)
        return {"game": lambda: t("bad game id {name}", name=name),
                "seat": lambda: t("bad seat name {name} in a document", name=name),
                "game name": lambda: t("bad game name {name} in a document", name=name),
                "identity": lambda: t("bad identity name {name} in a document", name=name)}[exc.what]()
    if isinstance(exc, CannotWrite):
        return t("cannot write {path}: {why}", path=repr(exc.path), why=os_reason(exc.errno, exc.reason))
    if isinstance(exc, CannotRead):
        return _cannot_read(exc)
    if isinstance(exc, NotARegularFile):
        path = repr(exc.path)
        return {"folder": lambda: t("{path} is a folder, not a regular file: pbem only replaces regular files", path=path),
                "link": lambda: t("{path} is a link, not a regular file: pbem only replaces regular files", path=path),
                "special": lambda: t("{path} is a device or special file, not a regular file: pbem only replaces "
                                     "regular files", path=path)}[exc.what]()
    if isinstance(exc, ContentConflict):
        return t("{path} exists with different content", path=exc.path)
    if isinstance(exc, MoveError):  # the engine speaks English; its templates are in engine_words
        from pbem.ui.engine_words import move_error_words

        return move_error_words(exc)
    return str(exc)


def _cannot_read(exc: CannotRead) -> str:
    path = repr(exc.path)
    return {"os": lambda: t("cannot read {path}: {why}", path=path, why=os_reason(exc.errno, exc.reason)),
            "link": lambda: t("{path} is a link: pbem reads only regular files", path=path),
            "folder": lambda: t("{path} is a folder: pbem reads only regular files", path=path),
            "special": lambda: t("{path} is a device or special file: pbem reads only regular files", path=path),
            "large": lambda: t("{path} is over the limit of {limit} bytes", path=path, limit=f"{exc.limit:,}")}[exc.what]()


def hint(exc: PbemError) -> str | None:
    if isinstance(exc, BadName):
        return {"game": lambda: t("use 1 to 32 characters from a-z, 0-9, '-' and '_', starting with a letter or digit"),
                "seat": lambda: t("lower-case letters, digits, - and _, starting with a letter; "
                                  "not top/middle/bottom/nobody/host/table"),
                "identity": lambda: t("use 1 to 32 characters from a-z, 0-9, '_' and '-'"),
                "file": lambda: None}[exc.what]()
    if isinstance(exc, CannotRead):
        return t("pbem never writes anything this large; it was not made by pbem") if exc.what == "large" else None
    if isinstance(exc, NotARegularFile):
        return t("write to a new or ordinary file (or leave out -o to print)")
    return exc.hint
