from __future__ import annotations

import base64
import json
import os
import stat
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.errors import (
    EXIT_CODES,
    BadPacket,
    BadSignature,
    KeyNotFound,
    PbemError,
    UsageError,
    WrongKey,
    WrongPassphrase,
)
from pbem.protocol import crypto, keyfile
from pbem.protocol.crypto import Identity, PublicKey, canonical_json, open_sealed, seal, verify
from pbem.seat import keys
from pbem.seat.home import ENV_HOME, key_home, key_path, keys_dir, pub_path

CHEAP_N = 2**10


@pytest.fixture(autouse=True)
def _cheap_scrypt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(keys.ENV_SCRYPT_N, str(CHEAP_N))
    monkeypatch.delenv(keys.ENV_PASSPHRASE, raising=False)
    monkeypatch.delenv(ENV_HOME, raising=False)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def alice(home: Path) -> Identity:
    return keys.create_identity(home, "alice", b"alice pass")


@pytest.fixture
def bob(home: Path) -> Identity:
    return keys.create_identity(home, "bob", None)


def ctx(game: str = "g1", seq: int = 5, seat: int = 2) -> bytes:
    return canonical_json({"game": game, "seq": seq, "seat": seat, "from": 0})


# ---- errors ---------------------------------------------------------------


def test_error_exit_codes_and_hint() -> None:
    assert BadSignature("x").exit_code == 3 and isinstance(BadSignature("x"), BadPacket)
    assert UsageError("x").exit_code == 2
    assert WrongKey("x").exit_code == 4
    e = WrongPassphrase("wrong passphrase for 'a'", hint="try again")
    assert str(e) == "wrong passphrase for 'a'" and str(e.hint) == "try again"
    assert {2, 3, 4, 5} <= set(EXIT_CODES)


def test_canonical_json() -> None:
    assert canonical_json({"b": 1, "a": "é", "c": [1, 2]}) == '{"a":"é","b":1,"c":[1,2]}'.encode()
    assert canonical_json({2: "x", 10: "y"}) == b'{"2":"x","10":"y"}'  # keys that are not text: as json writes them


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=100, deadline=None)
@given(_json_values)
def test_canonical_json_writes_what_json_writes(value) -> None:  # type: ignore[no-untyped-def]
    """The fast encoder gives the bytes `json.dumps(sort_keys, compact, ensure_ascii=False)`
    gives, for every value a document holds (text, integers, booleans, null, lists, objects)."""
    try:
        want = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate: neither writes it
        with pytest.raises(UnicodeEncodeError):
            canonical_json(value)
        return
    assert canonical_json(value) == want


# ---- sealing --------------------------------------------------------------


def test_seal_open_round_trip_with_loaded_keys(home: Path, alice: Identity, bob: Identity) -> None:
    alice2 = keys.load_identity(home, "alice", b"alice pass")
    bob_pub = keys.load_public(home, "bob")
    ct = seal(b"hand: 3 cards", bob_pub, ctx())
    assert open_sealed(ct, keys.load_identity(home, "bob", None), ctx()) == b"hand: 3 cards"
    ct2 = seal(b"", alice2.public, ctx())
    assert open_sealed(ct2, alice, ctx()) == b""


def test_seal_is_randomised(bob: Identity) -> None:
    assert seal(b"x", bob.public, ctx()) != seal(b"x", bob.public, ctx())


def test_sealed_part_does_not_open_for_another_identity(alice: Identity, bob: Identity) -> None:
    ct = seal(b"secret", bob.public, ctx())
    with pytest.raises(WrongKey) as exc:
        open_sealed(ct, alice, ctx())
    assert bob.public.fingerprint() in str(exc.value)
    assert crypto.sealed_key_id(ct) == bob.public.key_id()


def test_sealed_part_does_not_open_with_forged_key_id(alice: Identity, bob: Identity) -> None:
    # Even with the key id rewritten to alice's, only bob's key opens it.
    ct = seal(b"secret", bob.public, ctx())
    forged = ct[:1] + alice.public.key_id() + ct[1 + crypto.KEY_ID_LEN :]
    with pytest.raises(WrongKey):
        open_sealed(forged, alice, ctx())


@pytest.mark.parametrize("other", [ctx(game="g2"), ctx(seq=6), ctx(seat=3), b""])
def test_sealed_part_is_bound_to_its_context(bob: Identity, other: bytes) -> None:
    ct = seal(b"secret", bob.public, ctx())
    with pytest.raises(WrongKey) as exc:
        open_sealed(ct, bob, other)
    assert "another game" in str(exc.value.hint or "")


def test_tampered_or_truncated_sealed_part(bob: Identity) -> None:
    ct = seal(b"secret", bob.public, ctx())
    flipped = bytearray(ct)
    flipped[-1] ^= 1
    with pytest.raises(WrongKey):
        open_sealed(bytes(flipped), bob, ctx())
    with pytest.raises(BadPacket):
        open_sealed(ct[:20], bob, ctx())
    with pytest.raises(BadPacket):
        open_sealed(b"\x09" + ct[1:], bob, ctx())


def test_own_box_round_trip_context_and_tamper(bob: Identity) -> None:
    """The host's own box (crypto.OwnBox): opens with its key and its context only; a box
    without a key still opens what was sealed to the party's key before boxes had keys."""
    box = crypto.OwnBox(os.urandom(32), bob)
    ct = box.seal(b"state", ctx())
    assert ct[0] == crypto.BOX_VERSION and len(ct) == 1 + 12 + len(b"state") + 16
    assert box.open(ct, ctx()) == b"state"
    assert box.seal(b"state", ctx()) != ct  # a fresh nonce each time
    for other in (ctx(game="g2"), ctx(seq=6), b""):
        with pytest.raises(WrongKey):
            box.open(ct, other)
    flipped = bytearray(ct)
    flipped[-1] ^= 1
    for bad in (bytes(flipped), ct[:20]):
        with pytest.raises(WrongKey):
            box.open(bad, ctx())
    with pytest.raises(WrongKey):
        crypto.OwnBox(os.urandom(32), bob).open(ct, ctx())  # another game's box key
    old = seal(b"older", bob.public, ctx())
    assert box.open(old, ctx()) == b"older"
    assert crypto.OwnBox(None, bob).open(old, ctx()) == b"older"
    with pytest.raises(WrongKey):
        crypto.OwnBox(None, bob).open(ct, ctx())


def test_keys_boxes_and_key_files_round_trip(alice: Identity, bob: Identity) -> None:
    """A key rebuilt from its secret, a key line read back and a key file opened again give the
    same keys, which read the boxes and sealed parts the originals made."""
    made = crypto.OwnBox(bytes(32), bob).seal(b"state", ctx()), seal(b"hand", bob.public, ctx())
    blob = crypto.identity_to_bytes(alice, b"alice pass", scrypt_n=CHEAP_N)
    again = crypto.identity_from_secret("bob", crypto.identity_secret(bob))
    assert again.public.encode() == bob.public.encode()
    assert crypto.OwnBox(bytes(32), again).open(made[0], ctx()) == b"state"
    assert open_sealed(made[1], again, ctx()) == b"hand"
    assert open_sealed(seal(b"back", PublicKey.decode(bob.public.encode()), ctx()), bob, ctx()) == b"back"
    assert _raw_private(crypto.identity_from_bytes(blob, b"alice pass")) == _raw_private(alice)
    assert _raw_private(crypto.identity_from_bytes(crypto.identity_to_bytes(alice, b"p", scrypt_n=CHEAP_N), b"p")) \
        == _raw_private(alice)


# ---- signatures -----------------------------------------------------------


def test_sign_verify_and_tamper(alice: Identity, bob: Identity) -> None:
    data = canonical_json({"game": "g1", "seq": 1, "move": "play 3 at (1,2)"})
    sig = alice.sign(data)
    assert len(sig) == 64
    verify(alice.public, data, sig)
    for i in (0, len(data) // 2, len(data) - 1):
        bad = bytearray(data)
        bad[i] ^= 0x01
        with pytest.raises(BadSignature):
            verify(alice.public, bytes(bad), sig)
    for i in (0, 31, 63):
        bad_sig = bytearray(sig)
        bad_sig[i] ^= 0x80
        with pytest.raises(BadSignature):
            verify(alice.public, data, bytes(bad_sig))
    with pytest.raises(BadSignature):
        verify(bob.public, data, sig)
    with pytest.raises(BadSignature):
        verify(alice.public, data, sig[:10])


def test_signature_is_domain_separated(alice: Identity) -> None:
    # A raw Ed25519 signature over the same bytes (made for some other
    # protocol) must not pass as a pbem signature.
    data = b"hello"
    with pytest.raises(BadSignature):
        verify(alice.public, data, alice.sign_key.sign(data))


# ---- public key lines -----------------------------------------------------


def test_public_line_round_trip(alice: Identity) -> None:
    line = alice.public.encode()
    assert line.startswith("pbem1") and "\n" not in line and line == line.lower()
    assert PublicKey.decode(line) == alice.public
    assert PublicKey.decode("  " + line.upper() + "\n") == alice.public
    # A mail client may wrap the long line.
    assert PublicKey.decode(line[:60] + "\n" + line[60:]) == alice.public
    fp = alice.public.fingerprint()
    assert len(fp) == 19 and fp.count("-") == 3
    assert fp.replace("-", "") == alice.public.key_id().hex()
    assert len(alice.public.key_id()) == 8


def test_public_line_every_single_typo_is_rejected(alice: Identity) -> None:
    line = alice.public.encode()
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    for pos in range(len("pbem1"), len(line)):
        wrong = alphabet[(alphabet.index(line[pos]) + 1) % 32]
        typo = line[:pos] + wrong + line[pos + 1 :]
        with pytest.raises(BadPacket) as exc:
            PublicKey.decode(typo)
        assert "pbem1" in str(exc.value)
    for bad in (line[:-1], line + "a", line[:-2] + "1" + line[-1], "pbem2" + line[5:], "hello", ""):
        with pytest.raises(BadPacket):
            PublicKey.decode(bad)


def test_a_lines_fingerprint_without_its_curve_objects_is_the_keys(alice: Identity, bob: Identity) -> None:
    """pbem.protocol.keyline reads a line as PublicKey.decode does, without cryptography (what
    `pbem status` shows of a seat's key): the same fingerprint, the same refusals."""
    from pbem.protocol import keyline

    for who in (alice, bob):
        line = who.public.encode()
        assert keyline.fingerprint(line) == who.public.fingerprint()
        assert keyline.fingerprint(line[:60] + "\n" + line[60:].upper()) == who.public.fingerprint()
        assert keyline.line(keyline.raw_of(line)) == line
    line = alice.public.encode()
    for bad in (line[:-1], line[:-2] + "1" + line[-1], "pbem2" + line[5:], "hello"):
        with pytest.raises(BadPacket) as told:
            keyline.fingerprint(bad)
        with pytest.raises(BadPacket) as decoded:
            PublicKey.decode(bad)
        assert str(told.value) == str(decoded.value)


def test_load_public_falls_back_to_key_file(home: Path, alice: Identity) -> None:
    pub_path(home, "alice").unlink()
    assert keys.load_public(home, "alice") == alice.public


# ---- identity files -------------------------------------------------------


def _raw_private(identity: Identity) -> list[bytes]:
    return [identity.sign_key.private_bytes_raw(), identity.enc_key.private_bytes_raw()]


def test_protected_key_file_hides_private_bytes(home: Path, alice: Identity) -> None:
    blob = key_path(home, "alice").read_bytes()
    doc = json.loads(blob)
    assert doc["protected"] is True and doc["kdf"]["n"] == CHEAP_N
    for raw in _raw_private(alice):
        for form in (raw, raw.hex().encode(), base64.b64encode(raw), base64.b64encode(raw[:30])):
            assert form not in blob
    loaded = keys.load_identity(home, "alice", b"alice pass")
    assert _raw_private(loaded) == _raw_private(alice)
    assert keys.is_protected(home, "alice")


def test_unprotected_key_file_round_trip(home: Path, bob: Identity) -> None:
    assert not keys.is_protected(home, "bob")
    loaded = keys.load_identity(home, "bob", None)
    assert _raw_private(loaded) == _raw_private(bob) and loaded.name == "bob"


def test_wrong_or_missing_passphrase(home: Path, alice: Identity) -> None:
    with pytest.raises(WrongPassphrase) as exc:
        keys.load_identity(home, "alice", b"alice pasS")
    assert "'alice'" in str(exc.value)
    with pytest.raises(WrongPassphrase):
        keys.load_identity(home, "alice", None)


def test_default_scrypt_cost_is_stored(alice: Identity) -> None:
    doc = json.loads(crypto.identity_to_bytes(alice, b"pw"))
    assert doc["kdf"]["n"] == crypto.DEFAULT_SCRYPT_N == 2**15


def test_key_file_header_is_authenticated(home: Path, alice: Identity) -> None:
    path = key_path(home, "alice")
    doc = json.loads(path.read_bytes())
    doc["kdf"]["n"] = CHEAP_N * 2
    with pytest.raises(WrongPassphrase):
        crypto.identity_from_bytes(json.dumps(doc).encode(), b"alice pass")


@pytest.mark.parametrize(
    "mangle",
    [
        lambda b: b[:40],
        lambda b: b"not json at all",
        lambda b: b.replace(b"pbem-identity-v1", b"pbem-identity-v9"),
        lambda b: b.replace(b'"n": 1024', b'"n": 1073741824'),
        lambda b: b.replace(b'"protected": true', b'"protected": "yes"'),
    ],
)
def test_corrupt_key_file_is_bad_packet(home: Path, alice: Identity, mangle) -> None:  # type: ignore[no-untyped-def]
    blob = key_path(home, "alice").read_bytes()
    with pytest.raises(BadPacket):
        crypto.identity_from_bytes(mangle(blob), b"alice pass")


def test_unprotected_key_with_swapped_public_is_bad_packet(alice: Identity, bob: Identity) -> None:
    doc = json.loads(crypto.identity_to_bytes(bob, None))
    doc["public"] = alice.public.encode()
    with pytest.raises(BadPacket):
        crypto.identity_from_bytes(json.dumps(doc).encode(), None)


def test_renamed_key_file_is_reported(home: Path, alice: Identity) -> None:
    os.rename(key_path(home, "alice"), keys_dir(home) / "carol.key")
    with pytest.raises(BadPacket) as exc:
        keys.load_identity(home, "carol", b"alice pass")
    assert "alice.key" in str(exc.value.hint or "")


# ---- key home -------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_key_file_modes_and_no_temp_leftovers(home: Path, alice: Identity) -> None:
    assert stat.S_IMODE(key_path(home, "alice").stat().st_mode) == 0o600
    assert sorted(p.name for p in keys_dir(home).iterdir()) == ["alice.key", "alice.pub"]
    assert pub_path(home, "alice").read_text() == alice.public.encode() + "\n"


def test_create_refuses_overwrite_and_bad_names(home: Path, alice: Identity) -> None:
    before = key_path(home, "alice").read_bytes()
    with pytest.raises(UsageError):
        keys.create_identity(home, "alice", None)
    assert key_path(home, "alice").read_bytes() == before
    for bad in ("Alice", "", "a" * 33, "../x", "a b", "é"):
        with pytest.raises(UsageError) as exc:
            keys.create_identity(home, bad, None)
        assert repr(bad) in str(exc.value)


def test_missing_identity(home: Path, alice: Identity) -> None:
    with pytest.raises(KeyNotFound) as exc:
        keys.load_identity(home, "zed", None)
    assert "'zed'" in str(exc.value) and exc.value.exit_code == 4
    with pytest.raises(KeyNotFound):
        keys.load_public(home, "zed")


def test_list_identities(home: Path) -> None:
    assert keys.list_identities(home) == []
    b = keys.create_identity(home, "bob", None)
    a = keys.create_identity(home, "alice", b"alice pass")
    # A contact's public key alone is not one of our identities.
    pub_path(home, "carol").write_text(Identity.generate("carol").public.encode())
    assert keys.list_identities(home) == [("alice", a.public), ("bob", b.public)]


def test_key_home_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert key_home(tmp_path / "x") == tmp_path / "x"
    monkeypatch.setenv("PBEM_HOME", str(tmp_path / "env"))
    assert key_home(None) == tmp_path / "env"
    monkeypatch.delenv("PBEM_HOME")
    if sys.platform.startswith("linux"):
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
        assert key_home(None) == tmp_path / "xdg" / "pbem"
        monkeypatch.delenv("XDG_CONFIG_HOME")
        assert key_home(None) == Path.home() / ".config" / "pbem"


def test_get_passphrase_sources(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    f = tmp_path / "pw"
    f.write_bytes("caf\u0065\u0301 au lait\r\n".encode())
    # File first, final newline dropped, NFC-normalised.
    assert keys.get_passphrase(f, prompt=False, confirm=False) == "café au lait".encode()
    monkeypatch.setenv("PBEM_PASSPHRASE", "from env")
    assert keys.get_passphrase(f, prompt=False, confirm=False) == "café au lait".encode()
    assert keys.get_passphrase(None, prompt=False, confirm=False) == b"from env"
    monkeypatch.delenv("PBEM_PASSPHRASE")
    # pytest's stdin is not a terminal, so there is nobody to ask.
    with pytest.raises(UsageError) as exc:
        keys.get_passphrase(None, prompt=True, confirm=True)
    assert "--passphrase-file" in str(exc.value.hint or "")
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(UsageError):
        keys.get_passphrase(tmp_path / "empty", prompt=False, confirm=False)
    with pytest.raises(UsageError):
        keys.get_passphrase(tmp_path / "nope", prompt=False, confirm=False)


def test_unlock_identity(monkeypatch: pytest.MonkeyPatch, home: Path, alice: Identity, bob: Identity) -> None:
    assert keys.unlock_identity(home, "bob").public == bob.public
    with pytest.raises(UsageError):
        keys.unlock_identity(home, "alice")
    monkeypatch.setenv("PBEM_PASSPHRASE", "alice pass")
    assert keys.unlock_identity(home, "alice").public == alice.public


def test_all_errors_are_pbem_errors() -> None:
    for cls in (BadPacket, BadSignature, WrongKey, WrongPassphrase, KeyNotFound, UsageError):
        assert issubclass(cls, PbemError)


def test_a_key_files_header_is_signed_as_json_writes_it() -> None:
    """canonical_json writes the bytes json.dumps(sort_keys=True, ensure_ascii=False) writes."""
    import json

    blob = crypto.identity_to_bytes(crypto.Identity.generate("ann"), b"correct horse", scrypt_n=keyfile.SCRYPT_MIN_N)
    header = {k: v for k, v in json.loads(blob).items() if k != "secret"}
    header["name"] = "ann · 简体"  # text beyond ASCII is written unescaped by both
    assert crypto._json_bytes(header) == crypto.canonical_json(header)
