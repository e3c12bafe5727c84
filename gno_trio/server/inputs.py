"""Typed tool arguments: one msgspec Struct per MCP tool.

Each Struct is both the decoder for ``tools/call`` arguments
(``msgspec.convert(arguments, SearchInput)``) and the source of the tool's
advertised ``inputSchema`` (see :mod:`gno_trio.server.schemas`), so the bounds a
client reads are exactly the bounds the server enforces.

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

from typing import Annotated, Final, Literal, TypeAlias

import msgspec
from msgspec import UNSET, Meta, UnsetType

# JSON numbers beyond 2**53 - 1 lose precision in JavaScript clients and
# overflow SQLite's 64-bit integers; GNO caps open-ended integers here too.
MAX_SAFE_INTEGER: Final = 9_007_199_254_740_991

MULTI_GET_DEFAULT_MAX_BYTES: Final = 10_240
CAPTURE_MAX_CONTENT_CHARS: Final = 1_048_576
RECALL_DEFAULT_MAX_FACTS: Final = 8
RECALL_DEFAULT_MAX_TOKENS: Final = 512
MEMORY_MAX_SCOPES: Final = 8

# ---------------------------------------------------------------------------
# Shared field shapes
# ---------------------------------------------------------------------------

NonEmptyText: TypeAlias = Annotated[str, Meta(min_length=1)]
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
MemoryScopes: TypeAlias = Annotated[
    list[str],
    Meta(
        min_length=1,
        max_length=MEMORY_MAX_SCOPES,
        description=(
            "Explicit scopes such as 'project:gno' (1-8); a fact is visible when it shares "
            "any scope with this list, and there is no implicit global scope"
        ),
    ),
]

QueryModeKind: TypeAlias = Literal["term", "intent", "hyde"]
CollisionPolicy: TypeAlias = Literal["error", "open_existing", "create_with_suffix"]
NotePreset: TypeAlias = Literal[
    "blank",
    "project-note",
    "research-note",
    "decision-note",
    "prompt-pattern",
    "source-summary",
    "idea-original",
    "person",
    "company-project",
    "meeting",
]
CaptureSourceKind: TypeAlias = Literal[
    "direct", "web", "email", "meeting", "chat", "file", "api", "unknown"
]
MemoryDecision: TypeAlias = Literal["add", "supersede"]


class ToolInput(msgspec.Struct, kw_only=True):
    """Base of every tool argument Struct; keyword-only so field order is free."""


# ---------------------------------------------------------------------------
# Retrieval
# ---------------------------------------------------------------------------


class RetrievalFilters(ToolInput, kw_only=True):
    """Scope and filter arguments every retrieval tool shares (gno_search, gno_query)."""

    projectHints: ProjectHints | UnsetType = UNSET
    collection: CollectionFilter | UnsetType = UNSET
    limit: ResultLimit = 5
    minScore: MinScore | UnsetType = UNSET
    lang: LangHint | UnsetType = UNSET
    exclude: ExcludeTerms | UnsetType = UNSET
    since: SinceBound | UnsetType = UNSET
    until: UntilBound | UnsetType = UNSET
    categories: Categories | UnsetType = UNSET
    author: AuthorFilter | UnsetType = UNSET
    tagsAll: TagsAll | UnsetType = UNSET
    tagsAny: TagsAny | UnsetType = UNSET


class SearchInput(RetrievalFilters, kw_only=True):
    """Arguments of ``gno_search`` (BM25 keyword search)."""

    query: Annotated[
        str,
        Meta(
            min_length=1,
            description="Exact words to match: identifier, name, filename, error text or phrase",
        ),
    ]
    intent: (
        Annotated[
            str,
            Meta(
                description=(
                    "Background that disambiguates the query (for 'python': 'programming "
                    "language'); it picks the snippet and is itself left out of the match"
                )
            ),
        ]
        | UnsetType
    ) = UNSET


class QueryMode(ToolInput):
    """One caller-typed retrieval entry of ``gno_query``."""

    mode: Annotated[
        QueryModeKind,
        Meta(
            description=(
                "term: a lexical anchor; intent: disambiguating context; hyde: one "
                "hypothetical answer passage"
            )
        ),
    ]
    text: Annotated[
        str,
        Meta(
            min_length=1,
            description="Text for this entry; short for term, answer-shaped for hyde",
        ),
    ]


class QueryInput(RetrievalFilters, kw_only=True):
    """Arguments of ``gno_query`` (the general retrieval entry point)."""

    query: Annotated[
        str,
        Meta(
            min_length=1,
            description="The question or topic; add intent or queryModes when it is ambiguous",
        ),
    ]
    intent: (
        Annotated[
            str,
            Meta(
                description=(
                    "Background that disambiguates the query; it steers expansion, reranking "
                    "and snippet choice and is itself left out of the match"
                )
            ),
        ]
        | UnsetType
    ) = UNSET
    candidateLimit: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=100,
                description="How many candidates reach the rerank stage (1-100; default 20)",
            ),
        ]
        | UnsetType
    ) = UNSET
    queryModes: (
        Annotated[
            list[QueryMode],
            Meta(
                description=(
                    "Typed retrieval entries used in place of generated expansion: term anchors, "
                    "intent context, and a single hyde passage at most"
                )
            ),
        ]
        | UnsetType
    ) = UNSET
    fast: Annotated[
        bool, Meta(description="Shallow pass: skip expansion, graph expansion and reranking")
    ] = False
    thorough: Annotated[
        bool,
        Meta(description="Deep pass: query expansion plus reranking over 40 candidates"),
    ] = False
    expand: Annotated[bool, Meta(description="Force query expansion on or off")] | UnsetType = UNSET
    rerank: Annotated[bool, Meta(description="Force reranking on or off")] | UnsetType = UNSET
    noGraph: Annotated[bool, Meta(description="Turn off one-hop graph expansion")] | UnsetType = (
        UNSET
    )
    graph: (
        Annotated[bool, Meta(description="One-hop graph expansion over links (on by default)")]
        | UnsetType
    ) = UNSET
    explain: (
        Annotated[bool, Meta(description="Add per-stage and per-result scoring details to meta")]
        | UnsetType
    ) = UNSET


class QueryDiagnoseInput(QueryInput, kw_only=True):
    """Arguments of ``gno_query_diagnose``: a ``gno_query`` request plus the document to explain."""

    target: Annotated[
        str,
        Meta(
            min_length=1,
            description=(
                "The document expected in the results: gno://collection/path, #docid or "
                "collection/path"
            ),
        ),
    ]


# ---------------------------------------------------------------------------
# Context Capsules
# ---------------------------------------------------------------------------

CONTEXT_MAX_FILTER_VALUES: Final = 128
ContextFilterValues: TypeAlias = Annotated[
    list[Annotated[str, Meta(max_length=256)]], Meta(max_length=CONTEXT_MAX_FILTER_VALUES)
]


class ContextQueryMode(ToolInput, forbid_unknown_fields=True):
    """One caller-typed retrieval entry of ``gno_context`` (closed: no other keys)."""

    mode: Annotated[
        QueryModeKind,
        Meta(
            description="term: an extra lexical search; intent: disambiguating context; hyde: "
            "a hypothetical answer passage (kept for the record; no vector search runs)"
        ),
    ]
    text: Annotated[str, Meta(min_length=1, max_length=4096, description="Text of this entry")]


class ContextInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of ``gno_context``; the object is closed, so an unknown key is an error."""

    goal: Annotated[
        str,
        Meta(
            description=(
                "What the evidence is for, in plain words (required, non-empty, at most "
                "16,384 characters); it is also the search query unless query is given"
            )
        ),
    ]
    budgetTokens: Annotated[
        int,
        Meta(
            ge=1,
            le=MAX_SAFE_INTEGER,
            description=(
                "Token ceiling for the whole Capsule JSON; without a tokenizer each UTF-8 "
                "byte counts as one token"
            ),
        ),
    ]
    query: (
        Annotated[str, Meta(description="Search text to use instead of the goal")] | UnsetType
    ) = UNSET
    collections: (
        Annotated[
            list[str],
            Meta(
                max_length=CONTEXT_MAX_FILTER_VALUES,
                description="Draw evidence only from these collections (each must exist)",
            ),
        ]
        | UnsetType
    ) = UNSET
    uriPrefix: (
        Annotated[
            str,
            Meta(
                description=(
                    "Keep documents whose URI starts with this canonical gno://<collection>/ prefix"
                )
            ),
        ]
        | UnsetType
    ) = UNSET
    queryModes: (
        Annotated[
            list[ContextQueryMode],
            Meta(
                max_length=CONTEXT_MAX_FILTER_VALUES,
                description="Typed retrieval entries: term anchors, intent context, one hyde",
            ),
        ]
        | UnsetType
    ) = UNSET
    tagsAll: ContextFilterValues | UnsetType = UNSET
    tagsAny: ContextFilterValues | UnsetType = UNSET
    categories: ContextFilterValues | UnsetType = UNSET
    author: AuthorFilter | UnsetType = UNSET
    lang: LangHint | UnsetType = UNSET
    intent: (
        Annotated[str, Meta(description="Background that disambiguates the goal; not searched")]
        | UnsetType
    ) = UNSET
    exclude: ContextFilterValues | UnsetType = UNSET
    minScore: MinScore | UnsetType = UNSET
    since: SinceBound | UnsetType = UNSET
    until: UntilBound | UnsetType = UNSET
    graph: (
        Annotated[
            bool,
            Meta(description="Ask for link-graph expansion (on by default; off under fast)"),
        ]
        | UnsetType
    ) = UNSET
    noRerank: Annotated[bool, Meta(description="Do not ask for reranking")] = False
    limit: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=MAX_SAFE_INTEGER,
                description="Documents admitted across all collections (default 20)",
            ),
        ]
        | UnsetType
    ) = UNSET
    candidateLimit: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=MAX_SAFE_INTEGER,
                description="Passages considered for packing (default 40; 80 under thorough)",
            ),
        ]
        | UnsetType
    ) = UNSET
    budgetBytes: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=MAX_SAFE_INTEGER,
                description="Byte ceiling for the Capsule JSON (default 4 x budgetTokens)",
            ),
        ]
        | UnsetType
    ) = UNSET
    safetyMarginTokens: (
        Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER, description="Tokens kept unused")]
        | UnsetType
    ) = UNSET
    safetyMarginBytes: (
        Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER, description="Bytes kept unused")] | UnsetType
    ) = UNSET
    depthPolicy: Annotated[
        Literal["fast", "balanced", "thorough"],
        Meta(
            description=(
                "How many passages to consider: fast takes one per document, balanced two, "
                "thorough three and a larger candidate pool"
            )
        ),
    ] = "balanced"
    format: Annotated[
        Literal["json", "md"],
        Meta(description="Accepted for compatibility; the text is always the agent projection"),
    ] = "json"
    projectHints: ProjectHints | UnsetType = UNSET


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------


class GetInput(ToolInput):
    """Arguments of ``gno_get`` (read one document or a line range of it)."""

    ref: Annotated[
        str,
        Meta(
            min_length=1,
            description="Document reference: gno://collection/path, #docid or collection/path",
        ),
    ]
    fromLine: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=MAX_SAFE_INTEGER,
                description="First line to return (1-based); pass the line anchor of a search hit",
            ),
        ]
        | UnsetType
    ) = UNSET
    lineCount: (
        Annotated[
            int,
            Meta(
                ge=1,
                le=MAX_SAFE_INTEGER,
                description="How many lines to read starting at fromLine; a small window first",
            ),
        ]
        | UnsetType
    ) = UNSET
    lineNumbers: LineNumbers = True
    traceId: (
        Annotated[
            str,
            Meta(
                min_length=1,
                max_length=128,
                description="Retrieval trace to continue, as returned by a search or query",
            ),
        ]
        | UnsetType
    ) = UNSET


class MultiGetInput(ToolInput):
    """Arguments of ``gno_multi_get``; exactly one of ``refs`` / ``pattern`` is expected."""

    refs: (
        Annotated[
            list[str],
            Meta(
                min_length=1,
                description="Document references from search hits (gno:// URIs or #docids)",
            ),
        ]
        | UnsetType
    ) = UNSET
    pattern: (
        Annotated[
            str,
            Meta(
                description=(
                    "Glob over document URIs and collection paths (* and ?), used in place of refs"
                )
            ),
        ]
        | UnsetType
    ) = UNSET
    maxBytes: Annotated[
        int,
        Meta(
            ge=1,
            le=MAX_SAFE_INTEGER,
            description="UTF-8 byte cap per document; longer content is truncated",
        ),
    ] = MULTI_GET_DEFAULT_MAX_BYTES
    lineNumbers: LineNumbers = True


# ---------------------------------------------------------------------------
# Index state
# ---------------------------------------------------------------------------


class StatusInput(ToolInput):
    """Arguments of ``gno_status``: none."""


class PeekInput(ToolInput):
    """Arguments of ``gno_peek``: none."""


class ListTagsInput(ToolInput):
    """Arguments of ``gno_list_tags``."""

    collection: (
        Annotated[str, Meta(description="Count tags within this collection only")] | UnsetType
    ) = UNSET
    prefix: (
        Annotated[str, Meta(description="Keep tags starting with this prefix, such as 'project/'")]
        | UnsetType
    ) = UNSET


class ChangesInput(ToolInput):
    """Arguments of ``gno_changes`` (metadata-only change journal)."""

    since: (
        Annotated[
            str,
            Meta(
                min_length=1,
                max_length=512,
                description="ISO-8601 instant or a cursor returned by an earlier page",
            ),
        ]
        | UnsetType
    ) = UNSET
    collection: (
        Annotated[
            str,
            Meta(min_length=1, max_length=256, description="Limit the feed to one collection"),
        ]
        | UnsetType
    ) = UNSET
    limit: Annotated[
        int, Meta(ge=1, le=1000, description="Maximum change records per page (1-1000)")
    ] = 100


class DiffInput(ToolInput):
    """Arguments of ``gno_diff`` (the retained structural diff of one document change)."""

    ref: Annotated[
        str,
        Meta(
            min_length=1,
            description="Document reference: gno://collection/path, #docid or collection/path",
        ),
    ]
    change: (
        Annotated[
            str,
            Meta(
                min_length=1,
                max_length=512,
                description="Change id from gno_changes; omit for the latest retained change",
            ),
        ]
        | UnsetType
    ) = UNSET


# ---------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------


class RecallInput(ToolInput):
    """Arguments of ``gno_recall``; identity comes from the session, never from here."""

    query: Annotated[str, Meta(description="The question, worded like the stored fact would read")]
    collection: Annotated[
        str, Meta(description="Collection with memoryManaged enabled that holds the facts")
    ]
    scopes: MemoryScopes
    maxFacts: Annotated[
        int, Meta(ge=1, le=64, description="Most facts to return (1-64, default 8)")
    ] = RECALL_DEFAULT_MAX_FACTS
    maxTokens: Annotated[
        int,
        Meta(
            ge=1, le=8192, description="Token budget for the returned facts (1-8192, default 512)"
        ),
    ] = RECALL_DEFAULT_MAX_TOKENS


class MemoryReceipt(ToolInput):
    """The receipt a ``gno_recall`` answer carried, handed back to ``gno_remember``.

    Every part is optional on input: the fence only needs ``spanHashes``, and a
    partial receipt simply fences fewer spans.
    """

    caller: str | UnsetType = UNSET
    session: str | UnsetType = UNSET
    issuedAt: str | UnsetType = UNSET
    memoryIds: list[str] = msgspec.field(default_factory=list)
    spanHashes: list[str] = msgspec.field(default_factory=list)
    digest: str | UnsetType = UNSET


class RememberInput(ToolInput):
    """Arguments of ``gno_remember``; identity comes from the session, never from here."""

    text: Annotated[
        str,
        Meta(description="One fact stated in full, as a single statement rather than a document"),
    ]
    collection: Annotated[
        str, Meta(description="Collection with memoryManaged enabled that receives the fact")
    ]
    scopes: MemoryScopes
    decision: (
        Annotated[
            MemoryDecision,
            Meta(
                description=(
                    "add writes a new fact; supersede replaces predecessorUri; omit it to get "
                    "candidate matches and write nothing"
                )
            ),
        ]
        | UnsetType
    ) = UNSET
    predecessorUri: (
        Annotated[str, Meta(description="With supersede: the gno:// URI of the earlier fact")]
        | UnsetType
    ) = UNSET
    predecessorHash: (
        Annotated[
            str,
            Meta(
                description="With supersede: the earlier fact's contentHash as gno_recall gave it"
            ),
        ]
        | UnsetType
    ) = UNSET
    receipt: (
        Annotated[
            MemoryReceipt,
            Meta(description="Receipt from the gno_recall answer this fact was derived from"),
        ]
        | UnsetType
    ) = UNSET
    derivedFrom: (
        Annotated[
            list[str],
            Meta(description="Declared origins of the fact; a gno:// origin is rejected"),
        ]
        | UnsetType
    ) = UNSET
    source: (
        Annotated[str, Meta(description="Free-text evidence: where the fact came from")] | UnsetType
    ) = UNSET


# ---------------------------------------------------------------------------
# Capture
# ---------------------------------------------------------------------------


class CaptureSource(ToolInput):
    """Provenance written under the ``source:`` frontmatter of a captured note."""

    kind: (
        Annotated[CaptureSourceKind, Meta(description="Where the captured text came from")]
        | UnsetType
    ) = UNSET
    title: Annotated[str, Meta(description="Title of the source")] | UnsetType = UNSET
    url: Annotated[str, Meta(description="URL of the source")] | UnsetType = UNSET
    uri: Annotated[str, Meta(description="URI of the source")] | UnsetType = UNSET
    docid: Annotated[str, Meta(description="GNO docid of the source")] | UnsetType = UNSET
    mime: Annotated[str, Meta(description="MIME type of the source")] | UnsetType = UNSET
    ext: Annotated[str, Meta(description="File extension of the source")] | UnsetType = UNSET
    author: Annotated[str, Meta(description="Author of the source")] | UnsetType = UNSET
    observedAt: (
        Annotated[str, Meta(description="When the source was seen (ISO 8601)")] | UnsetType
    ) = UNSET
    capturedAt: (
        Annotated[str, Meta(description="Capture time to record in place of now (ISO 8601)")]
        | UnsetType
    ) = UNSET
    externalId: (
        Annotated[str, Meta(description="Identifier of the source in its own system")] | UnsetType
    ) = UNSET


class CaptureInput(ToolInput):
    """Arguments of ``gno_capture`` (create one new document)."""

    collection: Annotated[
        str, Meta(min_length=1, description="Existing collection that receives the document")
    ]
    content: (
        Annotated[
            str,
            Meta(
                max_length=CAPTURE_MAX_CONTENT_CHARS,
                description="Markdown or plain text body; optional when presetId supplies one",
            ),
        ]
        | UnsetType
    ) = UNSET
    title: (
        Annotated[str, Meta(description="Document title; derived from the content when omitted")]
        | UnsetType
    ) = UNSET
    path: (
        Annotated[
            str,
            Meta(
                description=(
                    "Path inside the collection, such as 'notes/meeting.md'; generated when omitted"
                )
            ),
        ]
        | UnsetType
    ) = UNSET
    folderPath: (
        Annotated[str, Meta(description="Folder inside the collection for a generated name")]
        | UnsetType
    ) = UNSET
    collisionPolicy: (
        Annotated[
            CollisionPolicy, Meta(description="What to do when the target path already exists")
        ]
        | UnsetType
    ) = UNSET
    presetId: Annotated[NotePreset, Meta(description="Note scaffold to start from")] | UnsetType = (
        UNSET
    )
    overwrite: Annotated[
        bool, Meta(description="Replace a file that already exists at path (legacy switch)")
    ] = False
    tags: Annotated[list[str], Meta(description="Tags for the new document")] | UnsetType = UNSET
    source: (
        Annotated[
            CaptureSource,
            Meta(description="Provenance recorded under the note's source frontmatter"),
        ]
        | UnsetType
    ) = UNSET


# ---------------------------------------------------------------------------
# Links, collections and jobs
# ---------------------------------------------------------------------------

DocumentRef: TypeAlias = Annotated[
    str,
    Meta(
        min_length=1,
        description="Document reference: gno://collection/path, #docid or collection/path",
    ),
]
JOBS_DEFAULT_LIMIT: Final = 10
GitPullSwitch: TypeAlias = Annotated[
    bool,
    Meta(
        description=(
            "Run git pull first; this server does not run git, so only false is accepted "
            "(pull yourself, then sync)"
        )
    ),
]


class LinksInput(ToolInput):
    """Arguments of ``gno_links`` (outgoing links of one document)."""

    ref: DocumentRef
    type: (
        Annotated[
            Literal["wiki", "markdown"],
            Meta(description="Keep only wiki links ([[...]]) or only Markdown links"),
        ]
        | UnsetType
    ) = UNSET


class BacklinksInput(ToolInput):
    """Arguments of ``gno_backlinks`` (documents whose links point at one document)."""

    ref: DocumentRef
    collection: (
        Annotated[str, Meta(min_length=1, description="Keep only links written in this collection")]
        | UnsetType
    ) = UNSET


class JobStatusInput(ToolInput):
    """Arguments of ``gno_job_status``."""

    jobId: Annotated[
        str,
        Meta(
            min_length=1,
            max_length=128,
            description="Job ID returned by gno_add_collection or gno_sync",
        ),
    ]


class ListJobsInput(ToolInput):
    """Arguments of ``gno_list_jobs``."""

    limit: Annotated[
        int, Meta(ge=1, le=100, description="Maximum number of finished jobs to list (1-100)")
    ] = JOBS_DEFAULT_LIMIT


class AddCollectionInput(ToolInput):
    """Arguments of ``gno_add_collection`` (register a folder, then index it as a job)."""

    path: Annotated[
        str,
        Meta(
            min_length=1,
            description="Folder to index: an absolute path or one starting with ~",
        ),
    ]
    name: (
        Annotated[
            str,
            Meta(
                min_length=1,
                description=(
                    "Collection name (1-64 of a-z, 0-9, _ and -; case-insensitive); "
                    "defaults to the folder name"
                ),
            ),
        ]
        | UnsetType
    ) = UNSET
    pattern: (
        Annotated[str, Meta(min_length=1, description="Glob of files to index, such as '**/*.md'")]
        | UnsetType
    ) = UNSET
    include: (
        Annotated[
            list[str],
            Meta(description="File extensions to index, such as '.md'; empty means all supported"),
        ]
        | UnsetType
    ) = UNSET
    exclude: (
        Annotated[
            list[str],
            Meta(
                description="Names or globs of folders and files to skip; replaces the default list"
            ),
        ]
        | UnsetType
    ) = UNSET
    gitPull: GitPullSwitch = False


class SyncInput(ToolInput):
    """Arguments of ``gno_sync`` (re-read collections from disk as a job)."""

    collection: (
        Annotated[
            str,
            Meta(min_length=1, description="Collection to sync; every collection when omitted"),
        ]
        | UnsetType
    ) = UNSET
    gitPull: GitPullSwitch = False
    runUpdateCmd: Annotated[
        bool,
        Meta(
            description=(
                "Run the collection's updateCmd first; this server does not run commands, "
                "so only false is accepted"
            )
        ),
    ] = False


class RemoveCollectionInput(ToolInput):
    """Arguments of ``gno_remove_collection``."""

    collection: Annotated[
        str, Meta(min_length=1, description="Name of the collection to remove (any letter case)")
    ]


# ---------------------------------------------------------------------------
# Egress policy (closed objects: an unknown key is an error, not ignored)
# ---------------------------------------------------------------------------

EGRESS_CHECK_MAX_COLLECTIONS: Final = 64


class EgressPolicyGetInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of ``gno_egress_policy_get``."""

    collection: Annotated[
        str, Meta(min_length=1, description="Name of the collection (any letter case)")
    ]


class EgressCaller(ToolInput, forbid_unknown_fields=True):
    """Who the dry-run caller is, as far as the egress rules care."""

    authenticated: Annotated[
        bool, Meta(description="Whether the caller presented valid transport credentials")
    ] = False


class EgressCheckInput(ToolInput, kw_only=True, forbid_unknown_fields=True):
    """Arguments of ``gno_egress_check``."""

    collections: (
        Annotated[
            list[Annotated[str, Meta(min_length=1)]],
            Meta(
                min_length=1,
                max_length=EGRESS_CHECK_MAX_COLLECTIONS,
                description=(
                    "Collections in scope, each named once (1-64); omit for every configured "
                    "collection"
                ),
            ),
        ]
        | UnsetType
    ) = UNSET
    action: Annotated[
        Literal["serve"], Meta(description="What would happen to the content (only serve)")
    ] = "serve"
    destinationZone: Annotated[
        Literal["loopback", "lan", "remote"],
        Meta(description="Network zone of the peer the content would go to"),
    ]
    caller: Annotated[EgressCaller, Meta(description="The caller's credentials")] | UnsetType = (
        UNSET
    )
    contentClass: Annotated[
        Literal["source", "snippet", "capsule", "metadata", "audit_log", "retrieval_trace"],
        Meta(description="Kind of content that would be served"),
    ] = "metadata"
    partial: Annotated[
        bool,
        Meta(description="Judge each collection alone and serve the allowed ones (partial result)"),
    ] = False


class EgressConfirmation(ToolInput, forbid_unknown_fields=True):
    """What the caller read with ``gno_egress_policy_get`` before relaxing a policy."""

    currentPolicy: Annotated[
        Literal["local_only", "lan", "remote"],
        Meta(description="The effective policy the caller read"),
    ]
    currentRevision: Annotated[
        int, Meta(ge=0, le=MAX_SAFE_INTEGER, description="The revision the caller read")
    ]
    acknowledged: Annotated[
        bool, Meta(description="Must be true: the caller accepts that content may travel further")
    ]
    collection: (
        Annotated[str, Meta(min_length=1, description="When given, must be the same collection")]
        | UnsetType
    ) = UNSET
    targetPolicy: (
        Annotated[
            Literal["local_only", "lan", "remote"],
            Meta(description="When given, must be the same target policy"),
        ]
        | UnsetType
    ) = UNSET


class EgressPolicySetInput(ToolInput, forbid_unknown_fields=True):
    """Arguments of ``gno_egress_policy_set``."""

    collection: Annotated[
        str, Meta(min_length=1, description="Name of the collection (any letter case)")
    ]
    targetPolicy: Annotated[
        Literal["local_only", "lan", "remote"],
        Meta(description="The policy to apply: local_only, lan or remote"),
    ]
    confirmation: (
        Annotated[
            EgressConfirmation,
            Meta(description="Required to relax the policy; not needed to tighten it"),
        ]
        | UnsetType
    ) = UNSET


# ---------------------------------------------------------------------------
# Link graph
# ---------------------------------------------------------------------------


class GraphNeighborsInput(ToolInput):
    """Arguments of ``gno_graph_neighbors``."""

    ref: DocumentRef
    direction: Annotated[
        Literal["both", "out", "in"],
        Meta(description="out: documents it links to; in: documents linking to it; both"),
    ] = "both"
    limit: Annotated[
        int, Meta(ge=1, le=1000, description="Maximum number of neighbours to return (1-1000)")
    ] = 50


class GraphPathInput(ToolInput, kw_only=True):
    """Arguments of ``gno_graph_path``; ``from`` is spelled ``from_`` in Python."""

    from_: DocumentRef = msgspec.field(name="from")
    to: DocumentRef
    maxDepth: Annotated[
        int, Meta(ge=1, le=12, description="Maximum number of link hops to search (1-12)")
    ] = 6


FrontierLimit: TypeAlias = Annotated[
    int, Meta(ge=1, le=1000, description="Most documents expanded per hop (1-1000)")
]
VisitedLimit: TypeAlias = Annotated[
    int, Meta(ge=1, le=5000, description="Most distinct documents the walk may touch (1-5000)")
]
TraversalNodes: TypeAlias = Annotated[
    int, Meta(ge=1, le=1000, description="Most documents to return, the root included (1-1000)")
]


class GraphInput(ToolInput):
    """Arguments of ``gno_graph`` (the whole link graph and its health report)."""

    collection: (
        Annotated[str, Meta(min_length=1, description="Only documents of this collection")]
        | UnsetType
    ) = UNSET
    limit: Annotated[int, Meta(ge=1, le=5000, description="Maximum nodes (1-5000)")] = 2000
    edgeLimit: Annotated[int, Meta(ge=1, le=50000, description="Maximum edges (1-50000)")] = 10000
    includeSimilar: Annotated[
        bool,
        Meta(description="Ask for similarity edges (needs vectors; reported unavailable here)"),
    ] = False
    threshold: Annotated[
        float, Meta(ge=0, le=1, description="Similarity threshold (0-1); used with includeSimilar")
    ] = 0.7
    linkedOnly: Annotated[bool, Meta(description="Leave out documents with no links")] = True
    similarTopK: Annotated[
        int, Meta(ge=1, le=20, description="Similar documents per node (1-20)")
    ] = 5


class GraphQueryInput(ToolInput):
    """Arguments of ``gno_graph_query`` (bounded walk over typed frontmatter edges)."""

    ref: DocumentRef
    direction: Annotated[
        Literal["both", "out", "in"],
        Meta(description="out: edges the document holds; in: edges pointing at it; both"),
    ] = "both"
    edgeType: (
        Annotated[str, Meta(min_length=1, description="Follow only this edge type (works_at)")]
        | UnsetType
    ) = UNSET
    relation: (
        Annotated[str, Meta(min_length=1, description="Alias of edgeType; both must agree")]
        | UnsetType
    ) = UNSET
    maxDepth: Annotated[int, Meta(ge=1, le=6, description="Maximum hops (1-6)")] = 2
    maxNodes: TraversalNodes = 100
    frontierLimit: FrontierLimit = 100
    visitedLimit: VisitedLimit = 500


class ImpactInput(ToolInput):
    """Arguments of ``gno_impact`` (documents that depend on one document)."""

    ref: DocumentRef
    maxDepth: Annotated[int, Meta(ge=1, le=6, description="Maximum hops (1-6)")] = 3
    maxNodes: TraversalNodes = 100
    maxEdges: Annotated[int, Meta(ge=1, le=5000, description="Most edges to walk (1-5000)")] = 500
    frontierLimit: FrontierLimit = 100
    visitedLimit: VisitedLimit = 500


# ---------------------------------------------------------------------------
# Folders and copies
# ---------------------------------------------------------------------------


class CreateFolderInput(ToolInput):
    """Arguments of ``gno_create_folder``."""

    collection: Annotated[str, Meta(min_length=1, description="Collection to create it in")]
    name: Annotated[str, Meta(min_length=1, description="Name of the new folder (one segment)")]
    parentPath: (
        Annotated[
            str,
            Meta(description="Existing folder to create it in, relative to the collection root"),
        ]
        | UnsetType
    ) = UNSET


class DuplicateNoteInput(ToolInput):
    """Arguments of ``gno_duplicate_note``."""

    ref: DocumentRef
    folderPath: (
        Annotated[
            str,
            Meta(
                description=(
                    "Existing folder for the copy, relative to the collection root "
                    "(default: the note's own folder)"
                )
            ),
        ]
        | UnsetType
    ) = UNSET
    name: (
        Annotated[
            str,
            Meta(
                min_length=1,
                description="File name of the copy (default: the note's name plus -copy)",
            ),
        ]
        | UnsetType
    ) = UNSET


__all__ = [
    "CAPTURE_MAX_CONTENT_CHARS",
    "EGRESS_CHECK_MAX_COLLECTIONS",
    "JOBS_DEFAULT_LIMIT",
    "MAX_SAFE_INTEGER",
    "MEMORY_MAX_SCOPES",
    "MULTI_GET_DEFAULT_MAX_BYTES",
    "RECALL_DEFAULT_MAX_FACTS",
    "RECALL_DEFAULT_MAX_TOKENS",
    "AddCollectionInput",
    "BacklinksInput",
    "CaptureInput",
    "CaptureSource",
    "ChangesInput",
    "ContextInput",
    "ContextQueryMode",
    "CreateFolderInput",
    "DiffInput",
    "DuplicateNoteInput",
    "EgressCaller",
    "EgressCheckInput",
    "EgressConfirmation",
    "EgressPolicyGetInput",
    "EgressPolicySetInput",
    "GetInput",
    "GraphInput",
    "GraphNeighborsInput",
    "GraphPathInput",
    "GraphQueryInput",
    "ImpactInput",
    "JobStatusInput",
    "LinksInput",
    "ListJobsInput",
    "ListTagsInput",
    "MemoryReceipt",
    "MultiGetInput",
    "PeekInput",
    "QueryDiagnoseInput",
    "QueryInput",
    "QueryMode",
    "RecallInput",
    "RememberInput",
    "RemoveCollectionInput",
    "SearchInput",
    "StatusInput",
    "SyncInput",
    "ToolInput",
]
