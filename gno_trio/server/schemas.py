"""JSON Schemas for tool inputs (derived) and outputs (authored files).

Input schemas come from the msgspec Structs in the tool modules (:mod:`gno_trio.tools`),
so the advertised bounds and the enforced bounds cannot drift apart. msgspec
emits a ``$ref`` into ``$defs`` for every Struct; some MCP clients and model
providers only read flat object schemas, so every reference is inlined and the
Python-side ``title``/docstring of each Struct is dropped from the wire.

Output schemas are JSON files under ``output_schemas/``, one per result
contract (``search-results``, ``get``, ...). They are read once and shared.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any, Final

import msgspec

JSON_SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

_OUTPUT_SCHEMA_PACKAGE: Final = "gno_trio.server"
_OUTPUT_SCHEMA_DIR: Final = "output_schemas"
_SCHEMA_SUFFIX: Final = ".schema.json"

OUTPUT_SCHEMA_NAMES: Final[tuple[str, ...]] = tuple(
    sorted(
        entry.name.removesuffix(_SCHEMA_SUFFIX)
        for entry in (resources.files(_OUTPUT_SCHEMA_PACKAGE) / _OUTPUT_SCHEMA_DIR).iterdir()
        if entry.name.endswith(_SCHEMA_SUFFIX)
    )
)
"""Every output schema, one file per result contract: a new file is a new name."""

# Keys msgspec copies from the Struct class (its name and docstring); they
# describe Python code, not the tool argument, so they stay off the wire.
_STRUCT_ONLY_KEYS: Final = frozenset({"title", "description"})


def input_schema_for(struct_type: type[msgspec.Struct]) -> dict[str, Any]:
    """Flat JSON Schema 2020-12 object schema for a tool's argument Struct.

    The result has ``type: object``, ``properties``, ``required`` (only when
    non-empty) and ``additionalProperties: false`` only for Structs that
    forbid unknown fields; it contains no ``$ref`` or ``$defs``.
    """
    generated = msgspec.json.schema(struct_type)
    return _object_schema(generated, generated.get("$defs", {}))


def input_schemas_for(struct_types: Sequence[type[msgspec.Struct]]) -> list[dict[str, Any]]:
    """:func:`input_schema_for` of each type, generated in one pass.

    A server lists every tool's schema before it answers ``tools/list``;
    msgspec builds the Structs the tools share (filters, query modes) once
    for all of them instead of once per tool, which roughly halves the
    work a new ``gno-trio mcp`` process does for its tool list. The
    schemas are the same dicts, one fresh copy per tool.
    """
    generated, definitions = msgspec.json.schema_components(struct_types)
    return [_object_schema(root, definitions) for root in generated]


def _object_schema(generated: Mapping[str, Any], definitions: Mapping[str, Any]) -> dict[str, Any]:
    """The flat object schema of one generated schema (a ``$ref`` into ``definitions``)."""
    root = _inline(generated, definitions, seen=())
    required = root.get("required", [])
    properties: dict[str, Any] = root.get("properties", {})
    # Required arguments first: a caller (or a model) reading the schema
    # meets what it must send before the optional filters shared by a family.
    ordered = {name: properties[name] for name in required if name in properties}
    ordered.update((name, value) for name, value in properties.items() if name not in ordered)
    schema: dict[str, Any] = {
        "type": "object",
        "$schema": JSON_SCHEMA_DIALECT,
        "properties": ordered,
    }
    if required:
        schema["required"] = list(required)
    if "additionalProperties" in root:
        schema["additionalProperties"] = root["additionalProperties"]
    return schema


def _inline(node: Any, definitions: Mapping[str, Any], seen: tuple[str, ...]) -> Any:
    """Replace every ``$ref`` with a copy of its definition, recursively.

    Keys written next to a ``$ref`` (a field's description) win over the
    definition's own keys. A recursive Struct cannot be flattened, so it is
    reported instead of looping.
    """
    if isinstance(node, list):
        return [_inline(item, definitions, seen) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.removeprefix("#/$defs/")
        if name in seen:
            raise ValueError(f"recursive input type cannot be inlined: {name}")
        target = {k: v for k, v in definitions[name].items() if k not in _STRUCT_ONLY_KEYS}
        if target.get("required") == []:
            del target["required"]
        result.update(_inline(target, definitions, (*seen, name)))
    for key, value in node.items():
        if key in ("$ref", "$defs"):
            continue
        if key == "properties" and isinstance(value, dict):
            result[key] = {prop: _inline(sub, definitions, seen) for prop, sub in value.items()}
        else:
            result[key] = _inline(value, definitions, seen)
    _type_string_enums(result)
    return result


def _type_string_enums(node: dict[str, Any]) -> None:
    """Give an all-string (or all-boolean) ``enum`` an explicit ``type``.

    msgspec emits Literal fields as a bare ``enum``; several tool-calling
    clients require a ``type`` on every property.
    """
    values = node.get("enum")
    if "type" in node or not isinstance(values, list) or not values:
        return
    if all(isinstance(value, str) for value in values):
        node["type"] = "string"
    elif all(isinstance(value, bool) for value in values):
        node["type"] = "boolean"


# ---------------------------------------------------------------------------
# Output schemas
# ---------------------------------------------------------------------------


@cache
def _load_output_schema(name: str) -> Mapping[str, Any]:
    if name not in OUTPUT_SCHEMA_NAMES:
        raise KeyError(f"unknown output schema: {name}")
    path = resources.files(_OUTPUT_SCHEMA_PACKAGE) / _OUTPUT_SCHEMA_DIR / f"{name}{_SCHEMA_SUFFIX}"
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def output_schema(name: str) -> dict[str, Any]:
    """A private copy of the named output schema (``"memory-recall"`` ...).

    Callers get a deep copy so a mutation in one place never leaks into the
    shared registry data.
    """
    return copy.deepcopy(dict(_load_output_schema(name)))


def output_schema_errors(schema: Mapping[str, Any], instance: object) -> list[str]:
    """Every way ``instance`` violates ``schema``, as ``path: message`` lines.

    Validates the way the official MCP client does (the validator class named
    by ``$schema``, references resolved inside the document only), so a test
    that passes here predicts what a client will accept. Needs the optional
    ``jsonschema`` dependency, imported on first use only.
    """
    from jsonschema.validators import validator_for  # type: ignore[import-untyped]
    from referencing import Registry

    validator_class = validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema, registry=Registry())
    problems: list[str] = []
    for error in sorted(
        validator.iter_errors(instance), key=lambda e: [str(part) for part in e.absolute_path]
    ):
        location = "/".join(str(part) for part in error.absolute_path) or "(root)"
        problems.append(f"{location}: {error.message}")
    return problems


__all__ = [
    "JSON_SCHEMA_DIALECT",
    "OUTPUT_SCHEMA_NAMES",
    "input_schema_for",
    "input_schemas_for",
    "output_schema",
    "output_schema_errors",
]
