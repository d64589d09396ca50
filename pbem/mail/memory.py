"""What mail a key home has read: by where it was, by Message-ID and by content hash.

`pbem inbox`, the seat bots and the automatic host consult it so that each run reports only
new mail. A place (a Maildir key, an IMAP UID) is checked before the message is even
fetched; the Message-ID and a hash of the body also catch the same mail met elsewhere (a
copy in another folder, a second download). One SQLite file; each remember is one
transaction, so a crash forgets at most the message being handled (read again: harmless).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Literal, Protocol

from pbem.host import sqlite
from pbem.seat.home import mail_memory_path

Settlement = Literal["done", "rejected"]


class MailSource(Protocol):
    """Yields messages; each is then settled (processed), left (not pbem mail, for good),
    passed over (not for this reader: skipped until it restarts), or none of these (retry).
    A source also has a `known(label)` hook, consulted before a message is parsed or fetched.
    `old` counts the messages skipped as read before (only a `Remembering` source skips any)."""

    old: int

    def new_messages(self) -> Iterator[tuple[str, EmailMessage]]: ...
    def settle(self, label: str, outcome: Settlement) -> None: ...
    def leave(self, label: str) -> None: ...
    def pass_over(self, label: str) -> None: ...
    def wait(self, seconds: float, longest: float | None = None) -> bool:
        """Until new mail may have come (a server that tells: IMAP IDLE, for at most `longest`
        seconds when given) or `seconds` passed (a source that is looked at again)."""
    def close(self) -> None: ...


def shown_label(label: str) -> str:
    """A message's label as a log line names it: an IMAP message short, `INBOX #12` (its label,
    the memory's key, is `imap://ann@host/INBOX;UIDVALIDITY=7;UID=12`); a file's, the path it
    was read from, as it is."""
    from urllib.parse import unquote, urlsplit

    where, sep, uid = label.rpartition(";UID=")
    if not (sep and label.startswith("imap")):
        return label
    return f"{unquote(urlsplit(where.partition(';UIDVALIDITY=')[0]).path.lstrip('/')) or 'INBOX'} #{uid}"


def message_keys(msg: EmailMessage) -> list[str]:
    """The Message-ID (when it has one) and the SHA-256 of the body, as memory keys."""
    try:
        raw = msg.as_bytes()
    except (RecursionError, LookupError, UnicodeError, ValueError, TypeError, AttributeError, IndexError):
        # a mail the email package reads but cannot write back (a header nested too deeply, a
        # multipart without a boundary around undecodable bytes): the bytes as they came
        raw = getattr(msg, "raw", b"")
    cut = max(raw.find(b"\n\n"), 0)  # headers differ between two deliveries of one mail
    body = raw[cut:].replace(b"\r\n", b"\n")
    keys = ["sha256:" + hashlib.sha256(body).hexdigest()]
    try:
        mid = str(msg.get("Message-ID") or "").strip()
    except (RecursionError, ValueError, TypeError, IndexError):  # a Message-ID the email package cannot parse
        mid = ""
    if mid:
        keys.insert(0, f"id:{mid}")
    return keys


class InboxMemory:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS read (key TEXT PRIMARY KEY, at REAL NOT NULL)")

    @classmethod
    def of_home(cls, home: Path) -> InboxMemory:
        return cls(mail_memory_path(home))

    def knows(self, keys: list[str]) -> bool:
        if not keys:
            return False
        marks = ",".join("?" * len(keys))
        return self.db.execute(f"SELECT 1 FROM read WHERE key IN ({marks}) LIMIT 1", keys).fetchone() is not None

    def remember(self, keys: list[str]) -> None:
        now = time.time()
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany("INSERT OR IGNORE INTO read (key, at) VALUES (?, ?)", [(k, now) for k in keys])

    def close(self) -> None:
        self.db.close()


@dataclass
class Remembering:
    """A mail source that skips what this key home read before, and counts what it skipped."""

    source: MailSource
    memory: InboxMemory
    old: int = 0
    _keys: dict[str, list[str]] = field(default_factory=dict)
    # also the same mail met elsewhere (its Message-ID, its body's hash); False: by place only
    # (a host, which tells duplicates by their blocks and answers each refused mail once)
    by_content: bool = True

    def __post_init__(self) -> None:
        setattr(self.source, "known", self._known)  # noqa: B010 (a hook every source has, not in the Protocol)

    def _known(self, label: str) -> bool:
        if self.memory.knows([f"at:{label}"]):
            self.old += 1
            return True
        return False

    def new_messages(self) -> Iterator[tuple[str, EmailMessage]]:
        for label, msg in self.source.new_messages():
            keys = message_keys(msg) if self.by_content else []
            if keys and self.memory.knows(keys):
                self.old += 1
                self.memory.remember([f"at:{label}"])
                self.source.leave(label)
                continue
            self._keys[label] = [f"at:{label}", *keys]
            yield label, msg

    def settle(self, label: str, outcome: Settlement) -> None:
        self.source.settle(label, outcome)
        self.memory.remember(self._keys.pop(label, [f"at:{label}"]))

    def leave(self, label: str) -> None:
        self.source.leave(label)
        self.memory.remember(self._keys.pop(label, [f"at:{label}"]))

    def pass_over(self, label: str) -> None:
        self._keys.pop(label, None)
        self.source.pass_over(label)

    def wait(self, seconds: float, longest: float | None = None) -> bool:
        return self.source.wait(seconds, longest)

    def close(self) -> None:
        self.source.close()
        self.memory.close()
