"""SHA-256 of short inputs (a seed's blocks, a key's checksum, a commitment) without OpenSSL.

`import hashlib` loads OpenSSL's libcrypto at every `pbem` start that hashes anything; the
interpreter's own SHA-256 loads with no library and is as fast on a few hundred bytes (a
block of SeededChance). On kilobytes it is slower than OpenSSL: packets and files are hashed
by pbem.protocol.crypto.sha256_hex instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hashlib import sha256 as sha256
else:
    try:
        from _sha2 import sha256  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.11
        except ImportError:  # an interpreter built without its own hashes
            from hashlib import sha256

__all__ = ["sha256"]
