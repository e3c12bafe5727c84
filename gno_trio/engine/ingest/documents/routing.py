"""Deciding, for one file's bytes, how it is converted or why it is not indexed.

Every file the walker sees takes exactly one of these ways:

1. bigger than the per-file limit: ``TOO_LARGE``;
2. a document type by extension (PDF, Office, HTML, mail, calendar, subtitles,
   JSON Lines): a sandboxed worker;
3. a text type by extension (notes, code, config): converted right here,
   in-process, because decoding text cannot hang or crash;
4. an unknown extension whose bytes reveal a document (a PDF saved without
   its extension): a worker, with that document's converter;
5. otherwise not indexed, listed with ``BINARY_FILE`` when the bytes are not
   text and ``UNSUPPORTED_TYPE`` when they are. Both are marked
   ``unsupported``: the type is the reason, not a fault in the file.

A text mirror longer than the output limit is cut there, as the document
converters do, with a ``TRUNCATED`` warning.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gno_trio.engine.ingest.convert import Converted, converter_for, extension_of
from gno_trio.engine.ingest.documents.encoding import looks_binary
from gno_trio.engine.ingest.documents.limits import ConversionLimits
from gno_trio.engine.ingest.documents.reasons import (
    BINARY_FILE,
    TOO_LARGE,
    UNSUPPORTED_TYPE,
    warning,
)
from gno_trio.engine.ingest.documents.registry import document_converter_for, sniff
from gno_trio.errors import GnoError


@dataclass(frozen=True, slots=True)
class Route:
    """Exactly one of ``converter_id`` (go to a worker), ``converted`` or ``error`` is set."""

    converter_id: str | None = None
    converted: Converted | None = None
    error: GnoError | None = None
    unsupported: bool = False
    """The file is not indexed because of its type (no converter claims it)."""


def _cut(converted: Converted, max_chars: int) -> Converted:
    if len(converted.markdown) <= max_chars:
        return converted
    head = converted.markdown[:max_chars]
    if "\n" in head:
        head = head[: head.rfind("\n") + 1]
    note = warning("TRUNCATED", f"the text was cut at {len(head):,} characters (the limit)")
    return replace(converted, markdown=head, warnings=(*converted.warnings, note))


def route(rel_path: str, data: bytes, limits: ConversionLimits) -> Route:
    """How ``data`` (the bytes of ``rel_path``) is converted; see the module docstring."""
    if len(data) > limits.max_bytes:
        message = f"{rel_path}: {len(data):,} bytes (limit {limits.max_bytes:,})"
        return Route(error=GnoError(TOO_LARGE, message))
    document = document_converter_for(rel_path)
    if document is not None:
        return Route(converter_id=document.id)
    text = converter_for(rel_path)
    if text is not None:
        try:
            return Route(converted=_cut(text.convert(rel_path, data), limits.max_chars))
        except GnoError as error:
            return Route(error=error)
    sniffed = sniff(data)
    found = document_converter_for(f"file{sniffed}") if sniffed else None
    if found is not None:
        return Route(converter_id=found.id)
    kind = extension_of(rel_path) or "files without an extension"
    if looks_binary(data):
        message = f"{rel_path}: binary data of a type not indexed ({kind})"
        return Route(error=GnoError(BINARY_FILE, message), unsupported=True)
    message = f"{rel_path}: {kind} is not a type gno-trio indexes"
    return Route(error=GnoError(UNSUPPORTED_TYPE, message), unsupported=True)
