"""``gno_add_collection``, ``gno_sync`` and ``gno_remove_collection``.

Adding and syncing index files, which can take minutes, so both return a job
ID at once and the sync continues as a background job of the runtime's
``JobManager``. Before answering, the call reserves the single job slot
(``JOB_CONFLICT`` while another job runs), takes the write lease (``LOCKED``
after the usual wait) and, for an add, registers the collection; the job then
holds the lease until its sync ends, as GNO requires of asynchronous write
jobs. Removing is quick and runs under the lease inside the call.

With ``gitPull`` the job first runs ``git pull --ff-only`` in each
collection that is a git work tree (the engine judges the remote against the
collection's egress policy and bounds the pull in time) and reports the
outcome in that collection's result under ``gitPull``; the files are synced
as they are whatever the pull did. A collection's ``updateCmd`` is the
user's own command and is never run for an agent: ``runUpdateCmd`` is
refused with ``INVALID_INPUT`` rather than silently ignored.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Final, TypeAlias

from msgspec import UNSET, Meta, UnsetType

from gno_trio.engine import (
    Engine,
    HeldLease,
    JobControl,
    JobPlan,
    JobTicket,
    SyncReport,
    Work,
    normalize_name,
)
from gno_trio.errors import GnoError
from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import (
    APPEND_ONLY_WRITE,
    IDEMPOTENT_WRITE,
    write_tool,
)
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool, opt, seq
from gno_trio.tools.fields import (
    ToolInput,
)

GitPullSwitch: TypeAlias = Annotated[
    bool,
    Meta(
        description=(
            "Run git pull --ff-only first in each collection that is a git work tree (where its "
            "egress policy allows the remote); the job result reports each pull under gitPull"
        )
    ),
]


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


REMOVE_NOTE: Final = (
    "The collection is gone from the configuration and its source files are untouched. "
    "Its documents stay in the index database but are inactive: they no longer appear in "
    "search, reads or links. Adding the same folder again restores unchanged files "
    "without converting them again."
)


def refuse_update_cmd(run_update_cmd: bool) -> None:
    """``runUpdateCmd`` asks to run the user's own shell command for an agent: refused."""
    if run_update_cmd:
        raise GnoError(
            "INVALID_INPUT",
            "runUpdateCmd is not supported by this server: run the update command yourself, "
            "then sync",
        )


def _collection_result(report: SyncReport, pulled: Mapping[str, Any] | None) -> dict[str, Any]:
    return {
        **({} if pulled is None else {"gitPull": dict(pulled)}),
        "collection": report.collection,
        "filesProcessed": report.scanned,
        "filesAdded": report.added,
        "filesUpdated": report.updated + report.renamed + report.reactivated,
        "filesUnchanged": report.unchanged,
        "filesErrored": len(report.errors),
        "filesSkipped": 0,
        "filesMarkedInactive": report.removed,
        "filesRenamed": report.renamed,
        "filesReactivated": report.reactivated,
        "durationMs": round(report.duration_ms),
        "errors": [dict(error) for error in report.errors],
    }


def sync_result(
    reports: Sequence[SyncReport], pulls: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    """The engine's per-collection reports in the job result shape (with each pull), totals."""
    pulls = pulls or {}
    collections = [_collection_result(r, pulls.get(r.collection)) for r in reports]

    def total(key: str) -> int:
        return sum(int(entry[key]) for entry in collections)

    return {
        "collections": collections,
        "totalDurationMs": total("durationMs"),
        "totalFilesProcessed": total("filesProcessed"),
        "totalFilesAdded": total("filesAdded"),
        "totalFilesUpdated": total("filesUpdated"),
        "totalFilesErrored": total("filesErrored"),
        "totalFilesSkipped": total("filesSkipped"),
    }


def sync_work(
    engine: Engine, names: Sequence[str], lease: HeldLease, *, git_pull: bool = False
) -> Work:
    """Sync ``names`` one after the other under ``lease`` (each pulled first with ``git_pull``),
    reporting progress file by file."""

    def work(control: JobControl) -> Mapping[str, Any]:
        reports: list[SyncReport] = []
        pulls: dict[str, Mapping[str, Any]] = {}
        for name in names:

            def progress(done: int, total: int, _path: str, name: str = name) -> None:
                control.report({"collection": name, "processed": done, "total": total})

            control.report({"collection": name, "processed": 0, "total": 0})
            if git_pull:
                pulls[name] = engine.collections.git_pull(name)
            reports.extend(engine.sync([name], progress=progress, lease=lease))
        value = sync_result(reports, pulls)
        return {"result": value, "typedResult": {"kind": "sync", "value": value}}

    return work


def add_text(result: dict[str, Any]) -> str:
    return (
        f"Added collection {result['collection']}; indexing runs as job {result['jobId']}. "
        "Poll it with gno_job_status."
    )


def sync_text(result: dict[str, Any]) -> str:
    return (
        f"Syncing {', '.join(result['collections'])} as job {result['jobId']}. "
        "Poll it with gno_job_status."
    )


def remove_text(result: dict[str, Any]) -> str:
    return (
        f"Removed collection {result['collection']} from the configuration "
        f"({result['documentsDeactivated']} documents now inactive). {result['note']}"
    )


def make_add_collection(runtime: Runtime) -> ToolHandler:
    engine = runtime.engine

    def call(args: AddCollectionInput, ctx: ToolCallContext) -> dict[str, Any]:
        # The cheap checks first, so a bad folder or name is reported as such even
        # while a job runs; add_collection repeats them under the lease.
        engine.collections.check_root(args.path, absolute=True)
        name = opt(args.name)
        if name is not None:
            normalize_name(name)
        exclude = opt(args.exclude)

        def begin(hold: contextlib.ExitStack) -> JobPlan:
            lease = hold.enter_context(
                engine.lease(should_stop=lambda: ctx.cancellation.is_cancelled)
            )
            added = engine.collections.add(
                args.path,
                name=name,
                pattern=opt(args.pattern),
                include=seq(args.include),
                exclude=None if exclude is None else tuple(exclude),
                lease=lease,
            )
            work = sync_work(engine, [added.name], lease, git_pull=args.gitPull)
            return JobPlan(work=work, collections=(added.name,))

        ticket = runtime.jobs.start("add", begin)
        return {"jobId": ticket.job_id, "collection": ticket.collections[0], "status": "started"}

    return engine_tool(runtime, call, add_text, write=True)


def sync_targets(engine: Engine, collection: str | None) -> tuple[str, ...]:
    """The named collection, or every configured one (``NOT_FOUND`` when there are none)."""
    if collection is not None:
        return (engine.collection(collection).name,)
    names = tuple(c.name for c in engine.config.collections)
    if not names:
        raise GnoError("NOT_FOUND", "No collections to sync: add one with gno_add_collection")
    return names


def start_sync_job(
    runtime: Runtime,
    collection: str | None,
    *,
    should_stop: Callable[[], bool] = lambda: False,
    git_pull: bool = False,
) -> JobTicket:
    """Start a sync job of one collection (or all) holding the write lease throughout.

    Shared by ``gno_sync`` and the daemon's start-up sync, so the two can
    never overlap: both need the single job slot and the lease.
    """
    engine = runtime.engine
    sync_targets(engine, collection)

    def begin(hold: contextlib.ExitStack) -> JobPlan:
        lease = hold.enter_context(engine.lease(should_stop=should_stop))
        # Again under the lease: the configuration may have changed meanwhile.
        names = sync_targets(engine, collection)
        return JobPlan(work=sync_work(engine, names, lease, git_pull=git_pull), collections=names)

    return runtime.jobs.start("sync", begin)


def make_sync(runtime: Runtime) -> ToolHandler:
    def call(args: SyncInput, ctx: ToolCallContext) -> dict[str, Any]:
        refuse_update_cmd(args.runUpdateCmd)
        ticket = start_sync_job(
            runtime,
            opt(args.collection),
            should_stop=lambda: ctx.cancellation.is_cancelled,
            git_pull=args.gitPull,
        )
        return {
            "jobId": ticket.job_id,
            "collections": list(ticket.collections),
            "status": "started",
            "options": {"gitPull": args.gitPull, "runUpdateCmd": False},
        }

    return engine_tool(runtime, call, sync_text, write=True)


def make_remove_collection(runtime: Runtime) -> ToolHandler:
    engine = runtime.engine

    def call(args: RemoveCollectionInput, ctx: ToolCallContext) -> dict[str, Any]:
        with engine.lease(should_stop=lambda: ctx.cancellation.is_cancelled) as lease:
            removed = engine.collections.remove(args.collection, lease=lease)
        return {
            "removed": True,
            "collection": removed["collection"],
            "configUpdated": True,
            "indexedDataRetained": True,
            "documentsDeactivated": removed["documents"],
            "note": REMOVE_NOTE,
        }

    return engine_tool(runtime, call, remove_text, write=True)


ADD_COLLECTION: Final = write_tool(
    "gno_add_collection",
    AddCollectionInput,
    "mcp-add-collection-result",
    make_add_collection,
    content_class="metadata",
    annotations=APPEND_ONLY_WRITE,
    full=(
        "Register a folder on disk as a collection and index it in a background job; "
        "returns the job ID to poll."
    ),
)

SYNC: Final = write_tool(
    "gno_sync",
    SyncInput,
    "mcp-sync-result",
    make_sync,
    content_class="metadata",
    annotations=IDEMPOTENT_WRITE,
    full=(
        "Re-read files from disk into the keyword index as a background job (one collection or "
        "all); returns the job ID to poll with gno_job_status."
    ),
)

REMOVE_COLLECTION: Final = write_tool(
    "gno_remove_collection",
    RemoveCollectionInput,
    "mcp-remove-result",
    make_remove_collection,
    content_class="metadata",
    full=("Remove a collection from the configuration. Its indexed data stays in the index."),
)

TOOLS: Final = (
    ADD_COLLECTION,
    SYNC,
    REMOVE_COLLECTION,
)
