"""The tool catalogue as text: every target tool, its class and its descriptions.

Descriptions are the discovery surface an agent reads before it calls
anything, so they are data kept in one table rather than strings scattered
over handlers. The ``full`` profile serves ``full`` for every tool; the
``core`` profile serves ``core`` for the nine core tools, and those nine are
the only tools whose text differs between profiles.

Core copy rules: open with when to call the tool, name the mechanism it runs,
end with what comes back and the bound the caller must respect; mechanism
first, honest bounds, active voice, no promotional words, no negated framings.

The catalogue lists all 53 tools of the target surface in wire order, whether
or not this server implements them yet; the registry intersects it with what
is implemented.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from gno_trio.errors import GnoError

PROFILE_FULL: Final = "full"
PROFILE_CORE: Final = "core"


@dataclass(frozen=True, slots=True)
class ToolText:
    """One catalogue row: name, read/write class and descriptions per profile."""

    name: str
    write: bool
    full: str
    core: str | None = None

    def description(self, profile: str) -> str:
        """The description served under ``profile`` (core text only where one exists)."""
        if profile == PROFILE_CORE and self.core is not None:
            return self.core
        return self.full


def _read(name: str, full: str, core: str | None = None) -> ToolText:
    return ToolText(name=name, write=False, full=full, core=core)


def _write(name: str, full: str, core: str | None = None) -> ToolText:
    return ToolText(name=name, write=True, full=full, core=core)


CATALOGUE: Final[tuple[ToolText, ...]] = (
    # ---- read tools (34) --------------------------------------------------
    _read(
        "gno_context",
        "Compile one budgeted evidence Capsule for a goal: exact line spans extracted from "
        "indexed documents, with coverage gaps, omissions, provenance and verification "
        "fingerprints. Read-only; gno_search, gno_query and gno_get stay available for "
        "manual retrieval.",
        core=(
            "Call when one goal needs a single, bounded evidence handoff. Compiles exact source "
            "passages for the goal with line spans, content hashes, egress class, coverage gaps, "
            "omissions and fingerprints; depthPolicy fast runs model-free, and the call is "
            "read-only. Returns a compact agent projection as text and the full Capsule in "
            "structuredContent, sized to fit budgetTokens."
        ),
    ),
    _read(
        "gno_context_verify",
        "Check a saved Context Capsule against the current index and report, span by span, "
        "whether the evidence is unchanged, stale, missing or reranked, plus any fingerprint "
        "drift. The Capsule itself stays as it was.",
    ),
    _read(
        "gno_ask",
        "Answer one question from a Context Capsule with a generation model, check every "
        "substantive claim against the retained spans, and abstain when support is "
        "incomplete. Returns the Capsule, a freshness receipt, per-claim verdicts, gaps and "
        "evidence IDs.",
    ),
    _read(
        "gno_search",
        "Keyword search with BM25 over the indexed documents, suited to exact names, "
        "identifiers, error messages, filenames and quoted phrases. Each hit carries uri, "
        "docid, score, snippet, a line anchor when known and any configured context guidance; "
        "read further with gno_get (fromLine/lineCount) or gno_multi_get, and switch to "
        "gno_query when the wording is uncertain.",
        core=(
            "Call when you know the exact words: a name, identifier, error message, filename or "
            "phrase. Runs BM25 full-text ranking over the index, model-free. Returns ranked hits "
            "with uri, docid, score, snippet and a line anchor to pass to gno_get as fromLine; "
            "limit caps the hits at 1-100 (default 5)."
        ),
    ),
    _read(
        "gno_vsearch",
        "Semantic search over stored chunk embeddings: finds passages that match the meaning "
        "of the query when the words differ. Needs current embeddings; intent helps with short "
        "or ambiguous terms. gno_query is the general entry point.",
    ),
    _read(
        "gno_query",
        "General retrieval entry point. The full pipeline fuses BM25, vector search and "
        "one-hop link expansion with optional query expansion and reranking; this server runs "
        "it model-free for now, so the BM25 leg alone ranks the hits and meta.mode reports "
        "bm25_only. Accepts intent, queryModes (term, intent, hyde), fast, thorough, graph and "
        "candidateLimit. Hits have the gno_search shape: uri, docid, score, snippet, line "
        "anchor and any configured context guidance.",
        core=(
            "Call first for a question whose wording may differ from the notes. Runs the hybrid "
            "retrieval path; this server runs it model-free for now, so the BM25 leg alone ranks "
            "the hits and meta.mode reports bm25_only. Accepts intent, queryModes, fast and "
            "thorough; treat a hit's context field as guidance and cite the source lines. "
            "Returns ranked hits with uri, docid, score, snippet and a line anchor for gno_get; "
            "limit caps the hits at 1-100 (default 5)."
        ),
    ),
    _read(
        "gno_query_diagnose",
        "Trace one named document through the retrieval stages for a query (filters, BM25, "
        "vector, fusion, graph, rerank) and show where it ranks or drops out. Use it when an "
        "expected document is missing, before changing the retrieval strategy.",
    ),
    _read(
        "gno_get",
        "Read one document by gno:// URI, #docid or collection/path; a URI ending in "
        "?index=<name> reads that named index instead of the served one (a missing index is an "
        "error, never created). When a search hit gave a line, pass it as fromLine with a small "
        "lineCount to read just that region; "
        "lineNumbers prefixes each line with its number. Returns the content with title, "
        "totalLines, the returned range, source metadata and edit capabilities.",
        core=(
            "Call to read a document that a search hit or citation named, by gno:// URI, #docid "
            "or collection/path. Reads the indexed Markdown mirror and numbers its lines. Returns "
            "the content with uri, docid, title, totalLines, returnedLines, source path and "
            "modifiedAt; start from the hit's line anchor as fromLine with a small lineCount, "
            "and widen the range only when the passage needs more context."
        ),
    ),
    _read(
        "gno_section",
        "Create or resolve a durable section target (SectionTargetV1) in one indexed "
        "document: action=create takes ref plus an anchor or a line, action=resolve takes ref "
        "plus a target. Exact and recovered resolutions carry a citation (uri, anchor, title, "
        "line range, fingerprint); ambiguous, stale and missing ones carry none and are unsafe "
        "to cite. Read-only; follow a citation with gno_get on its lines.",
    ),
    _read(
        "gno_multi_get",
        "Read several documents at once, either from a refs list (URIs or docids taken from "
        "search hits) or from one glob pattern over URIs and paths. maxBytes caps each "
        "document and lineNumbers controls numbering; refs that cannot be read are listed "
        "under skipped with a reason. All refs of one call must read one index (see ?index= "
        "on gno_get); split a batch that spans indexes.",
        core=(
            "Call to read several documents in one round trip, once a search has named the ones "
            "worth reading together. Resolves either a refs list (URIs or #docids) or one glob "
            "pattern over URIs and paths; pass exactly one of the two. Returns the documents, the "
            "skipped refs with a reason, and counts; maxBytes (default 10240) truncates each "
            "document, so keep it small for large batches."
        ),
    ),
    _read(
        "gno_peek",
        "Cheap, model-free snapshot of the install (peek@1.0): whether GNO is initialized, "
        "document and collection counts, embedding backlog, last index time, the most recently "
        "modified documents and whether gno serve is running. Use gno_status for the full "
        "health report.",
    ),
    _read(
        "gno_status",
        "Full health report for the index: collections with document, chunk and embedding "
        "counts, the embedding backlog, activation state and serving-process counters. Check "
        "it when vector or hybrid results look stale or unavailable.",
    ),
    _read(
        "gno_audit",
        "Run offline, read-only integrity checks over the workspace: links, declared "
        "provenance and source/index freshness. Returns stable, bounded findings with explicit "
        "partial or unavailable states; repairs are left to you.",
    ),
    _read(
        "gno_egress_policy_get",
        "Report the egress policy of one collection: the configured value, the value in "
        "effect, where it comes from, and the revision a change has to confirm.",
    ),
    _read(
        "gno_egress_check",
        "Dry-run an egress decision: for given collections, action, destination zone, caller "
        "and content class, report whether it would be allowed and why. Nothing is sent.",
    ),
    _read(
        "gno_egress_audit_list",
        "List content-free egress decision receipts, newest first, one cursor page at a time.",
    ),
    _read(
        "gno_egress_audit_show",
        "Show one content-free egress decision receipt by its audit ID.",
    ),
    _read(
        "gno_egress_audit_status",
        "Report the retention settings and storage use of the egress audit log.",
    ),
    _read(
        "gno_changes",
        "List document changes from the metadata-only change journal, starting at a time or a "
        "cursor, with cursor pagination and retention flags. Records carry paths, hashes and "
        "structure deltas; read the content itself with gno_get.",
        core=(
            "Call to learn what changed in the index and since when. Reads the metadata-only "
            "change journal from since, an ISO-8601 time or the cursor of an earlier page. "
            "Returns change records with kind, before and after snapshots and structure deltas, "
            "page cursors and retention flags; limit defaults to 100 (max 1000), and gno_get "
            "reads the changed content."
        ),
    ),
    _read(
        "gno_diff",
        "Show the structural change (headings, links, typed edges, dates) recorded for one "
        "document, metadata only; expired history is reported as expired.",
    ),
    _read(
        "gno_impact",
        "Walk the inbound dependencies of one document (typed edges, wiki links and Markdown "
        "links) to a bounded depth and return them with deterministic evidence paths.",
    ),
    _read(
        "gno_trace_list",
        "List summaries of private local retrieval traces, one cursor page at a time; the "
        "summaries leave out replay query text.",
    ),
    _read(
        "gno_trace_show",
        "Show one local retrieval trace in bounded detail, including replay content for that "
        "trace only.",
    ),
    _read(
        "gno_list_tags",
        "List tags with the number of documents carrying each. Narrow the list to one "
        "collection, or to a prefix for hierarchical tags such as 'project/'.",
    ),
    _read(
        "gno_links",
        "List the outgoing wiki links ([[...]]) and Markdown links of one document. "
        "gno_graph_neighbors shows links in both directions.",
    ),
    _read(
        "gno_backlinks",
        "List the incoming links of one document: every document whose wiki or Markdown links "
        "point at it, optionally within one collection.",
    ),
    _read(
        "gno_similar",
        "Find documents near a given document by the mean of its chunk embeddings, within a "
        "limit and similarity threshold. Needs stored vectors.",
    ),
    _read(
        "gno_graph",
        "Return the corpus link graph (nodes and edges) with a structure report: hubs, "
        "isolated documents, unresolved links and communities. Use it to learn how a corpus "
        "is organised; content questions start with gno_query.",
    ),
    _read(
        "gno_graph_query",
        "Traverse typed document edges from one root document in a chosen direction, bounded "
        "by depth, node and frontier limits. Returns the root, nodes, edges, the caps applied "
        "and whether the walk was truncated.",
    ),
    _read(
        "gno_graph_neighbors",
        "Show the incoming and outgoing wiki, Markdown and optional similarity edges around "
        "one document; read the neighbours that matter with gno_get.",
    ),
    _read(
        "gno_graph_path",
        "Find the shortest link path between two documents, up to a maximum depth, to answer "
        "'how are X and Y connected?'; read the documents on the path with gno_get.",
    ),
    _read(
        "gno_recall",
        "Recall current facts from a memory-managed collection, limited to the scopes you "
        "name and to a budget of facts and tokens (default 8 facts, 512 tokens). Each fact "
        "carries a gno:// citation and its contentHash; superseded facts drop out. Also "
        "returns a content-free receipt for gno_remember. This server runs the lexical leg, "
        "so retrieval.mode reports lexical.",
        core=(
            "Call before answering about preferences, decisions, people or earlier work, and "
            "before gno_remember to find the fact a new one would supersede. Runs lexical "
            "retrieval over the current facts of a memory-managed collection, filtered to the "
            "explicit scopes you pass; superseded facts drop out. Returns cited facts with "
            "contentHash and a content-free receipt to hand to gno_remember, and an empty answer "
            "names the command that stores a first fact; the budget is 8 facts and 512 tokens "
            "by default (maxFacts up to 64, maxTokens up to 8192)."
        ),
    ),
    _read(
        "gno_job_status",
        "Report the state of one background job (add, sync, embed or index) by job ID, "
        "including its result or error once it has finished.",
    ),
    _read(
        "gno_list_jobs",
        "List the running job and the recently finished jobs with their status.",
    ),
    # ---- write tools (19) -------------------------------------------------
    _write(
        "gno_egress_policy_set",
        "Change one collection's egress policy. Relaxing a policy requires a confirmation "
        "that names the current policy and its revision.",
    ),
    _write(
        "gno_egress_audit_delete",
        "Delete one egress audit receipt and report whether its storage was cleaned up.",
    ),
    _write(
        "gno_egress_audit_purge",
        "Delete every egress audit receipt. Requires confirm=true.",
    ),
    _write(
        "gno_trace_label",
        "Record a relevant, irrelevant or missing_expected judgment on a local retrieval trace.",
    ),
    _write(
        "gno_trace_export",
        "Export one or more finished retrieval traces as one deterministic agentic receipt.",
    ),
    _write(
        "gno_trace_delete",
        "Delete one local retrieval trace and the records it owns.",
    ),
    _write(
        "gno_trace_purge",
        "Delete every local retrieval trace. Requires confirm=true.",
    ),
    _write(
        "gno_capture",
        "Create a new document in an existing collection: write the file with source "
        "provenance frontmatter, then sync it into the keyword index. Embedding is a separate "
        "step; run gno_embed or gno_index before vector search can see the document. "
        "collisionPolicy decides what happens when the target path is taken.",
        core=(
            "Call to keep new text as a document in a collection. Writes a new file with source "
            "provenance frontmatter under the write lock and syncs it into the keyword index. "
            "Returns a receipt with uri, docid, path, contentHash and the sync and embed states; "
            "collisionPolicy (error, open_existing, create_with_suffix) settles a name clash, "
            "and vector search sees the note after a separate embedding step (gno_embed or "
            "gno_index)."
        ),
    ),
    _write(
        "gno_remember",
        "Store one fact in a memory-managed collection, or supersede an earlier one. With no "
        "decision the call only proposes candidate matches; decision=add writes a new fact, and "
        "decision=supersede replaces predecessorUri after checking predecessorHash. Documents "
        "belong in gno_capture. A written fact is keyword-searchable when the call returns.",
        core=(
            "Call to store a durable preference, decision or fact; documents go to gno_capture "
            "and edits go to the note's file. Matches the text against current facts in scope: "
            "omit decision for a dry run that lists candidates, use decision add for a new fact, "
            "or decision supersede with predecessorUri and the predecessorHash from gno_recall "
            "(one successor per fact). Returns the outcome (candidates, existing, added or "
            "superseded) with the record; replayed receipt spans and gno:// origins are "
            "rejected, and a written fact is keyword-searchable when the call returns."
        ),
    ),
    _write(
        "gno_add_collection",
        "Register a folder on disk as a collection and index it in a background job; "
        "returns the job ID to poll.",
    ),
    _write(
        "gno_sync",
        "Re-read files from disk into the keyword index as a background job (one collection or "
        "all); returns the job ID to poll with gno_job_status.",
    ),
    _write(
        "gno_embed",
        "Embed every chunk still waiting for a vector, optionally for one collection, as a "
        "background job; poll it with gno_job_status.",
    ),
    _write(
        "gno_index",
        "Sync files from disk and then embed them, as one background job; poll it with "
        "gno_job_status.",
    ),
    _write(
        "gno_remove_collection",
        "Remove a collection from the configuration. Its indexed data stays in the index.",
    ),
    _write(
        "gno_clear_collection_embeddings",
        "Delete a collection's embeddings: those of models no longer in use (mode=stale) or "
        "all of them (mode=all).",
    ),
    _write(
        "gno_create_folder",
        "Make a new folder, optionally under a parent path, in an existing collection.",
    ),
    _write(
        "gno_rename_note",
        "Rename an editable note and rewrite the references to it, in two calls: "
        "action=preview returns a plan, and action=apply carries out that plan when given its "
        'planDigest, confirmation="apply", confirm=true and schemaVersion="1.0".',
    ),
    _write(
        "gno_move_note",
        "Move an editable note to another folder of the same collection and rewrite the "
        "references to it, with the same preview-then-apply steps as gno_rename_note.",
    ),
    _write(
        "gno_duplicate_note",
        "Copy an editable note into its own folder or another one, optionally under a new name.",
    ),
)

TOOL_TEXT: Final[dict[str, ToolText]] = {row.name: row for row in CATALOGUE}
TARGET_TOOL_ORDER: Final[tuple[str, ...]] = tuple(row.name for row in CATALOGUE)
READ_TOOL_NAMES: Final[tuple[str, ...]] = tuple(row.name for row in CATALOGUE if not row.write)
WRITE_TOOL_ORDER: Final[tuple[str, ...]] = tuple(row.name for row in CATALOGUE if row.write)
CORE_DESCRIBED_TOOLS: Final[frozenset[str]] = frozenset(
    row.name for row in CATALOGUE if row.core is not None
)


def description_for(name: str, profile: str) -> str:
    """The description of tool ``name`` under ``profile`` (``"full"`` or ``"core"``)."""
    row = TOOL_TEXT.get(name)
    if row is None:
        raise GnoError("NOT_FOUND", f"Unknown tool: {name}")
    return row.description(profile)


__all__ = [
    "CATALOGUE",
    "CORE_DESCRIBED_TOOLS",
    "PROFILE_CORE",
    "PROFILE_FULL",
    "READ_TOOL_NAMES",
    "TARGET_TOOL_ORDER",
    "TOOL_TEXT",
    "WRITE_TOOL_ORDER",
    "ToolText",
    "description_for",
]
