"""``gno_capture`` and ``gno-trio capture``: what lands on disk, in the index and in the receipt.

Engine tests call :func:`gno_trio.engine.capture.capture` against a fresh
index per test; the MCP tests spawn ``python -m gno_trio mcp`` and speak raw
JSON-RPC to it; the CLI tests run ``gno_trio.cli.main`` in-process against
directories selected through the ``GNO_*_DIR`` variables.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import stat
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gno_trio import cli
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, SearchRequest
from gno_trio.engine.ingest.capture import capture
from gno_trio.engine.ingest.capture_compose import compose_markdown
from gno_trio.engine.ingest.capture_request import (
    CAPTURE_MAX_TEXT_BYTES,
    CaptureRequest,
    body_hash,
    check_content,
)
from gno_trio.engine.ingest.frontmatter import extract_meta
from gno_trio.engine.ingest.write_paths import SENSITIVE_SEGMENTS, path_segments
from gno_trio.engine.store import lease
from gno_trio.engine.store.atomic import create_new, is_temporary
from gno_trio.engine.store.lease import LOCKED_MESSAGE
from gno_trio.engine.uris import docid_for
from gno_trio.errors import GnoError
from gno_trio.runtime import Runtime
from gno_trio.server.schemas import output_schema as our_output_schema
from gno_trio.server.schemas import output_schema_errors
from gno_trio.tools.capture import CaptureInput, CaptureSource, make_capture
from tests.support.lease_holder import LeaseHolder, lease_held_elsewhere
from tests.support.stdio_session import StdioSession, open_mcp_server, server_environment
from tests.support.stepped_clock import SteppedClock
from tests.support.tool_results import handler_error_code, tool_error_code

NOW = datetime(2026, 3, 14, 9, 26, 53, tzinfo=UTC)
NOW_ISO = "2026-03-14T09:26:53.000Z"
INSTANCE = "5f0c7a52-9a0e-4f43-a6f5-0c1d2e3f4a5b"


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "existing.md").write_text("# Existing\n\nThe old pelican note.\n", encoding="utf-8")
    return root


@pytest.fixture
def eng(engine: Engine, notes: Path) -> Engine:
    """The engine with ``notes`` registered as collection ``notes`` and synced."""
    engine.collections.add(str(notes), name="Notes")
    engine.sync()
    return engine


def run(engine: Engine, **fields: Any) -> dict[str, Any]:
    fields.setdefault("collection", "notes")
    receipt = capture(engine, CaptureRequest(**fields), server_instance_id=INSTANCE, now=NOW)
    assert output_schema_errors(our_output_schema("mcp-capture-result"), receipt) == []
    return receipt


def fails(engine: Engine, code: str, **fields: Any) -> str:
    fields.setdefault("collection", "notes")
    with pytest.raises(GnoError) as caught:
        capture(engine, CaptureRequest(**fields), now=NOW)
    assert caught.value.code == code, caught.value
    return caught.value.message


def tree(root: Path) -> dict[str, bytes]:
    """Every file (and folder, as ``b'<dir>'``) under ``root``: for nothing-changed checks."""
    found: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        found[rel] = b"<dir>" if path.is_dir() else path.read_bytes()
    return found


def front_and_body(path: Path) -> tuple[dict[str, Any], str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    _, block, body = text.split("---\n", 2)
    data = yaml.safe_load(block)
    assert isinstance(data, dict)
    return data, body


def hits(engine: Engine, query: str) -> list[str]:
    found = engine.search.lexical(SearchRequest(query=query, limit=20))
    return [r["uri"] for r in found["results"]]


def hash_name(body: str) -> str:
    return "capture-" + hashlib.sha256(body.encode()).hexdigest()[:12]


def no_temp_files(root: Path) -> None:
    assert not [p for p in root.rglob("*") if is_temporary(p.name)]


# ---------------------------------------------------------------------------
# Where the note lands
# ---------------------------------------------------------------------------


def test_default_capture_goes_to_the_dated_inbox_named_by_content_hash(
    eng: Engine, notes: Path, schema_check: Callable[[str, Any], None]
) -> None:
    receipt = run(eng, content="\r\n\nRemember the walrus migration\r\n\n")
    body = "Remember the walrus migration\n"
    rel = f"inbox/2026-03-14/{hash_name(body)}.md"
    assert receipt["relPath"] == rel
    assert receipt["uri"] == f"gno://notes/{rel}"
    assert receipt["absPath"] == str(notes / rel)
    assert receipt["contentHash"] == hashlib.sha256(body.encode()).hexdigest()
    assert (receipt["created"], receipt["openedExisting"]) == (True, False)
    assert (receipt["createdWithSuffix"], receipt["overwritten"]) == (False, False)
    assert receipt["collisionPolicyResult"] == "created"
    assert receipt["source"] == {"kind": "direct", "capturedAt": NOW_ISO}
    assert receipt["sync"] == {"status": "completed"}
    assert receipt["embed"]["status"] == "not_requested"
    assert receipt["serverInstanceId"] == INSTANCE
    assert receipt["docid"] == docid_for((notes / rel).read_bytes())
    front, written_body = front_and_body(notes / rel)
    assert front == {"source": {"kind": "direct", "capturedAt": NOW_ISO}}
    assert written_body == body
    schema_check("mcp-capture-result", receipt)  # GNO's own published schema


def test_a_captured_note_is_searchable_and_readable_when_the_call_returns(eng: Engine) -> None:
    receipt = run(eng, content="The quetzal nests in cloud forests.", title="Birds")
    assert hits(eng, "quetzal") == [receipt["uri"]]
    document = eng.documents.get(receipt["uri"])
    assert document["docid"] == receipt["docid"]
    assert "cloud forests" in document["content"]


def test_collection_name_is_case_insensitive_and_must_exist(eng: Engine) -> None:
    assert run(eng, collection="  NOTES ", content="x y z")["collection"] == "notes"
    fails(eng, "NOT_FOUND", collection="nope", content="x")
    fails(eng, "INVALID_INPUT", collection="   ", content="x")


@pytest.mark.parametrize(
    ("given_path", "landed"),
    [
        ("projects/plan", "projects/plan.md"),
        ("projects/plan.md", "projects/plan.md"),
        ("./projects//plan.md", "projects/plan.md"),
        ("projects\\plan.md", "projects/plan.md"),
        ("journal/today.txt", "journal/today.txt"),
    ],
)
def test_explicit_path_is_used_and_gets_md_only_without_extension(
    eng: Engine, notes: Path, given_path: str, landed: str
) -> None:
    receipt = run(eng, content="Path rule check", path=given_path)
    assert receipt["relPath"] == landed
    assert (notes / landed).is_file()


@pytest.mark.parametrize(
    "bad_path",
    [
        "../outside.md",
        "a/../../outside.md",
        "a/..",
        "/etc/passwd.md",
        "C:\\notes\\x.md",
        "a\x00b.md",
        "line\nbreak.md",
        "",
        "  ",
        *(f"{segment}/secret.md" for segment in sorted(SENSITIVE_SEGMENTS)),
        "deep/.SSH/key.md",
        "vendor/Node_Modules/x.md",
        "build/out.md",  # excluded by the collection's default exclude list
        "picture.png",  # a type the collection never indexes
        ".gno/records/x.md",
        "a\uf7ffb.md",  # how the index spells a name's stray byte 0xFF
    ],
)
def test_unsafe_or_unindexable_paths_are_refused_and_nothing_is_written(
    eng: Engine, notes: Path, bad_path: str
) -> None:
    before = tree(notes)
    fails(eng, "INVALID_PATH", content="x", path=bad_path)
    assert tree(notes) == before


def test_sensitive_folder_path_is_refused(eng: Engine, notes: Path) -> None:
    before = tree(notes)
    fails(eng, "INVALID_PATH", content="x", folder_path="keys/.gnupg")
    fails(eng, "INVALID_PATH", content="x", folder_path="../up")
    assert tree(notes) == before


def test_a_symlinked_folder_is_never_followed(eng: Engine, notes: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (notes / "link").symlink_to(outside, target_is_directory=True)
    fails(eng, "INVALID_PATH", content="escape attempt", path="link/x.md")
    assert list(outside.iterdir()) == []


def test_title_names_the_file_and_folder_path_places_it(eng: Engine, notes: Path) -> None:
    assert run(eng, content="a", title="Q3 Planning: Goals & Risks!")["relPath"] == (
        "q3-planning-goals-risks.md"
    )
    assert run(eng, content="b", title="Café Über Notes", folder_path="areas/misc")["relPath"] == (
        "areas/misc/café-über-notes.md"
    )
    headed = run(eng, content="# Heading Wins\n\ntext", folder_path="areas")
    assert headed["relPath"] == "areas/heading-wins.md"
    nameless = run(eng, content="no heading here", folder_path="areas")
    assert nameless["relPath"] == "areas/" + hash_name("no heading here\n") + ".md"
    explicit = run(eng, content="c", title="Ignored For Name", path="chosen.md", folder_path="x")
    assert explicit["relPath"] == "chosen.md"
    assert front_and_body(notes / "chosen.md")[0]["title"] == "Ignored For Name"


# ---------------------------------------------------------------------------
# Collisions
# ---------------------------------------------------------------------------


def test_error_policy_refuses_an_existing_file_and_leaves_it_alone(
    eng: Engine, notes: Path
) -> None:
    before = tree(notes)
    message = fails(eng, "CONFLICT", content="new", path="existing.md", collision_policy="error")
    assert "existing.md" in message
    fails(eng, "CONFLICT", content="new", path="existing.md")  # error is the default here
    assert tree(notes) == before


def test_disk_only_and_index_only_files_both_count_as_taken(eng: Engine, notes: Path) -> None:
    (notes / "disk-only.md").write_text("not indexed yet\n", encoding="utf-8")
    fails(eng, "CONFLICT", content="new", path="disk-only.md")
    (notes / "existing.md").unlink()  # still in the index until the next sync
    fails(eng, "CONFLICT", content="new", path="existing.md")
    suffixed = run(eng, content="new", path="existing.md", collision_policy="create_with_suffix")
    assert suffixed["relPath"] == "existing-2.md"


def test_open_existing_returns_the_existing_note_without_writing(eng: Engine, notes: Path) -> None:
    before = tree(notes)
    indexed = eng.documents.get("gno://notes/existing.md")
    receipt = run(eng, content="ignored", path="existing", collision_policy="open_existing")
    assert tree(notes) == before
    assert receipt["relPath"] == "existing.md"
    assert receipt["docid"] == indexed["docid"]
    assert (receipt["created"], receipt["openedExisting"]) == (False, True)
    assert receipt["collisionPolicyResult"] == "opened_existing"
    assert receipt["contentHash"] == body_hash("# Existing\n\nThe old pelican note.\n")


def test_open_existing_indexes_a_disk_only_file(eng: Engine, notes: Path) -> None:
    (notes / "fresh.md").write_text("---\ntags: [kept]\n---\nibis sighting\n", encoding="utf-8")
    receipt = run(eng, content="x", path="fresh.md", collision_policy="open_existing")
    assert receipt["openedExisting"] and receipt["sync"] == {"status": "completed"}
    assert receipt["tags"] == ["kept"]
    assert hits(eng, "ibis") == ["gno://notes/fresh.md"]


def test_create_with_suffix_counts_up_from_two(eng: Engine, notes: Path) -> None:
    rels = [
        run(eng, content=f"draft {n}", title="Draft", collision_policy="create_with_suffix")
        for n in range(3)
    ]
    assert [r["relPath"] for r in rels] == ["draft.md", "draft-2.md", "draft-3.md"]
    assert [r["collisionPolicyResult"] for r in rels] == [
        "created",
        "created_with_suffix",
        "created_with_suffix",
    ]
    assert [r["createdWithSuffix"] for r in rels] == [False, True, True]
    assert "draft 2" in (notes / "draft-3.md").read_text(encoding="utf-8")


def test_legacy_overwrite_replaces_the_file_and_the_indexed_text(eng: Engine, notes: Path) -> None:
    receipt = run(eng, content="The new flamingo note.", path="existing.md", overwrite=True)
    assert receipt["overwritten"] and receipt["collisionPolicyResult"] == "overwritten"
    assert "flamingo" in (notes / "existing.md").read_text(encoding="utf-8")
    assert hits(eng, "flamingo") == ["gno://notes/existing.md"]
    assert hits(eng, "pelican") == []
    fresh = run(eng, content="brand new", path="nobody.md", overwrite=True)
    assert fresh["collisionPolicyResult"] == "created" and not fresh["overwritten"]


def test_same_text_twice_opens_the_inbox_note_but_a_title_clash_is_a_conflict(
    eng: Engine, notes: Path
) -> None:
    first = run(eng, content="Idempotent thought")
    again = run(eng, content="Idempotent thought\n\n")
    assert again["collisionPolicyResult"] == "opened_existing"
    assert (again["relPath"], again["docid"]) == (first["relPath"], first["docid"])
    assert len(list((notes / "inbox" / "2026-03-14").iterdir())) == 1
    run(eng, content="one", title="Same Title")
    fails(eng, "CONFLICT", content="two", title="Same Title")


def test_a_file_that_appears_before_the_link_is_never_replaced(tmp_path: Path) -> None:
    target = tmp_path / "race.md"
    target.write_text("someone else's text", encoding="utf-8")
    assert create_new(target, "mine") is False
    assert target.read_text(encoding="utf-8") == "someone else's text"
    no_temp_files(tmp_path)
    assert create_new(tmp_path / "free.md", "mine") is True
    assert (tmp_path / "free.md").read_text(encoding="utf-8") == "mine"


def test_without_hard_links_the_note_is_still_created_exclusively(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(*_args: Any, **_kwargs: Any) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    (tmp_path / "taken.md").write_text("keep me", encoding="utf-8")
    assert create_new(tmp_path / "taken.md", "mine") is False
    assert (tmp_path / "taken.md").read_text(encoding="utf-8") == "keep me"
    assert create_new(tmp_path / "new.md", "mine") is True
    assert (tmp_path / "new.md").read_text(encoding="utf-8") == "mine"
    no_temp_files(tmp_path)


def test_notes_get_ordinary_permissions_and_overwrite_keeps_them(eng: Engine, notes: Path) -> None:
    umask = os.umask(0o022)
    os.umask(umask)
    created = Path(run(eng, content="mode check", path="mode.md")["absPath"])
    assert stat.S_IMODE(created.stat().st_mode) == 0o666 & ~umask
    created.chmod(0o640)
    run(eng, content="mode check again", path="mode.md", overwrite=True)
    assert stat.S_IMODE(created.stat().st_mode) == 0o640


# ---------------------------------------------------------------------------
# Content limits
# ---------------------------------------------------------------------------


def test_content_limit_is_one_mebibyte_of_utf8() -> None:
    check_content("é" * (CAPTURE_MAX_TEXT_BYTES // 2))  # exactly 1 MiB as UTF-8
    with pytest.raises(GnoError) as caught:
        check_content("é" * (CAPTURE_MAX_TEXT_BYTES // 2) + "a")
    assert caught.value.code == "INVALID_INPUT" and "1048577" in caught.value.message
    check_content("tabs\tand\nnewlines\r\nand form\x0cfeeds are text")


@pytest.mark.parametrize("bad", ["nul \x00 byte", "bell \x07", "escape \x1b[31m", "lone \ud800"])
def test_binary_looking_content_is_refused_and_nothing_is_written(
    eng: Engine, notes: Path, bad: str
) -> None:
    before = tree(notes)
    fails(eng, "INVALID_INPUT", content=bad)
    assert tree(notes) == before


def test_oversized_content_is_refused_before_anything_is_written(eng: Engine, notes: Path) -> None:
    before = tree(notes)
    message = fails(eng, "INVALID_INPUT", content="x" * (CAPTURE_MAX_TEXT_BYTES + 1))
    assert "1048576" in message
    assert tree(notes) == before


def test_content_is_required_unless_a_preset_scaffolds(eng: Engine) -> None:
    fails(eng, "INVALID_INPUT")
    fails(eng, "INVALID_INPUT", content=" \n\n ")
    fails(eng, "INVALID_INPUT", preset_id="blank")  # blank has nothing to scaffold untitled
    fails(eng, "INVALID_INPUT", preset_id="meeting", path="x.txt")
    fails(eng, "INVALID_INPUT", preset_id="no-such-preset", content="x")
    fails(eng, "INVALID_INPUT", content="x", collision_policy="replace")


# ---------------------------------------------------------------------------
# Frontmatter and provenance
# ---------------------------------------------------------------------------


def test_frontmatter_carries_title_normalised_tags_and_the_source_block(
    eng: Engine, notes: Path
) -> None:
    source = {
        "kind": "web",
        "url": "https://example.com/a?b=c",
        "title": "An Article",
        "author": "Ada",
        "observedAt": "2024-03-01",
        "externalId": "item-7",
        "capturedAt": "2024-03-02T10:00:00+02:00",
    }
    receipt = run(
        eng,
        content="Body text about okapis.",
        title="Reading: okapis",
        tags=["Machine Learning", "#Zoo", "zoo", "projects/Alpha"],
        source=source,
    )
    front, body = front_and_body(Path(receipt["absPath"]))
    assert front["title"] == "Reading: okapis"
    assert front["tags"] == receipt["tags"] == ["machine-learning", "zoo", "projects/alpha"]
    assert (
        front["source"]
        == receipt["source"]
        == {
            "kind": "web",
            "capturedAt": "2024-03-02T10:00:00+02:00",
            "title": "An Article",
            "url": "https://example.com/a?b=c",
            "author": "Ada",
            "observedAt": "2024-03-01T00:00:00Z",
            "externalId": "item-7",
        }
    )
    assert body == "Body text about okapis.\n"
    listed = {t["tag"] for t in eng.documents.tags(collection="notes")["tags"]}
    assert {"machine-learning", "zoo", "projects/alpha"} <= listed


def test_generated_inbox_day_is_the_utc_date_of_the_capture_time(eng: Engine) -> None:
    receipt = run(eng, content="late night", source={"capturedAt": "2026-03-15T01:30:00+05:00"})
    assert receipt["relPath"].startswith("inbox/2026-03-14/")


@pytest.mark.parametrize(
    "source",
    [
        {"kind": "telepathy"},
        {"url": "not a url"},
        {"observedAt": "yesterday-ish"},
        {"capturedAt": "2024-13-01"},
        {"favourite": "x"},
        {"title": "bad\x00title"},
    ],
)
def test_bad_provenance_is_invalid_input(eng: Engine, source: dict[str, str]) -> None:
    fails(eng, "INVALID_INPUT", content="x", source=source)


def test_bad_tags_and_titles_are_invalid_input(eng: Engine) -> None:
    fails(eng, "INVALID_INPUT", content="x", tags=["!!!"])
    fails(eng, "INVALID_INPUT", content="x", tags=["t"] * 101)
    fails(eng, "INVALID_INPUT", content="x", title="bell\x07")


def test_a_multiline_title_cannot_break_out_of_the_frontmatter(eng: Engine, notes: Path) -> None:
    receipt = run(eng, content="safe body", title="Evil\n---\ninjected: true", path="evil.md")
    front, body = front_and_body(notes / "evil.md")
    assert front["title"] == "Evil --- injected: true"
    assert "injected" not in front and body == "safe body\n"
    assert receipt["relPath"] == "evil.md"


def test_content_with_its_own_frontmatter_is_merged_not_nested(eng: Engine, notes: Path) -> None:
    content = (
        "---\ntitle: From Content\nauthor: Grace\ntags: [old, Shared]\nsource: book\n---\nbody\n"
    )
    receipt = run(eng, content=content, path="merged.md", tags=["shared", "new"])
    text = (notes / "merged.md").read_text(encoding="utf-8")
    assert text.count("---\n") == 2
    front, body = front_and_body(notes / "merged.md")
    assert front["title"] == "From Content" and front["author"] == "Grace"
    assert front["tags"] == receipt["tags"] == ["old", "shared", "new"]
    assert front["source"] == {"kind": "direct", "capturedAt": NOW_ISO}
    assert body == "body\n" and receipt["contentHash"] == body_hash("body\n")


def test_presets_scaffold_a_note_or_add_their_missing_sections(eng: Engine, notes: Path) -> None:
    meeting = run(eng, preset_id="meeting", title="Weekly sync")
    front, body = front_and_body(Path(meeting["absPath"]))
    assert meeting["relPath"] == "weekly-sync.md"
    assert front["type"] == "meeting" and front["title"] == "Weekly sync"
    assert body.startswith("# Weekly sync\n") and "## Action items" in body
    untitled = run(eng, preset_id="decision-note", path="d.md")
    assert front_and_body(notes / "d.md")[1].startswith("# Decision\n")
    assert untitled["created"]
    run(eng, preset_id="blank", title="Just A Title")
    assert front_and_body(notes / "just-a-title.md")[1] == "# Just A Title\n"
    run(eng, content="# Plan\n\n## Goal\n\nShip it.", preset_id="project-note", path="p.md")
    body = front_and_body(notes / "p.md")[1]
    assert body.count("## Goal") == 1 and "## Next steps" in body and "Ship it." in body


def test_non_markdown_files_hold_only_the_text_and_tags_live_in_the_index(
    eng: Engine, notes: Path
) -> None:
    receipt = run(eng, content="plain log of axolotl care", path="care.txt", tags=["Pets"])
    assert (notes / "care.txt").read_text(encoding="utf-8") == "plain log of axolotl care\n"
    assert receipt["tags"] == ["pets"]
    assert {t["tag"] for t in eng.documents.tags(collection="notes")["tags"]} >= {"pets"}
    assert hits(eng, "axolotl") == ["gno://notes/care.txt"]


# ---------------------------------------------------------------------------
# Failure handling: lock, sync, disk
# ---------------------------------------------------------------------------


@pytest.fixture
def lease_holder(eng: Engine) -> Iterator[LeaseHolder]:
    with lease_held_elsewhere(eng.location.dirs.write_lock) as holder:
        yield holder


def test_capture_waits_for_the_lease_then_reports_locked(
    eng: Engine, notes: Path, lease_holder: LeaseHolder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GNO_WRITE_LOCK_WAIT_MS", "300")
    clock = SteppedClock()
    before = tree(notes)
    with monkeypatch.context() as patched, pytest.raises(GnoError) as caught:
        patched.setattr(lease, "time", clock)
        capture(eng, CaptureRequest(collection="notes", content="blocked"), now=NOW)
    # It queued for the lease the 300 ms it was given (one poll more at most), then gave up.
    assert clock.slept and 0.3 <= clock.now <= 0.3 + max(clock.slept)
    assert (caught.value.code, caught.value.message) == ("LOCKED", LOCKED_MESSAGE)
    assert tree(notes) == before
    lease_holder.release()  # the other writer finishes
    assert run(eng, content="blocked")["created"]


def test_a_failed_sync_is_reported_in_the_receipt_and_the_file_stays(
    eng: Engine, notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_sync(*_args: Any, **_kwargs: Any) -> Any:
        raise GnoError("RUNTIME", "index is on fire")

    monkeypatch.setattr(eng, "sync_paths", broken_sync)
    receipt = run(eng, content="unindexed heron", path="heron.md")
    assert receipt["sync"] == {"status": "failed", "error": "RUNTIME: index is on fire"}
    assert receipt["created"] and (notes / "heron.md").is_file()
    assert receipt["docid"] == docid_for((notes / "heron.md").read_bytes())


def test_a_failed_write_leaves_no_file_folder_or_temp_file(
    eng: Engine, notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(*_args: Any, **_kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    before = tree(notes)
    monkeypatch.setattr(os, "link", full_disk)
    message = fails(eng, "RUNTIME", content="x", path="new/deeper/note.md")
    assert "No space left" in message
    assert tree(notes) == before


def test_no_temp_files_survive_a_mix_of_successes_and_failures(eng: Engine, notes: Path) -> None:
    run(eng, content="one", title="T")
    run(eng, content="two", title="T", collision_policy="create_with_suffix")
    run(eng, content="three", path="existing.md", overwrite=True)
    fails(eng, "CONFLICT", content="four", title="T")
    no_temp_files(notes)


# ---------------------------------------------------------------------------
# Fuzzing the parsers of untrusted input
# ---------------------------------------------------------------------------

_printable = st.characters(codec="utf-8", exclude_characters="\x00")


@settings(max_examples=300, deadline=None)
@given(st.text(_printable, max_size=60))
def test_path_segments_are_always_safe_or_refused(raw: str) -> None:
    try:
        segments = path_segments(raw, "path")
    except GnoError as error:
        assert error.code == "INVALID_PATH"
        return
    for segment in segments:
        assert segment not in ("", ".", "..")
        assert "/" not in segment and "\\" not in segment
        assert segment.lower() not in SENSITIVE_SEGMENTS


_text = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cc"], include_characters="\n\t"),
    max_size=200,
)


@settings(max_examples=150, deadline=None)
@given(
    content=_text.filter(lambda t: t.strip()),
    title=_text,
    tags=st.lists(st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True), max_size=4),
)
def test_what_capture_writes_reads_back_as_what_it_reports(
    content: str, title: str, tags: list[str]
) -> None:
    source = {"kind": "direct", "capturedAt": NOW_ISO}
    clean_title = " ".join(title.split()) or None
    try:
        composed = compose_markdown(
            content, title=clean_title, tags=tags, source=source, preset_id=None
        )
    except GnoError as error:  # only when the content is all frontmatter, no body
        assert error.code == "INVALID_INPUT"
        return
    meta = extract_meta(composed.text, "note.md")
    assert meta.frontmatter_error is None
    assert meta.frontmatter["source"] == source
    if clean_title:
        assert meta.frontmatter["title"] == clean_title
    assert set(tags) <= set(meta.frontmatter.get("tags", []))
    assert body_hash(meta.body) == composed.content_hash


# ---------------------------------------------------------------------------
# MCP over stdio
# ---------------------------------------------------------------------------


@pytest.fixture
def server_env(tmp_path: Path, notes: Path) -> dict[str, str]:
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(notes), name="notes")
        engine.sync()
    return server_environment(dirs)


def mcp_server(env: dict[str, str], *flags: str) -> AbstractAsyncContextManager[StdioSession]:
    return open_mcp_server(env, *flags, client_name="capture-test")


async def test_mcp_capture_writes_indexes_and_returns_a_schema_valid_receipt(
    server_env: dict[str, str], notes: Path
) -> None:
    async with mcp_server(server_env, "--enable-write") as pipe:
        listed = (await pipe.call("tools/list"))["result"]["tools"]
        tools = {tool["name"]: tool for tool in listed}
        assert "gno_capture" in tools
        schema = tools["gno_capture"]["outputSchema"]
        assert tools["gno_capture"]["inputSchema"]["required"] == ["collection"]

        result = await pipe.tool(
            "gno_capture",
            {
                "collection": "Notes",
                "content": "The pangolin rolls into a ball.",
                "title": "Pangolin",
                "tags": ["Animals"],
                "source": {"kind": "chat", "author": "assistant"},
            },
        )
        assert not result.get("isError", False), result
        receipt = result["structuredContent"]
        assert output_schema_errors(schema, receipt) == []
        assert receipt["relPath"] == "pangolin.md" and receipt["tags"] == ["animals"]
        assert receipt["source"]["kind"] == "chat" and receipt["source"]["author"] == "assistant"
        assert str(uuid.UUID(receipt["serverInstanceId"])) == receipt["serverInstanceId"]
        assert receipt["uri"] in result["content"][0]["text"]
        assert (notes / "pangolin.md").is_file()

        found = await pipe.tool("gno_search", {"query": "pangolin"})
        assert [r["uri"] for r in found["structuredContent"]["results"]] == [receipt["uri"]]

        again = await pipe.tool(
            "gno_capture", {"collection": "notes", "content": "x", "title": "Pangolin"}
        )
        assert again["isError"] is True
        assert tool_error_code(again) == "CONFLICT"

        # Files other tools run, and gno's reserved folder at any depth, are refused.
        for path in (
            ".vscode/tasks.json",
            ".github/workflows/ci.yml",
            "sub/.gno/records/x.md",
            "ci/.gitlab-ci.yml",
        ):
            refused = await pipe.tool(
                "gno_capture", {"collection": "notes", "content": "{}", "path": path}
            )
            assert tool_error_code(refused) == "INVALID_PATH", (path, refused)
            assert not (notes / path).exists()
        assert not (notes / ".vscode").exists() and not (notes / "sub").exists()

        escape = await pipe.tool(
            "gno_capture", {"collection": "notes", "content": "x", "path": "../x"}
        )
        assert escape["isError"] is True
        assert tool_error_code(escape) == "INVALID_PATH"
        assert escape["content"][0]["text"].startswith("Error: INVALID_PATH: ")
        assert not (notes.parent / "x.md").exists()

        missing = await pipe.tool("gno_capture", {"collection": "nope", "content": "x"})
        assert tool_error_code(missing) == "NOT_FOUND"

        suffixed = await pipe.tool(
            "gno_capture",
            {
                "collection": "notes",
                "content": "y",
                "title": "Pangolin",
                "collisionPolicy": "create_with_suffix",
            },
        )
        assert suffixed["structuredContent"]["relPath"] == "pangolin-2.md"
        assert output_schema_errors(schema, suffixed["structuredContent"]) == []


async def test_mcp_capture_is_absent_and_uncallable_without_enable_write(
    server_env: dict[str, str], notes: Path
) -> None:
    before = tree(notes)
    async with mcp_server(server_env) as pipe:
        listed = (await pipe.call("tools/list"))["result"]["tools"]
        assert "gno_capture" not in {tool["name"] for tool in listed}
        answer = await pipe.call(
            "tools/call",
            {"name": "gno_capture", "arguments": {"collection": "notes", "content": "x"}},
        )
        assert answer["error"]["code"] == -32602
        # Known but switched off: the refusal says which flag would allow it.
        assert "--enable-write" in answer["error"]["message"]
        assert answer["error"]["data"]["enabledBy"] == ["--enable-write"]
        assert answer["error"]["data"]["writeTool"] is True
    assert tree(notes) == before


async def test_the_handler_itself_refuses_when_writes_are_disabled(
    eng: Engine, notes: Path
) -> None:
    before = tree(notes)
    disabled = make_capture(Runtime(engine=eng, write_enabled=False))
    refused = await disabled(CaptureInput(collection="notes", content="x"), cast(Any, None))
    assert refused.is_error and refused.structured is None
    assert handler_error_code(refused.text) == "WRITE_DISABLED"
    assert tree(notes) == before

    runtime = Runtime(engine=eng, write_enabled=True)
    enabled = make_capture(runtime)
    arguments = CaptureInput(
        collection="notes", content="mail about lemurs", source=CaptureSource(kind="email")
    )
    written = await enabled(arguments, cast(Any, None))
    assert not written.is_error and written.structured is not None
    assert written.structured["source"]["kind"] == "email"
    assert written.structured["serverInstanceId"] == runtime.instance_id
    assert hits(eng, "lemurs") == [written.structured["uri"]]


# ---------------------------------------------------------------------------
# The CLI
# ---------------------------------------------------------------------------


@pytest.fixture
def cli_env(server_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GNO_CONFIG_DIR", "GNO_DATA_DIR", "GNO_CACHE_DIR"):
        monkeypatch.setenv(name, server_env[name])


def test_cli_capture_from_arguments_prints_the_uri(
    cli_env: None, notes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(
        ["capture", "Kiwis", "cannot", "fly", "--title", "Kiwi", "--tag", "birds,nz", "--tag", "x"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "gno://notes/kiwi.md" in out
    front, body = front_and_body(notes / "kiwi.md")
    assert body == "Kiwis cannot fly\n" and front["tags"] == ["birds", "nz", "x"]


def test_cli_capture_from_stdin_with_json_receipt(
    cli_env: None,
    notes: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    schema_check: Callable[[str, Any], None],
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"From stdin: tapir\n")))
    code = cli.main(
        [
            "capture",
            "--stdin",
            "--collection",
            "NOTES",
            "--json",
            "--source-kind",
            "web",
            "--source-url",
            "https://example.org/tapir",
            "--source-date",
            "2025-01-02",
            "--source-id",
            "t-1",
        ]
    )
    assert code == 0
    receipt = json.loads(capsys.readouterr().out)
    schema_check("capture-receipt", receipt)
    assert receipt["relPath"].startswith("inbox/") and receipt["created"]
    assert receipt["source"]["observedAt"] == "2025-01-02T00:00:00Z"
    assert receipt["source"]["externalId"] == "t-1"
    assert "tapir" in Path(receipt["absPath"]).read_text(encoding="utf-8")


def test_cli_capture_exit_codes(
    cli_env: None, notes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["capture", "text", "--path", "../escape.md"]) == 1
    assert "INVALID_PATH" in capsys.readouterr().err
    assert cli.main(["capture", "text", "--path", "existing.md"]) == 2
    assert "CONFLICT" in capsys.readouterr().err
    assert cli.main(["capture", "a", "--stdin"]) == 1  # two content sources
    with pytest.raises(SystemExit) as usage:  # argparse rejects the choice itself
        cli.main(["capture", "text", "--collision-policy", "sideways"])
    assert usage.value.code == 1
    assert cli.main(["capture", "text", "--json", "-c", "missing"]) == 1
    assert json.loads(capsys.readouterr().out)["error"] == "NOT_FOUND"
    assert not (notes.parent / "escape.md").exists()


def test_cli_capture_from_a_file_and_a_missing_file(
    cli_env: None, notes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clip = tmp_path / "clip.md"
    clip.write_bytes(b"# Clipped page\r\n\r\nAbout the shoebill.\r\n")
    assert cli.main(["capture", "--file", str(clip), "--folder", "clips", "--json"]) == 0
    receipt = json.loads(capsys.readouterr().out)
    assert receipt["relPath"] == "clips/clipped-page.md"
    assert front_and_body(notes / "clips" / "clipped-page.md")[1] == (
        "# Clipped page\n\nAbout the shoebill.\n"
    )
    assert cli.main(["capture", "--file", str(tmp_path / "absent.md")]) == 1
    assert "PATH_NOT_FOUND" in capsys.readouterr().err
    clip.write_bytes(b"\xff\xfe not utf-8")
    assert cli.main(["capture", "--file", str(clip)]) == 1
    assert "not UTF-8" in capsys.readouterr().err
