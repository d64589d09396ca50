"""Typed errors shared by every pbem module.

Each error carries a process exit code so that the CLI (and scripts driving
it) can tell *why* a command failed without parsing messages. EXIT_CODES is
the one table of them; docs/protocol.md ("Exit codes") shows the same table,
and a test keeps the two equal. (engine.errors.InvalidMove, move text that does
not parse, is a usage error: 2.)

Messages quote the offending input (a name, a path, a line) and `hint`
says what the user can do about it. They are `Msg` values, words not yet said: the catalog's
message id and its parameters, built with `msg` (the signature of pbem.ui.words.t). Only the
edges (the CLI's error printer, the mail) put them into a reader's language, with
pbem.ui.words.render(message, lang); `str()` of an error or a Msg is plain English, for logs
and tracebacks. Every error has a stable `code` (its class's name in kebab case, `bad-packet`)
that scripts read from `--json` output whatever the language (docs/translating.md).
"""

from __future__ import annotations

import errno as _errno
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from engine.errors import MoveError

EXIT_CODES: dict[int, str] = {
    0: "ok",
    1: "other error",
    2: "usage error (bad arguments or names; move text that does not parse: engine.errors.InvalidMove)",
    3: "bad packet (malformed, truncated, tampered or not ours) or bad signature",
    4: "wrong key, wrong passphrase or key not found",
    5: "stale move or conflicting history",
    6: "illegal move (engine.errors.IllegalMove)",
    7: "bad position file (engine.errors.BadPosition)",
    8: "audit failed",
    9: "store error (the host's store cannot be reached, is not a pbem store, has a newer schema, or holds a game name twice)",
    10: "a mail server refuses what pbem needs (an IMAP folder it cannot create, a message it cannot move)",
    11: "a mail server's TLS certificate cannot be verified (untrusted CA, self-signed, expired, wrong host)",
    12: "the wait ended at its timeout (`pbem turn --wait --timeout S`): not the seat's turn yet",
    70: "internal error (a bug; PBEM_DEBUG=1 shows the traceback)",
    130: "interrupted (Ctrl-C: 128 + SIGINT, as shells report it)",
}


EXIT_USAGE = 2
EXIT_STALE = 5
EXIT_INVALID_MOVE = 2  # engine.errors.InvalidMove: text that is not a move is a usage error
EXIT_ILLEGAL_MOVE = 6  # engine.errors.IllegalMove (the engine knows no exit codes)
EXIT_ILLEGAL = EXIT_ILLEGAL_MOVE
EXIT_BAD_POSITION = 7  # engine.errors.BadPosition
EXIT_AUDIT_FAILED = 8
EXIT_STORE = 9
EXIT_MAIL_SERVER = 10
EXIT_CERTIFICATE = 11
EXIT_TIMED_OUT = 12
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


def move_exit_code(exc: MoveError) -> int:
    """The exit code of a refused move: 2 when the text does not parse, 6 when the rules forbid it."""
    from engine.errors import InvalidMove  # every command imports this module; not all load the engine

    return EXIT_INVALID_MOVE if isinstance(exc, InvalidMove) else EXIT_ILLEGAL_MOVE


# --- words not yet said --------------------------------------------------------------------


class Msg:
    """Words for a person, not yet in any language: a message id of the catalogs (the English
    text, or an entry's msgctxt as `t` takes it) and the values of its placeholders. A value
    may itself be a Msg (or an error, said by its message). An id starting with "@" is one of
    the words `pbem.ui.words.render` builds from a value (`kind_word`, `listed`, ...)."""

    __slots__ = ("id", "params")
    id: str
    params: Mapping[str, object]

    def __init__(self, id: str, params: Mapping[str, object] | None = None) -> None:  # noqa: A002
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "params", dict(params or {}))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(name)  # a Msg does not change

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Msg) and (self.id, self.params) == (other.id, other.params)

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"Msg({self.id!r}, {self.params!r})"

    def __add__(self, other: Text) -> Msg:
        """Words said one after the other (a sentence and a clause that starts with its own "; ")."""
        return Msg("@cat", {"items": (self, other)})

    def __radd__(self, other: Text) -> Msg:
        return Msg("@cat", {"items": (other, self)})

    def __str__(self) -> str:
        return english(self)


def msg(id: str, /, **params: object) -> Msg:  # noqa: A002 (the catalog's word for it)
    """A message of the catalogs with its placeholders' values, said later (pbem.ui.words.render)."""
    return Msg(id, params)


def N_(message: str) -> str:
    """Marks `message` for the catalogs (scripts/i18n collects it like a t() call) where the words
    are said later, e.g. from a table of templates (gettext's N_ convention)."""
    return message


def kind_word(kind: str, *, article: bool = False) -> Msg:
    """A document's kind in words (pbem.ui.words.kind_name)."""
    return Msg("@kind", {"kind": kind, "article": article})


def card_word(card: str) -> Msg:
    """A card id or kind by its name in the catalogs (pbem.ui.words.card_name)."""
    return Msg("@card", {"card": card})


def step_word(step: str) -> Msg:
    """A trustless table's step in words (pbem.ui.words.step_name)."""
    return Msg("@step", {"step": step})


def goal_word(goal: str) -> Msg:
    """top / middle / bottom in words (pbem.ui.words.goal_name)."""
    return Msg("@goal", {"goal": goal})


def status_word(status: str) -> Msg:
    """A hosted game's status (joining, playing, over) in words (pbem.ui.words.game_status)."""
    return Msg("@status", {"status": status})


def date_word(when: object, now: object = None) -> Msg:
    """A moment (a datetime or ISO text) as the reader's date (pbem.ui.words.date; `now`, a
    datetime, says whether the year is needed)."""
    return Msg("@date", {"when": when, "now": now})


def left_word(due: object, now: object) -> Msg:
    """How long until `due`, or how late (pbem.ui.words.left)."""
    return Msg("@left", {"due": due, "now": now})


def span_word(seconds: float) -> Msg:
    """A length of time in its two largest units (pbem.ui.words.span)."""
    return Msg("@span", {"seconds": seconds})


def reason_word(why: object) -> Msg:
    """Why the host moved for a seat (pbem.ui.words.reason)."""
    return Msg("@reason", {"why": why})


def notice_word(doc: object, now: object) -> Msg:
    """A host's notice document in one sentence (pbem.ui.words.notice_text)."""
    return Msg("@notice", {"doc": doc, "now": now})


def listed(items: Iterable[object], *, how: Literal["and", "list", "clauses"] = "and") -> Msg:
    """Items said as one list: `a, b and c` ("and"), `a, b, c` ("list"), `a; b; c` ("clauses")."""
    return Msg("@" + how, {"items": tuple(items)})


def ranges(numbers: list[int]) -> str:
    """Sorted numbers said in runs: [3, 4, 5, 9] -> '3-5, 9'; none -> '-'."""
    if not numbers:
        return "-"
    out: list[str] = []
    start = prev = numbers[0]
    for n in numbers[1:] + [-1]:
        if n != prev + 1:
            out.append(str(start) if start == prev else f"{start}-{prev}")
            start = n
        prev = n
    return ", ".join(out)


def english(value: object) -> str:
    """A Msg (or a value of one) in plain English without the catalogs: the message id
    formatted with its values. Exact for a message whose id is its English text, which is
    every error's (docs/translating.md); for logs, tracebacks and str()."""
    if isinstance(value, PbemError):
        return english(value.message)
    if not isinstance(value, Msg):
        return str(value)
    p = value.params
    if value.id.startswith("@"):
        return _english_word(value.id, p)
    try:
        return value.id.format(**{k: english(v) for k, v in p.items()})
    except (KeyError, IndexError, ValueError):
        return value.id


def _english_word(word: str, p: Mapping[str, object]) -> str:
    """The English of a word built from a value, near what pbem.ui.words says (a date stays ISO)."""
    items = p.get("items", ())
    said = [english(i) for i in (items if isinstance(items, tuple) else ())]
    if word == "@and":
        return said[0] if len(said) == 1 else " and ".join([", ".join(said[:-1]), said[-1]]) if said else "nothing"
    if word in ("@list", "@clauses", "@cat"):
        return {"@clauses": "; ", "@cat": ""}.get(word, ", ").join(said)
    if word == "@kind":
        kind = str(p.get("kind"))
        return (("an " if kind[:1] in "aeiou" else "a ") + kind) if p.get("article") else kind
    if word == "@status":
        return {"joining": "waiting for joins"}.get(str(p.get("status")), str(p.get("status")))
    if word == "@os":
        return str(p.get("reason") or "")
    if word == "@notice":
        return str(getattr(p.get("doc"), "notice", ""))
    return english(next(iter(p.values()), ""))


Text = Msg | str  # a Msg, or words an outer layer has said already


def _code_of(cls: type) -> str:
    name = cls.__name__
    return "".join(f"-{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(name))


class PbemError(Exception):
    """Base of every error pbem expects and explains to the user: `message` and `hint` are Msg
    values (or words already said, from the outer layers), `code` a stable name for scripts."""

    exit_code: int = 1

    def __init__(self, message: Text, *, hint: Text | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message: Text = message
        self.hint: Text | None = hint
        self._code = code

    @property
    def code(self) -> str:
        """The error's stable code: given where it is raised, else its class's name in kebab case."""
        return self._code or _code_of(type(self))

    def __str__(self) -> str:
        return english(self.message)


class UsageError(PbemError):
    exit_code = EXIT_USAGE


class SeatHandedOver(UsageError):
    """A packet signed by the game's host says this key's seat now belongs to another key."""


class BadPacket(PbemError):
    exit_code = 3


class BadSignature(BadPacket):
    pass


class ForkedChain(BadPacket):
    """The host sent two different packets with one number: never skipped over, always said."""


class KeyTrouble(PbemError):
    """The key asked for cannot be used: the wrong one, no or a wrong passphrase, or none there."""

    exit_code = 4


class WrongKey(KeyTrouble):
    """A sealed part that does not open with the key at hand."""


class WrongPassphrase(KeyTrouble):
    """A protected key file, and no passphrase or one that does not open it."""


class KeyNotFound(KeyTrouble):
    """No key or contact of that name, or a key file that cannot be read."""


class OutOfStep(PbemError):
    """What was sent no longer fits the game's history: a stale move, or a history that conflicts."""

    exit_code = EXIT_STALE


class StaleMove(OutOfStep):
    """Sent at the wrong moment: for a packet that is not the latest, out of turn, or while the game takes none."""


class Conflict(OutOfStep):
    """It clashes with what the game already holds (a second line, join, holder or packet under one
    name or number, another game in the folder) or with a limit the game keeps."""


class StoreError(PbemError):
    """The host's store cannot be reached, is not a pbem store, is newer, or holds a name twice."""

    exit_code = EXIT_STORE


class MailServerRefused(PbemError):
    """A mail server answered NO/BAD to what pbem needs of it: waiting does not mend it."""

    exit_code = EXIT_MAIL_SERVER


class CertificateFailure(PbemError):
    """A mail server's certificate did not verify: waiting does not mend it."""

    exit_code = EXIT_CERTIFICATE


class WaitTimedOut(PbemError):
    """`pbem turn --wait --timeout S` waited S seconds and it is not the seat's turn yet."""

    exit_code = EXIT_TIMED_OUT


# --- errors of the base modules (pbem/names.py, pbem/atomic.py) --------------------------------
# Each keeps what it is about as fields (the input quoted as given) besides its words.

NameKind = Literal["game", "seat", "contact", "identity", "file"]


def _bad_name(what: NameKind, name: str) -> Msg:
    return {"game": msg("bad game name {name}", name=name), "seat": msg("bad seat name {name}", name=name),
            "contact": msg("bad contact name {name}", name=name),
            "identity": msg("bad identity name {name}", name=name), "file": msg("bad file name {name}", name=name)}[what]


def _name_hint(what: NameKind) -> Msg | None:
    seat = msg("lower-case letters, digits, - and _, starting with a letter; not top/middle/bottom/nobody/host/table")
    return {"game": msg("use 1 to 32 characters from a-z, 0-9, '-' and '_', starting with a letter or digit"),
            "seat": seat, "contact": seat,
            "identity": msg("use 1 to 32 characters from a-z, 0-9, '_' and '-'")}.get(what)


class BadName(UsageError):
    """A name a person typed that cannot become a file, a folder or a seat."""

    def __init__(self, what: NameKind, name: str) -> None:
        self.what = what
        self.name = name
        super().__init__(_bad_name(what, repr(name)), hint=_name_hint(what))


class BadNameRead(BadPacket):
    """A game id, seat, game or identity name in a document someone sent that breaks the rule
    for such names (cut to 80)."""

    def __init__(self, what: Literal["game", "seat", "game name", "identity"], name: object) -> None:
        self.what = what
        self.name = str(name)[:80]
        shown = repr(self.name)
        super().__init__({"game": msg("bad game id {name}", name=shown),
                          "seat": msg("bad seat name {name} in a document", name=shown),
                          "game name": msg("bad game name {name} in a document", name=shown),
                          "identity": msg("bad identity name {name} in a document", name=shown)}[what])


def os_reason(errno: int | None, reason: str) -> Msg:
    """Why the operating system refused (its errno; `reason`, its strerror, for one pbem's
    catalogs do not list), said by pbem.ui.words.render."""
    return Msg("@os", {"errno": errno, "reason": reason})


class CannotWrite(UsageError):
    """The operating system refused to write `path` (`reason`: its strerror; `errno`)."""

    def __init__(self, path: str, reason: str, errno: int | None = None) -> None:
        self.path = path
        self.reason = reason
        self.errno = errno
        super().__init__(msg("cannot write {path}: {why}", path=repr(path), why=os_reason(errno, reason)))


class NotARegularFile(UsageError):
    """pbem replaces only regular files; `path` is a folder, a link or a special file."""

    def __init__(self, path: str, what: Literal["folder", "link", "special"]) -> None:
        self.path = path
        self.what = what
        shown = repr(path)
        said = {"folder": msg("{path} is a folder, not a regular file: pbem only replaces regular files", path=shown),
                "link": msg("{path} is a link, not a regular file: pbem only replaces regular files", path=shown),
                "special": msg("{path} is a device or special file, not a regular file: pbem only replaces "
                               "regular files", path=shown)}[what]
        super().__init__(said, hint=msg("write to a new or ordinary file (or leave out -o to print)"))


ReadRefusal = Literal["os", "link", "folder", "special", "large"]


class CannotRead(BadPacket):
    """pbem did not read `path` (pbem.atomic.read_bounded): the system refused (`what` "os":
    `reason` its strerror, `errno`), it is not a regular file ("link", "folder", "special"), or
    it holds more than `limit` bytes ("large")."""

    def __init__(self, path: str, what: ReadRefusal, *, reason: str = "", errno: int | None = None,
                 limit: int = 0) -> None:
        self.path = path
        self.what = what
        self.reason = reason
        self.errno = errno
        self.limit = limit
        shown = repr(path)
        said = {"os": msg("cannot read {path}: {why}", path=shown, why=os_reason(errno, reason)),
                "link": msg("{path} is a link: pbem reads only regular files", path=shown),
                "folder": msg("{path} is a folder: pbem reads only regular files", path=shown),
                "special": msg("{path} is a device or special file: pbem reads only regular files", path=shown),
                "large": msg("{path} is over the limit of {limit} bytes", path=shown, limit=f"{limit:,}")}[what]
        super().__init__(said, hint=msg("pbem never writes anything this large; it was not made by pbem")
                         if what == "large" else None)

    @property
    def missing(self) -> bool:
        """The file is not there (any more): another process may have moved it."""
        return self.what == "os" and self.errno == _errno.ENOENT


class ContentConflict(Conflict):
    """A file named after its content holds other bytes (damaged, or a hash collision)."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(msg("{path} exists with different content", path=path))


__all__ = [
    "Msg",
    "msg",
    "english",
    "kind_word",
    "step_word",
    "card_word",
    "goal_word",
    "status_word",
    "date_word",
    "left_word",
    "span_word",
    "reason_word",
    "notice_word",
    "listed",
    "EXIT_CODES",
    "EXIT_INVALID_MOVE",
    "EXIT_ILLEGAL_MOVE",
    "move_exit_code",
    "ForkedChain",
    "PbemError",
    "UsageError",
    "SeatHandedOver",
    "BadPacket",
    "BadSignature",
    "KeyTrouble",
    "WrongKey",
    "WrongPassphrase",
    "KeyNotFound",
    "StaleMove",
    "Conflict",
    "OutOfStep",
    "StoreError",
    "BadName",
    "BadNameRead",
    "CannotRead",
    "CannotWrite",
    "NotARegularFile",
    "ContentConflict",
    "WaitTimedOut",
]
