"""The memory contract's schema checks, shared by the engine, CLI and MCP memory tests.

A recall answer must satisfy both the seed's ``memory-recall`` schema (read
from the shared reference next to the repository; the test is skipped when
it is absent) and the schema this server advertises.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema  # type: ignore[import-untyped]

from gno_trio.server.schemas import output_schema
from tests.support.shared import SEED, required

SEED_RECALL_SCHEMA = SEED / "memory-recall.schema.json"


@cache
def seed_recall_schema() -> dict[str, Any]:
    required(SEED_RECALL_SCHEMA, "the seed memory-recall schema")
    schema: dict[str, Any] = json.loads(SEED_RECALL_SCHEMA.read_text("utf-8"))
    return schema


def check_schema(schema: dict[str, Any], instance: Any) -> None:
    """Validate ``instance`` with the validator ``schema`` names, formats checked."""
    validator_cls = jsonschema.validators.validator_for(schema)
    validator_cls.check_schema(schema)
    validator_cls(schema, format_checker=jsonschema.FormatChecker()).validate(instance)


def valid_recall(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` after checking it against the seed schema and the server's own."""
    check_schema(seed_recall_schema(), result)
    check_schema(output_schema("memory-recall"), result)
    return result


def valid_remember(result: dict[str, Any]) -> dict[str, Any]:
    check_schema(output_schema("memory-remember"), result)
    return result
