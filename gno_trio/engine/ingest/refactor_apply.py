"""Applying a rename or move plan: all files or none, then the index.

The answer is ``file-refactor-apply-result@1.0``.

Apply recomputes the plan under the write lease and goes ahead only when its
digest is the one the caller previewed; a different digest means something
changed and the answer is ``stale_plan`` with nothing touched. The files are
then changed as one unit:

1. every new text is staged in a temporary file beside its destination;
2. each file about to be replaced is read once more and compared with the
   plan's fingerprint (a late edit makes the answer ``stale_plan``);
3. the note's new path is linked into place exclusively (never over an
   existing file), each rewritten note is replaced atomically with a hard
   link kept to its old bytes, and the old path is removed;
4. if any step fails, every completed step is undone from those links and
   the answer is ``failed_rolled_back``; the old state is back on disk.

Only after the files are committed is the collection re-synced; a failed
sync leaves the committed files as they are and answers
``applied_with_sync_pending`` with the command that finishes the job.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from gno_trio.engine.ingest.refactor_plan import Plan, fingerprint, read_note
from gno_trio.engine.store import atomic
from gno_trio.errors import GnoError

SCHEMA_VERSION: Final = "1.0"
SYNC_INSTRUCTION: Final = "Run `gno-trio update` to bring the index in line with the moved files"


def _result(
    plan: Plan,
    digest: str,
    status: str,
    *,
    filesystem: str,
    index: str,
    reason: str | None = None,
    instruction: str | None = None,
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "status": status,
        "planDigest": digest,
        "operation": plan.operation,
        "source": dict(plan.preview["source"]),
        "target": dict(plan.preview["target"]),
    }
    if reason is not None:
        result["reasonCode"] = reason
    result["filesystem"] = {"state": filesystem}
    convergence: dict[str, Any] = {"state": index}
    if instruction is not None:
        convergence["recoveryInstruction"] = instruction
    result["indexConvergence"] = convergence
    return result


def refused(plan: Plan, digest: str) -> dict[str, Any] | None:
    """The answer for a plan that must not be applied as asked, or None to go ahead."""
    if not plan.can_apply:
        blocking = plan.blocking
        status = "conflict" if "occupied_target" in blocking else "unsupported"
        reason = "occupied_target" if status == "conflict" else blocking[0]
        return _result(
            plan, digest, status, filesystem="unchanged", index="not_attempted", reason=reason
        )
    if plan.digest != digest:
        return _result(
            plan,
            digest,
            "stale_plan",
            filesystem="unchanged",
            index="not_attempted",
            reason="stale_plan",
        )
    return None


def _keep_old(path: Path) -> Path:
    """A second name for ``path``'s current bytes, to restore them from.

    The name is a temporary one of the atomic-write helper, so a crash
    leaves nothing behind that the next write in that folder does not sweep.
    """
    backup = atomic.temporary_name(path.parent)
    try:
        os.link(path, backup)
    except OSError:
        # No hard links here: keep a copy instead (still restored atomically).
        backup.write_bytes(path.read_bytes())
    return backup


class _Commit:
    """The filesystem steps of one apply, each undoable until :meth:`finish`."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self.stack = stack
        self.created: Path | None = None
        self.replaced: list[tuple[Path, Path]] = []

    def stage(self, folder: Path, text: str, mode: int | None) -> Path:
        temp = self.stack.enter_context(atomic.staged(folder, text, clean=False))
        if mode is not None:
            os.chmod(temp, mode)
        return temp

    def rollback(self) -> bool:
        """Undo every completed step; False when something could not be restored."""
        clean = True
        for path, backup in reversed(self.replaced):
            try:
                os.replace(backup, path)
            except OSError:
                clean = False
                continue
            # Renaming a name onto another link of the same file changes nothing and
            # keeps both names (POSIX); the backup name then still has to go.
            with contextlib.suppress(FileNotFoundError):
                os.unlink(backup)
        if self.created is not None:
            try:
                os.unlink(self.created)
            except FileNotFoundError:
                pass
            except OSError:
                clean = False
        return clean

    def finish(self) -> None:
        for _, backup in self.replaced:
            with contextlib.suppress(OSError):
                os.unlink(backup)


def _mode(path: Path) -> int | None:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None


def commit_files(plan: Plan, *, fail_after: Callable[[str], None] | None = None) -> str:
    """Carry out the plan's file changes as one unit.

    Returns ``"committed"``; raises :class:`StalePlan` when a file changed
    since planning (nothing changed), or :class:`CommitFailed` with the
    filesystem state after an undo (``rolled_back`` or ``recovery_required``).
    ``fail_after`` is a test hook, called after each step with its name.
    """
    source_uri = plan.source_uri
    source_path = plan.paths[source_uri]
    target_path = plan.root / plan.target_rel
    with contextlib.ExitStack() as stack:
        return _commit(plan, _Commit(stack), source_uri, source_path, target_path, fail_after)


def _commit(
    plan: Plan,
    steps: _Commit,
    source_uri: str,
    source_path: Path,
    target_path: Path,
    fail_after: Callable[[str], None] | None,
) -> str:
    try:
        for uri, path in plan.paths.items():
            if uri in plan.rewritten or uri == source_uri:
                current = read_note(path, uri)
                if fingerprint(current) != fingerprint(plan.texts[uri]):
                    raise StalePlan(uri)
        source_text = plan.rewritten.get(source_uri, plan.texts[source_uri])
        # Leftovers of an earlier crash go first, once per folder: everything
        # staged from here on belongs to this commit.
        for folder in {target_path.parent, *(p.parent for p in plan.paths.values())}:
            atomic.sweep(folder)
        # Everything is staged before anything visible changes.
        staged = {
            uri: steps.stage(plan.paths[uri].parent, text, _mode(plan.paths[uri]))
            for uri, text in plan.rewritten.items()
            if uri != source_uri
        }
        moved = steps.stage(target_path.parent, source_text, _mode(source_path))
        try:
            os.link(moved, target_path)
        except FileExistsError:
            raise StalePlan(plan.target_rel) from None
        except OSError:
            if not atomic.create_new(target_path, source_text):
                raise StalePlan(plan.target_rel) from None
        steps.created = target_path
        if fail_after:
            fail_after("target")
        for uri, temp in staged.items():
            path = plan.paths[uri]
            backup = _keep_old(path)
            steps.replaced.append((path, backup))
            os.replace(temp, path)
            if fail_after:
                fail_after(uri)
        backup = _keep_old(source_path)
        steps.replaced.append((source_path, backup))
        os.unlink(source_path)
        if fail_after:
            fail_after("source")
    except StalePlan:
        steps.rollback()
        raise
    except (OSError, GnoError) as exc:
        clean = steps.rollback()
        raise CommitFailed("rolled_back" if clean else "recovery_required") from exc
    steps.finish()
    return "committed"


class StalePlan(Exception):
    """A file changed between planning and committing; nothing was changed."""


class CommitFailed(Exception):
    """The commit failed and was undone (``state``: rolled_back or recovery_required)."""

    def __init__(self, state: str) -> None:
        super().__init__(state)
        self.state = state


def applied(plan: Plan, digest: str, sync: Callable[[], None]) -> dict[str, Any]:
    """Commit the files, then re-sync the collection; the terminal apply result."""
    try:
        commit_files(plan)
    except StalePlan:
        return _result(
            plan,
            digest,
            "stale_plan",
            filesystem="unchanged",
            index="not_attempted",
            reason="stale_plan",
        )
    except CommitFailed as failed:
        reason = (
            "filesystem_commit_failed"
            if failed.state == "rolled_back"
            else "rollback_recovery_required"
        )
        return _result(
            plan,
            digest,
            "failed_rolled_back",
            filesystem=failed.state,
            index="not_attempted",
            reason=reason,
        )
    try:
        sync()
    except Exception:  # the files are committed; the index catches up later
        return _result(
            plan,
            digest,
            "applied_with_sync_pending",
            filesystem="committed",
            index="pending",
            reason="sync_pending",
            instruction=SYNC_INSTRUCTION,
        )
    return _result(plan, digest, "applied", filesystem="committed", index="converged")


__all__ = ["CommitFailed", "StalePlan", "applied", "commit_files", "refused"]
