"""A short fingerprint of a round state: the SHA-256 of its canonical position document.

Two states have the same digest exactly when `position.dump` writes the same document, so a
replay of (seed, moves) can be compared with the original in one string.
"""

from __future__ import annotations

import hashlib
import json

from .position import dump
from .state import RoundState


def canonical_json(doc: object) -> str:
    """JSON with sorted keys and no spaces, as UTF-8 text (the form that is hashed)."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(state: RoundState) -> str:
    """The SHA-256 hex digest of the canonical JSON of `dump(state)`."""
    return hashlib.sha256(canonical_json(dump(state)).encode("utf-8")).hexdigest()
