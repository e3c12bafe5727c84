"""Re-checking a saved Context Capsule against the index as it is now (a verification receipt).

Nothing is rebuilt or changed. The Capsule is first held to its own
contract: its shape, its id (the hash of its canonical content) and the
index it names; a malformed, non-canonical or foreign Capsule fails before
any evidence is read. Then, inside one read transaction, each passage is
compared with today's document: ``unchanged`` when the source, mirror and
passage hashes all match, ``stale`` when the document is there but its
bytes or the passage moved on, ``missing`` when the document or its text is
gone. Ranking is judged by compiling the Capsule's own request again:
``unchanged`` when a passage keeps its retrieval rank, ``reranked`` when it
moved, ``unavailable`` when it cannot be told (changed content, or a
passage the new compile does not retain). Fingerprints (configuration,
retrieval, models, tokenizer, index) are compared one by one, and every
drift is named.

The answer is GNO's ``context-capsule-verification@1.0``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from gno_trio.config import Config
from gno_trio.engine.canonical import sha256_text
from gno_trio.engine.context import codes
from gno_trio.engine.context.capsule import capsule_id
from gno_trio.engine.context.lineage import config_fingerprint, scope_fingerprint
from gno_trio.engine.context.request import ContextRequest
from gno_trio.engine.search.scope import Scope
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, read_snapshot
from gno_trio.errors import GnoError

SCHEMA_VERSION: Final = "1.0"
_SHA256: Final = re.compile(r"[a-f0-9]{64}")
_DRIFT_ORDER: Final = (
    ("config", "config_changed"),
    ("retrieval", "retrieval_changed"),
    ("embeddingModel", "embedding_model_changed"),
    ("rerankModel", "rerank_model_changed"),
    ("tokenizer", "tokenizer_changed"),
    ("index", "index_changed"),
)
_EVIDENCE_FIELDS: Final = ("evidenceId", "uri", "sourceHash", "mirrorHash", "passageHash")


def _malformed(detail: str) -> GnoError:
    return GnoError(codes.INVALID_INPUT, f"Not a well-formed Context Capsule: {detail}")


def _object(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _malformed(f"{where} must be an object")
    return value


def _checked(capsule: Mapping[str, Any], index_name: str) -> None:
    """The Capsule's shape, identity and index, before any evidence is read."""
    if capsule.get("schemaVersion") not in ("1.0", "1.1"):
        raise _malformed("schemaVersion must be 1.0 or 1.1")
    if capsule.get("coordinateSpace") != "canonical_mirror":
        raise _malformed("coordinateSpace must be canonical_mirror")
    identity = capsule.get("capsuleId")
    if not isinstance(identity, str) or not _SHA256.fullmatch(identity):
        raise _malformed("capsuleId must be a SHA-256")
    for key in ("scope", "budget", "retrieval", "fingerprints"):
        _object(capsule.get(key), key)
    snapshot = _object(capsule["retrieval"].get("indexSnapshot"), "retrieval.indexSnapshot")
    if not isinstance(snapshot.get("after"), str):
        raise _malformed("retrieval.indexSnapshot.after is missing")
    evidence = capsule.get("evidence")
    if not isinstance(evidence, list) or not evidence:
        raise _malformed("evidence must be a non-empty list")
    for number, item in enumerate(evidence):
        entry = _object(item, f"evidence[{number}]")
        for key in _EVIDENCE_FIELDS:
            if not isinstance(entry.get(key), str):
                raise _malformed(f"evidence[{number}].{key} is missing")
        for key in ("startLine", "endLine", "retrievalRank"):
            value = entry.get(key)
            if type(value) is not int or value < 1:
                raise _malformed(f"evidence[{number}].{key} must be a positive integer")
    try:
        recomputed = capsule_id(capsule)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _malformed(f"its content cannot be hashed ({exc})") from None
    if recomputed != identity:
        raise GnoError(
            codes.INVALID_INPUT, "The Capsule is not canonical: its capsuleId does not match it"
        )
    named = capsule["scope"].get("indexName")
    if named != index_name:
        raise GnoError(
            codes.INVALID_INPUT,
            f"The Capsule was compiled from index {named!r}, not {index_name!r}",
        )


@dataclass(frozen=True, slots=True)
class _Content:
    status: str
    code: str
    source_hash: str | None
    mirror_hash: str | None
    passage_hash: str | None


def _content(conn: Connection, item: Mapping[str, Any]) -> _Content:
    documents = SQLITE_STORES.documents(conn)
    row = documents.hashes_at(item["uri"])
    if row is None:
        return _Content("missing", "source_missing", None, None, None)
    source, mirror = str(row["source_hash"]), row["mirror_hash"]
    text = documents.mirror(mirror) if mirror else None
    if text is None:
        return _Content("missing", "mirror_missing", source, mirror, None)
    lines = text.split("\n")
    start, end = int(item["startLine"]), int(item["endLine"])
    passage = "\n".join(lines[start - 1 : end]) if 1 <= start <= end <= len(lines) else ""
    passage_hash = sha256_text(passage)
    if source != item["sourceHash"]:
        code = "source_stale"
    elif mirror != item["mirrorHash"]:
        code = "mirror_stale"
    elif passage_hash != item["passageHash"]:
        code = "passage_stale"
    else:
        return _Content("unchanged", "verified_unchanged", source, mirror, passage_hash)
    return _Content("stale", code, source, mirror, passage_hash)


def _scope(capsule: Mapping[str, Any], config: Config) -> list[str]:
    scope = capsule["scope"]
    collections = [str(name) for name in scope.get("collections") or ()]
    if collections:
        return collections
    prefix = scope.get("uriPrefix")
    if isinstance(prefix, str) and prefix.startswith("gno://"):
        return [prefix[len("gno://") :].split("/", 1)[0]]
    return sorted(c.name for c in config.collections)


def request_of(capsule: Mapping[str, Any]) -> ContextRequest:
    """The request a Capsule records, to compile it again."""
    scope, budget = capsule["scope"], capsule["budget"]
    asked = capsule["retrieval"].get("request") or {}
    return ContextRequest(
        goal=str(capsule["goal"]),
        budget_tokens=int(budget["requestedTokens"]),
        query=capsule.get("query"),
        scope=Scope(
            collections=tuple(scope.get("collections") or ()),
            uri_prefix=scope.get("uriPrefix"),
            tags_all=tuple(scope.get("tagsAll") or ()),
            tags_any=tuple(scope.get("tagsAny") or ()),
            categories=tuple(scope.get("categories") or ()),
            exclude=tuple(asked.get("exclude") or ()),
            author=asked.get("author"),
            lang=asked.get("lang"),
            intent=asked.get("intent"),
            min_score=asked.get("minScore"),
            since=scope.get("since"),
            until=scope.get("until"),
        ),
        query_modes=tuple((m["mode"], m["text"]) for m in asked.get("queryModes") or ()),
        graph=asked.get("graphRequested"),
        no_rerank=not asked.get("rerankRequested", True),
        limit=asked.get("limit"),
        candidate_limit=asked.get("candidateLimit"),
        budget_bytes=budget.get("requestedBytes"),
        safety_margin_tokens=int(budget.get("safetyMarginTokens") or 0),
        safety_margin_bytes=int(budget.get("safetyMarginBytes") or 0),
        depth_policy=str(capsule["retrieval"].get("depthPolicy") or "balanced"),
    )


def _ranking(
    status: str, old_rank: int, new_ranks: Mapping[str, int], evidence_id: str
) -> tuple[str, str, int | None]:
    if status != "unchanged" or evidence_id not in new_ranks:
        return "unavailable", "ranking_unavailable", None
    rank = new_ranks[evidence_id]
    if rank == old_rank:
        return "unchanged", "ranking_unchanged", rank
    return "reranked", "ranking_changed", rank


def verify_capsule(
    conn: Connection,
    config: Config,
    index_name: str,
    capsule: Mapping[str, Any],
    recompiled: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The verification receipt of ``capsule``; ``recompiled`` is its request compiled today.

    Raises ``invalid_input`` for a malformed, non-canonical or foreign
    Capsule, ``index_changed_during_compile`` when the index moved while it
    was being read.
    """
    _checked(capsule, index_name)
    scope = _scope(capsule, config)

    def fingerprint() -> str:
        return scope_fingerprint(conn, config, index_name, scope)

    with read_snapshot(conn):
        before = fingerprint()
        contents = [_content(conn, item) for item in capsule["evidence"]]
        after = fingerprint()
    if before != after:
        raise GnoError(codes.INDEX_CHANGED, "The index changed while the Capsule was verified")
    new_ranks = (
        {str(e["evidenceId"]): int(e["retrievalRank"]) for e in recompiled["evidence"]}
        if recompiled is not None
        else {}
    )
    evidence = []
    for item, content in zip(capsule["evidence"], contents, strict=True):
        ranking, ranking_code, rank = _ranking(
            content.status, int(item["retrievalRank"]), new_ranks, str(item["evidenceId"])
        )
        evidence.append(
            {
                "evidenceId": item["evidenceId"],
                "uri": item["uri"],
                "contentStatus": content.status,
                "contentCode": content.code,
                "rankingStatus": ranking,
                "rankingCode": ranking_code,
                "currentSourceHash": content.source_hash,
                "currentMirrorHash": content.mirror_hash,
                "currentPassageHash": content.passage_hash,
                "currentRetrievalRank": rank,
            }
        )
    statuses = {entry["contentStatus"] for entry in evidence}
    content_status = (
        "missing" if "missing" in statuses else "stale" if "stale" in statuses else "unchanged"
    )
    rankings = {entry["rankingStatus"] for entry in evidence}
    if content_status != "unchanged" or "unavailable" in rankings:
        ranking_status = "unavailable"
    else:
        ranking_status = "reranked" if "reranked" in rankings else "unchanged"
    saved = capsule["fingerprints"]
    current = {
        "config": config_fingerprint(config),
        "retrieval": (recompiled or capsule)["fingerprints"]["retrieval"],
        "embeddingModel": None,
        "rerankModel": None,
        "tokenizer": None,
        "index": after,
    }
    previous = {**saved, "index": capsule["retrieval"]["indexSnapshot"]["after"]}
    reasons = [reason for key, reason in _DRIFT_ORDER if previous.get(key) != current[key]]
    return {
        "schemaVersion": SCHEMA_VERSION,
        "coordinateSpace": "canonical_mirror",
        "capsuleId": capsule["capsuleId"],
        "operationStatus": "completed",
        "contentStatus": content_status,
        "contentCode": {
            "unchanged": "verified_unchanged",
            "stale": "content_stale",
            "missing": "content_missing",
        }[content_status],
        "rankingStatus": ranking_status,
        "rankingCode": {
            "unchanged": "ranking_unchanged",
            "reranked": "ranking_changed",
            "unavailable": "ranking_unavailable",
        }[ranking_status],
        "currentFingerprints": current,
        "fingerprintStatus": "drifted" if reasons else "unchanged",
        "fingerprintReasons": reasons,
        "indexSnapshot": {"before": before, "after": after, "stable": True},
        "evidence": evidence,
    }


__all__ = ["SCHEMA_VERSION", "request_of", "verify_capsule"]
