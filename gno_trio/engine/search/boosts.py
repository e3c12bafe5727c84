"""The content-type boosts ranking applies, and the fingerprint status and diagnose report for them.

Ranking owns the rules (none today: ``contentTypes`` in ``index.yml`` is
kept, not used); ``status`` and ``query diagnose`` both report the same
fingerprint from here, so a trace can tell whether two answers were
ranked under the same rules.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

# The content-type boosts ranking applies: none (contentTypes in index.yml are kept, not used).
BOOST_RULES: Final[tuple[Mapping[str, Any], ...]] = ()


def content_type_boost() -> dict[str, Any]:
    """The boosts ranking applies and a fingerprint of them (no path prefixes, as GNO redacts)."""
    rules = [dict(rule) for rule in BOOST_RULES]
    canonical = json.dumps(rules, sort_keys=True, separators=(",", ":"))
    return {"rulesFingerprint": hashlib.sha256(canonical.encode()).hexdigest(), "rules": rules}
