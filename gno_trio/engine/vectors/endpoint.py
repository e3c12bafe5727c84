"""An OpenAI-compatible embeddings endpoint as the embedder (a bigger local model server).

Configured the way GNO names HTTP model roles: the embed model URI is
``http(s)://host:port/v1/embeddings#model-name`` (the fragment is the model
name sent in the request; without one, the last path segment is used).
Requests are ``POST {"model": name, "input": [texts]}`` and the answer's
``data[].embedding`` rows are put back in ``index`` order.

Chunk text leaves the process here, so the endpoint's network zone is
checked against each collection's egress policy before anything is sent
(a loopback server is allowed for every policy; a host name that is not
``localhost`` counts as remote, since resolving it could not prove more),
and the request goes to that URL only: no proxy from the environment, no
redirect followed (:mod:`gno_trio.engine.egress.sending`).
Failures are errors with a code, never partial vectors: a server that is
down, slow (``models.inferenceTimeout``, default 30 s), answers an HTTP error,
malformed JSON, too few rows or another dimension than before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from gno_trio.engine.egress.policy import endpoint_zone, policy_allows_zone
from gno_trio.engine.egress.sending import PostFailed, parse_endpoint, post_json
from gno_trio.engine.vectors.embedder import (
    EMBED_ENDPOINT_FAILED,
    MODEL_NOT_FOUND,
    Matrix,
    ModelIdentity,
    checked,
)
from gno_trio.errors import GnoError

DEFAULT_TIMEOUT_S: Final = 30.0
# An answer larger than this is refused rather than read into memory
# (a batch of 32 vectors of 4,096 floats as JSON is about 3 MB).
MAX_RESPONSE_BYTES: Final = 64 * 1024 * 1024


def is_endpoint_uri(uri: str) -> bool:
    return uri.startswith(("http://", "https://"))


def allowed_by_policy(uri: str, policy: str) -> bool:
    """May a collection with egress ``policy`` have its text sent to this endpoint?"""
    return policy_allows_zone(policy, endpoint_zone(uri))


class EndpointEmbedder:
    """Embeddings from an OpenAI-compatible HTTP server."""

    def __init__(
        self, uri: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, dimension: int | None = None
    ) -> None:
        endpoint = parse_endpoint(uri)
        if endpoint is None:
            raise GnoError(MODEL_NOT_FOUND, f"Not an embeddings endpoint URL: {uri}")
        self._url = endpoint.url
        self._model = endpoint.model or endpoint.last_segment or "embedding-model"
        self._timeout = timeout_s
        self._identity = ModelIdentity(uri=uri, version="", dimension=dimension)

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    def pin_dimension(self, dimension: int) -> None:
        """Expect ``dimension`` from now on (what this model's stored vectors have)."""
        self._identity = ModelIdentity(self._identity.uri, self._identity.version, dimension)

    def embed_texts(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self._identity.dimension or 0), dtype=np.float32)
        answer = self._post({"model": self._model, "input": list(texts)})
        rows = _rows(answer, len(texts), self._identity.uri)
        matrix = checked(rows, len(texts), self._identity)
        if self._identity.dimension is None:
            self.pin_dimension(int(matrix.shape[1]))
        return matrix

    def _post(self, body: dict[str, Any]) -> Any:
        try:
            return post_json(self._url, body, timeout=self._timeout, max_bytes=MAX_RESPONSE_BYTES)
        except PostFailed as failed:
            raise GnoError(EMBED_ENDPOINT_FAILED, _failure(failed, self._identity.uri)) from None


def _failure(failed: PostFailed, uri: str) -> str:
    endpoint = f"Embeddings endpoint {uri}"
    match failed.kind:
        case "redirected":
            return f"{endpoint}: {failed.reason}"
        case "status":
            detail = f": {failed.detail}" if failed.detail else ""
            return f"{endpoint} answered HTTP {failed.status}{detail}"
        case "timeout" | "unreachable":
            return f"{endpoint} is unreachable: {failed.reason}"
        case "too_large":
            return f"{endpoint} answered too much"
        case "not_json":
            return f"{endpoint} answered something not JSON"


def _rows(answer: Any, count: int, uri: str) -> list[Any]:
    """The embedding rows of an OpenAI-style answer, in input order."""
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list) or len(data) != count:
        raise GnoError(
            EMBED_ENDPOINT_FAILED,
            f"Embeddings endpoint {uri} answered {len(data) if isinstance(data, list) else 0} "
            f"embeddings for {count} texts",
        )
    placed: list[Any] = [None] * count
    for position, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("embedding"), list):
            raise GnoError(EMBED_ENDPOINT_FAILED, f"Embeddings endpoint {uri}: malformed item")
        index = item.get("index", position)
        if not isinstance(index, int) or not 0 <= index < count or placed[index] is not None:
            raise GnoError(EMBED_ENDPOINT_FAILED, f"Embeddings endpoint {uri}: bad item index")
        placed[index] = item["embedding"]
    return placed
