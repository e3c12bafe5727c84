"""Memory through the engine API: fact files, the validator, recall, remember, the lease.

Every test gets its own index with a memory-managed collection ``facts`` and
an ordinary collection ``notes``. Results are checked the way a user would
see them: the file on disk, what recall returns, which error code comes back,
and that a refused call leaves no file behind. Every recall answer is
validated against the seed's ``memory-recall`` schema (read from the shared
reference folder next to the repository) and against the server's own copy.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, Scope, SearchRequest
from gno_trio.engine.facts import (
    FactRecord,
    RecordProblem,
    content_hash,
    normalize_scopes,
    normalize_text,
    parse_record,
    record_id_for,
    render,
    write_new_file,
)
from gno_trio.engine.ingest import memory_projection as projection
from gno_trio.engine.ingest.convert import convert
from gno_trio.engine.ingest.frontmatter import extract_meta
from gno_trio.engine.memory import receipts
from gno_trio.engine.memory import remember as remember_mod
from gno_trio.engine.memory.identity import Identity
from gno_trio.engine.memory.semantic import NOT_EMBEDDED
from gno_trio.engine.memory.service import MemoryService
from gno_trio.engine.store import lease as locks
from gno_trio.errors import GnoError
from tests.conftest import BACKENDS, choose_backend
from tests.support.lease_holder import lease_held_elsewhere
from tests.support.memory_schemas import valid_recall, valid_remember

REPO = Path(__file__).resolve().parents[2]
ME = Identity(caller="tester", session="session-1")
SCOPE = "project:alpha"
FACT = "The deploy window is Tuesday at 10:00 UTC."


# ---------------------------------------------------------------------------
# Fixtures and helpers
# ---------------------------------------------------------------------------


@pytest.fixture
def facts_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "facts"
    folder.mkdir()
    return folder


@pytest.fixture(params=BACKENDS)
def mem_engine(request: pytest.FixtureRequest, tmp_path: Path, facts_dir: Path) -> Iterator[Engine]:
    """Each memory test runs with either backend ranking documents (facts rank alike)."""
    choose_backend(tmp_path / "config", request.param)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "plan.md").write_text("# Plan\n\nThe deploy window is a note here.\n", "utf-8")
    dirs = Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")
    engine = Engine.open(dirs=dirs)
    engine.collections.add(str(facts_dir), name="facts", memory_managed=True)
    engine.collections.add(str(notes), name="notes")
    engine.sync()
    try:
        yield engine
    finally:
        engine.close()


@pytest.fixture
def svc(mem_engine: Engine) -> MemoryService:
    return MemoryService(mem_engine, lease_wait_seconds=0.2)


def files_under(folder: Path) -> list[str]:
    """Every file (hidden ones included) below ``folder``, relative and sorted."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def add(
    svc: MemoryService, text: str, scopes: list[str] | None = None, **kw: Any
) -> dict[str, Any]:
    result = svc.remember(
        text=text, collection="facts", scopes=scopes or [SCOPE], identity=ME, decision="add", **kw
    )
    assert result["outcome"] == "added", result
    return valid_remember(result)


def recall(
    svc: MemoryService, query: str, scopes: list[str] | None = None, **kw: Any
) -> dict[str, Any]:
    result = svc.recall(
        query=query, collection="facts", scopes=scopes or [SCOPE], identity=ME, **kw
    )
    return valid_recall(result)


def code_of(call: Callable[[], object]) -> str:
    with pytest.raises(GnoError) as caught:
        call()
    return caught.value.code


# ---------------------------------------------------------------------------
# Records: normalisation, hashing, rendering, validation
# ---------------------------------------------------------------------------


def test_normalisation_folds_unicode_forms_and_whitespace_into_one_hash() -> None:
    decomposed = "  Cafe\u0301 opens\t\n at   nine  "
    assert normalize_text(decomposed) == "Café opens at nine"
    assert content_hash(decomposed) == content_hash("Café opens at nine")
    expected = hashlib.sha256("Café opens at nine".encode()).hexdigest()
    assert content_hash(decomposed) == expected
    assert content_hash("Café opens at nine.") != expected


def test_scopes_are_trimmed_lowercased_deduplicated_and_checked() -> None:
    assert normalize_scopes([" Team:Web ", "team:web", "user@example.com", "a/b_c.d-e"]) == [
        "team:web",
        "user@example.com",
        "a/b_c.d-e",
    ]
    bad_inputs: list[Any] = [["-leading"], ["has space"], ["x" * 65], ["semi;colon"], "a-str", [3]]
    for bad in bad_inputs:
        assert code_of(partial(normalize_scopes, bad)) == "MEMORY_SCOPES_INVALID"
    assert code_of(lambda: normalize_scopes([f"s{i}" for i in range(9)])) == "MEMORY_SCOPES_INVALID"
    assert code_of(lambda: normalize_scopes([])) == "MEMORY_SCOPES_REQUIRED"
    assert code_of(lambda: normalize_scopes([" ", ""])) == "MEMORY_SCOPES_REQUIRED"
    assert normalize_scopes(["", "Kept"]) == ["kept"]
    assert len(normalize_scopes([f"s{i}" for i in range(8)] + ["S0"])) == 8


def a_record(text: str = FACT, **overrides: Any) -> FactRecord:
    normalized = normalize_text(text)
    digest = content_hash(normalized)
    created = "2025-01-02T03:04:05.678Z"
    fields: dict[str, Any] = {
        "record_id": record_id_for(digest, created, "tester", "session-1"),
        "text": normalized,
        "scopes": ("project:alpha",),
        "caller": "tester",
        "session": "session-1",
        "created_at": created,
        "content_hash": digest,
        "supersedes": (),
        "source": None,
    }
    fields.update(overrides)
    return FactRecord(**fields)


def read_back(file_text: str) -> FactRecord:
    """What indexing makes of a fact file: convert, split frontmatter, validate."""
    markdown = convert("facts/x.md", file_text.encode("utf-8")).markdown
    meta = extract_meta(markdown, "facts/x.md")
    return parse_record(meta.frontmatter, meta.body)


def test_record_id_is_mem_plus_16_hex_of_hash_time_caller_session() -> None:
    record = a_record()
    seed = f"{record.content_hash}\n{record.created_at}\ntester\nsession-1".encode()
    assert record.record_id == "mem-" + hashlib.sha256(seed).hexdigest()[:16]
    assert re.fullmatch(r"mem-[0-9a-f]{16}", record.record_id)


def test_rendered_fact_carries_memory_block_and_supersedes_edge() -> None:
    record = a_record(supersedes=("gno://facts/facts/2025-01-01/mem-0000000000000000.md",))
    text = render(record)
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["memory"] == {
        "recordId": record.record_id,
        "scopes": ["project:alpha"],
        "caller": "tester",
        "session": "session-1",
        "createdAt": record.created_at,
        "contentHash": record.content_hash,
    }
    assert front["relations"] == {"supersedes": list(record.supersedes)}
    assert text.endswith(f"---\n{FACT}\n")
    assert read_back(text) == record


identity_text = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
    min_size=1,
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(text=identity_text, caller=identity_text, session=identity_text, source=identity_text)
def test_any_cleaned_record_survives_the_trip_to_disk_and_back(
    text: str, caller: str, session: str, source: str
) -> None:
    """Whatever the service accepts must read back identical, or the stored fact would lie."""
    try:
        who = Identity(caller, session).checked()
    except GnoError:
        return
    if not normalize_text(text):
        return
    record = a_record(
        text, caller=who.caller, session=who.session, source=normalize_text(source) or None
    )
    assert read_back(render(record)) == record


VALID_FRONT = {
    "recordId": "mem-0123456789abcdef",
    "scopes": ["project:alpha"],
    "caller": "tester",
    "session": "s",
    "createdAt": "2025-01-02T03:04:05Z",
    "contentHash": content_hash("Body text."),
}

MALFORMED: dict[str, tuple[dict[str, Any], str]] = {
    "MEMORY_FRONTMATTER_MISSING": ({"title": "x"}, "Body text."),
    "MEMORY_FRONTMATTER_INVALID": ({"memory": ["not", "a", "map"]}, "Body text."),
    "MEMORY_RECORD_ID_INVALID": ({"memory": {**VALID_FRONT, "recordId": "mem-xyz"}}, "Body text."),
    "MEMORY_SCOPES_EMPTY": ({"memory": {**VALID_FRONT, "scopes": []}}, "Body text."),
    "MEMORY_SCOPES_INVALID": ({"memory": {**VALID_FRONT, "scopes": ["bad scope"]}}, "Body text."),
    "MEMORY_IDENTITY_MISSING": ({"memory": {**VALID_FRONT, "caller": " "}}, "Body text."),
    "MEMORY_CREATED_AT_INVALID": (
        {"memory": {**VALID_FRONT, "createdAt": "2025-01-02"}},
        "Body text.",
    ),
    "MEMORY_CONTENT_HASH_INVALID": (
        {"memory": {**VALID_FRONT, "contentHash": "abc"}},
        "Body text.",
    ),
    "MEMORY_CONTENT_HASH_MISMATCH": ({"memory": VALID_FRONT}, "Edited body text."),
    "MEMORY_BODY_EMPTY": ({"memory": VALID_FRONT}, "  \n"),
    "MEMORY_SUPERSEDES_INVALID": (
        {"memory": VALID_FRONT, "relations": {"supersedes": ["not-a-uri"]}},
        "Body text.",
    ),
}


@pytest.mark.parametrize("code", sorted(MALFORMED))
def test_validator_names_what_is_wrong_with_a_fact_file(code: str) -> None:
    front, body = MALFORMED[code]
    with pytest.raises(RecordProblem) as caught:
        parse_record(front, body)
    assert caught.value.code == code
    parse_record({"memory": VALID_FRONT}, "Body text.")  # the untouched record is fine


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    memory=st.dictionaries(
        st.sampled_from([*sorted(VALID_FRONT), "source"]), yaml_values, max_size=8
    ),
    relations=yaml_values,
    body=st.text(max_size=40),
)
def test_validator_only_ever_reports_problems_on_hostile_frontmatter(
    memory: dict[str, Any], relations: Any, body: str
) -> None:
    front = {"memory": {**VALID_FRONT, **memory}, "relations": relations}
    try:
        parse_record(front, body)
    except RecordProblem as problem:
        assert problem.code.startswith("MEMORY_")


def test_new_fact_file_is_never_overwritten_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "facts" / "2025-01-02" / "mem-0123456789abcdef.md"
    write_new_file(target, "first\n")
    with pytest.raises(GnoError):
        write_new_file(target, "second\n")
    assert target.read_text("utf-8") == "first\n"
    assert files_under(tmp_path) == ["facts/2025-01-02/mem-0123456789abcdef.md"]
    umask = os.umask(0o022)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


# ---------------------------------------------------------------------------
# Remember: outcomes, files, searchability
# ---------------------------------------------------------------------------


def test_added_fact_is_one_file_with_memory_frontmatter_and_searchable_at_once(
    svc: MemoryService, mem_engine: Engine, facts_dir: Path
) -> None:
    result = add(svc, "  The deploy window is\nTuesday at 10:00 UTC.  ", source="standup notes")
    record = result["record"]
    assert record["text"] == FACT
    assert record["contentHash"] == hashlib.sha256(FACT.encode()).hexdigest()
    assert (record["caller"], record["session"], record["scopes"]) == (
        "tester",
        "session-1",
        [SCOPE],
    )
    assert record["source"] == "standup notes"
    assert re.fullmatch(r"mem-[0-9a-f]{16}", record["recordId"])
    rel = f"facts/{record['createdAt'][:10]}/{record['recordId']}.md"
    assert files_under(facts_dir) == [rel]
    assert Path(result["absPath"]) == facts_dir / rel
    assert record["uri"] == f"gno://facts/{rel}"
    assert result["sync"] == {"status": "completed"}
    assert result["matching"] == {
        "mode": "lexical",
        "threshold": 0.5,
        "semanticUnavailable": NOT_EMBEDDED.format(name="facts"),
    }
    front = yaml.safe_load((facts_dir / rel).read_text("utf-8").split("---\n")[1])
    assert front["memory"]["recordId"] == record["recordId"]
    assert front["memory"]["source"] == "standup notes"
    # An ordinary document: plain search finds it with no extra sync.
    found = mem_engine.search.lexical(
        SearchRequest(query="deploy window Tuesday", scope=Scope(collections=("facts",)))
    )
    assert [hit["uri"] for hit in found["results"]] == [record["uri"]]


def test_without_decision_remember_proposes_candidates_and_writes_nothing(
    svc: MemoryService, facts_dir: Path
) -> None:
    stored = add(svc, FACT)["record"]
    add(svc, "Lunch is served at noon in the atrium.")
    before = files_under(facts_dir)
    proposal = valid_remember(
        svc.remember(
            text="The deploy window is Wednesday at 10:00 UTC.",
            collection="facts",
            scopes=[SCOPE],
            identity=ME,
        )
    )
    assert proposal["outcome"] == "candidates"
    first = proposal["candidates"][0]
    assert first["uri"] == stored["uri"] and first["match"] == "likely"
    assert 0.5 <= first["similarity"] < 1
    assert all(c["match"] in {"exact", "likely", "weak"} for c in proposal["candidates"])
    assert files_under(facts_dir) == before
    nothing = svc.remember(text="Zebras migrate", collection="facts", scopes=[SCOPE], identity=ME)
    assert nothing == {"outcome": "candidates", "candidates": [], "matching": proposal["matching"]}


def test_exact_duplicate_in_scope_is_existing_but_other_scopes_get_their_own(
    svc: MemoryService, facts_dir: Path
) -> None:
    stored = add(svc, FACT)["record"]
    for decision in ("add", None):
        again = valid_remember(
            svc.remember(
                text=" the deploy window is Tuesday at 10:00 UTC. ".replace("the", "The", 1),
                collection="facts",
                scopes=["other", SCOPE.upper()],
                identity=ME,
                decision=decision,
            )
        )
        assert again["outcome"] == "existing" and again["record"] == stored
    assert len(files_under(facts_dir)) == 1
    elsewhere = add(svc, FACT, scopes=["project:beta"])["record"]
    assert elsewhere["uri"] != stored["uri"]
    assert len(files_under(facts_dir)) == 2


def test_supersede_replaces_a_fact_and_recall_shows_only_the_current_one(
    svc: MemoryService, facts_dir: Path
) -> None:
    old = add(svc, FACT)["record"]
    new_text = "The deploy window is Wednesday at 10:00 UTC."
    result = valid_remember(
        svc.remember(
            text=new_text,
            collection="facts",
            scopes=[SCOPE],
            identity=ME,
            decision="supersede",
            predecessor_uri=old["uri"],
            predecessor_hash=old["contentHash"],
        )
    )
    assert result["outcome"] == "superseded"
    assert result["record"]["supersedes"] == [old["uri"]]
    front = yaml.safe_load(Path(result["absPath"]).read_text("utf-8").split("---\n")[1])
    assert front["relations"] == {"supersedes": [old["uri"]]}
    assert len(files_under(facts_dir)) == 2  # nothing is ever deleted
    texts = [f["text"] for f in recall(svc, "deploy window")["facts"]]
    assert texts == [new_text]
    # The old text is no longer current, so adding it again is a new fact.
    assert add(svc, FACT)["record"]["uri"] != old["uri"]


def supersede(svc: MemoryService, text: str, uri: str, digest: str) -> dict[str, Any]:
    return svc.remember(
        text=text,
        collection="facts",
        scopes=[SCOPE],
        identity=ME,
        decision="supersede",
        predecessor_uri=uri,
        predecessor_hash=digest,
    )


def test_supersede_checks_predecessor_uri_hash_and_single_successor(
    svc: MemoryService, facts_dir: Path
) -> None:
    old = add(svc, FACT)["record"]
    uri, digest = old["uri"], old["contentHash"]
    assert (
        code_of(
            lambda: svc.remember(
                text="x", collection="facts", scopes=[SCOPE], identity=ME, decision="supersede"
            )
        )
        == "MEMORY_PREDECESSOR_REQUIRED"
    )
    assert code_of(lambda: supersede(svc, "x", uri, "")) == "MEMORY_PREDECESSOR_REQUIRED"
    missing = uri.replace(old["recordId"], "mem-ffffffffffffffff")
    assert code_of(lambda: supersede(svc, "x", missing, digest)) == "MEMORY_PREDECESSOR_NOT_FOUND"
    note = "gno://notes/plan.md"  # a document, but not a fact of this collection
    assert code_of(lambda: supersede(svc, "x", note, digest)) == "MEMORY_PREDECESSOR_NOT_FOUND"
    assert code_of(lambda: supersede(svc, "x", uri, "0" * 64)) == "MEMORY_PREDECESSOR_HASH_MISMATCH"
    before = files_under(facts_dir)
    assert before == [old["uri"].removeprefix("gno://facts/")]
    assert supersede(svc, "The window moved to Wednesday.", uri, digest)["outcome"] == "superseded"
    assert code_of(lambda: supersede(svc, "It moved to Friday.", uri, digest)) == (
        "MEMORY_SUPERSEDE_CONFLICT"
    )
    assert len(files_under(facts_dir)) == 2


# ---------------------------------------------------------------------------
# Fencing and receipts
# ---------------------------------------------------------------------------


def test_replaying_recalled_text_with_its_receipt_is_fenced(
    svc: MemoryService, facts_dir: Path
) -> None:
    add(svc, FACT)
    answer = recall(svc, "deploy window")
    before = files_under(facts_dir)
    for text in (FACT, "The deploy window is\n Tuesday at 10:00 UTC."):
        for decision in ("add", None):
            assert (
                code_of(
                    partial(
                        svc.remember,
                        text=text,
                        collection="facts",
                        scopes=["project:beta"],
                        identity=ME,
                        decision=decision,
                        receipt=answer["receipt"],
                    )
                )
                == "MEMORY_FENCED_REPLAY"
            )
    # A paraphrase carries no hash from the receipt: it is an ordinary new fact.
    paraphrase = svc.remember(
        text="Deploys happen Tuesdays at ten UTC.",
        collection="facts",
        scopes=[SCOPE],
        identity=ME,
        decision="add",
        receipt=answer["receipt"],
    )
    assert paraphrase["outcome"] == "added"
    assert len(files_under(facts_dir)) == len(before) + 1


def test_facts_derived_from_indexed_documents_are_fenced(
    svc: MemoryService, facts_dir: Path
) -> None:
    for origin in ("gno://notes/plan.md", " GNO://notes/plan.md"):
        assert (
            code_of(
                partial(
                    svc.remember,
                    text="Plans are reviewed weekly.",
                    collection="facts",
                    scopes=[SCOPE],
                    identity=ME,
                    decision="add",
                    derived_from=["https://example.com/a", origin],
                )
            )
            == "MEMORY_FENCED_DERIVED"
        )
    assert files_under(facts_dir) == []
    ok = add(svc, "Plans are reviewed weekly.", derived_from=["https://example.com/a"])
    assert ok["record"]["text"] == "Plans are reviewed weekly."


def test_receipt_digest_covers_caller_session_time_ids_and_spans(svc: MemoryService) -> None:
    first = add(svc, FACT)["record"]
    second = add(svc, "The deploy freeze starts in December.")["record"]
    receipt = recall(svc, "deploy")["receipt"]
    assert (receipt["caller"], receipt["session"]) == ("tester", "session-1")
    assert set(receipt["memoryIds"]) == {first["docid"], second["docid"]}
    assert receipt["spanHashes"] == sorted({first["contentHash"], second["contentHash"]})
    payload = json.dumps(
        {k: receipt[k] for k in ("caller", "session", "issuedAt", "memoryIds", "spanHashes")},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert receipt["digest"] == hashlib.sha256(payload.encode()).hexdigest()
    serialized = json.dumps(receipt)
    assert "deploy" not in serialized.lower()  # content-free


def test_forged_or_stale_receipts_are_refused(svc: MemoryService, facts_dir: Path) -> None:
    add(svc, FACT)
    receipt = recall(svc, "deploy window")["receipt"]

    def remember_with(presented: Any, identity: Identity = ME) -> dict[str, Any]:
        return svc.remember(
            text=FACT,
            collection="facts",
            scopes=[SCOPE],
            identity=identity,
            decision="add",
            receipt=presented,
        )

    before = files_under(facts_dir)
    # Dropping the span to sneak a replay past the fence breaks the digest.
    altered = {**receipt, "spanHashes": []}
    assert code_of(lambda: remember_with(altered)) == "MEMORY_RECEIPT_INVALID"
    # A receipt issued to another session (an earlier process, another client).
    assert code_of(lambda: remember_with(receipt, Identity("tester", "session-2"))) == (
        "MEMORY_RECEIPT_INVALID"
    )
    future = receipts.issue(
        ME, "2999-01-01T00:00:00.000Z", receipt["memoryIds"], receipt["spanHashes"]
    )
    assert code_of(lambda: remember_with(future)) == "MEMORY_RECEIPT_INVALID"
    assert (
        code_of(lambda: remember_with({"spanHashes": ["not-a-hash"]})) == "MEMORY_RECEIPT_INVALID"
    )
    assert code_of(lambda: remember_with({"spanHashes": "abc"})) == "MEMORY_RECEIPT_INVALID"
    assert code_of(lambda: remember_with(["not", "an", "object"])) == "MEMORY_RECEIPT_INVALID"
    assert code_of(lambda: remember_with({**receipt, "issuedAt": None})) == "MEMORY_RECEIPT_INVALID"
    # A bare list of span hashes (no digest) still fences.
    assert code_of(lambda: remember_with({"spanHashes": receipt["spanHashes"]})) == (
        "MEMORY_FENCED_REPLAY"
    )
    assert files_under(facts_dir) == before


# ---------------------------------------------------------------------------
# Input validation: precise codes, nothing written
# ---------------------------------------------------------------------------

REMEMBER_DEFAULTS: dict[str, Any] = {
    "text": "A perfectly fine fact.",
    "collection": "facts",
    "scopes": [SCOPE],
    "identity": ME,
    "decision": "add",
}

BAD_REMEMBER: list[tuple[str, dict[str, Any]]] = [
    ("MEMORY_IDENTITY_REQUIRED", {"identity": Identity(" ", "s")}),
    ("MEMORY_IDENTITY_REQUIRED", {"identity": Identity("caller", "")}),
    ("MEMORY_IDENTITY_REQUIRED", {"identity": Identity("bad\x00name", "s")}),
    ("MEMORY_TEXT_REQUIRED", {"text": ""}),
    ("MEMORY_TEXT_REQUIRED", {"text": " \n\t "}),
    ("MEMORY_TEXT_REQUIRED", {"text": None}),
    ("MEMORY_TEXT_REQUIRED", {"text": "nul\x00byte"}),
    ("MEMORY_TEXT_REQUIRED", {"text": "lone \udcff surrogate"}),
    ("MEMORY_TEXT_TOO_LARGE", {"text": "x" * 4097}),
    ("MEMORY_TEXT_TOO_LARGE", {"text": "é" * 2049}),
    ("MEMORY_TEXT_TOO_LARGE", {"source": "s" * 5000}),
    ("MEMORY_COLLECTION_REQUIRED", {"collection": None}),
    ("MEMORY_COLLECTION_REQUIRED", {"collection": "  "}),
    ("MEMORY_COLLECTION_NOT_FOUND", {"collection": "nope"}),
    ("MEMORY_COLLECTION_UNMANAGED", {"collection": "notes"}),
    ("MEMORY_SCOPES_REQUIRED", {"scopes": []}),
    ("MEMORY_SCOPES_REQUIRED", {"scopes": None}),
    ("MEMORY_SCOPES_INVALID", {"scopes": [f"s{i}" for i in range(9)]}),
    ("MEMORY_SCOPES_INVALID", {"scopes": ["ok", "not ok"]}),
    ("MEMORY_SCOPES_INVALID", {"scopes": ["x" * 65]}),
    ("MEMORY_DECISION_INVALID", {"decision": "replace"}),
    ("MEMORY_DECISION_INVALID", {"decision": "ADD"}),
]


@pytest.mark.parametrize(("code", "change"), BAD_REMEMBER, ids=[c for c, _ in BAD_REMEMBER])
def test_bad_remember_input_gets_its_code_and_writes_nothing(
    svc: MemoryService, facts_dir: Path, code: str, change: dict[str, Any]
) -> None:
    assert code_of(lambda: svc.remember(**{**REMEMBER_DEFAULTS, **change})) == code
    assert files_under(facts_dir) == []


def test_text_limit_is_4096_bytes_of_normalised_text(svc: MemoryService) -> None:
    assert add(svc, "é" * 2048)["record"]["text"] == "é" * 2048
    assert add(svc, "y" * 4096 + "   ")["record"]["text"] == "y" * 4096


BAD_RECALL: list[tuple[str, dict[str, Any]]] = [
    ("MEMORY_IDENTITY_REQUIRED", {"identity": Identity("", "s")}),
    ("MEMORY_QUERY_REQUIRED", {"query": ""}),
    ("MEMORY_QUERY_REQUIRED", {"query": "   "}),
    ("MEMORY_QUERY_REQUIRED", {"query": "?! ..."}),
    ("MEMORY_QUERY_REQUIRED", {"query": "-onlynegated"}),
    ("MEMORY_QUERY_REQUIRED", {"query": "nul\x00"}),
    ("MEMORY_BUDGET_INVALID", {"max_facts": 0}),
    ("MEMORY_BUDGET_INVALID", {"max_facts": 65}),
    ("MEMORY_BUDGET_INVALID", {"max_tokens": 8193}),
    ("MEMORY_BUDGET_INVALID", {"max_tokens": True}),
    ("MEMORY_COLLECTION_REQUIRED", {"collection": ""}),
    ("MEMORY_COLLECTION_NOT_FOUND", {"collection": "nope"}),
    ("MEMORY_COLLECTION_UNMANAGED", {"collection": "notes"}),
    ("MEMORY_SCOPES_REQUIRED", {"scopes": []}),
    ("MEMORY_SCOPES_INVALID", {"scopes": ["*"]}),
]


@pytest.mark.parametrize(("code", "change"), BAD_RECALL, ids=[c for c, _ in BAD_RECALL])
def test_bad_recall_input_gets_its_code(
    svc: MemoryService, code: str, change: dict[str, Any]
) -> None:
    args = {"query": "deploy", "collection": "facts", "scopes": [SCOPE], "identity": ME, **change}
    assert code_of(lambda: svc.recall(**args)) == code


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=80))
@example(text="#")
@example(text=" #\n")  # the same fact once normalized: the stored one comes back
def test_any_text_is_stored_faithfully_or_refused_with_a_text_code(
    svc: MemoryService, facts_dir: Path, text: str
) -> None:
    try:
        result = svc.remember(
            text=text, collection="facts", scopes=["fuzz"], identity=ME, decision="add"
        )
    except GnoError as error:
        assert error.code == "MEMORY_TEXT_REQUIRED", (text, error)
        return
    record = result["record"]
    assert record["text"] == unicodedata.normalize("NFC", " ".join(text.split()))
    assert record["contentHash"] == content_hash(text)
    if result["outcome"] == "existing":
        # The examples share one index: an earlier one stored this text already,
        # so the stored fact is returned and nothing is written (no absPath).
        assert "absPath" not in result
        return
    assert result["outcome"] == "added", result
    assert read_back(Path(result["absPath"]).read_text("utf-8")).text == record["text"]
    assert not any(name.endswith(".tmp") for name in files_under(facts_dir))
    exact = svc.remember(text=text, collection="facts", scopes=["fuzz"], identity=ME)
    assert exact["outcome"] == "existing"


# ---------------------------------------------------------------------------
# Recall: scope filtering, supersession, budgets
# ---------------------------------------------------------------------------


def test_scope_filter_runs_inside_the_query_before_the_limit(
    svc: MemoryService, mem_engine: Engine, facts_dir: Path
) -> None:
    """40 louder facts in another scope cannot push the one in-scope fact out."""
    for i in range(40):
        add(svc, f"Kiwi kiwi kiwi release note number {i}.", scopes=["noisy"])
    quiet = add(svc, "A kiwi fact for the quiet team.", scopes=["quiet"])["record"]
    answer = recall(svc, "kiwi", scopes=["quiet"], max_facts=1)
    assert [f["uri"] for f in answer["facts"]] == [quiet["uri"]]
    assert answer["budget"]["omitted"] == 0
    # Visibility is any-intersection, and there is no implicit global scope.
    both = recall(svc, "kiwi", scopes=["quiet", "noisy"], max_facts=64)
    assert len(both["facts"]) == 41
    assert recall(svc, "kiwi", scopes=["elsewhere"])["facts"] == []


def test_superseded_facts_are_excluded_before_the_limit(svc: MemoryService) -> None:
    current = add(svc, "Mango rollout version 0 ships.")["record"]
    for i in range(1, 35):
        current = supersede(
            svc, f"Mango rollout version {i} ships.", current["uri"], current["contentHash"]
        )["record"]
    answer = recall(svc, "mango rollout", max_facts=1)
    assert [f["uri"] for f in answer["facts"]] == [current["uri"]]
    assert answer["budget"]["omitted"] == 0


def test_budgets_default_to_8_facts_and_512_tokens_and_report_omissions(
    svc: MemoryService,
) -> None:
    for i in range(12):
        add(svc, f"Papaya fact {i}: " + "word " * 20)
    default = recall(svc, "papaya")
    assert default["budget"]["maxFacts"] == 8 and default["budget"]["maxTokens"] == 512
    assert len(default["facts"]) == 8 and default["budget"]["omitted"] == 4
    expected_tokens = sum(-(-len(f["text"].encode()) // 4) for f in default["facts"])
    assert default["budget"]["usedTokens"] == expected_tokens
    tight = recall(svc, "papaya", max_tokens=60)
    assert len(tight["facts"]) == 2 and tight["budget"]["usedTokens"] <= 60
    assert tight["budget"]["omitted"] == 10
    one = recall(svc, "papaya", max_tokens=1)
    assert one["facts"] == [] and one["budget"]["omitted"] == 12 and "hint" in one


def test_recall_reports_lexical_mode_lineage_and_a_hint_only_when_empty(
    svc: MemoryService,
) -> None:
    empty = recall(svc, "anything at all")
    assert empty["facts"] == [] and "egressLineage" not in empty
    assert "gno-trio remember" in empty["hint"] and "--scope project:alpha" in empty["hint"]
    add(svc, FACT)
    full = recall(svc, "deploy window")
    assert "hint" not in full
    assert full["retrieval"] == {
        "mode": "lexical",
        "semanticUnavailable": NOT_EMBEDDED.format(name="facts"),
    }
    assert full["egressLineage"]["effectivePolicy"] == "local_only"
    assert full["egressLineage"]["sources"] == [
        {"collection": "facts", "policy": "local_only", "source": "config_default"}
    ]
    (fact,) = full["facts"]
    assert fact["egressLineage"] == full["egressLineage"]
    assert fact["spanHash"] == fact["contentHash"] and fact["score"] > 0


def test_recall_tolerates_natural_language_punctuation(svc: MemoryService) -> None:
    add(svc, 'The lobby screen is 27" wide.')
    found = recall(svc, 'how wide is the 27" lobby screen?')
    assert [f["text"] for f in found["facts"]] == ['The lobby screen is 27" wide.']


def test_malformed_fact_files_are_reported_not_fatal(
    svc: MemoryService, mem_engine: Engine, facts_dir: Path
) -> None:
    good = add(svc, FACT)["record"]
    broken = facts_dir / "facts" / "2025-01-01"
    broken.mkdir(parents=True)
    (broken / "no-block.md").write_text("# Just a note\n\ndeploy window chatter\n", "utf-8")
    tampered = facts_dir / good["uri"].removeprefix("gno://facts/")
    (broken / "copy.md").write_text(
        tampered.read_text("utf-8").replace("Tuesday", "Friday"), "utf-8"
    )
    (broken / "bad-yaml.md").write_text("---\nmemory: [unclosed\n---\ndeploy window\n", "utf-8")
    mem_engine.sync()
    with mem_engine.connection() as conn:
        problems = {p["relPath"]: p["code"] for p in projection.problems(conn, "facts")}
    assert problems == {
        "facts/2025-01-01/bad-yaml.md": "MEMORY_FRONTMATTER_MISSING",
        "facts/2025-01-01/copy.md": "MEMORY_CONTENT_HASH_MISMATCH",
        "facts/2025-01-01/no-block.md": "MEMORY_FRONTMATTER_MISSING",
    }
    (facts_status,) = [c for c in mem_engine.index.status()["collections"] if c["name"] == "facts"]
    reported = {w["relPath"]: w["code"] for w in facts_status["warnings"]}
    assert {k: v for k, v in reported.items() if v.startswith("MEMORY_")} == problems
    assert [f["uri"] for f in recall(svc, "deploy window")["facts"]] == [good["uri"]]
    found = mem_engine.search.lexical(
        SearchRequest(query="chatter", scope=Scope(collections=("facts",)))
    )
    assert len(found["results"]) == 1  # still an ordinary searchable document


def test_a_fact_edited_on_disk_into_garbage_drops_out_of_recall(
    svc: MemoryService, mem_engine: Engine, facts_dir: Path
) -> None:
    good = add(svc, FACT)["record"]
    path = facts_dir / good["uri"].removeprefix("gno://facts/")
    path.write_text(path.read_text("utf-8") + "\nExtra line typed by hand.\n", "utf-8")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    mem_engine.sync()
    assert recall(svc, "deploy window")["facts"] == []


def test_index_failure_during_recall_is_memory_query_failed(
    svc: MemoryService, mem_engine: Engine
) -> None:
    add(svc, FACT)
    with mem_engine.connection() as conn:
        conn.execute("DROP TABLE doc_memory_scopes")
        assert (
            code_of(
                lambda: svc.recall(query="deploy", collection="facts", scopes=[SCOPE], identity=ME)
            )
            == "MEMORY_QUERY_FAILED"
        )
        assert (
            code_of(
                lambda: svc.remember(text="new", collection="facts", scopes=[SCOPE], identity=ME)
            )
            == "MEMORY_QUERY_FAILED"
        )


# ---------------------------------------------------------------------------
# Sync failures: nothing half-stored
# ---------------------------------------------------------------------------


def test_failed_sync_is_memory_sync_failed_and_keeps_no_file(
    svc: MemoryService, mem_engine: Engine, facts_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_sync(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(mem_engine, "sync_paths", broken_sync)
    assert code_of(lambda: add(svc, FACT)) == "MEMORY_SYNC_FAILED"
    assert files_under(facts_dir) == []


def test_collection_rules_that_leave_out_fact_files_refuse_before_writing(
    mem_engine: Engine, tmp_path: Path
) -> None:
    """A fact the next full sync would drop is not written in the first place."""
    folder = tmp_path / "txt-only"
    folder.mkdir()
    mem_engine.collections.add(str(folder), name="txtonly", include=[".txt"], memory_managed=True)
    service = MemoryService(mem_engine, lease_wait_seconds=0.2)
    args: dict[str, Any] = {"text": FACT, "scopes": [SCOPE], "identity": ME, "decision": "add"}
    assert code_of(lambda: service.remember(collection="txtonly", **args)) == "MEMORY_SYNC_FAILED"
    assert files_under(folder) == []


def test_unprojected_supersedes_edge_is_reported(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = add(svc, FACT)["record"]
    real = remember_mod.successor_of
    calls: list[str] = []

    def lost_edge(conn: sqlite3.Connection, uri: str, collection: str) -> str | None:
        calls.append(uri)
        return None if len(calls) > 1 else real(conn, uri, collection)

    monkeypatch.setattr(remember_mod, "successor_of", lost_edge)
    assert (
        code_of(lambda: supersede(svc, "Moved to Wednesday.", old["uri"], old["contentHash"]))
        == "MEMORY_SUPERSEDE_PROJECTION_FAILED"
    )


# ---------------------------------------------------------------------------
# The write lease, contended by a real second process
# ---------------------------------------------------------------------------


def test_lease_held_by_another_process_makes_writes_busy_but_reads_still_work(
    svc: MemoryService, mem_engine: Engine, facts_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = add(svc, FACT)["record"]
    lock_path = mem_engine.location.dirs.write_lock
    assert lock_path.name == ".mcp-write.lock" and lock_path.parent == mem_engine.location.dirs.data
    with lease_held_elsewhere(lock_path):
        assert code_of(lambda: add(svc, "A brand new fact.")) == "MEMORY_WRITE_LEASE_BUSY"
        old = stored
        assert (
            code_of(lambda: supersede(svc, "Moved.", old["uri"], old["contentHash"]))
            == "MEMORY_WRITE_LEASE_BUSY"
        )
        assert recall(svc, "deploy window")["facts"][0]["uri"] == stored["uri"]
        proposal = svc.remember(
            text="A brand new fact.", collection="facts", scopes=[SCOPE], identity=ME
        )
        assert proposal["outcome"] == "candidates"
        # Other write tools answer LOCKED after their (shortened) wait.
        monkeypatch.setenv("GNO_WRITE_LOCK_WAIT_MS", "50")
        with pytest.raises(GnoError) as locked, locks.write_lease(lock_path):
            pass
        assert locked.value.code == "LOCKED"
        assert MemoryService(mem_engine).lease_wait == 0.05
    assert len(files_under(facts_dir)) == 1
    assert add(svc, "A brand new fact.")["outcome"] == "added"


def test_lease_of_a_killed_holder_is_released_by_the_kernel(mem_engine: Engine) -> None:
    lock_path = mem_engine.location.dirs.write_lock
    with lease_held_elsewhere(lock_path) as holder:
        holder.kill()
        with locks.write_lease(lock_path, wait_seconds=1):
            pass


def test_two_holders_in_one_process_contend_too(mem_engine: Engine) -> None:
    lock_path = mem_engine.location.dirs.write_lock
    with (
        locks.write_lease(lock_path, wait_seconds=0),
        pytest.raises(GnoError) as busy,
        locks.write_lease(lock_path, wait_seconds=0.05, busy_code="X_BUSY"),
    ):
        pass
    assert busy.value.code == "X_BUSY"


@pytest.mark.parametrize(("raw", "expected"), [("250", 0.25), ("0", 0.0), ("-5", 7.0), ("x", 7.0)])
def test_lease_wait_env_is_milliseconds_and_ignores_nonsense(
    raw: str, expected: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GNO_WRITE_LOCK_WAIT_MS", raw)
    assert locks.wait_from_env(7.0) == expected


def test_a_cancelled_remember_stops_waiting_for_the_lease_and_writes_nothing(
    mem_engine: Engine, facts_dir: Path
) -> None:
    # The lease wait is an hour: only the cancellation can end it within the test.
    service = MemoryService(mem_engine, lease_wait_seconds=3600)
    gave_up = threading.Event()
    asked = threading.Event()  # the writer is queueing for the lease and polling

    def cancelled() -> bool:
        asked.set()
        return gave_up.is_set()

    codes: list[str] = []
    with lease_held_elsewhere(mem_engine.location.dirs.write_lock):
        waiter = threading.Thread(
            target=lambda: codes.append(
                code_of(
                    lambda: service.remember(
                        text=FACT,
                        collection="facts",
                        scopes=[SCOPE],
                        identity=ME,
                        decision="add",
                        cancelled=cancelled,
                    )
                )
            ),
            daemon=True,
        )
        waiter.start()
        assert asked.wait(60)
        gave_up.set()
        waiter.join(60)
    assert codes == ["MEMORY_WRITE_LEASE_BUSY"]
    assert files_under(facts_dir) == []


def test_facts_indexed_before_the_collection_became_memory_managed_are_recalled(
    tmp_path: Path, facts_dir: Path, mem_engine: Engine
) -> None:
    """Flipping memoryManaged on needs no file edits: the facts show up at first use."""
    add(MemoryService(mem_engine), FACT)
    dirs = Dirs(config=tmp_path / "config2", data=tmp_path / "data2", cache=tmp_path / "cache2")
    with Engine.open(dirs=dirs) as plain:
        plain.collections.add(str(facts_dir), name="facts")
        plain.sync()
    config = dirs.config / "index.yml"
    data = yaml.safe_load(config.read_text("utf-8"))
    data["collections"][0]["memoryManaged"] = True
    config.write_text(yaml.safe_dump(data), "utf-8")
    with Engine.open(dirs=dirs) as managed:
        managed.sync()
        service = MemoryService(managed)
        facts = service.recall(
            query="deploy window", collection="facts", scopes=[SCOPE], identity=ME
        )
        assert [f["text"] for f in valid_recall(facts)["facts"]] == [FACT]
