"""Contexts: guidance text a user attaches to a scope (``context add|list|check|rm``).

A context travels with the results of its scope (the whole index ``/``, a
collection ``name:``, or a ``gno://collection/prefix``) and is never searched
or ranked. Its identity is the scope plus the text as normalised here (BOM
dropped, line ends LF, Unicode NFC, surrounding space trimmed), so the same
guidance is never stored twice; a scope may hold several different texts.
The configuration file is their one home: these functions compute the new
configuration, and the engine writes it under the write lease.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Final

import attrs

from gno_trio.config import URI_PREFIX, Config, Context, ScopeType
from gno_trio.errors import GnoError

_COLLECTION_SCOPE: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_SCOPE_HELP: Final = "/ (everything), COLLECTION: or gno://COLLECTION/PREFIX"


def parse_scope(scope: str) -> tuple[ScopeType, str]:
    """A scope as typed, as its type and canonical key; ``INVALID_INPUT`` otherwise."""
    written = scope.strip()
    if written == "/":
        return "global", "/"
    if written.startswith(URI_PREFIX):
        collection, _, prefix = written[len(URI_PREFIX) :].partition("/")
        name = collection.lower()
        if _COLLECTION_SCOPE.fullmatch(name):
            return "prefix", f"{URI_PREFIX}{name}" + (f"/{prefix}" if prefix else "")
    elif written.endswith(":") and _COLLECTION_SCOPE.fullmatch(written[:-1].lower()):
        return "collection", written.lower()
    raise GnoError("INVALID_INPUT", f"A context scope is {_SCOPE_HELP} (got {scope!r})")


def _canonical(text: str) -> str:
    return unicodedata.normalize(
        "NFC", text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    ).strip()


def normalize_text(text: str) -> str:
    """The text a context is stored (and matched) as; empty text is refused."""
    cleaned = _canonical(text)
    if not cleaned:
        raise GnoError("INVALID_INPUT", "A context needs some text")
    return cleaned


def _collection_of(scope_type: ScopeType, key: str) -> str | None:
    if scope_type == "collection":
        return key[:-1]
    if scope_type == "prefix":
        return key[len(URI_PREFIX) :].split("/", 1)[0]
    return None


def with_context(config: Config, scope: str, text: str) -> tuple[Config, dict[str, Any]]:
    """``config`` with one more context; ``DUPLICATE`` when that very one exists."""
    scope_type, key = parse_scope(scope)
    cleaned = normalize_text(text)
    collection = _collection_of(scope_type, key)
    if collection is not None and config.collection(collection) is None:
        raise GnoError("NOT_FOUND", f"Collection not found: {collection}")
    for existing in config.contexts:
        if (existing.scope_type, existing.scope_key, _canonical(existing.text)) == (
            scope_type,
            key,
            cleaned,
        ):
            raise GnoError("DUPLICATE", f"This context already exists for {key}")
    added = Context(scope_type=scope_type, scope_key=key, text=cleaned)
    return attrs.evolve(config, contexts=(*config.contexts, added)), entry(added)


def without_context(
    config: Config, scope: str, text: str | None = None
) -> tuple[Config, dict[str, Any]]:
    """``config`` without one context of ``scope`` (its text picks it when there are several)."""
    scope_type, key = parse_scope(scope)
    here = [c for c in config.contexts if (c.scope_type, c.scope_key) == (scope_type, key)]
    if text is not None:
        cleaned = normalize_text(text)
        here = [c for c in here if _canonical(c.text) == cleaned]
    if not here:
        what = "with that text " if text is not None else ""
        raise GnoError("NOT_FOUND", f"No context {what}for {key}")
    if len(here) > 1:
        raise GnoError(
            "INVALID_INPUT",
            f"{key} has {len(here)} contexts: give the text of the one to remove as well",
        )
    gone = here[0]
    kept = tuple(c for c in config.contexts if c is not gone)
    return attrs.evolve(config, contexts=kept), entry(gone)


def entry(context: Context) -> dict[str, Any]:
    """A context as ``context list`` shows it."""
    return {"scope": context.scope_key, "scopeType": context.scope_type, "text": context.text}


def check(config: Config) -> dict[str, Any]:
    """``context check``: contexts whose collection is gone, and exact duplicates."""
    warnings: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    for context in config.contexts:
        collection = context.collection_name
        if collection is not None and config.collection(collection) is None:
            warnings.append(
                f"{context.scope_key}: collection {collection} is not configured "
                "(the context applies to nothing)"
            )
        identity = (context.scope_type, context.scope_key, _canonical(context.text))
        if identity in seen:
            warnings.append(f"{context.scope_key}: the same text is configured twice")
        seen.add(identity)
    return {"valid": True, "warnings": warnings, "errors": []}


__all__ = ["check", "entry", "normalize_text", "parse_scope", "with_context", "without_context"]
