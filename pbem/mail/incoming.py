"""Incoming mail and the player's copy of a game: read messages once, route every block.

Mail is routed by content, never by sender or subject: join and move blocks go to the host
database of their game, packets, archives and the host's notices to the player's key home
(`<home>/games/<game>/packets/packet-NNNNNN.pbem`, `notices/`), invitations to
`<home>/invitations/<game>.pbem`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC
from email.message import EmailMessage
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import MoveError
from pbem import errors as E
from pbem.errors import BadPacket, PbemError, Text, UsageError, kind_word, move_exit_code
from pbem.mail.memory import MailSource, Settlement, shown_label
from pbem.mail.message import extract_blocks, iter_messages
from pbem.protocol.crypto import Identity, PublicKey
from pbem.protocol.documents import (
    SEAT_SENDS,
    Archive,
    Invitation,
    Notice,
    Packet,
    Signed,
    Talk,
    parse,
)
from pbem.seat.home import save_archive, save_invitation, save_notice, save_packet, trusted_host_key
from pbem.ui import failures, words
from pbem.ui.words import kind_name, labelled, t

if TYPE_CHECKING:
    from pbem.host.interface import GameHost


# --- reading mail ---------------------------------------------------------------------------


@dataclass
class MailScanner:
    """Mail files as a mail source: .eml files, Maildirs, mbox files, folders of .eml.

    Files are read, never changed: a message settled or left is not read again by this
    scanner, and `known` (pbem.mail.memory) skips what an earlier run read, unparsed.
    """

    paths: list[Path]
    done: set[str] = field(default_factory=set)
    known: Callable[[str], bool] = lambda label: False
    old: int = 0  # skipped as read before: none (MailSource; a Remembering source around it counts them)

    def __post_init__(self) -> None:
        self.paths = [Path(p).expanduser().absolute() for p in self.paths]

    def new_messages(self) -> Iterator[tuple[str, EmailMessage]]:
        for path in self.paths:
            yield from iter_messages(path, skip=lambda label: label in self.done or self.known(label))

    def settle(self, label: str, outcome: str) -> None:
        self.done.add(label)

    def leave(self, label: str) -> None:
        self.done.add(label)

    def pass_over(self, label: str) -> None:
        self.done.add(label)

    def wait(self, seconds: float, longest: float | None = None) -> bool:
        time.sleep(seconds if longest is None else min(seconds, longest))
        return False

    def close(self) -> None:
        pass


def message_blocks(msg: EmailMessage) -> tuple[list[Signed], list[Text]]:
    """The signed blocks of a message, and one line per block that failed its checks (words not
    yet said: the host says them in the sender's language, pbem.mail.refusals)."""
    try:
        raw = extract_blocks(msg)
    except BadPacket as exc:
        return [], [exc.message]
    except RecursionError:  # a part's header nested too deeply for the email package (read lazily)
        return [], [E.msg("the mail has a header nested too deeply to read")]
    except (LookupError, UnicodeError, ValueError, TypeError, AttributeError, IndexError) as exc:
        # a malformed part the email package reads lazily and then chokes on: this mail is set
        # aside with its reason, and the mail after it is read
        return [], [E.msg("the mail cannot be read: {error}", error=f"{type(exc).__name__}: {exc}")]
    blocks: list[Signed] = []
    errors: list[Text] = []
    for kind, payload in raw:
        try:
            blocks.append(parse(kind, payload))
        except PbemError as exc:
            errors.append(E.msg("{kind} block: {error}", kind=kind_word(kind), error=exc))
    return blocks, errors


def settle_outcome(kinds: list[str]) -> Settlement | None:
    """After routing a message's blocks: "rejected", "done", or None (not ours: leave it)."""
    if "refused" in kinds:
        return "rejected"
    if all(k == "ignored" for k in kinds):
        return None
    return "done"


def who(msg: EmailMessage) -> str:
    return t("from {sender}, subject {subject}", sender=_header(msg, "From", "?"),
             subject=repr(_header(msg, "Subject", "")))


def _header(msg: EmailMessage, name: str, default: str) -> str:
    """A header as text; one the email package cannot parse (a CR or LF decoded into an
    address) is named as such, never a crash."""
    try:
        return str(msg.get(name, default))
    except (ValueError, TypeError, IndexError, RecursionError):
        return t("(an unreadable header)")


# --- routing --------------------------------------------------------------------------------


@dataclass
class Router:
    """Routes signed blocks by content: joins and moves to host stores, the rest home.

    `dbs` are candidate host stores (paths or URLs; their games are listed once);
    `unlock(name)` returns the host identity of that key name, asked only when a block needs it.
    """

    home: Path
    dbs: list[str | Path] = field(default_factory=list)
    unlock: Callable[[str], Identity] | None = None
    hosts: dict[str, GameHost] = field(default_factory=dict)  # game id -> its host
    stores: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.dbs:
            return  # a seat's own mail (its turn, its bot): the host's store code is not even loaded
        from pbem.host.paths import as_url, beside, is_blind, sqlite_file, store_folder
        from pbem.host.store import Store

        blind: list[Path] = []  # trustless games' files beside a store (as 'host run --all' finds them)
        for where in self.dbs:
            url = as_url(where)
            path = sqlite_file(url)
            try:
                store = Store(url)
            except PbemError:
                continue  # not a pbem store: nothing routes there
            self.stores.append(store)
            if path is None or not is_blind(path):
                blind += [p for p in beside(store_folder(url)) if path is None or p.resolve() != path.resolve()]
            self._add(store)
        for path in dict.fromkeys(p.resolve() for p in blind):
            try:
                store = Store(as_url(path))
            except PbemError:
                continue
            self.stores.append(store)
            self._add(store)

    def _add(self, store: Any) -> None:
        """A host for each game of `store` not routed yet (the trustless modules load only for such a game)."""
        from pbem.host.referee import Host
        from pbem.host.store import Located

        for gid in store.game_ids():
            if gid not in self.hosts:
                self.hosts[gid] = Host(store, game=Located(gid, False))
        for gid, _name, _status in store.trustless_list():
            if gid not in self.hosts:
                from pbem.host.blind import BlindHost

                self.hosts[gid] = BlindHost(store, game=Located(gid, True))

    def close(self) -> None:
        for store in self.stores:
            store.close()

    def route(self, block: Signed) -> tuple[str, str]:
        """(outcome kind, one line). Kinds: applied joined dealt duplicate saved have
        invitation notice ignored refused."""
        kind, line, _ = self.route_coded(block)
        return kind, line

    def route_coded(self, block: Signed) -> tuple[str, str, int]:
        """Like `route`, with the exit code of a refusal (0 otherwise)."""
        try:
            return (*self._route(block), 0)
        except (PbemError, MoveError) as exc:
            code = exc.exit_code if isinstance(exc, PbemError) else move_exit_code(exc)
            said = t("{kind} for {game}: {error}", kind=kind_name(block.kind), game=block.game, error=failures.message(exc))
            return "refused", said, code

    def _route(self, block: Signed) -> tuple[str, str]:
        doc = block.doc
        if isinstance(doc, Talk) and block.game not in self.hosts:  # relayed by the host to this seat
            return self._talk(block)
        if isinstance(doc, SEAT_SENDS):  # a Mental block: a trustless game's blind host
            host = self.hosts.get(block.game)
            if host is None:
                return "ignored", t("{kind} for game {game}: no store here holds that game", kind=kind_name(block.kind),
                                    game=block.game)
            if host.identity is None:
                if self.unlock is None:
                    raise UsageError(t("the host's key is needed to apply joins and moves"))
                host.identity = self.unlock(host.host_name())
            out = host.accept(block)
            return out.kind, words.render(out.message)
        if isinstance(doc, Packet):
            return self._packet(block)
        if isinstance(doc, Archive):
            if trusted_host_key(self.home, block.game) is None:
                return "ignored", t("archive of game {game}: not a game you joined", game=block.game)
            path, new = save_archive(self.home, block)
            return ("saved" if new else "have"), t("archive of round {round}: {path}", round=doc.round, path=path)
        if isinstance(doc, Notice):
            return self._notice(block)
        if isinstance(doc, Invitation):
            if block.game in self.hosts and self._hosts(doc):
                return "ignored", t("invitation to {game}: our own game", game=block.game)
            path, new = save_invitation(self.home, block)
            if not new:
                return "have", t("invitation to {game} already saved: {path}", game=block.game, path=path)
            return "invitation", t("invitation to {game} from {host}: {path} (join with: pbem mail-join {game})",
                                   game=block.game, host=doc.host.name, path=path)
        return "ignored", t("a {kind} block", kind=kind_name(block.kind))

    def _packet(self, block: Signed[Packet]) -> tuple[str, str]:
        """A packet for a seat of this key home: saved (its state said), or an offered seat kept."""
        doc = block.doc
        joined = trusted_host_key(self.home, block.game) is not None
        if block.game in self.hosts and not joined:
            return "ignored", t("packet {seq} of {game}: our own packet", seq=doc.seq, game=block.game)
        from pbem.seat.player import offered_seat  # engine.rules: only when a packet comes

        offered = None
        if not joined:
            offered = offered_seat(self.home, block)
            if offered is None:
                return "ignored", t("packet of game {game}: not a game you joined with this key home",
                                    game=block.game)
        path, new = save_packet(self.home, block, offered[1].doc.host.key if offered else None)
        if offered is not None:  # kept, not taken: its player says whether it is a game they expect
            seat, invitation = offered
            party = invitation.doc.host
            return "invitation", t("packet {seq} of {game} hands seat {seat} to your key (host {host}, key {fingerprint}); "
                                   "nothing is taken until you say so: pbem mail-join {game}", seq=doc.seq,
                                   game=block.game, seat=seat, host=party.name,
                                   fingerprint=PublicKey.decode(party.key).fingerprint())
        if doc.phase == "game-over":
            state = t("game over")
        elif doc.waiting is not None:  # a trustless table waits for a step
            state = t("trustless waits", step=words.step_name(doc.waiting.step),
                      seats=words.join(doc.waiting.seats))
        else:
            state = t("{player} to move", player=doc.to_move)
        if not new:
            return "have", t("packet {seq} of {game} already saved ({state})", seq=doc.seq, game=block.game,
                             state=state)
        line = t("saved packet {seq} of {game} ({state}): {path}", seq=doc.seq, game=block.game, state=state,
                 path=path)
        return "saved", line

    def _hosts(self, invitation: Invitation) -> bool:
        """Whether this key home holds the key that hosts the game: a player trying a game on the
        host's machine (its store in the same saves/) reads the invitation as a player."""
        from pbem.seat.keys import list_identities

        return any(public.encode() == invitation.host.key for _, public in list_identities(self.home))

    def _talk(self, block: Signed[Talk]) -> tuple[str, str]:
        """A line of table talk the host relayed: kept for 'pbem turn GAME', which checks it."""
        from pbem.seat.talk import keep

        if trusted_host_key(self.home, block.game) is None:
            return "ignored", t("table talk of game {game}: not a game you joined with this key home", game=block.game)
        path = keep(self.home, block)
        return "talk", t("{game}: a line of table talk from {seat} at packet {seq}: {path}", game=block.game,
                         seat=block.doc.seat, seq=block.doc.seq, path=path.name)

    def _notice(self, block: Signed[Notice]) -> tuple[str, str]:
        """A host's reminder or late notice: kept for 'pbem turn GAME', said in one line."""
        from datetime import datetime

        if trusted_host_key(self.home, block.game) is None:
            if block.game in self.hosts:
                return "ignored", t("notice of game {game}: our own notice", game=block.game)
            return "ignored", t("notice of game {game}: not a game you joined with this key home", game=block.game)
        path, new = save_notice(self.home, block)
        line = words.notice_text(block.expect(Notice).doc, datetime.now(UTC))
        if new:
            return "notice", f"{block.game}: {line}"
        return "have", t("{game}: {notice} (had it)", game=block.game, notice=line)

    def route_message(self, label: str, msg: EmailMessage) -> list[tuple[str, str, int]]:
        """(kind, line, exit code) per block of a message; the code is 0 unless it was refused.
        A block that cannot be read at all is refused as a bad packet (exit code 3)."""
        blocks, errors = message_blocks(msg)
        label = shown_label(label)  # in the lines: short (the whole label is the source's key)
        if not blocks and not errors:
            return [("ignored", t("{label}: not a pbem mail ({sender})", label=label, sender=who(msg)), 0)]
        out = [("refused", labelled(label, e), BadPacket.exit_code) for e in errors]
        # An invitation first: a packet in the same mail may be checked against it (a seat
        # handed to a new player gets both in one mail).
        for b in sorted(blocks, key=lambda b: b.kind != "invitation"):
            kind, line, code = self.route_coded(b)
            self.learn_sender(b, kind)
            out.append((kind, labelled(label, line), code))
        return out

    def learn_sender(self, block: Signed, kind: str) -> None:
        """The host's address of a game, as its invitation names it (signed by the host): from
        the invitation a mail brought, or for a packet the invitation this key home joined."""
        from pbem.mail.profile import remember_host_address
        from pbem.seat.home import load_invitation

        if block.kind == "invitation" and kind in ("invitation", "have"):
            remember_host_address(self.home, block.game, block.expect(Invitation).doc.host.mail)
        elif block.kind == "packet" and kind in ("saved", "have") and trusted_host_key(self.home, block.game):
            remember_host_address(self.home, block.game, load_invitation(self.home, block.game).doc.host.mail)


def discover_dbs(explicit: list[str], saves: Path) -> list[str | Path]:
    """The stores named, else $PBEM_STORE and every saves/*.db."""
    if explicit:
        return list(explicit)
    from pbem.host.paths import ENV_STORE

    found: list[str | Path] = [os.environ[ENV_STORE]] if os.environ.get(ENV_STORE) else []
    return found + (sorted(saves.glob("*.db")) if saves.is_dir() else [])


def route_new(source: MailSource, router: Router) -> Iterator[tuple[str, str, int]]:
    """Route every new message of `source`: each block's (outcome, line, exit code) as it is
    routed; after a message's blocks, the message is settled (done, rejected) or left."""
    for label, msg in source.new_messages():
        kinds = []
        for kind, line, code in router.route_message(label, msg):
            kinds.append(kind)
            yield kind, line, code
        outcome = settle_outcome(kinds)
        if outcome is None:
            source.leave(label)
        else:
            source.settle(label, outcome)
