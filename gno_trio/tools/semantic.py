"""The semantic tools: ``gno_vsearch`` and ``gno_similar`` (read), ``gno_embed``,
``gno_index`` and ``gno_clear_collection_embeddings`` (write).

Embedding can take minutes, so ``gno_embed`` and ``gno_index`` answer with a
job ID at once, like ``gno_sync``: the call reserves the single job slot and
takes the write lease, which the job holds until it ends. Clearing is quick
and runs under the lease inside the call. Each tool is declared whole here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Final, Literal

from msgspec import UNSET, Meta, UnsetType

from gno_trio.engine import Engine, HeldLease, JobControl, JobPlan, Traced, Work
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import IDEMPOTENT_WRITE, read_tool, write_tool
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.collections import (
    GitPullSwitch,
    sync_targets,
    sync_work,
)
from gno_trio.tools.common import engine_tool, opt
from gno_trio.tools.fields import ToolInput
from gno_trio.tools.retrieval import RetrievalFilters, hits_text, search_request


class VsearchInput(RetrievalFilters, kw_only=True):
    """Arguments of ``gno_vsearch`` (semantic search over stored vectors)."""

    query: Annotated[
        str,
        Meta(
            min_length=1,
            description=(
                "What you are looking for, in any wording or language; exact error text or "
                "identifiers are better served by gno_search"
            ),
        ),
    ]
    intent: (
        Annotated[
            str,
            Meta(
                description=(
                    "Background that disambiguates the query; it picks which passage of a "
                    "document is shown and is itself not searched"
                )
            ),
        ]
        | UnsetType
    ) = UNSET


class SimilarInput(ToolInput):
    """Arguments of ``gno_similar``."""

    ref: Annotated[
        str,
        Meta(
            min_length=1, description="The document to start from: gno:// URI, coll/path or #docid"
        ),
    ]
    limit: Annotated[
        int, Meta(ge=1, le=50, description="Maximum number of similar documents (1-50)")
    ] = 5
    threshold: (
        Annotated[
            float,
            Meta(ge=0, le=1, description="Lowest similarity to report (0-1; 0.7 when omitted)"),
        ]
        | UnsetType
    ) = UNSET
    crossCollection: Annotated[
        bool, Meta(description="Look in every collection, not only the document's own")
    ] = False


class EmbedInput(ToolInput):
    """Arguments of ``gno_embed``."""

    collection: (
        Annotated[
            str,
            Meta(min_length=1, description="Collection to embed; every collection when omitted"),
        ]
        | UnsetType
    ) = UNSET


class IndexInput(ToolInput):
    """Arguments of ``gno_index`` (sync, then embed, as one job)."""

    collection: (
        Annotated[
            str,
            Meta(min_length=1, description="Collection to index; every collection when omitted"),
        ]
        | UnsetType
    ) = UNSET
    gitPull: GitPullSwitch = False


class ClearEmbeddingsInput(ToolInput):
    """Arguments of ``gno_clear_collection_embeddings``."""

    collection: Annotated[str, Meta(min_length=1, description="Collection whose vectors go")]
    mode: Annotated[
        Literal["stale", "all"],
        Meta(
            description=(
                "stale: only vectors of models no longer configured for it; all: every vector "
                "(re-embed afterwards)"
            )
        ),
    ] = "stale"


def vsearch_text(result: dict[str, Any]) -> str:
    return hits_text(result, "vector search")


def similar_text(result: dict[str, Any]) -> str:
    meta = result["meta"]
    lines = [f"Found {len(result['similar'])} similar documents for {meta['uri']}"]
    lines += [
        f"  [{item['docid']}] {item['uri']} ({item['score']:.3f})" for item in result["similar"]
    ]
    return "\n".join(lines)


def embed_text(result: dict[str, Any]) -> str:
    return (
        f"Job: {result['jobId']}\nStatus: {result['status']}\nModel: {result['model']}\n"
        "Poll it with gno_job_status."
    )


def index_text(result: dict[str, Any]) -> str:
    return (
        f"Job: {result['jobId']}\nStatus: {result['status']}\n"
        f"Collections: {', '.join(result['collections'])}\nPhases: sync, then embed\n"
        "Poll it with gno_job_status."
    )


def clear_text(result: dict[str, Any]) -> str:
    lines = [
        f"Collection: {result['collection']}",
        f"Mode: {result['mode']}",
        f"Deleted vectors: {result['deletedVectors']}",
    ]
    if result["deletedModels"]:
        lines.append(f"Models: {', '.join(result['deletedModels'])}")
    if result["protectedSharedVectors"]:
        lines.append(f"Kept (shared with other collections): {result['protectedSharedVectors']}")
    if result.get("note"):
        lines.append(result["note"])
    return "\n".join(lines)


def embed_value(run: Mapping[str, Any]) -> dict[str, Any]:
    """An embed run as the job's ``embedResult`` (GNO's two counts first)."""
    return {"embedded": run["embedded"], "errors": run["errors"], **run}


def embed_work(engine: Engine, names: Sequence[str] | None, lease: HeldLease) -> Work:
    """The embed phase as a job; the job holds ``lease`` throughout (GNO's rule for jobs)."""

    def work(control: JobControl) -> Mapping[str, Any]:
        label = ", ".join(names) if names else "*"

        def progress(done: int, total: int) -> None:
            control.report({"collection": label, "processed": done, "total": total})

        control.report({"collection": label, "processed": 0, "total": 0})
        run = engine.vectors.embed(
            names, should_stop=lambda: control.stopping, progress=progress, lease=lease
        )
        value = embed_value(run.as_dict())
        return {"typedResult": {"kind": "embed", "value": value}}

    return work


def index_work(
    engine: Engine, names: Sequence[str], lease: HeldLease, *, git_pull: bool = False
) -> Work:
    sync = sync_work(engine, names, lease, git_pull=git_pull)

    def work(control: JobControl) -> Mapping[str, Any]:
        synced = sync(control)["result"]
        embedded = embed_work(engine, names, lease)(control)["typedResult"]["value"]
        return {
            "result": synced,
            "typedResult": {"kind": "index", "value": {"sync": synced, "embed": embedded}},
        }

    return work


def make_vsearch(runtime: Runtime) -> ToolHandler:
    def call(args: VsearchInput, ctx: ToolCallContext) -> Traced:
        return runtime.engine.retrieval.run("vsearch", search_request(args, args.query))

    return engine_tool(runtime, call, vsearch_text)


def make_similar(runtime: Runtime) -> ToolHandler:
    def call(args: SimilarInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.engine.search.similar(
            args.ref,
            limit=args.limit,
            threshold=opt(args.threshold),
            cross_collection=args.crossCollection,
        )

    return engine_tool(runtime, call, similar_text)


def make_embed(runtime: Runtime) -> ToolHandler:
    engine = runtime.engine

    def call(args: EmbedInput, ctx: ToolCallContext) -> dict[str, Any]:
        collection = opt(args.collection)
        names = sync_targets(engine, collection) if collection is not None else None
        model = engine.vectors.backend(names[0] if names else None).identity.uri  # MODEL_NOT_FOUND

        def begin(hold: contextlib.ExitStack) -> JobPlan:
            lease = hold.enter_context(
                engine.lease(should_stop=lambda: ctx.cancellation.is_cancelled)
            )
            return JobPlan(work=embed_work(engine, names, lease), collections=names or ())

        ticket = runtime.jobs.start("embed", begin)
        return {"jobId": ticket.job_id, "status": "started", "model": model}

    return engine_tool(runtime, call, embed_text, write=True)


def make_index(runtime: Runtime) -> ToolHandler:
    engine = runtime.engine

    def call(args: IndexInput, ctx: ToolCallContext) -> dict[str, Any]:
        names = sync_targets(engine, opt(args.collection))
        for name in names:
            engine.vectors.backend(name)  # MODEL_NOT_FOUND before any job starts

        def begin(hold: contextlib.ExitStack) -> JobPlan:
            lease = hold.enter_context(
                engine.lease(should_stop=lambda: ctx.cancellation.is_cancelled)
            )
            current = sync_targets(engine, opt(args.collection))  # again, under the lease
            work = index_work(engine, current, lease, git_pull=args.gitPull)
            return JobPlan(work=work, collections=current)

        ticket = runtime.jobs.start("index", begin)
        return {
            "jobId": ticket.job_id,
            "status": "started",
            "collections": list(ticket.collections),
            "phases": ["sync", "embed"],
            "options": {"gitPull": args.gitPull, "runUpdateCmd": False},
        }

    return engine_tool(runtime, call, index_text, write=True)


def make_clear_embeddings(runtime: Runtime) -> ToolHandler:
    engine = runtime.engine

    def call(args: ClearEmbeddingsInput, ctx: ToolCallContext) -> dict[str, Any]:
        return engine.vectors.clear(
            args.collection,
            mode=args.mode,
            should_stop=lambda: ctx.cancellation.is_cancelled,
        )

    return engine_tool(runtime, call, clear_text, write=True)


VSEARCH: Final = read_tool(
    "gno_vsearch",
    VsearchInput,
    "search-results",
    make_vsearch,
    content_class="snippet",
    full=(
        "Semantic search with the stored embeddings: finds passages whose meaning matches the "
        "query even when no word is shared, across languages. Takes the gno_search filters plus "
        "intent (picks the passage shown). Hits are documents at their best passage: uri, docid, "
        "score, snippet, line anchor. Needs embeddings (gno_embed); gno_query combines this with "
        "keyword search and is the better default."
    ),
)

SIMILAR: Final = read_tool(
    "gno_similar",
    SimilarInput,
    "similar",
    make_similar,
    content_class="snippet",
    full=(
        "Documents whose content is closest to a given document (the mean of its chunk "
        "embeddings), in its own collection unless crossCollection; limit 1-50, threshold 0-1 "
        "(0.7 by default). Needs embeddings. For explicit relations use gno_links or "
        "gno_graph_neighbors."
    ),
)

EMBED: Final = write_tool(
    "gno_embed",
    EmbedInput,
    "mcp-embed-result",
    make_embed,
    content_class="metadata",
    annotations=IDEMPOTENT_WRITE,
    full=(
        "Embed every chunk still waiting for a vector (one collection or all) with the "
        "configured model, as a background job; returns the job ID to poll with gno_job_status."
    ),
)

INDEX: Final = write_tool(
    "gno_index",
    IndexInput,
    "mcp-index-result",
    make_index,
    content_class="metadata",
    annotations=IDEMPOTENT_WRITE,
    full=(
        "Re-read files from disk and then embed what changed, as one background job (one "
        "collection or all); returns the job ID to poll with gno_job_status."
    ),
)

CLEAR_EMBEDDINGS: Final = write_tool(
    "gno_clear_collection_embeddings",
    ClearEmbeddingsInput,
    "mcp-clear-embeddings-result",
    make_clear_embeddings,
    content_class="metadata",
    full=(
        "Delete a collection's embeddings: those of models it no longer uses (mode=stale, the "
        "default) or all of them (mode=all, then run gno_embed). Vectors another collection "
        "shares are kept."
    ),
)

TOOLS: Final = (VSEARCH, SIMILAR, EMBED, INDEX, CLEAR_EMBEDDINGS)
