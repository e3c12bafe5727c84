"""Era-specific decoration of successful results.

Legacy results go out exactly as built (a legacy ``ping`` must answer ``{}`` with no
extra key). Modern results always say ``resultType: "complete"``, identify the
server in ``_meta``, and cacheable ones carry ``ttlMs``/``cacheScope``. GNO's
answers depend on a live index and on the caller, so they are never fresh for
longer than the request (``ttlMs: 0``) and never shared across callers
(``cacheScope: "private"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from gno_trio.protocol.envelope import SERVER_INFO_KEY
from gno_trio.protocol.versions import Era

RESULT_TYPE_COMPLETE: Final = "complete"
CACHE_TTL_MS: Final = 0
CACHE_SCOPE: Final = "private"

# The 2026-07-28 schema's CacheableResult family.
CACHEABLE_METHODS: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)


def stamp_modern(
    method: str, result: Mapping[str, Any], server_info: Mapping[str, Any]
) -> dict[str, Any]:
    """A copy of ``result`` with the fields every 2026-07-28 result must or should carry.

    Values the handler already set win, except that ``serverInfo`` is merged into
    any existing ``_meta`` rather than replacing it.
    """
    stamped = dict(result)
    stamped.setdefault("resultType", RESULT_TYPE_COMPLETE)
    meta = stamped.get("_meta")
    merged_meta = dict(meta) if isinstance(meta, Mapping) else {}
    merged_meta.setdefault(SERVER_INFO_KEY, dict(server_info))
    stamped["_meta"] = merged_meta
    if method in CACHEABLE_METHODS:
        stamped.setdefault("ttlMs", CACHE_TTL_MS)
        stamped.setdefault("cacheScope", CACHE_SCOPE)
    return stamped


def stamp_result(
    era: Era, method: str, result: Mapping[str, Any], server_info: Mapping[str, Any]
) -> Mapping[str, Any]:
    """The result as the client of ``era`` must see it (legacy: unchanged)."""
    if era is Era.MODERN:
        return stamp_modern(method, result, server_info)
    return result
