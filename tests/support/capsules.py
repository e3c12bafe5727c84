"""What every Context Capsule must hold, whichever surface compiled it.

Both contracts (the product's output schema and GNO's capsule schema, when the
reference files are beside the repository), an id that is the hash of the
content, and a budget that accounts for exactly the bytes the model reads.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from gno_trio.engine.canonical import canonical_json
from gno_trio.engine.context import agent_projection_text
from gno_trio.server.schemas import output_schema, output_schema_errors
from tests.conftest import gno_schema_errors
from tests.support.shared import SCHEMAS

GNO_CAPSULE_SCHEMA = SCHEMAS / "context-capsule-v1.schema.json"


def gno_capsule_errors(capsule: Mapping[str, Any]) -> list[str]:
    """The capsule's violations of GNO's own context-capsule schema."""
    return gno_schema_errors("context-capsule-v1", capsule)


def expected_id(capsule: Mapping[str, Any]) -> str:
    """The id a capsule must carry: the hash of its content without the spent budget."""
    content = {key: value for key, value in capsule.items() if key != "capsuleId"}
    budget = {
        key: value
        for key, value in capsule["budget"].items()
        if key not in ("usedBytes", "usedTokens")
    }
    return hashlib.sha256(canonical_json({**content, "budget": budget}).encode()).hexdigest()


def check_capsule(capsule: Mapping[str, Any]) -> None:
    """Both contracts hold, and the Capsule's accounting describes its own bytes."""
    assert output_schema_errors(output_schema("context-capsule"), capsule) == []
    if GNO_CAPSULE_SCHEMA.is_file():
        assert gno_capsule_errors(capsule) == []
    budget = capsule["budget"]
    # The budget is spent on what the model reads: the projection's canonical JSON,
    # about four characters to the token.
    seen = agent_projection_text(capsule)
    assert budget["usedBytes"] == len(seen.encode("utf-8"))
    assert budget["usedTokens"] == max(1, -(-len(seen) // 4))
    assert budget["usedTokens"] + budget["safetyMarginTokens"] <= budget["requestedTokens"]
    assert budget["usedBytes"] + budget["safetyMarginBytes"] <= budget["requestedBytes"]
    assert capsule["capsuleId"] == expected_id(capsule)
    omissions = capsule["omissions"]
    assert omissions["total"] == sum(omissions["reasonCounts"].values())
    assert omissions["truncated"] == (len(omissions["items"]) < omissions["total"])
    codes = [warning["code"] for warning in capsule["warnings"]]
    assert ("omissions_truncated" in codes) == omissions["truncated"]
    assert capsule["truncated"] == (omissions["reasonCounts"]["global_budget"] > 0)
    assert [item["selectionRank"] for item in capsule["evidence"]] == list(
        range(1, len(capsule["evidence"]) + 1)
    )
