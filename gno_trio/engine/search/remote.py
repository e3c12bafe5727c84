"""Query expansion and reranking through configured endpoints, never silently.

No model for either ships with gno-trio, so both are reached over HTTP,
named the way GNO names model roles: the ``expand`` and ``rerank`` URIs of
the preset ``models.activePreset`` names.

* ``expand``: an OpenAI-compatible ``/v1/chat/completions`` endpoint
  (``http(s)://host:port/v1/chat/completions#model``). It is asked for up to
  three keyword variants (``term:`` lines) and one short hypothetical answer
  (a ``hyde:`` line), which join the query as the caller's own ``queryModes``
  would.
* ``rerank``: a ``/rerank`` endpoint as llama.cpp's server, Jina and Cohere
  expose it: ``{"model", "query", "documents", "top_n"}`` in,
  ``{"results": [{"index", "relevance_score"}]}`` out.

Each call is an egress decision (``remote_inference`` to the endpoint's zone,
judged against the collections searched, with a receipt), is sent to the
configured URL only (no proxy, no redirect) and must answer within the
retrieval budget (``models.retrievalTimeout`` in milliseconds, default
2000). When a stage is asked for and cannot run (not configured, refused by
the policy, failed, late), the query keeps its fused order and says why.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gno_trio.config import Config
from gno_trio.engine.egress.policy import ContentClass
from gno_trio.engine.egress.sending import PostFailed, parse_endpoint, post_json
from gno_trio.engine.vectors.models import preset_uri
from gno_trio.errors import GnoError

DEFAULT_BUDGET_S: Final = 2.0
MAX_RESPONSE_BYTES: Final = 1024 * 1024
MAX_DOCUMENT_CHARS: Final = 2000
"""How much of each candidate's text a reranker is sent."""
MAX_TERMS: Final = 3
EXPAND_PROMPT: Final = (
    "You rewrite a search query for a personal knowledge base. Answer with at most three "
    "lines starting 'term: ' (keyword variants: synonyms, the words the notes would use, the "
    "query in English when it is in another language) and one line starting 'hyde: ' (a "
    "two-sentence passage that would answer it). Nothing else."
)
_LINE: Final = re.compile(r"^\s*(term|hyde)\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


class RemoteFailed(Exception):
    """An endpoint that did not give a usable answer in time; the message says how."""


Judge = Callable[[str, ContentClass], str | None]
"""(endpoint URL, content class) -> None when the egress policy allows it, else why not."""


@dataclass(frozen=True, slots=True)
class RemoteModels:
    """The retrieval-time model endpoints in force and how they may be used."""

    expand_uri: str | None
    rerank_uri: str | None
    budget_s: float
    judge: Judge


def retrieval_budget_s(config: Config) -> float:
    """``models.retrievalTimeout`` (milliseconds in the file) in seconds."""
    models = config.models if isinstance(config.models, dict) else {}
    raw = models.get("retrievalTimeout")
    if isinstance(raw, int | float) and not isinstance(raw, bool) and raw > 0:
        return float(raw) / 1000.0
    return DEFAULT_BUDGET_S


def role_uri(config: Config, role: str) -> str | None:
    """The configured ``expand`` or ``rerank`` URI, if any."""
    return preset_uri(config, role)


def _endpoint(uri: str) -> tuple[str, str]:
    """(URL, model name) of an ``http(s)://...#model`` URI; ``INVALID_INPUT`` otherwise."""
    endpoint = parse_endpoint(uri)
    if endpoint is None:
        raise GnoError("INVALID_INPUT", f"{uri} is not an HTTP endpoint and cannot run here")
    return endpoint.url, endpoint.model or "default"


def unusable(uri: str | None, role: str) -> str | None:
    """Why a configured role cannot be called at all (None: it can)."""
    if uri is None:
        return f"no {role} model is configured (models.presets[].{role})"
    try:
        _endpoint(uri)
    except GnoError:
        return f"the configured {role} model {uri} is not an HTTP endpoint and cannot run here"
    return None


def _post(url: str, body: dict[str, Any], timeout: float, what: str) -> Any:
    try:
        return post_json(url, body, timeout=max(0.001, timeout), max_bytes=MAX_RESPONSE_BYTES)
    except PostFailed as failed:
        raise RemoteFailed(_failure(failed, what, timeout)) from None


def _failure(failed: PostFailed, what: str, timeout: float) -> str:
    endpoint = f"the {what} endpoint"
    match failed.kind:
        case "redirected":
            return f"{endpoint}: {failed.reason}"
        case "status":
            return f"{endpoint} answered HTTP {failed.status}"
        case "timeout":
            return f"{endpoint} did not answer within {timeout:.1f} s"
        case "unreachable":
            return f"{endpoint} is unreachable: {failed.reason}"
        case "too_large":
            return f"{endpoint}'s answer is too large"
        case "not_json":
            return f"{endpoint}'s answer is not JSON"


def expand(uri: str, query: str, timeout: float) -> list[tuple[str, str]]:
    """Query modes (``term`` and at most one ``hyde``) the expansion endpoint proposes."""
    url, model = _endpoint(uri)
    body = {
        "model": model,
        "temperature": 0,
        "max_tokens": 256,
        "messages": [
            {"role": "system", "content": EXPAND_PROMPT},
            {"role": "user", "content": query},
        ],
    }
    answer = _post(url, body, timeout, "expansion")
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise RemoteFailed("the expansion endpoint's answer is malformed") from None
    if not isinstance(content, str):
        raise RemoteFailed("the expansion endpoint returned no text")
    terms: list[tuple[str, str]] = []
    hyde: list[tuple[str, str]] = []
    for kind, text in _LINE.findall(content):
        kind = kind.lower()
        if kind == "term" and len(terms) < MAX_TERMS and text.lower() != query.lower():
            terms.append(("term", text[:200]))
        elif kind == "hyde" and not hyde:
            hyde.append(("hyde", text[:1000]))
    if not terms and not hyde:
        raise RemoteFailed("the expansion endpoint proposed no term or hyde line")
    return terms + hyde


def rerank(uri: str, query: str, documents: Sequence[str], timeout: float) -> list[float]:
    """The reranker's relevance of each document to ``query``, in the order given."""
    url, model = _endpoint(uri)
    body = {
        "model": model,
        "query": query,
        "documents": [text[:MAX_DOCUMENT_CHARS] for text in documents],
        "top_n": len(documents),
    }
    answer = _post(url, body, timeout, "rerank")
    scores: list[float | None] = [None] * len(documents)
    try:
        for item in answer["results"]:
            index = int(item["index"])
            value = item.get("relevance_score", item.get("score"))
            if 0 <= index < len(documents) and isinstance(value, int | float):
                scores[index] = float(value)
    except (KeyError, TypeError, ValueError):
        raise RemoteFailed("the rerank endpoint's answer is malformed") from None
    if any(score is None for score in scores):
        raise RemoteFailed("the rerank endpoint did not score every candidate")
    return [float(score or 0.0) for score in scores]


__all__ = [
    "DEFAULT_BUDGET_S",
    "Judge",
    "RemoteFailed",
    "RemoteModels",
    "expand",
    "rerank",
    "retrieval_budget_s",
    "role_uri",
    "unusable",
]
