"""Egress is judged on where the bytes go: no environment proxy, no redirect followed.

A collection under ``local_only`` may send its text to a loopback model
server, and the egress check judges that server's URL. The bytes must then
go to that server and nowhere else: not to a proxy named by ``http_proxy``
(never judged), not to the host a ``302`` points at (never judged). Each test
runs real loopback HTTP servers in-process: the model server and a "sink"
standing for the unjudged host, which answers like a model would, so a leak
is seen as the sink's request log, not hidden by an error.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs
import pytest

from gno_trio.engine import AskRequest, Engine, SearchRequest
from gno_trio.errors import GnoError
from tests.conftest import write_corpus
from tests.test_ask import NOTES, QUESTION

CHAT_REPLY = "Green tea steeps for two minutes at eighty degrees [1]."


class ModelServer:
    """A loopback server that answers chat and embedding requests, or redirects them."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.redirect_to: str | None = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._answer(b"")

            def do_POST(self) -> None:
                self._answer(self.rfile.read(int(self.headers.get("Content-Length", "0"))))

            def _answer(self, raw: bytes) -> None:
                server.requests.append((self.command, self.path))
                if server.redirect_to is not None:
                    self.send_response(302)
                    self.send_header("Location", server.redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = json.dumps(server.reply(raw)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def reply(self, raw: bytes) -> dict[str, Any]:
        request = json.loads(raw) if raw else {}
        if "input" in request:
            data = [
                {"index": i, "embedding": [float(len(text)), 1.0, 0.5]}
                for i, text in enumerate(request["input"])
            ]
            return {"object": "list", "data": data}
        return {"choices": [{"message": {"role": "assistant", "content": CHAT_REPLY}}]}

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def servers() -> Iterator[tuple[ModelServer, ModelServer]]:
    model, sink = ModelServer(), ModelServer()
    try:
        yield model, sink
    finally:
        model.close()
        sink.close()


@pytest.fixture
def vault(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Engine:
    for name in ("no_proxy", "NO_PROXY", "http_proxy", "HTTP_PROXY", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    engine.add_collection(str(write_corpus(tmp_path / "notes", NOTES)), name="notes")
    engine.sync()

    def local_only(config: Any) -> Any:
        collections = tuple(attrs.evolve(c, egress_policy="local_only") for c in config.collections)
        return attrs.evolve(config, collections=collections)

    engine.update_config(local_only)
    assert [c.effective_egress_policy for c in engine.config.collections] == ["local_only"]
    return engine


def use_models(engine: Engine, *, gen: str | None = None, embed: str | None = None) -> None:
    preset: dict[str, str] = {"id": "local"}
    if gen is not None:
        preset["gen"] = gen
    if embed is not None:
        preset["embed"] = embed
    models = {"activePreset": "local", "presets": [preset]}
    engine.update_config(lambda current: attrs.evolve(current, models=models))


def ask(engine: Engine) -> Any:
    return engine.ask(AskRequest(SearchRequest(query=QUESTION)))


def proxied_through(server: ModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment names ``server`` as the HTTP proxy (both spellings urllib reads)."""
    for name in ("http_proxy", "HTTP_PROXY"):
        monkeypatch.setenv(name, server.url(""))


def test_ask_sends_evidence_to_no_proxy_from_the_environment(
    vault: Engine, servers: tuple[ModelServer, ModelServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    model, proxy = servers
    proxied_through(proxy, monkeypatch)
    use_models(vault, gen=model.url("/v1/chat/completions#tiny-chat"))
    outcome = ask(vault)
    assert proxy.requests == []  # the proxy was never judged: nothing went there
    assert model.requests == [("POST", "/v1/chat/completions")]
    assert outcome.result["meta"]["answerGenerated"] is True


def test_ask_follows_no_redirect_to_an_unjudged_host(
    vault: Engine, servers: tuple[ModelServer, ModelServer]
) -> None:
    model, elsewhere = servers
    model.redirect_to = elsewhere.url("/v1/chat/completions")
    use_models(vault, gen=model.url("/v1/chat/completions#tiny-chat"))
    outcome = ask(vault)
    assert elsewhere.requests == []
    assert model.requests == [("POST", "/v1/chat/completions")]
    assert outcome.result["meta"]["answerGenerated"] is False  # the evidence answers instead
    assert "redirect" in outcome.note and elsewhere.url("/") in outcome.note


def test_embedding_uses_no_proxy_from_the_environment(
    vault: Engine, servers: tuple[ModelServer, ModelServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    model, proxy = servers
    proxied_through(proxy, monkeypatch)
    use_models(vault, embed=model.url("/v1/embeddings#toy"))
    run = vault.embed()
    assert proxy.requests == []
    assert model.requests and all(r == ("POST", "/v1/embeddings") for r in model.requests)
    assert run.embedded == 2


def test_embedding_follows_no_redirect_to_an_unjudged_host(
    vault: Engine, servers: tuple[ModelServer, ModelServer]
) -> None:
    model, elsewhere = servers
    model.redirect_to = elsewhere.url("/v1/embeddings")
    use_models(vault, embed=model.url("/v1/embeddings#toy"))
    with pytest.raises(GnoError) as failed:
        vault.embed()
    assert elsewhere.requests == []
    assert failed.value.code == "EMBED_ENDPOINT_FAILED"
    assert "redirect" in str(failed.value) and elsewhere.url("/") in str(failed.value)
