"""The group: ristretto255 (RFC 9496), a prime-order group built on Curve25519.

Why ristretto255 and not the Ed25519 subgroup: every ristretto255 encoding that decodes is a
group element of prime order, so decoding *is* the membership check, while an Ed25519 point
needs a separate subgroup check, far dearer, and cofactor care everywhere; a variable-base
multiplication with ristretto255 (rbcl) costs about half what Ed25519 with its check (PyNaCl)
does. rbcl bundles libsodium's ristretto255
functions, which PyNaCl does not expose.

Rules of this module:
- `Point.decode` is the only way bytes from outside become a point, and it refuses any
  non-canonical or invalid encoding (including a set top bit, which libsodium lets through); points made by arithmetic here are valid by
  construction.
- Scalars are Python ints modulo ORDER; `decode_scalar` refuses non-canonical encodings.
- Every hash into the group or the scalars names its purpose (domain separation).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from pbem.errors import BadPacket, Text, msg


def _import_rbcl() -> ModuleType:
    """rbcl, without the file it leaves behind. At import rbcl writes its bundled libsodium
    (2.7 MB) to a new file in the temporary folder, loads it and never removes it: every process
    would leave one more, filling /tmp (a tmpfs is RAM). Here that file goes to a folder of our
    own, removed as soon as the library is loaded; a loaded library needs no file."""
    with tempfile.TemporaryDirectory(prefix="pbem-rbcl-", ignore_cleanup_errors=True) as folder:
        before, tempfile.tempdir = tempfile.tempdir, folder
        try:
            import rbcl  # no stubs (pyproject: ignore_missing_imports); every call is wrapped and typed below
        finally:
            tempfile.tempdir = before
    return rbcl


class _Sodium:
    """rbcl's ristretto255 functions, the library loaded at the first one used: a command that
    imports the group and computes nothing in it (`pbem games` lists trustless games) does not
    load it (a tenth of a second, and a 2.7 MB file written and removed)."""

    _NAMES = {"add": "crypto_core_ristretto255_add", "sub": "crypto_core_ristretto255_sub",
              "mul": "crypto_scalarmult_ristretto255_allow_scalar_zero",
              "base": "crypto_scalarmult_ristretto255_base_allow_scalar_zero",
              "valid": "crypto_core_ristretto255_is_valid_point", "from_hash": "crypto_core_ristretto255_from_hash"}

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name not in self._NAMES:
            raise AttributeError(name)
        rbcl = _import_rbcl()
        for short, full in self._NAMES.items():  # bound once: later calls find them as attributes
            setattr(self, short, getattr(rbcl, full))
        return getattr(rbcl, self._NAMES[name])


_sodium = _Sodium()

ORDER = 2**252 + 27742317777372353535851937790883648493
POINT_BYTES = 32
SCALAR_BYTES = 32
_ZERO = bytes(POINT_BYTES)  # the identity's encoding
_LABEL = b"pbem/v1 mental "



class BadPoint(BadPacket):
    """Bytes that are not a canonical ristretto255 point or scalar."""


class Point:
    """An element of ristretto255, held as its canonical 32-byte encoding."""

    __slots__ = ("raw",)

    def __init__(self, raw: bytes) -> None:  # internal: raw must already be valid
        self.raw = raw

    @classmethod
    def decode(cls, data: bytes, what: Text = "") -> Point:
        if not isinstance(data, (bytes, bytearray)) or len(data) != POINT_BYTES:
            raise BadPoint(msg("{what} must be {n} bytes, not {size}", what=what or msg("a point"), n=POINT_BYTES,
                             size=len(data) if isinstance(data, (bytes, bytearray)) else type(data).__name__))
        data = bytes(data)
        # libsodium ignores the top bit when it decodes (so 2^255 + s passes as s): RFC 9496
        # requires s < p, so a set top bit is refused here, keeping one encoding per point.
        if data[31] & 0x80 or not _sodium.valid(data):
            raise BadPoint(msg("{what} {hex}... is not a canonical ristretto255 point", what=what or msg("a point"), hex=data.hex()[:16]))
        return cls(data)

    def __add__(self, other: Point) -> Point:
        if other.raw == _ZERO:  # the identity, as a stack's first encryption holds it: nothing to add
            return self
        if self.raw == _ZERO:
            return other
        return Point(_sodium.add(self.raw, other.raw))

    def __sub__(self, other: Point) -> Point:
        return Point(_sodium.sub(self.raw, other.raw))

    def __neg__(self) -> Point:
        return IDENTITY - self

    def __mul__(self, k: int) -> Point:
        if self.raw == _ZERO:  # the identity times anything is the identity
            return self
        return Point(_sodium.mul(scalar_bytes(k), self.raw))

    __rmul__ = __mul__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Point) and self.raw == other.raw

    def __hash__(self) -> int:
        return hash(self.raw)

    def __repr__(self) -> str:
        return f"Point({self.raw.hex()[:16]}...)"

    @property
    def is_identity(self) -> bool:
        return self.raw == _ZERO


IDENTITY = Point(_ZERO)
GENERATOR = Point(bytes.fromhex("e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76"))


def base_mul(k: int) -> Point:
    """k times the generator (libsodium's faster fixed-base multiplication)."""
    return Point(_sodium.base(scalar_bytes(k)))


def point_sum(points: list[Point]) -> Point:
    acc = _ZERO
    for p in points:
        if p.raw == _ZERO:  # the identity adds nothing
            continue
        acc = p.raw if acc == _ZERO else _sodium.add(acc, p.raw)
    return Point(acc)


def scalar_bytes(k: int) -> bytes:
    return (k % ORDER).to_bytes(SCALAR_BYTES, "little")


def decode_scalar(data: bytes, what: Text = "") -> int:
    if not isinstance(data, (bytes, bytearray)) or len(data) != SCALAR_BYTES:
        raise BadPoint(msg("{what} must be {n} bytes", what=what or msg("a scalar"), n=SCALAR_BYTES))
    k = int.from_bytes(data, "little")
    if k >= ORDER:
        raise BadPoint(msg("{what} {hex}... is not reduced modulo the group order", what=what or msg("a scalar"),
                          hex=bytes(data).hex()[:16]))
    return k


# --- points and scalars back to back: the wire form of every proof, dealing and transcript ---


def check_size(data: bytes, n: int, what: Text, error: type[BadPacket] = BadPoint) -> None:
    """Refuse `data` as `error` unless it is `n` bytes: every wire form here has a size known in advance."""
    if len(data) != n:
        raise error(msg("{what} must be {n} bytes, not {size}", what=what, n=n, size=len(data)))


def points_bytes(points: Iterable[Point]) -> bytes:
    return b"".join(p.raw for p in points)


def scalars_bytes(values: Iterable[int]) -> bytes:
    return b"".join(scalar_bytes(k) for k in values)


def decode_points(data: bytes, what: Text = "") -> list[Point]:
    """Points of 32 bytes each, back to back (the caller has checked the whole length)."""
    return [Point.decode(data[k:k + POINT_BYTES], what) for k in range(0, len(data), POINT_BYTES)]


def decode_scalars(data: bytes, what: Text = "") -> list[int]:
    """Scalars of 32 bytes each, back to back (the caller has checked the whole length)."""
    return [decode_scalar(data[k:k + SCALAR_BYTES], what) for k in range(0, len(data), SCALAR_BYTES)]


def wire_size(points: int = 0, scalars: int = 0) -> int:
    """The length of the wire form of `points` points then `scalars` scalars."""
    return points * POINT_BYTES + scalars * SCALAR_BYTES


def pack(points: Iterable[Point] = (), scalars: Iterable[int] = ()) -> bytes:
    """The wire form of a ciphertext, proof, token, dealing or share: its points, then its scalars."""
    return points_bytes(points) + scalars_bytes(scalars)


def unpack(data: bytes, points: int, scalars: int, error: type[BadPacket] = BadPoint, what: Text = "",
           name: Text = "") -> tuple[list[Point], list[int]]:
    """`pack`'s inverse: `data` (called `what`, else `name`) is refused as `error` unless it is the
    size of `points` points then `scalars` scalars; each of them must be canonical (called `what`)."""
    check_size(data, wire_size(points, scalars), what or name, error)
    cut = points * POINT_BYTES
    return decode_points(data[:cut], what), decode_scalars(data[cut:], what)


# A source of secret scalars: the default is the OS; golden vectors pass a seeded one.
ScalarSource = Callable[[], int]


def random_scalar() -> int:
    """Uniform modulo ORDER: 512 random bits reduced (bias below 2^-250)."""
    return int.from_bytes(os.urandom(64), "little") % ORDER


def seeded_scalars(seed: bytes) -> ScalarSource:
    """A deterministic scalar source: SHA-512 of the seed and a counter, reduced modulo the order.

    Secret exactly as long as its seed is: golden vectors and tests give a public seed; a seat
    of a trustless game seeds it with its own deterministic signature (pbem/seat/trustless.py,
    `_derived`), so its key shares and proof nonces are the same on every run and only its key
    can make them. Never seed it with anything another party can compute."""
    counter = 0

    def nxt() -> int:
        nonlocal counter
        counter += 1
        h = hashlib.sha512(_LABEL + b"seeded\n" + seed + counter.to_bytes(8, "little")).digest()
        return int.from_bytes(h, "little") % ORDER

    return nxt


def hash_to_point(purpose: str, data: bytes) -> Point:
    """A point nobody knows the discrete log of (SHA-512, then RFC 9496's one-way map)."""
    h = hashlib.sha512(_LABEL + purpose.encode() + b"\n" + data).digest()
    return Point(_sodium.from_hash(h))


def from_uniform(data: bytes) -> Point:
    """RFC 9496's map of 64 uniform bytes to a point (exposed for the RFC's test vectors)."""
    return Point(_sodium.from_hash(data))
