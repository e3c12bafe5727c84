"""The tool registry as data, and the rules that pick the advertised set.

A :class:`ToolDefinition` holds everything about a tool that is the same in
every profile (input type, output schema, annotations, read/write class);
:meth:`ToolDefinition.spec` adds the profile's description. Which tools a
listener advertises is decided once, at start-up, by
:func:`select_tool_names` from three inputs: the profile, the write gate and
the set of tools this server actually implements.

Two rules hold for every combination: the order is always the catalogue order
(:data:`~gno_trio.server.descriptions.TARGET_TOOL_ORDER`), and a profile only
ever narrows what the write gate allows; ``core`` never adds a write tool that
``--enable-write`` did not.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any, Final

import msgspec

from gno_trio.errors import GnoError
from gno_trio.server import inputs
from gno_trio.server.descriptions import (
    PROFILE_CORE,
    PROFILE_FULL,
    TARGET_TOOL_ORDER,
    TOOL_TEXT,
    WRITE_TOOL_ORDER,
)
from gno_trio.server.schemas import input_schema_for, output_schema
from gno_trio.server.tooltypes import ToolSpec

PROFILES: Final = (PROFILE_CORE, PROFILE_FULL)
DEFAULT_PROFILE: Final = PROFILE_FULL

CORE_READ: Final = (
    "gno_query",
    "gno_search",
    "gno_get",
    "gno_multi_get",
    "gno_context",
    "gno_changes",
    "gno_recall",
)
CORE_WRITE: Final = ("gno_capture", "gno_remember")

WRITE_TOOL_NAMES: Final[frozenset[str]] = frozenset(WRITE_TOOL_ORDER)
"""The 19 tools that change disk, config or index state; the HTTP write gate refuses
these before dispatch when writes are disabled."""

_CORE_ALLOWED: Final = frozenset(CORE_READ) | frozenset(CORE_WRITE)

# MCP tool annotations. GNO's listing annotates only some tools; the others
# carry none, and clients then apply the protocol defaults.
_READ_ONLY_HINTS: Final = MappingProxyType(
    {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
)
_APPEND_ONLY_WRITE_HINTS: Final = MappingProxyType(
    {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
    }
)
# A re-sync mirrors the files on disk: repeating it changes nothing more.
_IDEMPOTENT_WRITE_HINTS: Final = MappingProxyType(
    {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
)
_NO_HINTS: Final[Mapping[str, Any]] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool as it is in every profile; only the description varies."""

    name: str
    input_type: type[msgspec.Struct]
    output_schema: Mapping[str, Any] | None
    annotations: Mapping[str, Any]
    write: bool
    title: str | None

    def spec(self, profile: str) -> ToolSpec:
        """The ``tools/list`` entry for this tool under ``profile``.

        Schemas and annotations are fresh plain dicts: the wire encoder needs
        real dicts, and a caller that edits its copy leaves the registry intact.
        """
        return ToolSpec(
            name=self.name,
            description=TOOL_TEXT[self.name].description(parse_profile(profile)),
            input_type=self.input_type,
            input_schema=input_schema_for(self.input_type),
            output_schema=copy.deepcopy(dict(self.output_schema))
            if self.output_schema is not None
            else None,
            annotations=dict(self.annotations),
            title=self.title,
        )


def _define(
    name: str,
    input_type: type[msgspec.Struct],
    output: str | None,
    annotations: Mapping[str, Any] = _NO_HINTS,
) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        input_type=input_type,
        output_schema=output_schema(output) if output is not None else None,
        annotations=annotations,
        write=name in WRITE_TOOL_NAMES,
        title=None,
    )


@cache
def _definitions() -> Mapping[str, ToolDefinition]:
    rows = (
        _define("gno_search", inputs.SearchInput, "search-results", _READ_ONLY_HINTS),
        _define("gno_context", inputs.ContextInput, "context-capsule", _READ_ONLY_HINTS),
        _define("gno_query", inputs.QueryInput, "search-results", _READ_ONLY_HINTS),
        _define(
            "gno_query_diagnose", inputs.QueryDiagnoseInput, "query-diagnose", _READ_ONLY_HINTS
        ),
        _define("gno_get", inputs.GetInput, "get", _READ_ONLY_HINTS),
        _define("gno_multi_get", inputs.MultiGetInput, "multi-get", _READ_ONLY_HINTS),
        _define("gno_peek", inputs.PeekInput, "peek", _READ_ONLY_HINTS),
        _define("gno_status", inputs.StatusInput, "status", _READ_ONLY_HINTS),
        _define("gno_changes", inputs.ChangesInput, "changes", _READ_ONLY_HINTS),
        _define("gno_diff", inputs.DiffInput, "document-diff", _READ_ONLY_HINTS),
        _define("gno_impact", inputs.ImpactInput, "impact", _READ_ONLY_HINTS),
        _define("gno_list_tags", inputs.ListTagsInput, "tags-list", _READ_ONLY_HINTS),
        _define("gno_recall", inputs.RecallInput, "memory-recall", _READ_ONLY_HINTS),
        _define("gno_capture", inputs.CaptureInput, "mcp-capture-result", _APPEND_ONLY_WRITE_HINTS),
        _define("gno_remember", inputs.RememberInput, "memory-remember", _APPEND_ONLY_WRITE_HINTS),
        _define("gno_links", inputs.LinksInput, "links-list", _READ_ONLY_HINTS),
        _define("gno_backlinks", inputs.BacklinksInput, "backlinks", _READ_ONLY_HINTS),
        _define("gno_job_status", inputs.JobStatusInput, "mcp-job-status", _READ_ONLY_HINTS),
        _define("gno_list_jobs", inputs.ListJobsInput, "mcp-job-list", _READ_ONLY_HINTS),
        _define(
            "gno_add_collection",
            inputs.AddCollectionInput,
            "mcp-add-collection-result",
            _APPEND_ONLY_WRITE_HINTS,
        ),
        _define("gno_sync", inputs.SyncInput, "mcp-sync-result", _IDEMPOTENT_WRITE_HINTS),
        _define("gno_remove_collection", inputs.RemoveCollectionInput, "mcp-remove-result"),
        _define(
            "gno_egress_policy_get",
            inputs.EgressPolicyGetInput,
            "collection-egress-policy",
            _READ_ONLY_HINTS,
        ),
        _define(
            "gno_egress_check", inputs.EgressCheckInput, "collection-egress-check", _READ_ONLY_HINTS
        ),
        _define(
            "gno_egress_policy_set", inputs.EgressPolicySetInput, "collection-egress-policy-set"
        ),
        _define("gno_graph", inputs.GraphInput, "graph", _READ_ONLY_HINTS),
        _define("gno_graph_query", inputs.GraphQueryInput, "graph-query", _READ_ONLY_HINTS),
        _define(
            "gno_graph_neighbors", inputs.GraphNeighborsInput, "graph-neighbors", _READ_ONLY_HINTS
        ),
        _define("gno_graph_path", inputs.GraphPathInput, "graph-path", _READ_ONLY_HINTS),
        _define(
            "gno_create_folder",
            inputs.CreateFolderInput,
            "mcp-create-folder-result",
            _APPEND_ONLY_WRITE_HINTS,
        ),
        _define(
            "gno_duplicate_note",
            inputs.DuplicateNoteInput,
            "mcp-duplicate-note-result",
            _APPEND_ONLY_WRITE_HINTS,
        ),
    )
    by_name = {row.name: row for row in rows}
    return MappingProxyType({name: by_name[name] for name in TARGET_TOOL_ORDER if name in by_name})


def definitions() -> dict[str, ToolDefinition]:
    """Every tool with an input type defined, keyed by name, in catalogue order."""
    return dict(_definitions())


def parse_profile(value: str) -> str:
    """Validate a ``--tool-profile`` / ``gateway.toolProfile`` value."""
    if value not in PROFILES:
        raise GnoError("VALIDATION", f"Unknown tool profile: {value} (expected core or full)")
    return value


def select_tool_names(profile: str, write_enabled: bool, implemented: Collection[str]) -> list[str]:
    """Names to advertise, in catalogue order.

    ``full`` offers every implemented tool, write tools only when writes are
    enabled. ``core`` offers the exact core allow-list under the same write
    gate, intersected with what is implemented.
    """
    chosen = parse_profile(profile)
    available = frozenset(implemented)
    names = []
    for name in TARGET_TOOL_ORDER:
        if name not in available:
            continue
        if name in WRITE_TOOL_NAMES and not write_enabled:
            continue
        if chosen == PROFILE_CORE and name not in _CORE_ALLOWED:
            continue
        names.append(name)
    return names


def missing_tools(implemented: Collection[str]) -> list[str]:
    """Target tools (in catalogue order) that ``implemented`` does not cover."""
    available = frozenset(implemented)
    return [name for name in TARGET_TOOL_ORDER if name not in available]


__all__ = [
    "CORE_READ",
    "CORE_WRITE",
    "DEFAULT_PROFILE",
    "PROFILES",
    "WRITE_TOOL_NAMES",
    "ToolDefinition",
    "definitions",
    "missing_tools",
    "parse_profile",
    "select_tool_names",
]
