"""``gno_job_status`` and ``gno_list_jobs``: reading the runtime's job manager.

Both only read in-memory records; they run through the same adapter as every
other tool, so a malformed call fails the same way.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from msgspec import Meta

from gno_trio.runtime import Runtime
from gno_trio.server.context import ToolCallContext
from gno_trio.server.registry import (
    read_tool,
)
from gno_trio.server.tooltypes import ToolHandler
from gno_trio.tools.common import engine_tool
from gno_trio.tools.fields import (
    ToolInput,
)

JOBS_DEFAULT_LIMIT: Final = 10


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


def job_status_text(status: dict[str, Any]) -> str:
    lines = [f"Job {status['jobId']} ({status['type']}): {status['status']}"]
    if status.get("collections"):
        lines.append("Collections: " + ", ".join(status["collections"]))
    lines.append(f"Started: {status['startedAt']}")
    if "completedAt" in status:
        lines.append(f"Finished: {status['completedAt']}")
    progress = status.get("progress")
    if status["status"] == "running" and progress is not None:
        lines.append(
            f"Progress: {progress['collection']} {progress['processed']}/{progress['total']} files"
        )
    result = status.get("result")
    if result is not None:
        lines.append(
            f"Files: {result['totalFilesProcessed']} seen, {result['totalFilesAdded']} added, "
            f"{result['totalFilesUpdated']} updated, {result['totalFilesErrored']} errors "
            f"({result['totalDurationMs']} ms)"
        )
    if "error" in status:
        lines.append(f"Error: {status['errorCode']}: {status['error']}")
    return "\n".join(lines)


def job_list_text(listing: dict[str, Any]) -> str:
    """One line per job: its status, id and type in columns a space always separates."""
    lines: list[str] = []
    for job in listing["active"]:
        lines.append(f"{'running':<9} {job['jobId']} {job['type']} since {job['startedAt']}")
    for job in listing["recent"]:
        lines.append(f"{job['status']:<9} {job['jobId']} {job['type']} at {job['completedAt']}")
    return "\n".join(lines) if lines else "No jobs in this server process"


def make_job_status(runtime: Runtime) -> ToolHandler:
    def call(args: JobStatusInput, ctx: ToolCallContext) -> dict[str, Any]:
        return {**runtime.jobs.status(args.jobId), "serverInstanceId": runtime.instance_id}

    return engine_tool(runtime, call, job_status_text)


def make_list_jobs(runtime: Runtime) -> ToolHandler:
    def call(args: ListJobsInput, ctx: ToolCallContext) -> dict[str, Any]:
        return runtime.jobs.listing(args.limit)

    return engine_tool(runtime, call, job_list_text)


JOB_STATUS: Final = read_tool(
    "gno_job_status",
    JobStatusInput,
    "mcp-job-status",
    make_job_status,
    content_class="metadata",
    full=(
        "Report the state of one background job (add, sync, embed or index) by job ID, "
        "including its result or error once it has finished."
    ),
)

LIST_JOBS: Final = read_tool(
    "gno_list_jobs",
    ListJobsInput,
    "mcp-job-list",
    make_list_jobs,
    content_class="metadata",
    full=("List the running job and the recently finished jobs with their status."),
)

TOOLS: Final = (
    JOB_STATUS,
    LIST_JOBS,
)
