"""Canonical JSON and the SHA-256 identities taken over it, for every content hash.

A Capsule, a retrieval trace, an audit snapshot, an ask receipt and a
refactor plan are each judged byte for byte: an id is a hash of the JSON
and a budget is the size of that JSON. Serialisation is therefore one fixed
function (keys sorted, no insignificant whitespace, non-ASCII written as
UTF-8 text, the same bytes JavaScript's ``JSON.stringify`` gives for sorted
objects). It lives at the bottom of the engine because all of those
subpackages hash with it and none of them owns it.
"""

from __future__ import annotations

import hashlib
import json


def canonical_json(value: object) -> str:
    """The one serialisation every content hash and every Capsule size is taken over."""
    return json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False
    )


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def hash_canonical(value: object) -> str:
    return sha256_text(canonical_json(value))
