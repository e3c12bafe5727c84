"""The OpenAI-compatible embeddings endpoint, against a small real HTTP server.

The server here speaks the ``/v1/embeddings`` protocol with a toy model
(hashed word counts), and can be told to misbehave: answer another
dimension, fail with HTTP 500, answer something that is not JSON, or stall.
"""

from __future__ import annotations

import hashlib
import json
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from gno_trio.config import loads_config
from gno_trio.engine import Engine, SearchRequest
from gno_trio.engine.egress.decision import CollectionPolicy, Scope, evaluate
from gno_trio.engine.search.hybrid import QueryOptions
from gno_trio.engine.search.pipeline import hybrid_query
from gno_trio.engine.search.semantic import vector_search
from gno_trio.engine.vectors.bundled import BundledEmbedder
from gno_trio.engine.vectors.embedding import backlog, embed_backlog
from gno_trio.engine.vectors.endpoint import EndpointEmbedder, allowed_by_policy, endpoint_zone
from gno_trio.engine.vectors.models import configured_backend, embed_model_uri
from gno_trio.errors import GnoError
from tests.conftest import write_corpus

DIMENSION = 64
DOCS = {
    "bread.md": "# Bread\n\nflour water yeast oven bake bread\n",
    "bike.md": "# Bike\n\nwheel tyre chain pedal bike repair\n",
    "garden.md": "# Garden\n\nseed soil water tomato garden plant\n",
}


def toy_vector(text: str, dimension: int) -> list[float]:
    vector = [0.0] * dimension
    for word in text.lower().split():
        slot = int(hashlib.sha256(word.strip(".,|:#").encode()).hexdigest(), 16) % dimension
        vector[slot] += 1.0
    return vector


class _Handler(BaseHTTPRequestHandler):
    mode: ClassVar[str] = "ok"
    requests: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *args: object) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.requests.append(body)
        if self.mode == "stall":
            time.sleep(3)
        if self.mode == "error":
            self._send(500, b'{"error": "model crashed"}')
            return
        if self.mode == "garbage":
            self._send(200, b"<html>not json</html>")
            return
        dimension = DIMENSION * 2 if self.mode == "wrong-dimension" else DIMENSION
        data = [
            {"object": "embedding", "index": i, "embedding": toy_vector(text, dimension)}
            for i, text in enumerate(body["input"])
        ]
        data.reverse()  # servers may answer out of order; "index" says where each goes
        self._send(200, json.dumps({"object": "list", "data": data, "model": body["model"]}))

    def _send(self, status: int, payload: bytes | str) -> None:
        raw = payload.encode() if isinstance(payload, str) else payload
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        return  # a client that gave up on a stalled answer is expected here


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.mode = "ok"
    _Handler.requests = []
    httpd = _Server(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1/embeddings#toy-embed"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def conn(engine: Engine, tmp_path: Path) -> Iterator[sqlite3.Connection]:
    engine.collections.add(str(write_corpus(tmp_path / "notes", DOCS)), name="notes")
    engine.sync()
    with engine.connection() as c:
        yield c


def _vectors(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM content_vectors").fetchone()[0])


def test_embeds_and_searches_through_the_endpoint(conn: sqlite3.Connection, server: str) -> None:
    endpoint = EndpointEmbedder(server)
    report = embed_backlog(conn, endpoint)
    assert report.embedded == 3 and backlog(conn, endpoint) == 0
    assert _Handler.requests[0]["model"] == "toy-embed"
    assert len(_Handler.requests[0]["input"]) == 3
    row = conn.execute("SELECT model_key, uri, dimension FROM embed_models").fetchone()
    assert tuple(row) == (endpoint.identity.key, server, DIMENSION)
    found = vector_search(conn, endpoint, SearchRequest(query="repair the bike tyre", limit=1))
    assert found["results"][0]["source"]["relPath"] == "bike.md"


def test_a_changed_dimension_is_refused_and_nothing_is_written(
    engine: Engine, conn: sqlite3.Connection, server: str, tmp_path: Path
) -> None:
    embed_backlog(conn, EndpointEmbedder(server))
    before = _vectors(conn)
    (tmp_path / "notes" / "new.md").write_text("# New\n\nsomething else entirely\n")
    engine.sync()
    _Handler.mode = "wrong-dimension"
    fresh = EndpointEmbedder(server)  # as a new process: the dimension is not known yet
    for attempt in (
        lambda: embed_backlog(conn, fresh),
        lambda: vector_search(conn, fresh, SearchRequest(query="bread")),
    ):
        with pytest.raises(GnoError) as caught:
            attempt()
        assert caught.value.code == "EMBED_DIMENSION_MISMATCH"
    assert _vectors(conn) == before and backlog(conn, fresh) == 1


def test_an_endpoint_that_is_down_or_broken_is_a_clear_error(
    conn: sqlite3.Connection, server: str
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    down = EndpointEmbedder(f"http://127.0.0.1:{closed_port}/v1/embeddings#m", timeout_s=2)
    for mode, backend in (
        ("ok", down),
        ("error", EndpointEmbedder(server)),
        ("garbage", EndpointEmbedder(server)),
    ):
        _Handler.mode = mode
        with pytest.raises(GnoError) as caught:
            embed_backlog(conn, backend)
        assert caught.value.code == "EMBED_ENDPOINT_FAILED", mode
        assert _vectors(conn) == 0
    _Handler.mode = "stall"  # answers well, but 3 s late: only the timeout makes it fail
    with pytest.raises(GnoError) as caught:
        EndpointEmbedder(server, timeout_s=0.5).embed_texts(["x"])
    assert caught.value.code == "EMBED_ENDPOINT_FAILED"


def test_the_lexical_leg_answers_when_the_endpoint_goes_down(
    conn: sqlite3.Connection, server: str
) -> None:
    endpoint = EndpointEmbedder(server)
    embed_backlog(conn, endpoint)
    _Handler.mode = "error"
    result = hybrid_query(
        conn, SearchRequest(query="bread oven"), QueryOptions(explain=True), endpoint
    )
    assert result["meta"]["mode"] == "bm25_only"
    assert result["results"][0]["source"]["relPath"] == "bread.md"
    vector_line = result["meta"]["explain"]["lines"][1]["message"]
    assert "EMBED_ENDPOINT_FAILED" in vector_line


def test_the_embed_model_comes_from_the_configuration(tmp_path: Path, server: str) -> None:
    config = loads_config(
        json.dumps(
            {
                "version": "1.0",
                "collections": [
                    {"name": "a", "path": str(tmp_path)},
                    {"name": "b", "path": str(tmp_path / "b"), "models": {"embed": server}},
                ],
                "models": {
                    "activePreset": "mine",
                    "presets": [{"id": "mine", "name": "Mine", "embed": server}],
                    "inferenceTimeout": 1500,
                },
            }
        )
    )
    assert embed_model_uri(config) == server
    assert embed_model_uri(config, "b") == server
    backend = configured_backend(config)
    assert isinstance(backend, EndpointEmbedder) and backend._timeout == 1.5
    assert isinstance(configured_backend(loads_config('version: "1.0"\n')), BundledEmbedder)
    gguf = loads_config(
        'version: "1.0"\nmodels:\n  activePreset: x\n  presets:\n'
        "    - {id: x, name: X, embed: 'hf:Qwen/Qwen3-Embedding-0.6B-GGUF/q.gguf'}\n"
    )
    with pytest.raises(GnoError) as caught:
        configured_backend(gguf)
    assert caught.value.code == "MODEL_NOT_FOUND"


def test_endpoint_zones_follow_the_egress_policies() -> None:
    assert endpoint_zone("http://127.0.0.1:8080/v1/embeddings") == "loopback"
    assert endpoint_zone("http://localhost:8080/v1/embeddings") == "loopback"
    assert endpoint_zone("http://[::1]:8080/v1/embeddings") == "loopback"
    assert endpoint_zone("http://192.168.1.20/v1/embeddings") == "lan"
    assert endpoint_zone("https://api.example.com/v1/embeddings") == "remote"
    assert allowed_by_policy("http://127.0.0.1/v1/embeddings", "local_only")
    assert not allowed_by_policy("http://192.168.1.20/v1/embeddings", "local_only")
    assert allowed_by_policy("http://192.168.1.20/v1/embeddings", "lan")
    assert not allowed_by_policy("https://api.example.com/v1/embeddings", "lan")
    assert allowed_by_policy("https://api.example.com/v1/embeddings", "remote")


@pytest.mark.parametrize("policy", ["local_only", "lan", "remote", "unknown"])
@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1/v1", "http://192.168.1.20/v1", "https://api.example.com/v1", "http://x/v1"],
)
def test_embedding_endpoints_obey_the_same_rule_as_gno_egress_check(policy: str, url: str) -> None:
    # The embedder and gno_egress_check (remote_inference of embeddings, an
    # authenticated caller) must give the same verdict for the same collection.
    decision = evaluate(
        zone=endpoint_zone(url),
        scope=Scope("embedding", ("c",)),
        policies={"c": CollectionPolicy("c", policy, "explicit")},  # type: ignore[arg-type]
        authenticated=True,
        action="remote_inference",
    )
    assert allowed_by_policy(url, policy) == decision.allowed


def test_embed_never_sends_a_collection_beyond_its_egress_policy(
    engine: Engine, conn: sqlite3.Connection, server: str
) -> None:
    from gno_trio.engine.vectors import service

    lan = "http://192.168.77.1:9/v1/embeddings#m"  # never contacted: the policy refuses first
    config = loads_config(
        json.dumps(
            {
                "version": "1.0",
                "collections": [
                    {
                        "name": "notes",
                        "path": str(engine.config.collection("notes").path),  # type: ignore[union-attr]
                        "models": {"embed": lan},
                    }
                ],
            }
        )
    )
    run = service.embed(conn, config)
    assert run.embedded == 0 and run.skipped[0]["code"] == "EGRESS_DENIED"
    assert _vectors(conn) == 0
    counts = service.backlog_by_collection(conn, config)
    assert counts == {"notes": (0, 3)}
    loopback = loads_config(
        json.dumps(
            {
                "version": "1.0",
                "collections": [
                    {
                        "name": "notes",
                        "path": str(config.collections[0].path),
                        "models": {"embed": server},
                    }
                ],
            }
        )
    )
    assert service.embed(conn, loopback).embedded == 3
    assert service.backlog_by_collection(conn, loopback) == {"notes": (3, 0)}
