"""Reading documents back: get, multi_get, ls, list_tags, status and peek."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.errors import GnoError
from tests.conftest import CORPUS, write_corpus

SchemaCheck = Callable[[str, Any], None]

NUMBERED = "".join(f"row {n}\n" for n in range(1, 11))  # 10 lines + a final newline
EXTRA = {
    "numbered.md": NUMBERED,
    "wide/emoji.md": "# Emoji\n\n" + "é🦊" * 50 + "\n",
    "other/notes.md": "---\ntags: [project, zeta/sub]\n---\nother notes\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    base = tmp_path_factory.mktemp("reads")
    notes = write_corpus(base / "notes", {**CORPUS, **EXTRA})
    archive = write_corpus(base / "archive", {"old.md": "---\ntags: [archive]\n---\nold\n"})
    opened = Engine.open(dirs=Dirs(base / "config", base / "data", base / "cache"))
    opened.collections.add(str(notes), name="notes")
    opened.collections.add(str(archive), name="archive")
    opened.sync()
    try:
        yield opened
    finally:
        opened.close()


def error_of(fn: Callable[[], Any]) -> GnoError:
    with pytest.raises(GnoError) as info:
        fn()
    return info.value


# ---------------------------------------------------------------------------
# get
# ---------------------------------------------------------------------------


def test_get_by_uri_path_and_docid(engine: Engine) -> None:
    by_path = engine.documents.get("notes/alpha.md")
    assert by_path["uri"] == "gno://notes/alpha.md"
    assert engine.documents.get("gno://notes/alpha.md")["docid"] == by_path["docid"]
    assert engine.documents.get("NOTES/alpha.md")["docid"] == by_path["docid"]
    assert engine.documents.get(by_path["docid"])["uri"] == by_path["uri"]
    assert (
        engine.documents.get(by_path["docid"][:7].upper())["uri"] == by_path["uri"]
    )  # 6 hex, any case
    assert (
        engine.documents.get("gno://notes/sub%20dir/my%20note%20%231%3F%25.md")["title"]
        == "Awkward Name"
    )
    assert engine.documents.get("notes/sub dir/my note #1?%.md")["title"] == "Awkward Name"


def test_get_whole_document_with_and_without_line_numbers(engine: Engine) -> None:
    plain = engine.documents.get("notes/numbered.md", line_numbers=False)
    assert plain["content"] == NUMBERED
    assert plain["totalLines"] == 11  # split on "\n": the final newline ends an empty line
    assert "returnedLines" not in plain
    numbered = engine.documents.get("notes/numbered.md")
    assert numbered["content"].splitlines()[:2] == ["1: row 1", "2: row 2"]


@pytest.mark.parametrize(
    ("from_line", "line_count", "content", "returned"),
    [
        (3, 2, "3: row 3\n4: row 4", {"start": 3, "end": 4}),
        (10, 5, "10: row 10\n11: ", {"start": 10, "end": 11}),
        (None, 1, "1: row 1", {"start": 1, "end": 1}),
        (9, None, "9: row 9\n10: row 10\n11: ", {"start": 9, "end": 11}),
    ],
)
def test_get_line_ranges(
    engine: Engine,
    schema_check: SchemaCheck,
    from_line: int | None,
    line_count: int | None,
    content: str,
    returned: dict[str, int],
) -> None:
    result = engine.documents.get("notes/numbered.md", from_line=from_line, line_count=line_count)
    assert result["content"] == content
    assert result["returnedLines"] == returned
    assert result["totalLines"] == 11
    schema_check("get", result)


def test_get_beyond_eof_is_empty_without_range(engine: Engine, schema_check: SchemaCheck) -> None:
    result = engine.documents.get("notes/numbered.md", from_line=50, line_count=3)
    assert result["content"] == ""
    assert "returnedLines" not in result
    assert result["totalLines"] == 11
    schema_check("get", result)


def test_get_output_shape(engine: Engine, schema_check: SchemaCheck) -> None:
    result = engine.documents.get("notes/alpha.md")
    schema_check("get", result)
    assert result["title"] == "Alpha Planning"
    assert result["tags"] == ["planning", "project", "roadmap"]
    assert result["source"]["relPath"] == "alpha.md"
    assert result["source"]["absPath"].endswith("/notes/alpha.md")
    assert result["capabilities"]["editable"] is True
    assert result["conversion"]["converterId"] == "native/markdown"
    code = engine.documents.get("notes/code/hello.py")
    schema_check("get", code)
    assert code["source"]["mime"] == "text/x-python"


@pytest.mark.parametrize(
    ("options", "field"),
    [({"from_line": 0}, "fromLine"), ({"line_count": 0}, "lineCount")],
)
def test_get_rejects_bad_ranges(engine: Engine, options: dict[str, int], field: str) -> None:
    error = error_of(lambda: engine.documents.get("notes/alpha.md", **options))  # type: ignore[arg-type]
    assert error.code == "INVALID_INPUT" and field in error.message


@pytest.mark.parametrize(
    "ref",
    [
        "",
        "   ",
        "alpha.md",
        "#xyz123",
        "#12345",
        "gno://",
        "gno://notes",
        "gno://notes/",
        "gno://notes/a%ZZ%FF.md",
        "gno://notes/../alpha.md",
        "http://notes/alpha.md",
        "notes/../alpha.md",
        "notes//alpha.md",
        "notes/alpha\x00.md",
    ],
)
def test_malformed_refs_are_invalid_input(engine: Engine, ref: str) -> None:
    assert error_of(lambda: engine.documents.get(ref)).code == "INVALID_INPUT"


@pytest.mark.parametrize(
    "ref", ["notes/missing.md", "gno://notes/missing.md", "#00000000", "nope/alpha.md"]
)
def test_unknown_refs_are_not_found(engine: Engine, ref: str) -> None:
    error = error_of(lambda: engine.documents.get(ref))
    assert error.code == "NOT_FOUND"
    assert ref in error.message


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=60))
def test_any_ref_resolves_or_fails_with_a_stable_code(engine: Engine, ref: str) -> None:
    try:
        result = engine.documents.get(ref)
    except GnoError as error:
        assert error.code in {"INVALID_INPUT", "NOT_FOUND"}
    else:
        assert result["uri"].startswith("gno://")


# ---------------------------------------------------------------------------
# multi_get
# ---------------------------------------------------------------------------


def test_multi_get_by_refs_reports_each_skip(engine: Engine, schema_check: SchemaCheck) -> None:
    alpha = engine.documents.get("notes/alpha.md")
    result = engine.documents.multi_get(
        refs=[alpha["docid"], "gno://notes/beta.md", "notes/missing.md", "not a ref"]
    )
    schema_check("multi-get", result)
    assert [d["uri"] for d in result["documents"]] == [alpha["uri"], "gno://notes/beta.md"]
    assert result["skipped"] == [
        {"ref": "notes/missing.md", "reason": "not_found"},
        {"ref": "not a ref", "reason": "invalid_ref"},
    ]
    assert result["meta"] == {
        "requested": 4,
        "returned": 2,
        "skipped": 2,
        "maxBytes": 10_240,
        "maxTotalBytes": 1024 * 1024,
    }
    assert result["documents"][0]["content"].startswith("1: ---")


def test_multi_get_by_glob(engine: Engine, schema_check: SchemaCheck) -> None:
    result = engine.documents.multi_get(pattern="notes/*.md", line_numbers=False)
    schema_check("multi-get", result)
    uris = [d["uri"] for d in result["documents"]]
    assert "gno://notes/alpha.md" in uris and "gno://archive/old.md" not in uris
    assert "gno://notes/plain.txt" not in uris
    by_uri = engine.documents.multi_get(pattern="gno://notes/sub*/*")
    assert [d["uri"] for d in by_uri["documents"]] == [
        "gno://notes/sub%20dir/my%20note%20%231%3F%25.md"
    ]
    assert engine.documents.multi_get(pattern="*.nothing")["documents"] == []


def test_multi_get_truncates_to_max_bytes_on_a_character_boundary(
    engine: Engine, schema_check: SchemaCheck
) -> None:
    whole = engine.documents.multi_get(refs=["notes/wide/emoji.md"], line_numbers=False)
    (doc,) = whole["documents"]
    assert "truncated" not in doc
    for limit in range(8, 40):
        cut = engine.documents.multi_get(
            refs=["notes/wide/emoji.md"], max_bytes=limit, line_numbers=False
        )
        schema_check("multi-get", cut)
        (part,) = cut["documents"]
        assert part["truncated"] is True
        raw = part["content"].encode("utf-8")
        assert len(raw) <= limit and len(raw) > limit - 4
        assert doc["content"].startswith(part["content"])
        assert part["totalLines"] == doc["totalLines"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"refs": []},
        {"refs": ["notes/alpha.md"], "pattern": "*"},
        {"pattern": "  "},
        {"refs": ["notes/alpha.md"], "max_bytes": 0},
    ],
)
def test_multi_get_rejects_bad_requests(engine: Engine, kwargs: dict[str, Any]) -> None:
    assert error_of(lambda: engine.documents.multi_get(**kwargs)).code == "INVALID_INPUT"


# ---------------------------------------------------------------------------
# ls and tags
# ---------------------------------------------------------------------------


def test_ls_filters_and_pages(engine: Engine) -> None:
    every = engine.documents.ls()
    assert every["meta"]["total"] == len(every["documents"]) == 11
    notes = engine.documents.ls(collection="Notes")
    assert {d["collection"] for d in notes["documents"]} == {"notes"}
    under = engine.documents.ls(collection="notes", prefix="wide/")
    assert [d["relPath"] for d in under["documents"]] == ["wide/emoji.md"]
    page = engine.documents.ls(collection="notes", limit=3, offset=2)
    assert [d["uri"] for d in page["documents"]] == [d["uri"] for d in notes["documents"][2:5]]
    assert page["meta"] == {"total": 10, "returned": 3, "offset": 2}


def test_ls_rejects_unknown_collection_and_bad_paging(engine: Engine) -> None:
    assert error_of(lambda: engine.documents.ls(collection="nope")).code == "NOT_FOUND"
    assert error_of(lambda: engine.documents.ls(limit=0)).code == "INVALID_INPUT"
    assert error_of(lambda: engine.documents.ls(offset=-1)).code == "INVALID_INPUT"


def test_list_tags(engine: Engine, schema_check: SchemaCheck) -> None:
    result = engine.documents.tags()
    schema_check("tags-list", result)
    counts = {t["tag"]: t["count"] for t in result["tags"]}
    assert counts == {
        "project": 2,
        "roadmap": 2,
        "planning": 1,
        "zeta/sub": 1,
        "archive": 1,
    }
    assert [t["tag"] for t in result["tags"]][:2] == ["project", "roadmap"]  # by count
    assert result["meta"] == {"totalTags": 5}
    scoped = engine.documents.tags(collection="ARCHIVE")
    schema_check("tags-list", scoped)
    assert scoped == {
        "tags": [{"tag": "archive", "count": 1}],
        "meta": {"totalTags": 1, "collection": "archive"},
    }
    prefixed = engine.documents.tags(prefix="Z")
    assert [t["tag"] for t in prefixed["tags"]] == ["zeta/sub"]
    assert error_of(lambda: engine.documents.tags(collection="nope")).code == "NOT_FOUND"


# ---------------------------------------------------------------------------
# status and peek
# ---------------------------------------------------------------------------


def test_status_reports_each_collection(engine: Engine) -> None:
    status = engine.index.status()
    assert status["indexName"] == "default"
    assert status["dbPath"].endswith("index-default.sqlite")
    assert [c["name"] for c in status["collections"]] == ["archive", "notes"]
    counts = {c["name"]: c["documentCount"] for c in status["collections"]}
    assert counts == {"archive": 1, "notes": 10}
    assert status["totalDocuments"] == 11
    assert status["capabilities"]["bm25"] is True and status["capabilities"]["vector"] is False
    for collection in status["collections"]:
        assert collection["lastSyncedAt"] is not None
        assert collection["errorCount"] == 0 and collection["errors"] == []
        assert Path(collection["path"]).is_dir()


def test_peek_is_a_cheap_snapshot(engine: Engine) -> None:
    peek = engine.index.peek()
    assert peek["initialized"] is True
    assert peek["counts"]["collections"] == 2 and peek["counts"]["documents"] == 11
    assert len(peek["recentDocuments"]) == 5
