"""Identities: create, read and unlock key files, and find passphrases.

Key files: <home>/keys/<name>.key (private, mode 600) and <home>/keys/<name>.pub (layout: pbem.seat.home)
(the one-line pbem1 public key). File formats: docs/keys-and-armor.md.
"""

from __future__ import annotations

import os
import stat
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pbem.atomic import write_atomic
from pbem.errors import BadPacket, KeyNotFound, UsageError, WrongPassphrase
from pbem.names import IDENTITY_NAME, check_identity_name
from pbem.protocol import keyfile
from pbem.seat.home import ENV_HOME, key_path, keys_dir, pub_path
from pbem.ui.failures import os_reason
from pbem.ui.words import t

if TYPE_CHECKING:
    from pbem.protocol.crypto import Identity, PublicKey

T = TypeVar("T")

# pbem.protocol.crypto (msgspec, the signing and sealing primitives) loads where a key is used:
# a protected key's scrypt begins before it (unlocking), with pbem.protocol.keyfile alone.

ENV_PASSPHRASE = "PBEM_PASSPHRASE"
# Test-only: lowers the scrypt cost of *new* key files so suites stay fast. It can only lower
# it (a higher value is refused), and `pbem key new` warns loudly when it is set.
ENV_SCRYPT_N = "PBEM_SCRYPT_N"
# The passphrase rule for new keys (stated in the error and in docs/keys-and-armor.md).
PASSPHRASE_MIN_LENGTH = 8
PASSPHRASE_MIN_DISTINCT = 5
# Tries at a prompt, as ssh and gpg give; a passphrase from a file or the environment gets one.
PROMPT_TRIES = 3


def passphrase_rule() -> str:
    return t("at least {length} characters, at least {distinct} of them different, and not only digits",
             length=PASSPHRASE_MIN_LENGTH, distinct=PASSPHRASE_MIN_DISTINCT)


def _scrypt_n() -> int:
    raw = os.environ.get(ENV_SCRYPT_N)
    if not raw:
        return keyfile.DEFAULT_SCRYPT_N
    try:
        n = int(raw)
    except ValueError:
        raise UsageError(t("{env} must be an integer, not {value}", env=ENV_SCRYPT_N, value=repr(raw[:40]))) from None
    if n > keyfile.DEFAULT_SCRYPT_N:
        raise UsageError(t("{env}={n} is above the default {default}", env=ENV_SCRYPT_N, n=n,
                           default=keyfile.DEFAULT_SCRYPT_N),
                         hint=t("{env} only lowers the cost, for tests; unset it for real keys", env=ENV_SCRYPT_N))
    return n


def scrypt_warning() -> str | None:
    """The warning `pbem key new` prints when new keys are made cheaper to attack."""
    n = _scrypt_n()
    if n >= keyfile.DEFAULT_SCRYPT_N:
        return None
    return t("warning: {env}={n} makes this key file {times} times cheaper to break than a normal one; it is meant "
             "for tests only (unset it for real keys)", env=ENV_SCRYPT_N, n=n, times=keyfile.DEFAULT_SCRYPT_N // n)


def check_passphrase_strength(passphrase: bytes) -> None:
    """Refuse trivially weak passphrases for new keys: `a`, a space, `1234`, `aaaaaaaa`."""
    text = passphrase.decode("utf-8", errors="replace")
    if (len(text) < PASSPHRASE_MIN_LENGTH or len(set(text)) < PASSPHRASE_MIN_DISTINCT
            or text.strip().isdigit() or not text.strip()):
        raise UsageError(t("the passphrase is too weak: use {rule}", rule=passphrase_rule()),
                         hint=t("a few unrelated words make a good passphrase; or --no-passphrase for an unprotected "
                                "key"))


def create_identity(home: Path, name: str, passphrase: bytes | None) -> Identity:
    check_identity_name(name)
    if passphrase is not None:
        check_passphrase_strength(passphrase)
    kpath, ppath = key_path(home, name), pub_path(home, name)
    if kpath.exists():
        raise UsageError(
            t("identity {name} already exists in {path}", name=repr(name), path=kpath),
            hint=t("pick another name; pbem never overwrites a private key"),
        )
    from pbem.protocol import crypto

    identity = crypto.Identity.generate(name)
    blob = crypto.identity_to_bytes(identity, passphrase, scrypt_n=_scrypt_n())
    keys_dir(home).mkdir(parents=True, exist_ok=True, mode=0o700)
    # Private key first: the .pub can always be rebuilt from it.
    write_atomic(kpath, blob, 0o600)
    write_atomic(ppath, (identity.public.encode() + "\n").encode("ascii"), 0o644)
    return identity


MAX_KEY_FILE = 64 * 1024  # a key file is ~400 bytes
MAX_PASSPHRASE_FILE = 4096
_warned: set[str] = set()


def _read_key_file(home: Path, name: str) -> bytes:
    path = key_path(home, name)
    try:
        with open(path, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            data = f.read(MAX_KEY_FILE + 1)
    except FileNotFoundError:
        missing = t("no identity {name} in {path}", name=repr(name), path=keys_dir(home))
        if pub_path(home, name).exists():
            missing = t("{missing} (only its public key is here)", missing=missing)
        raise KeyNotFound(missing, hint=_create_hint(name)) from None
    except OSError as exc:
        raise KeyNotFound(t("cannot read key file {path}: {why}", path=repr(str(path)), why=os_reason(exc))) from None
    if len(data) > MAX_KEY_FILE or not stat.S_ISREG(mode):
        raise BadPacket(t("{path} is not a pbem key file", path=repr(str(path))))
    _warn_if_readable(path, mode)
    return data


def _warn_if_readable(path: Path, mode: int) -> None:
    """Say on stderr, once, that a key file others may read is used (ssh refuses such a file; a
    warning keeps a game going and a passphrase still guards a protected key). Not on Windows,
    where the mode bits say nothing about who may read."""
    if os.name == "nt" or not mode & 0o077 or str(path) in _warned:
        return
    _warned.add(str(path))
    print(t("warning: key file {path} can be read by other users (mode {mode}); run: chmod 600 {path}",
            path=str(path), mode=f"{stat.S_IMODE(mode):04o}"), file=sys.stderr, flush=True)


def load_identity(home: Path, name: str, passphrase: bytes | None) -> Identity:
    return _identity_from(home, name, _read_key_file(home, name), passphrase)


def _identity_from(home: Path, name: str, data: bytes, passphrase: bytes | None, key: bytes | None = None) -> Identity:
    """Key file `name`'s identity from its bytes `data` (read once); `key`: the one `passphrase`
    gives it, derived already (keyfile.passphrase_key)."""
    from pbem.protocol import crypto

    identity = crypto.identity_from_bytes(data, passphrase, key)
    if identity.name != name:
        raise BadPacket(
            t("key file {path} belongs to identity {owner}, not {name}", path=key_path(home, name),
              owner=repr(identity.name), name=repr(name)),
            hint=t("the file was renamed; rename it back to {file}", file=f"{identity.name}.key"),
        )
    return identity


def is_protected(home: Path, name: str) -> bool:
    return keyfile.is_protected(_read_key_file(home, name))


def load_public(home: Path, name: str) -> PublicKey:
    from pbem.protocol import crypto

    ppath = pub_path(home, name)
    try:
        return crypto.PublicKey.decode(ppath.read_text("utf-8"))
    except FileNotFoundError:
        pass
    if key_path(home, name).exists():
        return crypto.identity_public(_read_key_file(home, name))
    raise KeyNotFound(t("no public key {name} in {path}", name=repr(name), path=keys_dir(home)),
                      hint=_create_hint(name))


def _create_hint(name: str) -> str:
    return t("create one with 'pbem key new {name}', or point --home / {env} at the right place", name=name,
             env=ENV_HOME)


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
        try:  # a pipe is fine (`--passphrase-file <(pass show pbem)`), but never more than a passphrase
            with open(passphrase_file, "rb") as f:
                raw = f.read(MAX_PASSPHRASE_FILE + 1)
        except OSError as exc:
            raise UsageError(t("cannot read passphrase file {path}: {error}", path=repr(str(passphrase_file)),
                               error=os_reason(exc))) from exc
        if len(raw) > MAX_PASSPHRASE_FILE:
            raise UsageError(t("{path} is over the limit of {limit} bytes", path=repr(str(passphrase_file)),
                               limit=f"{MAX_PASSPHRASE_FILE:,}"))
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
            raise UsageError(t("passphrase file {path} is empty", path=repr(str(passphrase_file))))
        return value
    env = os.environ.get(ENV_PASSPHRASE)
    if env:
        return _normalise(env)
    if prompt and sys.stdin is not None and sys.stdin.isatty():
        return _typed(confirm)
    raise UsageError(t("no passphrase available"),
                     hint=t("pass --passphrase-file FILE, set {env}, or run in a terminal to be asked", env=ENV_PASSPHRASE))


def _typed(confirm: bool) -> bytes:
    """A passphrase typed at the terminal; for a new key (`confirm`) checked for strength as soon
    as it is typed, then typed again. A weak, empty or mistyped one is asked again, up to
    PROMPT_TRIES times in all."""
    tries = 0
    while True:
        tries += 1
        first = _ask(t("Passphrase: "))
        problem = None
        if not first:
            problem = UsageError(t("empty passphrase"), hint=t("use --no-passphrase for an unprotected key"))
        elif confirm:
            try:
                check_passphrase_strength(_normalise(first))
            except UsageError as exc:
                problem = exc
            if problem is None and _ask(t("Passphrase again: ")) != first:
                problem = UsageError(t("the two passphrases differ"))
        if problem is None:
            return _normalise(first)
        if tries == PROMPT_TRIES:
            raise problem
        print(t("{problem}; try again", problem=str(problem)), file=sys.stderr, flush=True)


def _ask(prompt: str) -> str:
    """One line typed without echo. On Ctrl-C the prompt's line is ended first, so that the
    `error: interrupted` after it stands on a line of its own."""
    import getpass  # with termios: only to ask a person

    try:
        return getpass.getpass(prompt)
    except KeyboardInterrupt:
        _end_prompt_line()
        raise


def _end_prompt_line() -> None:
    try:  # getpass wrote the prompt to the terminal itself when it could
        fd = os.open("/dev/tty", os.O_WRONLY | os.O_NOCTTY)
    except OSError:
        print(file=sys.stderr, flush=True)
        return
    try:
        os.write(fd, b"\n")
    finally:
        os.close(fd)


def _wrong(exc: WrongPassphrase, passphrase_file: Path | None) -> WrongPassphrase:
    """A wrong passphrase, with a hint about where it came from."""
    if passphrase_file is not None:
        hint = t("check the passphrase in {path}; a damaged key file fails the same way", path=repr(str(passphrase_file)))
    elif os.environ.get(ENV_PASSPHRASE):
        hint = t("check {env}; a damaged key file fails the same way", env=ENV_PASSPHRASE)
    else:
        hint = t("{tries} tries typed; a damaged key file fails the same way", tries=PROMPT_TRIES)
    return WrongPassphrase(exc.message, hint=hint)


def _unlocked(home: Path, name: str, data: bytes, passphrase_file: Path | None) -> Identity:
    """Key file `name`'s identity (its bytes `data`, protected): a passphrase from a file or the
    environment is tried once, one typed at the prompt up to PROMPT_TRIES times."""
    asked = passphrase_file is None and not os.environ.get(ENV_PASSPHRASE)
    tries = 0
    while True:
        tries += 1
        passphrase = get_passphrase(passphrase_file, prompt=True, confirm=False)
        try:
            return _identity_from(home, name, data, passphrase)
        except WrongPassphrase as exc:
            if not asked or tries == PROMPT_TRIES:
                raise _wrong(exc, passphrase_file) from None
            print(t("wrong passphrase; try again"), file=sys.stderr, flush=True)


def unlock_key_file(home: Path, name: str, passphrase_file: Path | None = None) -> Identity:
    """Key `name` unlocked from its file (never through the agent): asked for as _unlocked does."""
    data = _read_key_file(home, name)
    if not keyfile.is_protected(data):
        return _identity_from(home, name, data, None)
    return _unlocked(home, name, data, passphrase_file)


def unlock_identity(home: Path, name: str, passphrase_file: Path | None = None) -> Identity:
    """Load an identity, asking for a passphrase only if its file is protected.

    A protected key that the key agent holds (`pbem agent start`) is used through the agent,
    at no scrypt cost, unless a passphrase file is given explicitly.
    """
    return unlocking(home, lambda: name, passphrase_file)()


def unlocking(home: Path, name: Callable[[], str], passphrase_file: Path | None = None) -> Callable[[], Identity]:
    """unlock_identity(home, name(), passphrase_file), begun now and finished by calling what it
    returns. With the passphrase at hand (a file, or $PBEM_PASSPHRASE) the key file's scrypt
    (which cryptography runs without holding the GIL) goes on a thread of its own, so what the
    command does before it needs the key (its imports, reading its packet) runs on another core
    meanwhile. Whatever unlocking would raise is raised by the call, so
    a command reports its errors in the same order as before; a passphrase that must be asked
    for is asked at the call, in the same place."""
    if passphrase_file is None and not os.environ.get(ENV_PASSPHRASE):
        return lambda: _unlock(home, name(), None, later=False)()  # perhaps a prompt: all in its turn
    try:
        return _unlock(home, name(), passphrase_file, later=True)
    except Exception as exc:  # raised by the call, in the command's order
        error = exc

        def failed() -> Identity:
            raise error

        return failed


def _unlock(home: Path, name: str, passphrase_file: Path | None, later: bool) -> Callable[[], Identity]:
    data = _read_key_file(home, name)
    if not keyfile.is_protected(data):
        plain = _identity_from(home, name, data, None)
        return lambda: plain
    if passphrase_file is None:
        from pbem.protocol import crypto
        from pbem.seat.agent import agent_identity

        held = agent_identity(home, name, crypto.identity_public(data))
        if held is not None:
            return lambda: held
    if not later:
        identity = _unlocked(home, name, data, passphrase_file)
        return lambda: identity
    passphrase = get_passphrase(passphrase_file, prompt=True, confirm=False)
    # the scrypt alone, begun before pbem.protocol.crypto loads
    derived = _on_thread(lambda: keyfile.passphrase_key(data, passphrase) if passphrase is not None else None)

    def unlock() -> Identity:
        try:
            return _identity_from(home, name, data, passphrase, derived())
        except WrongPassphrase as exc:
            raise _wrong(exc, passphrase_file) from None

    return unlock


def _on_thread(work: Callable[[], T]) -> Callable[[], T]:
    """`work` run on a thread now; the call it returns waits for it and returns or raises what it
    did. A daemon thread: a command that fails before it needs the key does not wait for it."""
    import threading  # already loaded by Typer

    done: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            done.append((True, work()))
        except BaseException as exc:
            done.append((False, exc))

    thread = threading.Thread(target=run, name="pbem-unlock", daemon=True)
    thread.start()

    def result() -> T:
        thread.join()
        ok, value = done[0]
        if not ok:
            raise value
        return value

    return result
