"""The passage and guidance identities a Capsule is built from.

Every identity inside a Capsule is a SHA-256 over canonical JSON
(:mod:`gno_trio.engine.canonical`); this module says which fields of a
passage or a configured context go into that JSON, so evidence can be bound
to the exact span of the exact bytes it was read from.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from gno_trio.engine.canonical import hash_canonical


@dataclass(frozen=True, slots=True)
class PassageRef:
    """Where a candidate passage sits: document identity plus an exact line span.

    The span and passage hash are ``None`` together, for a candidate whose lines
    could not be read back from its mirror.
    """

    uri: str
    docid: str
    start_line: int | None
    end_line: int | None
    passage_hash: str | None
    source_hash: str
    mirror_hash: str

    def as_fields(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "docid": self.docid,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "passageHash": self.passage_hash,
            "sourceHash": self.source_hash,
            "mirrorHash": self.mirror_hash,
        }

    @property
    def identity(self) -> str:
        """Stable id of this passage: the same span of the same bytes hashes the same."""
        return _identity(self)

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (
            self.uri,
            self.start_line or 0,
            self.end_line or 0,
            self.source_hash,
            self.identity,
        )


def context_identity(scope_type: str, scope_key: str, text: str) -> str:
    """Id of one configured-context entry; evidence binds to guidance by it."""
    return hash_canonical({"scopeType": scope_type, "scopeKey": scope_key, "text": text})


@functools.lru_cache(maxsize=8192)
def _identity(ref: PassageRef) -> str:
    # Packing asks for the same ids many times; each is one canonical hash.
    return hash_canonical(ref.as_fields())
