"""Contacts: other people's public keys, kept in the key home under the names a host seats
them by (`pbem key add NAME pbem1...`, `pbem game new ... --player NAME`).

They live in one file, <home>/contacts.txt, a line a contact: `NAME pbem1...`; a club's
contact file (`pbem key import FILE`) is the same, with blank lines and `#` comments. One
file, written whole (pbem.atomic.write_atomic), so an import is stored entirely or not at
all. A name held to another key is never replaced unless asked (`--replace`), and then the
old and the new fingerprints are said.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pbem.atomic import read_bounded, write_atomic
from pbem.errors import BadPacket, KeyNotFound, PbemError, UsageError, msg
from pbem.names import SEAT_NAME, check_contact_name
from pbem.protocol.crypto import PublicKey
from pbem.seat.home import contacts_path, key_path, pub_path

MAX_CONTACTS_FILE = 1 << 20  # ~8,000 contacts of ~120 bytes


def parse_contacts(data: bytes, source: str) -> dict[str, PublicKey]:
    """The contacts of a file's bytes, each `NAME pbem1...` line checked; UsageError naming
    the first bad line (its number and why), so nothing of a bad file is taken."""
    found: dict[str, PublicKey] = {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(msg("{path} is not UTF-8 text", path=repr(source))) from None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        words = line.replace("=", " ", 1).split()

        def bad(why: object, n: int = n) -> UsageError:
            return UsageError(msg("line {n} of {path}: {error}", n=n, path=repr(source), error=why),
                              hint=msg("each line is NAME pbem1... (a contact), blank, or a # comment"))

        if len(words) != 2:
            raise bad(msg("expected NAME pbem1..."))
        name, line_key = words
        try:
            check_contact_name(name)
            key = PublicKey.decode(line_key)
        except PbemError as exc:
            raise bad(exc) from None
        if name in found and found[name] != key:
            raise bad(msg("{name} is given twice, with two keys", name=repr(name)))
        found[name] = key
    return found


def load_contacts(home: Path) -> dict[str, PublicKey]:
    """The contacts kept in `home` (none when it keeps no contact file)."""
    path = contacts_path(home)
    if not path.exists() and not path.is_symlink():
        return {}
    return parse_contacts(read_bounded(path, MAX_CONTACTS_FILE), str(path))


@dataclass
class Stored:
    """What `add_contacts` did: the names added, those already held to the same key, those
    held to another key that were replaced: (name, old key), and the names stored with a key
    another contact already holds (one person under two names, or a mix-up)."""

    added: list[str] = field(default_factory=list)
    same: list[str] = field(default_factory=list)
    replaced: list[tuple[str, PublicKey]] = field(default_factory=list)
    twins: list[tuple[str, str]] = field(default_factory=list)  # (name stored, another contact with its key)


def add_contacts(home: Path, new: dict[str, PublicKey], *, replace: bool = False) -> Stored:
    """Keep `new` (name -> key) in `home`'s contacts, in one write. Refused, with nothing
    written, for a name of one of the home's own identities, and, without `replace`, for a
    name held to another key."""
    for name in new:
        check_contact_name(name)
        if key_path(home, name).exists():
            raise UsageError(msg("{name} is one of your own identities, not a contact", name=repr(name)),
                             hint=msg("give the contact another name"))
    kept = load_contacts(home)
    done = Stored()
    for name, key in new.items():
        old = kept.get(name)
        if old is None:
            done.added.append(name)
        elif old == key:
            done.same.append(name)
        elif replace:
            done.replaced.append((name, old))
        else:
            raise UsageError(msg("contact {name} already holds another key ({old}); this one is {new}", name=repr(name),
                                 old=old.fingerprint(), new=key.fingerprint()),
                             hint=msg("nothing was stored; if the new key is right (ask its owner), add it with "
                                      "--replace"))
    if done.added or done.replaced:
        stored = {*done.added, *(n for n, _ in done.replaced)}
        done.twins = [(name, other) for name in sorted(stored) for other, key in sorted(kept.items())
                      if other != name and key == new[name]]
        kept.update(new)
        lines = [f"{name} {kept[name].encode()}\n" for name in sorted(kept)]
        contacts_path(home).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(contacts_path(home), "".join(lines).encode("ascii"), 0o644)
    return done


def read_contact_file(path: Path) -> dict[str, PublicKey]:
    """A club's contact file: a regular file of at most MAX_CONTACTS_FILE bytes, every line checked."""
    return parse_contacts(read_bounded(path, MAX_CONTACTS_FILE), str(path))


def public_key_named(home: Path, name: str) -> PublicKey:
    """The key `name` stands for in `home`: a contact's, or one of the home's own identities'
    (a host seating itself). Both with different keys is refused as ambiguous; neither,
    KeyNotFound saying how to add the contact."""
    from pbem.seat.keys import load_public

    contact = load_contacts(home).get(name) if SEAT_NAME.fullmatch(name) else None
    own = load_public(home, name) if _is_identity(home, name) else None
    if contact is not None and own is not None and contact != own:
        raise UsageError(msg("{name} is both a contact and one of your own identities, with two keys", name=repr(name)),
                         hint=msg("write NAME=pbem1... with the key you mean"))
    found = contact or own
    if found is None:
        raise KeyNotFound(msg("no contact {name} in {path}", name=repr(name), path=contacts_path(home)),
                          hint=msg("add it with: pbem key add {name} pbem1...", name=name))
    return found


def _is_identity(home: Path, name: str) -> bool:
    try:
        return key_path(home, name).exists() or pub_path(home, name).exists()
    except (BadPacket, UsageError):  # not a name an identity can have
        return False
