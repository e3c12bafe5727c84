"""Recall receipts: issued by recall, presented back to remember to fence replays.

A receipt is content-free: it names who asked (``caller``, ``session``), when
(``issuedAt``), which facts came back (``memoryIds``, their docids) and the
hashes of the returned spans (``spanHashes``), plus a ``digest`` over exactly
those five values. Remember refuses a text whose hash is one of the presented
span hashes (``MEMORY_FENCED_REPLAY``).

The digest is a plain SHA-256, not a signature: anyone can recompute it. What
checking it buys is that an altered receipt (a span hash dropped to slip a
replay past the fence, a session edited) is caught unless the editor also
recomputed the digest, and that a receipt issued to another caller or session,
or dated in the future, is refused as stale instead of silently trusted. A
receipt without a digest is accepted as a bare list of span hashes: it can
only ever fence more, never less.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from gno_trio.engine.facts import parse_instant
from gno_trio.engine.memory.identity import Identity
from gno_trio.errors import GnoError

RECEIPT_INVALID = "MEMORY_RECEIPT_INVALID"
MAX_RECEIPT_ENTRIES = 256
CLOCK_SKEW = timedelta(minutes=5)
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")


def digest_of(
    caller: str, session: str, issued_at: str, memory_ids: Sequence[str], span_hashes: Sequence[str]
) -> str:
    """SHA-256 hex of the compact JSON of the five receipt values, in this key order."""
    payload = json.dumps(
        {
            "caller": caller,
            "session": session,
            "issuedAt": issued_at,
            "memoryIds": list(memory_ids),
            "spanHashes": list(span_hashes),
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def issue(
    identity: Identity, issued_at: str, memory_ids: Sequence[str], span_hashes: Sequence[str]
) -> dict[str, Any]:
    """The receipt recall returns (``spanHashes`` sorted and unique)."""
    spans = sorted(set(span_hashes))
    return {
        "caller": identity.caller,
        "session": identity.session,
        "issuedAt": issued_at,
        "memoryIds": list(memory_ids),
        "spanHashes": spans,
        "digest": digest_of(identity.caller, identity.session, issued_at, memory_ids, spans),
    }


@dataclass(frozen=True, slots=True)
class PresentedReceipt:
    """A receipt as a caller handed it to remember; every part may be missing."""

    caller: str | None = None
    session: str | None = None
    issued_at: str | None = None
    memory_ids: tuple[str, ...] = ()
    span_hashes: tuple[str, ...] = ()
    digest: str | None = None


def _invalid(message: str) -> GnoError:
    return GnoError(RECEIPT_INVALID, message)


def _optional_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None or isinstance(value, str):
        return value
    raise _invalid(f"receipt.{key} must be a string")


def _str_list(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key)
    if value is None:
        return ()
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise _invalid(f"receipt.{key} must be a list of strings")
    if len(value) > MAX_RECEIPT_ENTRIES:
        raise _invalid(f"receipt.{key} has more than {MAX_RECEIPT_ENTRIES} entries")
    return tuple(value)


def parse_presented(data: object) -> PresentedReceipt:
    """A receipt from JSON-like data (an MCP argument, a CLI receipt file)."""
    if not isinstance(data, Mapping):
        raise _invalid("a receipt must be a JSON object")
    return PresentedReceipt(
        caller=_optional_str(data, "caller"),
        session=_optional_str(data, "session"),
        issued_at=_optional_str(data, "issuedAt"),
        memory_ids=_str_list(data, "memoryIds"),
        span_hashes=_str_list(data, "spanHashes"),
        digest=_optional_str(data, "digest"),
    )


def fenced_spans(receipt: PresentedReceipt | None, identity: Identity) -> frozenset[str]:
    """The span hashes a presented receipt fences, after checking the receipt.

    ``MEMORY_RECEIPT_INVALID`` when a span hash is not SHA-256 hex, when a
    digest is given but does not match the receipt, when the receipt names
    another caller or session than the one remembering, or when it was issued
    in the future.
    """
    if receipt is None:
        return frozenset()
    if max(len(receipt.span_hashes), len(receipt.memory_ids)) > MAX_RECEIPT_ENTRIES:
        raise _invalid(f"a receipt lists at most {MAX_RECEIPT_ENTRIES} memories")
    for span in receipt.span_hashes:
        if not _SHA256_RE.match(span):
            raise _invalid(f"receipt.spanHashes holds a value that is not a sha256 hex: {span!r}")
    if receipt.digest is not None:
        if receipt.caller is None or receipt.session is None or receipt.issued_at is None:
            raise _invalid("a receipt with a digest must carry caller, session and issuedAt")
        expected = digest_of(
            receipt.caller,
            receipt.session,
            receipt.issued_at,
            receipt.memory_ids,
            receipt.span_hashes,
        )
        if not hmac.compare_digest(expected, receipt.digest.strip().lower()):
            raise _invalid("receipt digest does not match its contents (altered or forged)")
    if receipt.caller is not None and receipt.caller != identity.caller:
        raise _invalid(
            f"receipt was issued to caller {receipt.caller!r}, not {identity.caller!r} (stale)"
        )
    if receipt.session is not None and receipt.session != identity.session:
        raise _invalid("receipt was issued to another session (stale); recall again")
    if receipt.issued_at is not None:
        issued = parse_instant(receipt.issued_at)
        if issued is None:
            raise _invalid(f"receipt.issuedAt is not an RFC 3339 instant: {receipt.issued_at!r}")
        if issued > datetime.now(UTC) + CLOCK_SKEW:
            raise _invalid("receipt.issuedAt lies in the future")
    return frozenset(receipt.span_hashes)
