"""Reranking and query expansion through configured endpoints, and never silently.

A real HTTP server on the loopback interface, in this process, plays a
``/rerank`` endpoint (llama.cpp / Jina / Cohere shape) and an
OpenAI-compatible chat endpoint for expansion; both answer
deterministically. ``query`` must use them when configured, judge each call
by the egress policy, keep the fused order when one fails or is too slow,
and, whenever a caller asked for a stage that did not run, say so in
``meta`` and in the tool's text with the reason.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, QueryOptions, SearchRequest
from gno_trio.tools.retrieval import query_text
from tests.conftest import write_corpus
from tests.support.corpora import FUSION_NOTES as DOCS
from tests.support.corpora import indexed_engine

BUNDLED = "builtin:use-multilingual-v3"


class Endpoints:
    """What the fake model server was sent, and how it should behave."""

    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.delay_s = 0.0


def _handler(state: Endpoints) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.received.append((self.path, body))
            if self.path.startswith("/broken/"):
                self.send_response(500)
                self.end_headers()
                return
            if state.delay_s:
                time.sleep(state.delay_s)
            if self.path.endswith("/rerank"):
                # Deterministic: the documents that mention dough first, then in reverse.
                docs = body["documents"]
                scores = [
                    (10.0 if "dough" in text.lower() else 0.0) + index / 100
                    for index, text in enumerate(docs)
                ]
                answer: dict[str, Any] = {
                    "results": [
                        {"index": i, "relevance_score": s}
                        for i, s in sorted(enumerate(scores), key=lambda p: -p[1])
                    ]
                }
            else:
                content = "term: knead dough\nterm: loaf\nhyde: Knead the dough and bake it."
                answer = {"choices": [{"message": {"role": "assistant", "content": content}}]}
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Endpoints]]:
    state = Endpoints()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", state
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("refine") / "notes", DOCS)


def _engine(base: Path, corpus: Path, preset: dict[str, str], timeout_ms: int = 3000) -> Engine:
    dirs = Dirs(config=base / "c", data=base / "d", cache=base / "x")
    dirs.config.mkdir(parents=True)
    fields = ", ".join(f"{key}: '{value}'" for key, value in preset.items())
    (dirs.config / "index.yml").write_text(
        f"models:\n  activePreset: t\n  retrievalTimeout: {timeout_ms}\n  presets:\n"
        f"  - {{id: t, name: T, embed: '{BUNDLED}', {fields}}}\n",
        "utf-8",
    )
    return indexed_engine(base, corpus, embed=True)


@pytest.fixture
def make(tmp_path: Path, corpus: Path) -> Iterator[Any]:
    opened: list[Engine] = []

    def build(preset: dict[str, str], timeout_ms: int = 3000) -> Engine:
        engine = _engine(tmp_path / str(len(opened)), corpus, preset, timeout_ms)
        opened.append(engine)
        return engine

    yield build
    for engine in opened:
        engine.close()


QUESTION = "kitchen routine overnight"


def _ask(engine: Engine, **options: Any) -> dict[str, Any]:
    return engine.search.query(
        SearchRequest(query=QUESTION, limit=5), QueryOptions(explain=True, **options)
    )


def _lines(result: dict[str, Any]) -> dict[str, str]:
    return {line["stage"]: line["message"] for line in result["meta"]["explain"]["lines"]}


def test_a_configured_reranker_orders_the_top_candidates(
    make: Any, server: tuple[str, Endpoints]
) -> None:
    url, state = server
    engine = make({"rerank": f"{url}/v1/rerank#tiny-reranker"})
    state.received.clear()
    result = _ask(engine)
    assert result["meta"]["reranked"] is True and "rerankSkipped" not in result["meta"]
    sent = [body for path, body in state.received if path == "/v1/rerank"]
    assert len(sent) == 1 and sent[0]["query"] == QUESTION and sent[0]["model"] == "tiny-reranker"
    assert result["results"][0]["source"]["relPath"] == "misc/note1.md"  # the dough note
    ranks = [r["rerankScore"] for r in result["meta"]["explain"]["results"]]
    assert ranks == sorted(ranks, reverse=True)
    assert _lines(result)["rerank"].startswith("rerank: top ")
    assert engine.vectors.models()["rerank"]["uri"] == f"{url}/v1/rerank#tiny-reranker"
    receipts = engine.egress.audit_list()["receipts"]
    assert receipts[0]["action"] == "remote_inference" and receipts[0]["decision"] == "allow"


def test_rerank_asked_for_without_a_reranker_says_so(make: Any) -> None:
    engine = make({})
    fused = _ask(engine)
    result = _ask(engine, rerank=True)
    meta = result["meta"]
    assert meta["reranked"] is False
    assert "no rerank model is configured" in meta["rerankSkipped"]
    assert "Reranking was asked for and did not run: no rerank model" in query_text(result)
    assert [r["uri"] for r in result["results"]] == [r["uri"] for r in fused["results"]]
    assert "rerankSkipped" not in fused["meta"]  # not asked for: the explain line only
    assert "no rerank model is configured" in _lines(fused)["rerank"]


def test_a_slow_reranker_falls_back_to_the_fused_order(
    make: Any, server: tuple[str, Endpoints]
) -> None:
    url, state = server
    engine = make({"rerank": f"{url}/v1/rerank#r"}, timeout_ms=300)
    fused = _ask(engine, rerank=False)
    state.delay_s = 1.5
    try:
        result = _ask(engine, thorough=True)
    finally:
        state.delay_s = 0.0
    assert result["meta"]["reranked"] is False
    assert "did not answer within 0.3 s" in result["meta"]["rerankSkipped"]
    assert "fused order kept" in _lines(result)["rerank"]
    assert [r["uri"] for r in result["results"][:3]] == [r["uri"] for r in fused["results"][:3]]


def test_a_failing_reranker_is_reported_with_its_status(
    make: Any, server: tuple[str, Endpoints]
) -> None:
    url, _ = server
    engine = make({"rerank": f"{url}/broken/v1/rerank#r"})
    result = _ask(engine, rerank=True)
    assert result["meta"]["reranked"] is False
    assert "answered HTTP 500" in result["meta"]["rerankSkipped"]


def test_the_egress_policy_keeps_snippets_from_a_remote_reranker(make: Any) -> None:
    # A host name counts as remote; the notes are local_only, so nothing is sent.
    engine = make({"rerank": "http://reranker.invalid/v1/rerank#r"})
    result = _ask(engine, rerank=True)
    assert result["meta"]["reranked"] is False
    assert "egress policy refuses it" in result["meta"]["rerankSkipped"]
    receipts = engine.egress.audit_list()["receipts"]
    assert receipts[0]["decision"] == "deny" and receipts[0]["destinationZone"] == "remote"


def test_a_configured_expander_adds_terms_and_a_hyde_passage(
    make: Any, server: tuple[str, Endpoints]
) -> None:
    url, state = server
    engine = make({"expand": f"{url}/v1/chat/completions#expander"})
    state.received.clear()
    result = _ask(engine)
    assert result["meta"]["expanded"] is True
    sent = [body for path, body in state.received if path == "/v1/chat/completions"]
    assert sent and sent[0]["messages"][-1]["content"] == QUESTION
    assert _lines(result)["expansion"] == "expansion: 2 term variants and a hyde passage"
    assert "queryModes" not in result["meta"]  # the caller typed none
    assert result["results"][0]["source"]["relPath"] == "misc/note1.md"
    skipped = _ask(engine, expand=False)
    assert skipped["meta"]["expanded"] is False and "expansionSkipped" not in skipped["meta"]
    assert engine.vectors.models()["expand"]["endpoint"] is True


def test_expansion_asked_for_without_an_expander_says_so(make: Any) -> None:
    engine = make({})
    result = _ask(engine, expand=True)
    assert result["meta"]["expanded"] is False
    assert "no expand model is configured" in result["meta"]["expansionSkipped"]
    assert "Query expansion was asked for and did not run" in query_text(result)
