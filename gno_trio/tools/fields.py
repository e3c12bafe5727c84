"""Field shapes several tool families share, and the base of every argument Struct.

Each tool's argument Struct is both the decoder for ``tools/call`` arguments
(``msgspec.convert(arguments, SearchInput)``) and the source of the tool's
advertised ``inputSchema`` (see :mod:`gno_trio.server.schemas`), so the bounds
a client reads are exactly the bounds the server enforces.

Field names are the camelCase wire names, so handlers read ``args.fromLine``
and nothing has to translate between two spellings. An optional field that the
caller omitted holds ``msgspec.UNSET``; an explicit JSON ``null`` is rejected,
because every optional field is advertised as a plain typed property.

Unknown argument keys are ignored (open objects), matching how GNO's tools
accept and drop extra keys. Rules that span fields (``refs`` xor ``pattern``,
at most one ``hyde`` query mode) and the memory contract's own checks (empty
query, trimmed scopes, text size in bytes) belong to the handlers and the
engine, which report them with their stable error codes.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

import msgspec
from msgspec import Meta

ProjectHints: TypeAlias = Annotated[
    list[str],
    Meta(
        max_length=16,
        description=(
            "Opaque project hints from the caller, kept for cross-surface parity; "
            "they leave ranking unchanged and the server treats them as plain labels"
        ),
    ),
]
CollectionFilter: TypeAlias = Annotated[
    str, Meta(description="Restrict results to this one collection")
]
ResultLimit: TypeAlias = Annotated[
    int, Meta(ge=1, le=100, description="Maximum number of results to return (1-100)")
]
MinScore: TypeAlias = Annotated[
    float,
    Meta(
        ge=0,
        le=1,
        description="Drop results scoring below this value (0-1, applied after normalisation)",
    ),
]
LangHint: TypeAlias = Annotated[
    str, Meta(description="BCP-47 language code of the query, such as 'en' or 'de'")
]
ExcludeTerms: TypeAlias = Annotated[
    list[str], Meta(description="Remove documents whose title, path or body contains any term")
]
SinceBound: TypeAlias = Annotated[
    str,
    Meta(
        description=(
            "Lower bound on the document date: ISO date or date-time (2026-03-01, "
            "2026-03-01T09:00:00) or a relative token"
        )
    ),
]
UntilBound: TypeAlias = Annotated[
    str,
    Meta(description="Upper bound on the document date, in the same formats as since"),
]
Categories: TypeAlias = Annotated[
    list[str], Meta(description="Keep documents whose category or content type matches any value")
]
AuthorFilter: TypeAlias = Annotated[
    str, Meta(description="Keep documents whose author contains this text (case-insensitive)")
]
TagsAll: TypeAlias = Annotated[list[str], Meta(description="Keep documents carrying every tag")]
TagsAny: TypeAlias = Annotated[
    list[str], Meta(description="Keep documents carrying at least one tag")
]
LineNumbers: TypeAlias = Annotated[
    bool, Meta(description="Prefix every returned line with its 1-based line number")
]
QueryModeKind: TypeAlias = Literal["term", "intent", "hyde"]
DocumentRef: TypeAlias = Annotated[
    str,
    Meta(
        min_length=1,
        description="Document reference: gno://collection/path, #docid or collection/path",
    ),
]


class ToolInput(msgspec.Struct, kw_only=True):
    """Base of every tool argument Struct; keyword-only so field order is free."""
