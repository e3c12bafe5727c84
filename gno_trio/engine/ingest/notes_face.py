"""``engine.notes``: the writers of notes: capture, folders, duplicates, refactors, tags."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from gno_trio.engine.ingest import pending
from gno_trio.engine.ingest.indexer import IndexingKernel
from gno_trio.engine.store.lease import HeldLease
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    from gno_trio.engine.ingest.capture_request import CaptureRequest

StopFn = Callable[[], bool]


class NotesFace:
    """Notes written into an opened index's collections, each indexed when it returns."""

    def __init__(self, kernel: IndexingKernel) -> None:
        self._kernel = kernel

    def capture(
        self,
        request: CaptureRequest,
        *,
        server_instance_id: str | None = None,
        lease_wait_seconds: float | None = None,
        now: datetime | None = None,
        lease: HeldLease | None = None,
    ) -> dict[str, Any]:
        """Create (or open, per the collision policy) one note and index it."""
        from gno_trio.engine.ingest import capture as capture_mod

        return capture_mod.capture(
            self._kernel,
            request,
            server_instance_id=server_instance_id,
            lease_wait_seconds=lease_wait_seconds,
            now=now,
            lease=lease,
        )

    def create_folder(
        self,
        collection: str,
        name: str,
        *,
        parent_path: str | None = None,
        should_stop: StopFn | None = None,
    ) -> dict[str, Any]:
        """Make one new folder in a collection, under an existing parent folder."""
        from gno_trio.engine.ingest import filing

        return filing.create_folder(
            self._kernel, collection, name, parent_path=parent_path, should_stop=should_stop
        )

    def duplicate(
        self,
        ref: str,
        *,
        folder_path: str | None = None,
        name: str | None = None,
        should_stop: StopFn | None = None,
    ) -> dict[str, Any]:
        """Copy a note's source file to a new name in its collection and index the copy."""
        from gno_trio.engine.ingest import filing

        with self._kernel.connection() as c:
            return filing.duplicate_note(
                self._kernel, c, ref, folder_path=folder_path, name=name, should_stop=should_stop
            )

    def refactor(
        self,
        operation: str,
        ref: str,
        *,
        name: str | None = None,
        folder_path: str | None = None,
        apply_digest: str | None = None,
        should_stop: StopFn | None = None,
    ) -> dict[str, Any]:
        """Preview (``apply_digest`` None) or apply a reference-safe rename or move.

        ``operation`` is ``rename`` (``name``) or ``move`` (``folder_path`` and
        an optional ``name``), within the note's own collection. A preview is
        ``file-refactor-preview@1.0`` and changes nothing; an apply recomputes
        the plan under the write lease, goes ahead only when its digest is
        ``apply_digest``, and answers ``file-refactor-apply-result@1.0``.
        """
        from gno_trio.engine.ingest import refactor_apply, refactor_plan

        if operation not in ("rename", "move"):
            raise GnoError("INVALID_INPUT", f"Unknown refactor operation: {operation}")
        with self._kernel.connection() as c:
            if apply_digest is None:
                return refactor_plan.plan_refactor(
                    c,
                    self._kernel.location.dirs,
                    self._kernel.collection,
                    operation,
                    ref,
                    name=name,
                    folder_path=folder_path,
                ).preview
            with self._kernel.writing(should_stop=should_stop) as held:
                plan = refactor_plan.plan_refactor(
                    c,
                    self._kernel.location.dirs,
                    self._kernel.collection,
                    operation,
                    ref,
                    name=name,
                    folder_path=folder_path,
                )
                refusal = refactor_apply.refused(plan, apply_digest)
                if refusal is not None:
                    return refusal
                # Killed half way, the apply leaves moved notes unindexed and staged
                # copies behind: the next open syncs the collection (see .pending).
                with pending.marked(self._kernel.location, plan.collection.name):
                    return refactor_apply.applied(
                        plan, apply_digest, lambda: self._converge(plan.collection.name, held)
                    )

    def _converge(self, collection: str, lease: HeldLease) -> None:
        """Re-sync one collection after a refactor; raises when the sync did not finish."""
        reports = self._kernel.sync([collection], lease=lease)
        problems = [
            error for report in reports for error in report.errors if error["relPath"] == "."
        ]
        if problems:
            raise GnoError("RUNTIME", str(problems[0]["message"]))

    def add_tag(
        self,
        ref: str,
        tag: str,
        *,
        should_stop: StopFn | None = None,
        lease: HeldLease | None = None,
    ) -> dict[str, Any]:
        """Tag one document (a Markdown note also in its frontmatter); idempotent."""
        return self._change_tag(ref, tag, add=True, should_stop=should_stop, lease=lease)

    def remove_tag(
        self,
        ref: str,
        tag: str,
        *,
        should_stop: StopFn | None = None,
        lease: HeldLease | None = None,
    ) -> dict[str, Any]:
        """Take one tag off a document (and out of a Markdown note's frontmatter)."""
        return self._change_tag(ref, tag, add=False, should_stop=should_stop, lease=lease)

    def _change_tag(
        self,
        ref: str,
        tag: str,
        *,
        add: bool,
        should_stop: StopFn | None,
        lease: HeldLease | None,
    ) -> dict[str, Any]:
        from gno_trio.engine.ingest import tagging

        with self._kernel.connection() as c:
            return tagging.change_tag(
                self._kernel, c, ref, tag, add=add, should_stop=should_stop, lease=lease
            )


__all__ = ["NotesFace"]
