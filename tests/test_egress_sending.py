"""``post_json``: the one way a model endpoint is spoken to (expansion and
reranking, embeddings, answer generation). It goes to the judged URL only (no
proxy from the environment, no redirect), within its timeout, and says
precisely why an answer is unusable.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from gno_trio.engine.egress.sending import PostFailed, post_json


class _Endpoint:
    """A loopback server whose answer to every POST is chosen by ``mode``."""

    def __init__(self) -> None:
        self.mode = "echo"
        self.bodies: list[bytes] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                endpoint.bodies.append(raw)
                status, payload, extra = endpoint.answer(raw)
                self.send_response(status)
                for name, value in extra:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                return

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1/x"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def answer(self, raw: bytes) -> tuple[int, bytes, list[tuple[str, str]]]:
        match self.mode:
            case "echo":
                return 200, raw, []
            case "error":
                return 503, b"model is loading\n", []
            case "redirect":
                return 302, b"", [("Location", "http://192.0.2.1/elsewhere")]
            case "garbage":
                return 200, b"<html>not json</html>", []
            case _:
                return 200, b"[" + b"1," * 4096 + b"1]", []

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


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


def test_the_body_goes_as_utf8_json_and_the_answer_comes_back_parsed(
    endpoint: _Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A proxy named by the environment is never used: it was not judged.
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{_closed_port()}")
    body = {"model": "m", "input": ["café 日本"]}
    assert post_json(endpoint.url, body, timeout=10, max_bytes=1 << 20) == body
    assert endpoint.bodies == [json.dumps(body, ensure_ascii=False).encode("utf-8")]


def test_each_unusable_answer_says_why(endpoint: _Endpoint) -> None:
    endpoint.mode = "error"
    failed = _failure(endpoint.url)
    assert (failed.kind, failed.status, failed.detail) == ("status", 503, "model is loading")
    endpoint.mode = "redirect"
    failed = _failure(endpoint.url)
    assert failed.kind == "redirected" and "http://192.0.2.1/elsewhere" in failed.reason
    endpoint.mode = "garbage"
    assert _failure(endpoint.url).kind == "not_json"
    endpoint.mode = "large"
    assert _failure(endpoint.url, max_bytes=1024).kind == "too_large"
    assert _failure(f"http://127.0.0.1:{_closed_port()}/v1/x").kind == "unreachable"


def test_an_endpoint_that_never_answers_times_out() -> None:
    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1/x"
        assert _failure(url, timeout=0.3).kind == "timeout"
