"""A JSON-over-HTTP endpoint on a loopback port, served by a thread of the test process.

Model endpoints (chat completions, embeddings, rerank) are the user's own
servers; tests stand one up here, see every request that reached it, and
can make it redirect, to check what the engine sends and where.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple


class Received(NamedTuple):
    """One request as the endpoint saw it (``body`` parsed; ``None`` when empty)."""

    method: str
    path: str
    body: Any


class Raw(NamedTuple):
    """An answer sent as these bytes with this status instead of as JSON."""

    status: int
    body: bytes


class JsonEndpoint:
    """Answers each request with ``answer(path, body)`` as JSON, or redirects every request.

    An answer that is a :class:`Raw` is sent as it is (an error status, a body that is not JSON).

    ``redirect_to`` set: each request is answered ``302`` to it, and logged.
    """

    def __init__(self, answer: Callable[[str, Any], Any]) -> None:
        self.requests: list[Received] = []
        self.redirect_to: str | None = None
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._answer(b"")

            def do_POST(self) -> None:
                self._answer(self.rfile.read(int(self.headers.get("Content-Length", "0"))))

            def _answer(self, raw: bytes) -> None:
                body = json.loads(raw) if raw else None
                endpoint.requests.append(Received(self.command, self.path, body))
                if endpoint.redirect_to is not None:
                    self.send_response(302)
                    self.send_header("Location", endpoint.redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                answered = answer(self.path, body)
                status, payload = (
                    answered if isinstance(answered, Raw) else (200, json.dumps(answered).encode())
                )
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                return

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def chat_reply(content: str) -> dict[str, Any]:
    """An OpenAI-compatible chat completion whose one choice says ``content``."""
    return {"choices": [{"message": {"role": "assistant", "content": content}}]}


CHAT_REPLY = "Green tea steeps for two minutes at eighty degrees [1]."
"""What :class:`ModelServer`'s chat completions say (an answer to the tea question)."""


class ModelServer(JsonEndpoint):
    """A loopback server that answers chat and embedding requests, or redirects them."""

    def __init__(self) -> None:
        super().__init__(lambda _path, body: self.reply(body or {}))

    def reply(self, request: dict[str, Any]) -> dict[str, Any]:
        if "input" in request:
            data = [
                {"index": i, "embedding": [float(len(text)), 1.0, 0.5]}
                for i, text in enumerate(request["input"])
            ]
            return {"object": "list", "data": data}
        return chat_reply(CHAT_REPLY)

    def calls(self) -> list[tuple[str, str]]:
        return [(seen.method, seen.path) for seen in self.requests]
