"""The configured contexts (``index.yml`` ``contexts``) a Capsule carries as guidance.

Guidance is carried exactly or not at all: an entry the Capsule contract
cannot hold verbatim is left out rather than altered, and each rule has a
stable id so evidence can say which guidance covers it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from gno_trio.config import Config
from gno_trio.engine.context.candidates import Passage
from gno_trio.engine.context.canonical import context_identity
from gno_trio.engine.context.request_fields import URI_PREFIX_PATTERN, canonical_text

MAX_GUIDANCE_CHARS: Final = 16_384
MAX_SCOPE_KEY_CHARS: Final = 2_048


@dataclass(frozen=True, slots=True)
class GuidanceRule:
    """One configured context (``index.yml`` ``contexts``) with its Capsule id."""

    context_id: str
    scope_type: str
    scope_key: str
    text: str

    def applies_to(self, passage: Passage) -> bool:
        return self.covers(passage.ref.uri, passage.collection)

    def covers(self, uri: str, collection: str) -> bool:
        if self.scope_type == "global":
            return True
        if self.scope_type == "collection":
            return self.scope_key[:-1] == collection
        return uri.startswith(self.scope_key)

    def as_guidance(self) -> dict[str, str]:
        return {
            "contextId": self.context_id,
            "scopeType": self.scope_type,
            "scopeKey": self.scope_key,
            "text": self.text,
        }


def context_rules(config: Config) -> tuple[GuidanceRule, ...]:
    """The configured contexts a Capsule can carry, each with its id.

    A prefix scope naming only a collection (``gno://notes``) is read as that
    collection's whole prefix (``gno://notes/``). An entry the Capsule
    contract cannot hold verbatim (text over 16,384 characters, a key over
    2,048, a prefix that is not a canonical ``gno://`` prefix) is left out
    rather than altered: guidance is carried exactly or not at all.
    """
    rules = []
    for context in config.contexts:
        text = canonical_text(context.text)
        key = canonical_text(context.scope_key)
        if context.scope_type == "prefix" and "/" not in key[len("gno://") :]:
            key += "/"
        if (
            not text
            or len(text) > MAX_GUIDANCE_CHARS
            or len(key) > MAX_SCOPE_KEY_CHARS
            or (context.scope_type == "prefix" and not URI_PREFIX_PATTERN.fullmatch(key))
        ):
            continue
        identity = context_identity(context.scope_type, key, text)
        rules.append(GuidanceRule(identity, context.scope_type, key, text))
    return tuple(rules)
