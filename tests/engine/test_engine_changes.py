"""The metadata-only change journal and its cursor-paged ``changes`` feed."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gno_trio.engine import Engine, journal
from gno_trio.engine.store.journal import SqliteJournal
from gno_trio.errors import GnoError
from tests.conftest import bump_mtime, write_corpus

SchemaCheck = Callable[[str, Any], None]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_corpus(
        tmp_path / "root",
        {
            "a.md": "---\ndate: 2024-01-01\n---\n# Alpha\n\nsecret-body-word-1 [[beta]]\n",
            "b.md": "# Beta\n\nsecret-body-word-2\n",
        },
    )


@pytest.fixture
def journaled(engine: Engine, root: Path) -> Engine:
    """Two creates, then an update, a rename, an inactivate and a reactivate."""
    engine.collections.add(str(root), name="notes")
    engine.sync()
    (root / "a.md").write_text(
        "---\ndate: 2024-02-02\n---\n# Alpha\n\n## Added Section\n\n## Added Section\n\n"
        "secret-body-word-3 [[gamma]]\n",
        "utf-8",
    )
    bump_mtime(root / "a.md")
    engine.sync()
    (root / "b.md").rename(root / "b2.md")
    engine.sync()
    (root / "b2.md").unlink()
    engine.sync()
    (root / "b2.md").write_text("# Beta\n\nsecret-body-word-2\n", "utf-8")
    engine.sync()
    return engine


def all_changes(engine: Engine, **options: Any) -> list[dict[str, Any]]:
    return list(engine.documents.changes(limit=1000, **options)["changes"])


def test_each_kind_carries_before_and_after_snapshots(
    journaled: Engine, schema_check: SchemaCheck
) -> None:
    feed = journaled.documents.changes(limit=1000)
    schema_check("changes", feed)
    changes = feed["changes"]
    assert [c["kind"] for c in changes] == [
        "create",
        "create",
        "update",
        "rename",
        "inactivate",
        "reactivate",
    ]
    create, _, update, rename, inactivate, reactivate = changes
    assert create["previous"] is None and create["current"]["relPath"] == "a.md"
    assert create["current"]["uri"] == "gno://notes/a.md" and create["collection"] == "notes"
    assert update["previous"]["sourceHash"] != update["current"]["sourceHash"]
    assert update["current"]["docid"] == journaled.documents.get("notes/a.md")["docid"]
    assert (rename["previous"]["relPath"], rename["current"]["relPath"]) == ("b.md", "b2.md")
    assert rename["previous"]["docid"] == rename["current"]["docid"]
    assert inactivate["previous"]["active"] is True and inactivate["current"]["active"] is False
    assert reactivate["previous"]["active"] is False and reactivate["current"]["active"] is True
    assert all(c["observedAt"].endswith("Z") for c in changes)


def test_structure_delta_lists_what_changed(journaled: Engine) -> None:
    create, _, update, *_ = all_changes(journaled)
    assert create["structureDelta"]["headings"] == {"added": ["Alpha"], "removed": []}
    assert create["structureDelta"]["links"] == {"added": ["beta"], "removed": []}
    delta = update["structureDelta"]
    # A repeated heading is listed once: deltas are sets.
    assert delta["headings"] == {"added": ["Added Section"], "removed": []}
    assert delta["links"] == {"added": ["gamma"], "removed": ["beta"]}
    assert delta["dates"] == {
        "added": [],
        "removed": [],
        "changed": ["2024-01-01 -> 2024-02-02"],
    }
    assert delta["truncated"] is False


def test_feed_never_contains_document_bodies(journaled: Engine) -> None:
    text = json.dumps(journaled.documents.changes(limit=1000))
    assert "secret-body-word" not in text


def test_structure_delta_is_bounded(engine: Engine, tmp_path: Path) -> None:
    headings = "".join(f"# Heading {n:02d} {'x' * 300}\n\n" for n in range(40))
    root = write_corpus(tmp_path / "r", {"big.md": headings})
    engine.collections.add(str(root), name="notes")
    engine.sync()
    (change,) = all_changes(engine)
    added = change["structureDelta"]["headings"]["added"]
    assert len(added) == journal.MAX_DELTA_ITEMS
    assert all(len(item.encode()) <= journal.MAX_DELTA_ITEM_BYTES for item in added)
    assert change["structureDelta"]["truncated"] is True


def test_paging_with_next_cursor_visits_every_entry_once(
    engine: Engine, tmp_path: Path, schema_check: SchemaCheck
) -> None:
    root = write_corpus(tmp_path / "r", {f"n{i:02d}.md": f"note {i}\n" for i in range(23)})
    engine.collections.add(str(root), name="notes")
    engine.sync()
    expected = [c["id"] for c in all_changes(engine)]
    assert len(expected) == 23
    seen: list[str] = []
    page = engine.documents.changes(limit=5)
    pages = 1
    while True:
        schema_check("changes", page)
        seen.extend(c["id"] for c in page["changes"])
        if page["page"]["nextCursor"] is None:
            assert page["page"]["truncated"] is False
            break
        assert page["page"]["truncated"] is True
        page = engine.documents.changes(since=page["page"]["nextCursor"], limit=5)
        pages += 1
    assert seen == expected
    assert pages == 5


def test_latest_cursor_resumes_after_the_newest_entry(engine: Engine, root: Path) -> None:
    engine.collections.add(str(root), name="notes")
    engine.sync()
    latest = engine.documents.changes()["page"]["latestCursor"]
    assert engine.documents.changes(since=latest)["changes"] == []
    (root / "c.md").write_text("new\n", "utf-8")
    engine.sync()
    fresh = engine.documents.changes(since=latest)["changes"]
    assert [(c["kind"], c["current"]["relPath"]) for c in fresh] == [("create", "c.md")]
    # Every entry id is itself a cursor positioned on that entry.
    first = all_changes(engine)[0]["id"]
    assert len(engine.documents.changes(since=first, limit=1000)["changes"]) == 2


def test_since_accepts_an_iso_instant(journaled: Engine) -> None:
    assert len(all_changes(journaled, since="2000-01-01T00:00:00Z")) == 6
    future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    assert all_changes(journaled, since=future) == []


def test_collection_filter(engine: Engine, root: Path, tmp_path: Path) -> None:
    other = write_corpus(tmp_path / "other", {"x.md": "x\n"})
    engine.collections.add(str(root), name="notes")
    engine.collections.add(str(other), name="other")
    engine.sync()
    assert {c["collection"] for c in all_changes(engine, collection="OTHER")} == {"other"}
    assert len(all_changes(engine, collection="notes")) == 2


@pytest.mark.parametrize(
    "since",
    [
        "garbage",
        "gno-change-v1.",
        "gno-change-v1.!!!",
        "gno-change-v1.MQ==",  # not the form the feed issues
        "gno-change-v1.IDE",  # " 1"
        "gno-change-v1.LTE",  # "-1"
        "gno-change-v1.MDE",  # "01"
        "gno-change-v1." + "M" * 40,
        "gno-change-v2.MQ",
        "2024-13-45",
        "x" * 600,
    ],
)
def test_garbage_cursor_is_a_validation_error(journaled: Engine, since: str) -> None:
    with pytest.raises(GnoError) as info:
        journaled.documents.changes(since=since)
    assert info.value.code == "VALIDATION"


def test_cursor_ahead_of_the_index_is_a_validation_error(journaled: Engine) -> None:
    with pytest.raises(GnoError) as info:
        journaled.documents.changes(since=journal.encode_cursor(999))
    assert info.value.code == "VALIDATION" and "ahead" in info.value.message


@pytest.mark.parametrize("limit", [0, 1001, -5])
def test_limit_bounds(journaled: Engine, limit: int) -> None:
    with pytest.raises(GnoError) as info:
        journaled.documents.changes(limit=limit)
    assert info.value.code == "VALIDATION"


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=40) | st.builds(lambda s: journal.CURSOR_PREFIX + s, st.text(max_size=12)))
def test_decode_cursor_accepts_only_issued_cursors(text: str) -> None:
    try:
        value = journal.decode_cursor(text)
    except GnoError as error:
        assert error.code == "VALIDATION"
    else:
        assert journal.encode_cursor(value) == text


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(since=st.text(max_size=40))
def test_any_since_value_pages_or_is_a_validation_error(journaled: Engine, since: str) -> None:
    try:
        feed = journaled.documents.changes(since=since or None)
    except GnoError as error:
        assert error.code == "VALIDATION"
    else:
        assert feed["schemaVersion"] == "1.0"


@given(st.integers(min_value=0, max_value=2**62))
def test_cursor_round_trip(sequence: int) -> None:
    assert journal.decode_cursor(journal.encode_cursor(sequence)) == sequence


def test_pruned_history_marks_old_cursors_expired(
    journaled: Engine, schema_check: SchemaCheck, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = journaled.documents.changes()["page"]["earliestCursor"]
    monkeypatch.setattr(journal, "RETENTION_ENTRIES", 2)
    journaled.sync()  # applies retention
    expired = journaled.documents.changes(since=start)
    schema_check("changes", expired)
    page = expired["page"]
    assert page["cursorExpired"] is True and page["retentionTruncated"] is True
    assert expired["changes"] == [] and page["nextCursor"] is None
    assert expired["warnings"]
    restart = journaled.documents.changes(since=page["earliestCursor"])
    schema_check("changes", restart)
    assert restart["page"]["cursorExpired"] is False
    assert [c["kind"] for c in restart["changes"]] == ["inactivate", "reactivate"]


def test_history_pruned_entirely_still_expires_old_cursors(journaled: Engine) -> None:
    start = journaled.documents.changes()["page"]["earliestCursor"]
    latest = journaled.documents.changes()["page"]["latestCursor"]
    with journaled.pool.connection() as conn:
        conn.execute("BEGIN IMMEDIATE")
        journal.prune(SqliteJournal(conn), now=datetime.now(UTC) + timedelta(days=365))
        conn.execute("COMMIT")
    feed = journaled.documents.changes(since=start)
    assert feed["changes"] == []
    assert feed["page"]["cursorExpired"] is True
    assert feed["page"]["latestCursor"] == latest
    # The newest cursor lost nothing and is still good.
    assert journaled.documents.changes(since=latest)["page"]["cursorExpired"] is False
