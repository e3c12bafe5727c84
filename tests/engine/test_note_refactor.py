"""``gno_rename_note`` / ``gno_move_note``: reference-safe refactors, previewed then applied.

Engine tests build a small vault whose notes link to one another in every
form the index understands, then rename and move one note and read the files
back; failure paths (a stale plan, a taken name, an ambiguous link, a crash
half-way through the commit, a failed re-sync) must leave the vault exactly
as it was or say precisely what is left to do. The wire tests drive both
tools over stdio and check their answers against GNO's file-refactor schemas.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gno_trio.engine import Engine
from gno_trio.engine.ingest import refactor_apply
from tests.conftest import bump_mtime, error_code
from tests.support.lease_holder import lease_held_elsewhere
from tests.support.stdio_session import server_environment
from tests.support.tool_pipe import mcp_server, write_tree

VAULT = {
    "target.md": "# Target\n\nSee [other](sub/other.md) and [[index]].\n",
    "index.md": (
        "# Index\n\n- [[target]]\n- [[Target|alias]]\n- [t](target.md#x)\n- [t2](./target)\n"
        "- [[target.md]]\n- `[[target]]` stays, it is code\n"
    ),
    "sub/other.md": (
        "# Other\n\nBack to [t](../target.md), [[notes:target]] and [g](gno://notes/target.md).\n"
    ),
    "archive/old.md": "# Old\n\nNothing links here.\n",
    "code.py": "print('not a note')\n",
}


@pytest.fixture
def vault(engine: Engine, tmp_path: Path) -> Engine:
    write_tree(tmp_path / "vault" / "notes", VAULT)
    write_tree(tmp_path / "vault" / "other", {"x.md": "# X\n\nOver to [[notes:target]].\n"})
    engine.collections.add(str(tmp_path / "vault" / "notes"), name="notes")
    engine.collections.add(str(tmp_path / "vault" / "other"), name="other")
    engine.sync()
    return engine


def files(engine: Engine) -> dict[str, bytes]:
    found = {}
    for name in ("notes", "other"):
        root = Path(engine.collection(name).path)
        for path in sorted(root.rglob("*")):
            if path.is_file():
                found[f"{name}/{path.relative_to(root)}"] = path.read_bytes()
    return found


def text(engine: Engine, rel: str) -> str:
    collection, _, path = rel.partition("/")
    return (Path(engine.collection(collection).path) / path).read_text("utf-8")


def preview(engine: Engine, operation: str = "rename", **options: Any) -> dict[str, Any]:
    options.setdefault("name", "renamed" if operation == "rename" else None)
    return engine.notes.refactor(operation, "notes/target.md", **options)


def apply(
    engine: Engine, plan: dict[str, Any], operation: str = "rename", **options: Any
) -> dict[str, Any]:
    options.setdefault("name", "renamed" if operation == "rename" else None)
    return engine.notes.refactor(
        operation, "notes/target.md", apply_digest=plan["planDigest"], **options
    )


def test_a_preview_lists_every_reference_and_changes_nothing(vault: Engine) -> None:
    before = files(vault)
    plan = preview(vault)
    assert plan["canApply"] is True and plan["safety"]["blockingReasonCodes"] == []
    assert plan["target"] == {
        "uri": "gno://notes/renamed.md",
        "relPath": "renamed.md",
        "collection": "notes",
    }
    rewrites = {
        (r["documentRelPath"], r["originalDestination"], r["proposedDestination"])
        for r in plan["examinedReferences"]
    }
    assert rewrites == {
        ("index.md", "target", "renamed"),
        ("index.md", "Target", "renamed"),
        ("index.md", "target.md", "renamed.md"),
        ("index.md", "./target", "./renamed"),
        ("sub/other.md", "../target.md", "../renamed.md"),
        ("sub/other.md", "notes:target", "notes:renamed"),
        ("sub/other.md", "gno://notes/target.md", "gno://notes/renamed.md"),
        ("x.md", "notes:target", "notes:renamed"),
    }
    assert plan["safety"]["rewriteableCount"] == 9  # index.md holds target.md twice
    assert {doc["uri"] for doc in plan["affectedDocuments"]} == {
        "gno://notes/index.md",
        "gno://notes/sub/other.md",
        "gno://other/x.md",
    }
    assert preview(vault)["planDigest"] == plan["planDigest"]  # deterministic
    assert files(vault) == before


def test_apply_rewrites_exactly_the_destinations_and_reindexes(vault: Engine) -> None:
    plan = preview(vault)
    done = apply(vault, plan)
    assert done["status"] == "applied" and done["filesystem"] == {"state": "committed"}
    assert done["indexConvergence"] == {"state": "converged"}
    assert text(vault, "notes/index.md") == VAULT["index.md"].replace(
        "[[target]]\n", "[[renamed]]\n", 1
    ).replace("[[Target|", "[[renamed|").replace("(target.md#x)", "(renamed.md#x)").replace(
        "(./target)", "(./renamed)"
    ).replace("[[target.md]]", "[[renamed.md]]")
    assert "`[[target]]` stays" in text(vault, "notes/index.md")
    assert text(vault, "other/x.md") == "# X\n\nOver to [[notes:renamed]].\n"
    assert text(vault, "notes/renamed.md") == VAULT["target.md"]
    assert not (Path(vault.collection("notes").path) / "target.md").exists()
    assert vault.graph.backlinks("notes/renamed.md")["meta"]["totalBacklinks"] == 9
    assert error_code(lambda: vault.documents.get("notes/target.md")) == "NOT_FOUND"
    leftovers = [p.name for p in Path(vault.collection("notes").path).rglob(".gno-refactor-*")]
    assert leftovers == []


def test_a_move_follows_links_and_recalculates_its_own(vault: Engine) -> None:
    plan = preview(vault, "move", folder_path="archive")
    own = [r for r in plan["examinedReferences"] if r["documentRelPath"] == "target.md"]
    assert [(r["originalDestination"], r["proposedDestination"], r["reasonCode"]) for r in own] == [
        ("sub/other.md", "../sub/other.md", "relative_path_recalculated")
    ]
    stems = [r for r in plan["examinedReferences"] if r["originalDestination"] == "target"]
    assert {r["classification"] for r in stems} == {"unchanged"}  # a bare name keeps working
    assert apply(vault, plan, "move", folder_path="archive")["status"] == "applied"
    assert text(vault, "notes/archive/target.md") == VAULT["target.md"].replace(
        "(sub/other.md)", "(../sub/other.md)"
    )
    assert "(../archive/target.md)" in text(vault, "notes/sub/other.md")
    assert vault.graph.links("notes/archive/target.md")["links"][0]["resolvedUri"] == (
        "gno://notes/sub/other.md"
    )


def test_a_stale_plan_changes_nothing(vault: Engine) -> None:
    plan = preview(vault)
    index = Path(vault.collection("notes").path) / "index.md"
    index.write_text(VAULT["index.md"] + "- one more line\n", "utf-8")
    bump_mtime(index)
    vault.sync()
    before = files(vault)
    result = apply(vault, plan)
    assert (result["status"], result["reasonCode"]) == ("stale_plan", "stale_plan")
    assert result["filesystem"] == {"state": "unchanged"}
    assert files(vault) == before


@pytest.mark.parametrize(
    ("operation", "options", "status", "reason"),
    [
        ("rename", {"name": "index"}, "conflict", "occupied_target"),
        ("move", {"folder_path": "gno://other/"}, "unsupported", "cross_collection_unsupported"),
        ("rename", {"name": "target"}, "unsupported", "destination_unchanged"),
    ],
)
def test_blocked_plans_cannot_be_applied(
    vault: Engine, operation: str, options: dict[str, Any], status: str, reason: str
) -> None:
    plan = preview(vault, operation, **options)
    assert plan["canApply"] is False and reason in plan["safety"]["blockingReasonCodes"]
    before = files(vault)
    result = apply(vault, plan, operation, **options)
    assert (result["status"], result["reasonCode"]) == (status, reason)
    assert files(vault) == before


def test_a_name_shared_with_another_note_is_ambiguous(vault: Engine) -> None:
    plan = preview(vault, name="old")  # archive/old.md has that file name
    ambiguous = [r for r in plan["examinedReferences"] if r["classification"] == "ambiguous"]
    assert {r["originalDestination"] for r in ambiguous} == {
        "target",
        "Target",
        "target.md",
        "notes:target",
    }
    assert "duplicate_basename_ambiguity" in plan["safety"]["blockingReasonCodes"]


def test_only_editable_notes_are_refactored(vault: Engine) -> None:
    plan = vault.notes.refactor("rename", "notes/code.py", name="script")
    assert plan["safety"]["blockingReasonCodes"] == ["read_only_document"]


def test_bad_requests_fail_before_any_work(vault: Engine) -> None:
    assert error_code(lambda: preview(vault, name="a/b")) == "INVALID_PATH"
    assert error_code(lambda: preview(vault, "move", folder_path="nowhere")) == "PATH_NOT_FOUND"
    assert error_code(lambda: preview(vault, "move", folder_path="../up")) == "INVALID_PATH"
    assert error_code(lambda: vault.notes.refactor("rename", "notes/none.md", name="x")) == (
        "NOT_FOUND"
    )


def test_a_crash_half_way_is_rolled_back(vault: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = preview(vault)
    before = files(vault)
    real_replace = os.replace
    calls = {"n": 0}

    def failing_replace(src: Any, dst: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:  # the second rewritten note
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(refactor_apply.os, "replace", failing_replace)
    result = apply(vault, plan)
    monkeypatch.setattr(refactor_apply.os, "replace", real_replace)
    assert (result["status"], result["reasonCode"]) == (
        "failed_rolled_back",
        "filesystem_commit_failed",
    )
    assert result["filesystem"] == {"state": "rolled_back"}
    assert files(vault) == before


def test_a_failed_resync_keeps_the_committed_files(
    vault: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = preview(vault)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk went away")

    monkeypatch.setattr(type(vault.notes), "_converge", broken)
    result = apply(vault, plan)
    assert (result["status"], result["reasonCode"]) == ("applied_with_sync_pending", "sync_pending")
    assert result["indexConvergence"]["state"] == "pending"
    assert "gno-trio update" in result["indexConvergence"]["recoveryInstruction"]
    assert (Path(vault.collection("notes").path) / "renamed.md").is_file()


# ---------------------------------------------------------------------------
# Over the wire
# ---------------------------------------------------------------------------


async def test_rename_and_move_over_stdio(
    vault: Engine, schema_check: Callable[[str, Any], None]
) -> None:
    env = server_environment(vault.location.dirs, GNO_WRITE_LOCK_WAIT_MS="100")
    async with mcp_server(env) as pipe:
        listed = await pipe.list_tools()
        assert "gno_rename_note" not in listed and "gno_move_note" not in listed
        refused = await pipe.call(
            "tools/call",
            {
                "name": "gno_rename_note",
                "arguments": {"action": "preview", "ref": "x", "name": "y"},
            },
        )
        assert refused["error"]["code"] == -32602
    async with mcp_server(env, "--enable-write") as pipe:
        listed = await pipe.list_tools()
        for name in ("gno_rename_note", "gno_move_note"):
            assert listed[name]["annotations"]["destructiveHint"] is True
            assert listed[name]["inputSchema"]["additionalProperties"] is False
        ask = {"action": "preview", "ref": "notes/target.md", "name": "renamed"}
        plan = await pipe.tool("gno_rename_note", ask)
        schema_check("file-refactor-preview", plan)
        apply_args = {
            **ask,
            "action": "apply",
            "schemaVersion": "1.0",
            "planDigest": plan["planDigest"],
            "confirmation": "apply",
            "confirm": True,
        }
        for missing in ("schemaVersion", "planDigest", "confirmation", "confirm"):
            partial = {k: v for k, v in apply_args.items() if k != missing}
            assert await pipe.tool_error("gno_rename_note", partial) == "INVALID_INPUT", missing
        mixed = {**ask, "planDigest": plan["planDigest"]}
        assert await pipe.tool_error("gno_rename_note", mixed) == "INVALID_INPUT"
        assert (
            await pipe.tool_error("gno_rename_note", {**apply_args, "confirmation": "yes"})
            == "INVALID_INPUT"
        )
        with lease_held_elsewhere(vault.location.dirs.write_lock):
            assert await pipe.tool_error("gno_rename_note", apply_args) == "LOCKED"
        assert (Path(vault.collection("notes").path) / "target.md").is_file()
        done = await pipe.tool("gno_rename_note", apply_args)
        schema_check("file-refactor-apply-result", done)
        assert done["status"] == "applied"
        # replaying the apply finds no note at the old path any more
        assert await pipe.tool_error("gno_rename_note", apply_args) == "NOT_FOUND"
        move = {"action": "preview", "ref": "notes/renamed.md", "folderPath": "archive"}
        moved_plan = await pipe.tool("gno_move_note", move)
        schema_check("file-refactor-preview", moved_plan)
        moved = await pipe.tool(
            "gno_move_note",
            {
                **move,
                **{k: apply_args[k] for k in ("schemaVersion", "confirmation", "confirm")},
                "action": "apply",
                "planDigest": moved_plan["planDigest"],
            },
        )
        schema_check("file-refactor-apply-result", moved)
        assert moved["target"]["relPath"] == "archive/renamed.md"
        found = await pipe.tool("gno_search", {"query": "Target"})
        assert "gno://notes/archive/renamed.md" in {hit["uri"] for hit in found["results"]}
