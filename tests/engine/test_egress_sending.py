"""``post_json``: the one way a model endpoint is spoken to (expansion and
reranking, embeddings, answer generation). It goes to the judged URL only (no
proxy from the environment, no redirect), within its timeout, and says
precisely why an answer is unusable.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from gno_trio.engine.egress.sending import PostFailed, parse_endpoint, post_json
from tests.support.loopback_json import JsonEndpoint, Raw


class _Endpoint(JsonEndpoint):
    """A loopback model endpoint whose answer to every POST is chosen by ``mode``."""

    def __init__(self) -> None:
        self.mode = "echo"
        super().__init__(self._reply)

    def _reply(self, path: str, body: Any) -> Any:
        match self.mode:
            case "echo":
                return body
            case "error":
                return Raw(503, b"model is loading\n")
            case "garbage":
                return Raw(200, b"<html>not json</html>")
            case _:
                return list(range(4096))


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Endpoint]:
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    served = _Endpoint()
    yield served
    served.close()


def _failure(url: str, *, timeout: float = 10, max_bytes: int = 1 << 20) -> PostFailed:
    with pytest.raises(PostFailed) as caught:
        post_json(url, {"input": ["x"]}, timeout=timeout, max_bytes=max_bytes)
    return caught.value


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_the_body_goes_as_json_to_the_judged_url_and_the_answer_comes_back_parsed(
    endpoint: _Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A proxy named by the environment is never used: it was not judged.
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{_closed_port()}")
    body = {"model": "m", "input": ["café 日本"]}
    assert post_json(endpoint.url("/v1/x"), body, timeout=10, max_bytes=1 << 20) == body
    assert [r.body for r in endpoint.requests] == [body]


def test_each_unusable_answer_says_why(endpoint: _Endpoint) -> None:
    url = endpoint.url("/v1/x")
    endpoint.mode = "error"
    failed = _failure(url)
    assert (failed.kind, failed.status, failed.detail) == ("status", 503, "model is loading")
    endpoint.redirect_to = "http://192.0.2.1/elsewhere"
    failed = _failure(url)
    assert failed.kind == "redirected" and "http://192.0.2.1/elsewhere" in failed.reason
    endpoint.redirect_to = None
    endpoint.mode = "garbage"
    assert _failure(url).kind == "not_json"
    endpoint.mode = "large"
    assert _failure(url, max_bytes=1024).kind == "too_large"
    assert _failure(f"http://127.0.0.1:{_closed_port()}/v1/x").kind == "unreachable"


def test_an_endpoint_that_never_answers_times_out() -> None:
    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1/x"
        assert _failure(url, timeout=0.3).kind == "timeout"


def test_an_endpoint_uri_names_the_url_to_judge_and_the_model() -> None:
    endpoint = parse_endpoint("http://gpu.lan:8080/v1/embeddings/#bge-m3")
    assert endpoint == ("http://gpu.lan:8080/v1/embeddings/", "bge-m3", "embeddings")
    assert parse_endpoint("https://api.example/v1/chat/completions") == (
        "https://api.example/v1/chat/completions",
        "",
        "completions",
    )
    for not_http in ("file:///models/x.gguf", "hf:org/model", "http:///no-host", "model.bin"):
        assert parse_endpoint(not_http) is None
