"""Incoming mail and the player's copy of a game: read messages once, route every block.

Mail is routed by content, never by sender or subject: join and move blocks go to the host
database of their game, packets and archives to the player's key home
(`<home>/games/<game>/packets/packet-NNNNNN.pbem`), invitations to
`<home>/invitations/<game>.pbem`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path
from typing import Any

from engine.errors import MoveError
from pbem.errors import BadPacket, PbemError, UsageError, move_exit_code
from pbem.mail.message import extract_blocks, iter_messages
from pbem.protocol.crypto import Identity
from pbem.protocol.documents import Signed, parse
from pbem.seat.home import save_archive, save_invitation, save_packet, trusted_host_key


# --- reading mail ---------------------------------------------------------------------------


def _parse_file(path: Path) -> EmailMessage:
    with path.open("rb") as f:
        msg = BytesParser(policy=policy.default).parse(f)
    assert isinstance(msg, EmailMessage)
    return msg


@dataclass
class MailScanner:
    """Yields each message of some mail sources once, across calls (new mail since last time).

    Maildirs and folders of .eml files are listed cheaply and only new files are parsed;
    an mbox is re-read (its keys are positions, stable while it only grows).
    """

    paths: list[Path]
    seen: set[str] = field(default_factory=set)

    def new_messages(self) -> Iterator[tuple[str, EmailMessage]]:
        for path in self.paths:
            path = Path(path)
            if path.is_dir() and (path / "cur").is_dir() and (path / "new").is_dir():
                yield from self._maildir(path)
            elif path.is_dir():
                for p in sorted(path.iterdir()):
                    if p.suffix.lower() == ".eml" and not p.name.startswith(".") and str(p) not in self.seen:
                        yield from self._one(str(p), p)
            else:
                for label, msg in iter_messages(path):
                    if label not in self.seen:
                        self.seen.add(label)
                        yield label, msg

    def _maildir(self, path: Path) -> Iterator[tuple[str, EmailMessage]]:
        found = []
        for sub in ("new", "cur"):
            try:
                names = os.listdir(path / sub)
            except FileNotFoundError:
                continue
            for n in names:
                if n.startswith("."):
                    continue
                key = n.split(":", 1)[0]
                found.append((key, path / sub / n))
        for key, p in sorted(found):
            yield from self._one(f"{path}#{key}", p)

    def _one(self, label: str, p: Path) -> Iterator[tuple[str, EmailMessage]]:
        if label in self.seen:
            return
        try:
            msg = _parse_file(p)
        except FileNotFoundError:
            return  # moved from new/ to cur/ meanwhile: found next time under the same key
        self.seen.add(label)
        yield label, msg


def message_blocks(msg: EmailMessage) -> tuple[list[Signed], list[str]]:
    """The signed blocks of a message, and one line per block that failed its checks."""
    try:
        raw = extract_blocks(msg)
    except BadPacket as exc:
        return [], [str(exc)]
    blocks, errors = [], []
    for kind, payload in raw:
        try:
            blocks.append(parse(kind, payload))
        except PbemError as exc:
            errors.append(f"{kind.lower()} block: {exc}")
    return blocks, errors


def who(msg: EmailMessage) -> str:
    return f"from {msg.get('From', '?')}, subject {msg.get('Subject', '')!r}"


# --- routing --------------------------------------------------------------------------------


@dataclass
class Router:
    """Routes signed blocks by content: joins and moves to host databases, the rest home.

    `dbs` are candidate host databases (their game ids are read once); `unlock(name)`
    returns the host identity of that key name, asked only when a block needs it.
    """

    home: Path
    dbs: list[Path] = field(default_factory=list)
    unlock: Callable[[str], Identity] | None = None
    hosts: dict[str, Any] = field(default_factory=dict)  # game id -> Host

    def __post_init__(self) -> None:
        from pbem.host.referee import Host

        for path in self.dbs:
            try:
                h = Host(Path(path))
                gid = h.game_id()
            except PbemError:
                continue  # not a pbem database: nothing routes there
            if gid in self.hosts:
                h.close()
                continue
            self.hosts[gid] = h

    def close(self) -> None:
        for h in self.hosts.values():
            h.close()

    def route(self, block: Signed) -> tuple[str, str]:
        """(outcome kind, one line). Kinds: applied joined dealt duplicate saved have
        invitation ignored refused."""
        kind, line, _ = self.route_coded(block)
        return kind, line

    def route_coded(self, block: Signed) -> tuple[str, str, int]:
        """Like `route`, with the exit code of a refusal (0 otherwise)."""
        try:
            return (*self._route(block), 0)
        except (PbemError, MoveError) as exc:
            code = exc.exit_code if isinstance(exc, PbemError) else move_exit_code(exc)
            return "refused", f"{block.kind} for {block.game}: {exc}", code

    def _route(self, block: Signed) -> tuple[str, str]:
        if block.kind in ("join", "move", "request", "handover"):
            host = self.hosts.get(block.game)
            if host is None:
                return "ignored", f"{block.kind} for game {block.game}: no database of that game here"
            if host.identity is None:
                if self.unlock is None:
                    raise UsageError("the host's key is needed to apply joins and moves")
                host.identity = self.unlock(host.host_name())
            out = host.accept(block)
            return out.kind, out.message
        if block.kind == "packet":
            if block.game in self.hosts and trusted_host_key(self.home, block.game) is None:
                return "ignored", f"packet {block.doc.get('seq')} of {block.game}: our own packet"
            if trusted_host_key(self.home, block.game) is None:
                return "ignored", f"packet of game {block.game}: not a game you joined with this key home"
            path, new = save_packet(self.home, block)
            doc = block.doc
            state = "game over" if doc.get("phase") == "game-over" else f"{doc.get('to_move')} to move"
            if not new:
                return "have", f"packet {doc['seq']} of {block.game} already saved ({state})"
            return "saved", f"saved packet {doc['seq']} of {block.game} ({state}): {path}"
        if block.kind == "archive":
            if trusted_host_key(self.home, block.game) is None:
                return "ignored", f"archive of game {block.game}: not a game you joined"
            path, new = save_archive(self.home, block)
            return ("saved" if new else "have"), f"archive of round {block.doc.get('round')}: {path}"
        if block.kind == "invitation":
            if block.game in self.hosts:
                return "ignored", f"invitation to {block.game}: our own game"
            path, new = save_invitation(self.home, block)
            if not new:
                return "have", f"invitation to {block.game} already saved: {path}"
            return "invitation", (f"invitation to {block.game} from {block.doc['host'].get('name')}: {path} "
                                  f"(join with: pbem mail-join {path} --as YOU --to HOST-ADDRESS)")
        return "ignored", f"a {block.kind} block"

    def route_message(self, label: str, msg: EmailMessage) -> list[tuple[str, str, int]]:
        """(kind, line, exit code) per block of a message; the code is 0 unless it was refused.
        A block that cannot be read at all is refused as a bad packet (exit code 3)."""
        blocks, errors = message_blocks(msg)
        if not blocks and not errors:
            return [("ignored", f"{label}: not a pbem mail ({who(msg)})", 0)]
        out = [("refused", f"{label}: {e}", BadPacket.exit_code) for e in errors]
        for b in blocks:
            kind, line, code = self.route_coded(b)
            out.append((kind, f"{label}: {line}", code))
        return out


def discover_dbs(explicit: list[Path], saves: Path) -> list[Path]:
    if explicit:
        return explicit
    return sorted(saves.glob("*.db")) if saves.is_dir() else []
