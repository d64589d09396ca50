"""Cryptographic building blocks: identities, public key lines, signatures, sealing.

No I/O and no printing here: callers own files, prompts and output.
The formats are specified in docs/keys-and-armor.md; change both together.

Sealing binds context through HPKE's `info`: the caller MUST put the game id,
sequence number, sender and recipient seat into `info` (e.g. canonical_json of
a small dict), so that a sealed part cannot be cut out of one message and
replayed or forwarded inside another (surreptitious forwarding).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from functools import cached_property, lru_cache
from typing import Any

import msgspec
from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hpke
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from pbem.errors import BadPacket, BadSignature, UsageError, WrongKey, WrongPassphrase, msg
from pbem.protocol import keyfile, keyline
from pbem.protocol.keyfile import DEFAULT_SCRYPT_N, IDENTITY_FORMAT, SCRYPT_P, SCRYPT_R, check_scrypt, load_doc, unb64
from pbem.protocol.keyline import KEY_ID_LEN, fingerprint_of
from pbem.protocol.keyline import quote as _quote

# Domain separation: a signature or sealed box made for pbem can never be
# valid in another protocol that happens to use the same keys, and v2 can
# change the labels without ambiguity.
SIGNATURE_LABEL = b"pbem/v1 signature\n"
SEAL_LABEL = b"pbem/v1 seal\n"

SEAL_VERSION = 0x01
_HPKE_ENC_LEN = 32
_AEAD_TAG_LEN = 16
_SUITE = hpke.Suite(hpke.KEM.X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.CHACHA20_POLY1305)



def sha256_hex(data: bytes) -> str:
    """The SHA-256 of a packet or an archive, hex."""
    return hashlib.sha256(data).hexdigest()


def canonical_json(obj: Any) -> bytes:
    """The one byte string that gets signed for a JSON value (or a wire object, a msgspec
    Struct): sorted keys, no spaces, UTF-8 unescaped, as `json.dumps(obj, sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)` writes it, ten times faster (a packet is
    signed on every move, an archive at every round's end). Documents hold no floats (which
    the two write differently: 1e+16 and 1e16); keys that are not text are written by
    `json`, as before."""
    try:
        return _SORTED.encode(obj)
    except TypeError:
        return _json_bytes(obj)


_SORTED = msgspec.json.Encoder(order="sorted")

def _json_bytes(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class PublicKey(msgspec.Struct, frozen=True, dict=True):
    """A seat's or host's two public keys. Its line, key id and curve objects are made once
    per key and kept (a host seals to every seat's key on every move)."""

    sign: bytes
    enc: bytes

    def __post_init__(self) -> None:
        if len(self.sign) != 32 or len(self.enc) != 32:
            raise ValueError(msg("PublicKey needs 32-byte sign and enc keys"))

    def _raw(self) -> bytes:
        return bytes([keyline.VERSION]) + self.sign + self.enc

    def encode(self) -> str:
        return self._line

    @cached_property
    def _line(self) -> str:
        return keyline.line(self._raw())

    @classmethod
    def decode(cls, text: str) -> PublicKey:
        """The key of a pbem1 line, or BadPacket saying what is wrong with it. The same line is
        decoded once (every block names its signer; a host reads each seat's key often)."""
        return _decoded(text) if cls is PublicKey else cls._decode(text)

    @classmethod
    def _decode(cls, text: str) -> PublicKey:
        raw = keyline.raw_of(text)
        key = cls(sign=raw[1:33], enc=raw[33:65])
        # Ed25519 is checked here; an X25519 key is any 32 bytes (RFC 7748 §5: every such string
        # is accepted), so it is made only when something is sealed to it: making it loads
        # OpenSSL's backend, which a command that only reads a packet does without.
        try:
            key.ed25519()
        except ValueError:
            raise BadPacket(msg("public key does not hold valid curve points: {key}", key=_quote(text))) from None
        return key

    def key_id(self) -> bytes:
        return self._key_id

    @cached_property
    def _key_id(self) -> bytes:
        return keyline.key_id(self._raw())

    def fingerprint(self) -> str:
        return fingerprint_of(self.key_id())

    def ed25519(self) -> Ed25519PublicKey:
        return self._ed25519

    def x25519(self) -> X25519PublicKey:
        return self._x25519

    @cached_property
    def _ed25519(self) -> Ed25519PublicKey:
        return Ed25519PublicKey.from_public_bytes(self.sign)

    @cached_property
    def _x25519(self) -> X25519PublicKey:
        return X25519PublicKey.from_public_bytes(self.enc)

    def __str__(self) -> str:
        return self.encode()


@lru_cache(maxsize=1024)
def _decoded(text: str) -> PublicKey:
    return PublicKey._decode(text)  # an exception is raised again each time, never kept


class Identity:
    """A player's private keys: Ed25519 to sign, X25519 to receive sealed parts. Read-only once
    made (as a frozen dataclass is: assigning or deleting an attribute raises AttributeError)."""

    name: str
    sign_key: Ed25519PrivateKey
    enc_key: X25519PrivateKey

    def __init__(self, name: str, sign_key: Ed25519PrivateKey, enc_key: X25519PrivateKey) -> None:
        self._hold(name=name, sign_key=sign_key, enc_key=enc_key)

    def _hold(self, **fields: object) -> None:
        """Set the fields once, at making (__setattr__ refuses every later assignment)."""
        for field, value in fields.items():
            object.__setattr__(self, field, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(name)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(name)

    @classmethod
    def generate(cls, name: str) -> Identity:
        return cls(name, Ed25519PrivateKey.generate(), X25519PrivateKey.generate())

    @cached_property
    def public(self) -> PublicKey:
        return PublicKey(
            sign=self.sign_key.public_key().public_bytes_raw(),
            enc=self.enc_key.public_key().public_bytes_raw(),
        )

    def sign(self, data: bytes) -> bytes:
        return self.sign_key.sign(SIGNATURE_LABEL + data)

    def decrypt(self, body: bytes, info: bytes) -> bytes:
        """Open the HPKE body of a part sealed to this identity (ValueError/InvalidTag if it does not open).

        Signing and this are the only uses of the private keys, so an identity held by the key
        agent (pbem.seat.agent) overrides just these two.
        """
        return _SUITE.decrypt(body, self.enc_key, info=SEAL_LABEL + info)

    def __repr__(self) -> str:
        return f"Identity(name={self.name!r}, fingerprint={self.public.fingerprint()!r})"


def verify(pub: PublicKey, data: bytes, sig: bytes) -> None:
    """Raise BadSignature unless `sig` is pub's signature over `data`."""
    try:
        pub.ed25519().verify(sig, SIGNATURE_LABEL + data)
    except (InvalidSignature, ValueError):
        raise BadSignature(msg("signature does not verify for key {fingerprint}", fingerprint=pub.fingerprint()),
                           hint=msg("the message was altered, or it was not signed by this player")) from None


def seal(plaintext: bytes, recipient: PublicKey, info: bytes) -> bytes:
    """Encrypt to one recipient; `info` must bind game id, seq and seats."""
    sealed = _SUITE.encrypt(plaintext, recipient.x25519(), info=SEAL_LABEL + info)
    return bytes([SEAL_VERSION]) + recipient.key_id() + sealed


def sealed_key_id(ct: bytes) -> bytes:
    """Key id of the recipient a sealed part was made for."""
    if len(ct) < 1 + KEY_ID_LEN + _HPKE_ENC_LEN + _AEAD_TAG_LEN:
        raise BadPacket(msg("sealed part is truncated ({n} bytes)", n=len(ct)))
    if ct[0] != SEAL_VERSION:
        raise BadPacket(msg("sealed part has unknown version {version}", version=ct[0]))
    return ct[1 : 1 + KEY_ID_LEN]


BOX_VERSION = 0x02
_BOX_NONCE_LEN = 12


class OwnBox:
    """What a party seals to itself (the host's live state, move texts and dealt states in its
    store): ChaCha20-Poly1305 under a 32-byte key of its own, which is itself sealed once to
    the party's key (HPKE). An HPKE seal makes an ephemeral X25519 key and an exchange; this
    box only runs the cipher, and a host seals to itself on every move. Boxes sealed
    to the party's key by an older pbem (HPKE, version 0x01) still open with `identity`.

        box = 0x02 || nonce[12] || ChaCha20-Poly1305(key, nonce, pt, aad = "pbem/v1 seal\n" || info)
    """

    KEY_LEN = 32

    def __init__(self, key: bytes | None, identity: Identity) -> None:
        """`key` None: a party that has no box key yet (a game made before it had one) opens
        its older boxes and seals none."""
        self._aead = ChaCha20Poly1305(key) if key is not None else None
        self.identity = identity

    def seal(self, plaintext: bytes, info: bytes) -> bytes:
        assert self._aead is not None, "a box without a key seals nothing"
        nonce = os.urandom(_BOX_NONCE_LEN)
        return bytes([BOX_VERSION]) + nonce + self._aead.encrypt(nonce, plaintext, SEAL_LABEL + info)

    def open(self, ct: bytes, info: bytes) -> bytes:
        if not ct or ct[0] != BOX_VERSION:
            return open_sealed(ct, self.identity, info)
        if self._aead is None or len(ct) < 1 + _BOX_NONCE_LEN + _AEAD_TAG_LEN:
            raise _does_not_open(self.identity, info, hint=False)
        try:
            return self._aead.decrypt(ct[1 : 1 + _BOX_NONCE_LEN], ct[1 + _BOX_NONCE_LEN :], SEAL_LABEL + info)
        except InvalidTag:
            raise _does_not_open(self.identity, info) from None


def _does_not_open(identity: Identity, info: bytes, *, hint: bool = True) -> WrongKey:
    """A sealed part (or box) that `identity` cannot open in context `info`."""
    return WrongKey(msg("sealed part does not open for {name} in context {context}", name=repr(identity.name),
                      context=_quote(info.decode("utf-8", "replace"))),
                    hint=msg("it belongs to another game, sequence number or seat, or it was altered") if hint else None)


def open_sealed(ct: bytes, identity: Identity, info: bytes) -> bytes:
    key_id = sealed_key_id(ct)
    mine = identity.public.key_id()
    if key_id != mine:
        raise WrongKey(msg("this part is sealed to key {fingerprint}, not to {name} ({mine})",
                         fingerprint=fingerprint_of(key_id), name=repr(identity.name), mine=fingerprint_of(mine)),
                       hint=msg("open it with the identity that joined this seat (--key NAME)"))
    try:
        return identity.decrypt(ct[1 + KEY_ID_LEN :], info)
    except (InvalidTag, ValueError):
        raise _does_not_open(identity, info) from None


# ---- identity files --------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def identity_secret(identity: Identity) -> bytes:
    """The 64 private bytes (Ed25519 seed, X25519 key): what a key file protects and the agent holds."""
    return identity.sign_key.private_bytes_raw() + identity.enc_key.private_bytes_raw()


def identity_from_secret(name: str, secret: bytes) -> Identity:
    if len(secret) != 64:
        raise BadPacket(msg("key {name} holds a secret of the wrong length", name=repr(name)))
    return Identity(name, Ed25519PrivateKey.from_private_bytes(secret[:32]), X25519PrivateKey.from_private_bytes(secret[32:]))


def identity_to_bytes(
    identity: Identity, passphrase: bytes | None, *, scrypt_n: int = DEFAULT_SCRYPT_N
) -> bytes:
    """Serialise an identity; protected by scrypt + ChaCha20-Poly1305 unless passphrase is None."""
    doc: dict[str, Any] = {
        "format": IDENTITY_FORMAT,
        "name": identity.name,
        "public": identity.public.encode(),
        "protected": passphrase is not None,
    }
    secret = identity_secret(identity)
    if passphrase is None:
        doc["secret"] = _b64(secret)
    else:
        if not passphrase:
            raise UsageError(msg("empty passphrase"), hint=msg("use --no-passphrase for an unprotected key"))
        check_scrypt(scrypt_n, SCRYPT_R, SCRYPT_P)
        salt, nonce = os.urandom(16), os.urandom(12)
        doc["kdf"] = {"name": "scrypt", "n": scrypt_n, "r": SCRYPT_R, "p": SCRYPT_P, "salt": _b64(salt)}
        doc["cipher"] = "chacha20-poly1305"
        doc["nonce"] = _b64(nonce)
        key = keyfile.derive(passphrase, salt, scrypt_n, SCRYPT_R, SCRYPT_P)
        # The header is the AAD so nobody can swap name, public key or kdf
        # parameters without the passphrase noticing.
        doc["secret"] = _b64(ChaCha20Poly1305(key).encrypt(nonce, secret, canonical_json(doc)))
    return (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode("utf-8")


def identity_is_protected(data: bytes) -> bool:
    return bool(load_doc(data).get("protected"))


def identity_public(data: bytes) -> PublicKey:
    """The public key recorded in a key file, without needing the passphrase."""
    public = load_doc(data).get("public")
    if not isinstance(public, str):
        raise BadPacket(msg("key file has no public key"))
    return PublicKey.decode(public)


def identity_from_bytes(data: bytes, passphrase: bytes | None, key: bytes | None = None) -> Identity:
    """The identity of the key file `data`, unlocked by `passphrase` (`key`: the key it gives,
    derived already by keyfile.passphrase_key)."""
    doc = load_doc(data)
    name = doc.get("name")
    if not isinstance(name, str):
        raise BadPacket(msg("key file has no name"))
    protected = doc.get("protected")
    if protected is True:
        if passphrase is None:
            raise WrongPassphrase(msg("key {name} is protected by a passphrase and none was given", name=repr(name)),
                                  hint=msg("use --passphrase-file FILE or set PBEM_PASSPHRASE"))
        n, r, p, salt, nonce, ct = keyfile.sealed_parts(doc, name)
        header = {k: v for k, v in doc.items() if k != "secret"}
        key = key if key is not None else keyfile.derive(passphrase, salt, n, r, p)
        try:
            secret = ChaCha20Poly1305(key).decrypt(nonce, ct, canonical_json(header))
        except InvalidTag:
            raise WrongPassphrase(msg("wrong passphrase for key {name}", name=repr(name)),
                                  hint=msg("check the passphrase (file or PBEM_PASSPHRASE); a damaged key file fails "
                                         "the same way")) from None
    elif protected is False:
        secret = unb64(doc.get("secret"), "secret")
    else:
        raise BadPacket(msg("key {name} has no valid 'protected' flag", name=repr(name)))
    identity = identity_from_secret(name, secret)
    if doc.get("public") != identity.public.encode():
        raise BadPacket(msg("key file for {name} is damaged: its public key does not match its private key",
                          name=repr(name)))
    return identity
