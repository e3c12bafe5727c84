"""``/api/openapi.json``: the REST API described from the route table and the tools' schemas.

Nothing is written twice: the parameters and request bodies are each
operation's input schema (generated from its msgspec argument Struct), the
answers its output schema (the same one ``tools/list`` declares). Each
schema is embedded whole under ``components/schemas`` with an ``$id`` of its
own, so its internal ``#/$defs/...`` references resolve inside it. Routes
whose tool the gateway does not serve (its tool profile) are left out.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Final

import msgspec

from gno_trio.server.dispatch import McpApp
from gno_trio.server.tooltypes import BoundTool
from gno_trio.transports.http.rest_routes import EVENTS, HEALTH, OPENAPI, ROUTES, Route

SCHEMA_ID_PREFIX: Final = "urn:gno-trio:rest:"
ERROR_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
        }
    },
}
_LOCAL_ANSWERS: Final[dict[str, dict[str, Any]]] = {
    HEALTH: {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["ok"],
                "properties": {"ok": {"const": True}},
            }
        }
    },
    OPENAPI: {"application/json": {"schema": {"type": "object", "required": ["openapi"]}}},
    EVENTS: {"text/event-stream": {"schema": {"type": "string"}}},
}
_ERROR_STATUSES: Final = ("400", "403", "404", "409", "500")


def _embedded(name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    copy = {key: value for key, value in schema.items() if key != "$schema"}
    copy["$id"] = SCHEMA_ID_PREFIX + name
    return copy


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _parameters(route: Route, bound: BoundTool) -> list[dict[str, Any]]:
    properties: Mapping[str, Any] = bound.spec.input_schema.get("properties", {})
    required = set(bound.spec.input_schema.get("required", ()))
    in_path = [segment[1:-1] for segment in route.segments if segment.startswith("{")]
    parameters = [
        {"name": name, "in": "path", "required": True, "schema": properties.get(name, {})}
        for name in in_path
    ]
    if route.from_body:
        return parameters
    for name, schema in properties.items():
        if name in in_path:
            continue
        parameters.append(
            {"name": name, "in": "query", "required": name in required, "schema": schema}
        )
    for alias, target in route.aliases.items():
        parameters.append({"name": alias, "in": "query", "schema": properties.get(target, {})})
    return parameters


def _operation(route: Route, bound: BoundTool, schemas: dict[str, Any]) -> dict[str, Any]:
    name = bound.spec.name
    input_name, output_name = f"{name}.input", f"{name}.output"
    if route.from_body:
        schemas.setdefault(input_name, _embedded(input_name, bound.spec.input_schema))
    if bound.spec.output_schema is not None:
        schemas.setdefault(output_name, _embedded(output_name, bound.spec.output_schema))
    entry: dict[str, Any] = {
        "operationId": f"{route.method.lower()}_{name}",
        "summary": route.summary,
        "description": bound.spec.description,
        "parameters": _parameters(route, bound),
        "responses": {
            "200": {
                "description": f"The structured result of {name}",
                "content": {
                    "application/json": {
                        "schema": _ref(output_name) if bound.spec.output_schema else {}
                    }
                },
            },
            **{
                status: {
                    "description": "A refusal",
                    "content": {"application/json": {"schema": _ref("Error")}},
                }
                for status in _ERROR_STATUSES
            },
        },
    }
    if route.from_body:
        entry["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": _ref(input_name)}},
        }
    return entry


def document(app: McpApp) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the routes ``app`` serves."""
    schemas: dict[str, Any] = {"Error": ERROR_SCHEMA}
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        if route.local is not None:
            entry: dict[str, Any] = {
                "operationId": route.local,
                "summary": route.summary,
                "responses": {
                    "200": {"description": route.summary, "content": _LOCAL_ANSWERS[route.local]}
                },
            }
        else:
            assert route.operation is not None
            bound = app.tools.get(route.operation) or app.operations.get(route.operation)
            if bound is None:
                continue
            entry = _operation(route, bound, schemas)
        paths.setdefault(route.pattern, {})[route.method.lower()] = entry
    return {
        "openapi": "3.1.0",
        "info": {"title": "gno-trio REST API", "version": app.version},
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{}, {"bearer": []}],
    }


@functools.lru_cache(maxsize=4)
def encoded(app: McpApp) -> bytes:
    """:func:`document` as JSON, built once per app (its tools never change)."""
    return msgspec.json.encode(document(app))


__all__ = ["ERROR_SCHEMA", "document", "encoded"]
