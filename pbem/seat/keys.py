"""Identities: create, read and unlock key files, and find passphrases.

Key files: <home>/keys/<name>.key (private, mode 600) and <home>/keys/<name>.pub (layout: pbem.seat.home)
(the one-line pbem1 public key). File formats: docs/keys-and-armor.md.
"""

from __future__ import annotations

import getpass
import os
import sys
import unicodedata
from pathlib import Path

from pbem.atomic import write_atomic
from pbem.errors import BadPacket, KeyNotFound, UsageError
from pbem.names import IDENTITY_NAME, check_identity_name
from pbem.protocol import crypto
from pbem.protocol.crypto import Identity, PublicKey
from pbem.seat.home import ENV_HOME, key_path, keys_dir, pub_path

ENV_PASSPHRASE = "PBEM_PASSPHRASE"
# Test-only: lowers the scrypt cost of *new* key files so suites stay fast. It can only lower
# it (a higher value is refused), and `pbem key new` warns loudly when it is set.
ENV_SCRYPT_N = "PBEM_SCRYPT_N"
# The passphrase rule for new keys (stated in the error and in docs/keys-and-armor.md).
PASSPHRASE_MIN_LENGTH = 8
PASSPHRASE_MIN_DISTINCT = 5
PASSPHRASE_RULE = (f"at least {PASSPHRASE_MIN_LENGTH} characters, at least {PASSPHRASE_MIN_DISTINCT} of them "
                   "different, and not only digits")


def _scrypt_n() -> int:
    raw = os.environ.get(ENV_SCRYPT_N)
    if not raw:
        return crypto.DEFAULT_SCRYPT_N
    try:
        n = int(raw)
    except ValueError:
        raise UsageError(f"{ENV_SCRYPT_N} must be an integer, not {raw[:40]!r}") from None
    if n > crypto.DEFAULT_SCRYPT_N:
        raise UsageError(f"{ENV_SCRYPT_N}={n} is above the default {crypto.DEFAULT_SCRYPT_N}",
                         hint=f"{ENV_SCRYPT_N} only lowers the cost, for tests; unset it for real keys")
    return n


def scrypt_warning() -> str | None:
    """The warning `pbem key new` prints when new keys are made cheaper to attack."""
    n = _scrypt_n()
    if n >= crypto.DEFAULT_SCRYPT_N:
        return None
    return (f"warning: {ENV_SCRYPT_N}={n} makes this key file {crypto.DEFAULT_SCRYPT_N // n} times cheaper "
            "to break than a normal one; it is meant for tests only (unset it for real keys)")


def check_passphrase_strength(passphrase: bytes) -> None:
    """Refuse trivially weak passphrases for new keys: `a`, a space, `1234`, `aaaaaaaa`."""
    text = passphrase.decode("utf-8", errors="replace")
    if (len(text) < PASSPHRASE_MIN_LENGTH or len(set(text)) < PASSPHRASE_MIN_DISTINCT
            or text.strip().isdigit() or not text.strip()):
        raise UsageError(f"the passphrase is too weak: use {PASSPHRASE_RULE}",
                         hint="a few unrelated words make a good passphrase; or --no-passphrase for an unprotected key")


def create_identity(home: Path, name: str, passphrase: bytes | None) -> Identity:
    check_identity_name(name)
    if passphrase is not None:
        check_passphrase_strength(passphrase)
    kpath, ppath = key_path(home, name), pub_path(home, name)
    if kpath.exists():
        raise UsageError(
            f"identity {name!r} already exists in {kpath}",
            hint="pick another name; pbem never overwrites a private key",
        )
    identity = Identity.generate(name)
    blob = crypto.identity_to_bytes(identity, passphrase, scrypt_n=_scrypt_n())
    keys_dir(home).mkdir(parents=True, exist_ok=True, mode=0o700)
    # Private key first: the .pub can always be rebuilt from it.
    write_atomic(kpath, blob, 0o600)
    write_atomic(ppath, (identity.public.encode() + "\n").encode("ascii"), 0o644)
    return identity


def _read_key_file(home: Path, name: str) -> bytes:
    path = key_path(home, name)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        extra = " (only its public key is here)" if pub_path(home, name).exists() else ""
        raise KeyNotFound(
            f"no identity {name!r} in {keys_dir(home)}{extra}",
            hint=f"create one with 'pbem key new {name}', or point --home / {ENV_HOME} at the right place",
        )


def load_identity(home: Path, name: str, passphrase: bytes | None) -> Identity:
    identity = crypto.identity_from_bytes(_read_key_file(home, name), passphrase)
    if identity.name != name:
        raise BadPacket(
            f"key file {key_path(home, name)} belongs to identity {identity.name!r}, not {name!r}",
            hint=f"the file was renamed; rename it back to {identity.name}.key",
        )
    return identity


def is_protected(home: Path, name: str) -> bool:
    return crypto.identity_is_protected(_read_key_file(home, name))


def load_public(home: Path, name: str) -> PublicKey:
    ppath = pub_path(home, name)
    try:
        return PublicKey.decode(ppath.read_text("utf-8"))
    except FileNotFoundError:
        pass
    if key_path(home, name).exists():
        return crypto.identity_public(_read_key_file(home, name))
    raise KeyNotFound(
        f"no public key {name!r} in {keys_dir(home)}",
        hint=f"create one with 'pbem key new {name}', or point --home / {ENV_HOME} at the right place",
    )


def list_identities(home: Path) -> list[tuple[str, PublicKey]]:
    """Identities with a private key here, sorted by name."""
    d = keys_dir(home)
    if not d.is_dir():
        return []
    names = sorted(p.stem for p in d.glob("*.key") if IDENTITY_NAME.fullmatch(p.stem))
    return [(n, load_public(home, n)) for n in names]


def _normalise(text: str) -> bytes:
    # NFC so that the same passphrase typed on two systems gives the same bytes.
    return unicodedata.normalize("NFC", text).encode("utf-8")


def get_passphrase(passphrase_file: Path | None, prompt: bool, confirm: bool) -> bytes | None:
    """Passphrase from --passphrase-file, else $PBEM_PASSPHRASE, else a tty prompt.

    `prompt` allows asking interactively (only when stdin is a terminal);
    `confirm` asks twice, for new keys. Never returns an empty passphrase.
    """
    if passphrase_file is not None:
        try:
            raw = Path(passphrase_file).read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read passphrase file {str(passphrase_file)!r}: {exc.strerror}")
        # Only the final newline is an artefact of editors and `echo`.
        if raw.endswith(b"\r\n"):
            raw = raw[:-2]
        elif raw.endswith(b"\n"):
            raw = raw[:-1]
        try:
            value = _normalise(raw.decode("utf-8"))
        except UnicodeDecodeError:
            value = raw
        if not value:
            raise UsageError(f"passphrase file {str(passphrase_file)!r} is empty")
        return value
    env = os.environ.get(ENV_PASSPHRASE)
    if env:
        return _normalise(env)
    if prompt and sys.stdin is not None and sys.stdin.isatty():
        first = getpass.getpass("Passphrase: ")
        if not first:
            raise UsageError("empty passphrase", hint="use --no-passphrase for an unprotected key")
        if confirm and getpass.getpass("Passphrase again: ") != first:
            raise UsageError("the two passphrases differ")
        return _normalise(first)
    raise UsageError(
        "no passphrase available",
        hint=f"pass --passphrase-file FILE, set {ENV_PASSPHRASE}, or run in a terminal to be asked",
    )


def unlock_identity(home: Path, name: str, passphrase_file: Path | None = None) -> Identity:
    """Load an identity, asking for a passphrase only if its file is protected.

    A protected key that the key agent holds (`pbem agent start`) is used through the agent,
    at no scrypt cost, unless a passphrase file is given explicitly.
    """
    data = _read_key_file(home, name)
    if not crypto.identity_is_protected(data):
        return load_identity(home, name, None)
    if passphrase_file is None:
        from pbem.seat.agent import agent_identity

        held = agent_identity(home, name, crypto.identity_public(data))
        if held is not None:
            return held
    return load_identity(home, name, get_passphrase(passphrase_file, prompt=True, confirm=False))
