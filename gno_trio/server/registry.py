"""The tool registry as data: the definition type, the catalogue, and profile selection.

A tool module (``gno_trio.tools.<family>``) declares each of its tools whole
with :func:`read_tool` or :func:`write_tool`: name, input Struct, output
schema name, egress content class, annotations, the description per profile
and the factory of its handler. A :class:`Catalogue` holds every declared
tool in one wire order, and refuses a tool that lacks an output schema or
names a content class the egress rules do not know.
This module knows the shape of a tool, never a particular tool: the
catalogue is built by :mod:`gno_trio.tools` and handed to the composition
root.

Which tools a listener advertises is decided once, at start-up, by
:meth:`Catalogue.select` from the profile and the write gate. Two rules hold
for every combination: the order is always the catalogue order, and a
profile only ever narrows what the write gate allows; ``core`` never adds a
write tool that ``--enable-write`` did not.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import msgspec

from gno_trio.errors import GnoError
from gno_trio.server.schemas import (
    OUTPUT_SCHEMA_NAMES,
    input_schema_for,
    input_schemas_for,
    output_schema,
)
from gno_trio.server.tooltypes import BoundTool, ToolHandler, ToolSpec

if TYPE_CHECKING:
    from gno_trio.runtime import Runtime

PROFILE_FULL: Final = "full"
PROFILE_CORE: Final = "core"
PROFILES: Final = (PROFILE_CORE, PROFILE_FULL)
DEFAULT_PROFILE: Final = PROFILE_FULL

# MCP tool annotations. GNO's listing annotates only some tools; the others
# carry none, and clients then apply the protocol defaults.
READ_ONLY: Final[Mapping[str, Any]] = MappingProxyType(
    {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
)
APPEND_ONLY_WRITE: Final[Mapping[str, Any]] = MappingProxyType(
    {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
    }
)
IDEMPOTENT_WRITE: Final[Mapping[str, Any]] = MappingProxyType(
    {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
)
"""A re-sync mirrors the files on disk: repeating it changes nothing more."""
DESTRUCTIVE_WRITE: Final[Mapping[str, Any]] = MappingProxyType(
    {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    }
)
"""Moves or rewrites existing files (GNO annotates rename and move so)."""
NO_HINTS: Final[Mapping[str, Any]] = MappingProxyType({})

TASKS_FORBIDDEN: Final[Mapping[str, Any]] = MappingProxyType({"taskSupport": "forbidden"})
"""Every tool answers its ``tools/call`` directly; none may be run as an MCP task."""

HandlerFactory = Callable[["Runtime"], ToolHandler]


def parse_profile(value: str) -> str:
    """Validate a ``--tool-profile`` / ``gateway.toolProfile`` value."""
    if value not in PROFILES:
        raise GnoError("VALIDATION", f"Unknown tool profile: {value} (expected core or full)")
    return value


@dataclass(frozen=True, slots=True)
class ToolText:
    """A catalogue row: name, read/write class and descriptions per profile.

    Descriptions are the discovery surface an agent reads before it calls
    anything. Core copy rules: open with when to call the tool, name the
    mechanism it runs, end with what comes back and the bound the caller must
    respect; mechanism first, honest bounds, active voice, no promotional
    words, no negated framings.
    """

    name: str
    write: bool
    full: str
    core: str | None = None

    def description(self, profile: str) -> str:
        """The description served under ``profile`` (core text only where one exists)."""
        if profile == PROFILE_CORE and self.core is not None:
            return self.core
        return self.full


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool as it is in every profile; only the description varies."""

    text: ToolText
    input_type: type[msgspec.Struct]
    output: str
    """The name of its output schema file (``output_schemas/<output>.schema.json``)."""
    content_class: str
    """What its answer carries, as the egress rules judge it (``source``, ``snippet`` ...)."""
    annotations: Mapping[str, Any]
    make: HandlerFactory
    title: str | None = None

    @property
    def name(self) -> str:
        return self.text.name

    @property
    def write(self) -> bool:
        return self.text.write

    @property
    def output_schema(self) -> Mapping[str, Any]:
        return output_schema(self.output)

    def spec(self, profile: str, input_schema: dict[str, Any] | None = None) -> ToolSpec:
        """The ``tools/list`` entry for this tool under ``profile``.

        Schemas and annotations are fresh plain dicts: the wire encoder needs
        real dicts, and a caller that edits its copy leaves the registry intact.
        ``input_schema`` is this tool's :func:`input_schema_for`, when the
        caller generated it already (with its neighbours', in one pass).
        """
        schema = self.output_schema
        return ToolSpec(
            name=self.name,
            description=self.text.description(parse_profile(profile)),
            input_type=self.input_type,
            input_schema=input_schema or input_schema_for(self.input_type),
            output_schema=dict(schema),  # a fresh copy
            annotations=dict(self.annotations),
            title=self.title,
            execution=dict(TASKS_FORBIDDEN),
        )


def read_tool(
    name: str,
    input_type: type[msgspec.Struct],
    output: str,
    make: HandlerFactory,
    *,
    content_class: str,
    full: str,
    core: str | None = None,
    annotations: Mapping[str, Any] = READ_ONLY,
) -> ToolDefinition:
    """Declare a tool that changes nothing (read-only hints unless told otherwise)."""
    text = ToolText(name=name, write=False, full=full, core=core)
    return ToolDefinition(text, input_type, output, content_class, annotations, make)


def write_tool(
    name: str,
    input_type: type[msgspec.Struct],
    output: str,
    make: HandlerFactory,
    *,
    content_class: str,
    full: str,
    core: str | None = None,
    annotations: Mapping[str, Any] = NO_HINTS,
) -> ToolDefinition:
    """Declare a tool that changes disk, config or index state (behind the write gate)."""
    text = ToolText(name=name, write=True, full=full, core=core)
    return ToolDefinition(text, input_type, output, content_class, annotations, make)


class Catalogue:
    """Every tool in wire order, each declared whole by its module.

    ``core`` is the exact allow-list of the ``core`` profile. Construction
    fails when the order and the declarations disagree (a tool declared
    twice, declared but not ordered, or ordered but declared nowhere) or a
    tool lacks what a surface needs of it (an output schema that exists, a
    known egress content class), so a new tool cannot be half declared.
    """

    def __init__(
        self,
        *,
        order: Sequence[str],
        tools: Iterable[ToolDefinition],
        content_classes: Collection[str],
        core: Iterable[str] = (),
    ) -> None:
        """``content_classes``: the egress content classes a tool may declare."""
        texts: dict[str, ToolText] = {}
        definitions: dict[str, ToolDefinition] = {}
        for definition in tools:
            if definition.name in texts:
                raise ValueError(f"tool {definition.name} is declared twice")
            _check_declared(definition, content_classes)
            texts[definition.name] = definition.text
            definitions[definition.name] = definition
        if len(set(order)) != len(order) or set(order) != set(texts):
            unordered = sorted(set(texts) - set(order))
            undeclared = sorted(set(order) - set(texts))
            raise ValueError(
                f"catalogue order mismatch: unordered {unordered}, undeclared {undeclared}"
            )
        self.order: tuple[str, ...] = tuple(order)
        self.texts: Mapping[str, ToolText] = MappingProxyType({n: texts[n] for n in order})
        self.definitions: Mapping[str, ToolDefinition] = MappingProxyType(
            {n: definitions[n] for n in order}
        )
        self.content_classes: Mapping[str, str] = MappingProxyType(
            {n: definitions[n].content_class for n in order}
        )
        """Each tool's egress content class, for the gateway's egress judge."""
        self.write_names: frozenset[str] = frozenset(n for n in order if texts[n].write)
        self.read_names: tuple[str, ...] = tuple(n for n in order if not texts[n].write)
        self.core: frozenset[str] = frozenset(core)
        if not self.core <= set(order):
            raise ValueError(f"core tools not in the catalogue: {sorted(self.core - set(order))}")

    def description(self, name: str, profile: str) -> str:
        """The description of tool ``name`` under ``profile`` (``"full"`` or ``"core"``)."""
        text = self.texts.get(name)
        if text is None:
            raise GnoError("NOT_FOUND", f"Unknown tool: {name}")
        return text.description(profile)

    def select(
        self, profile: str, write_enabled: bool, *, among: Collection[str] | None = None
    ) -> list[str]:
        """Tool names to advertise, in catalogue order.

        ``full`` offers every implemented tool (or every tool in ``among``),
        write tools only when writes are enabled. ``core`` offers the exact
        core allow-list under the same write gate.
        """
        chosen = parse_profile(profile)
        available = self.definitions.keys() if among is None else frozenset(among)
        names = []
        for name in self.order:
            if name not in available:
                continue
            if name in self.write_names and not write_enabled:
                continue
            if chosen == PROFILE_CORE and name not in self.core:
                continue
            names.append(name)
        return names

    def missing(self, *, among: Collection[str] | None = None) -> list[str]:
        """Target tools (in catalogue order) not implemented yet (or not in ``among``)."""
        available = self.definitions.keys() if among is None else frozenset(among)
        return [name for name in self.order if name not in available]

    def bind(self, runtime: Runtime, profile: str, write_enabled: bool) -> list[BoundTool]:
        """The advertised tools of one server, each paired with its handler."""
        chosen = [self.definitions[name] for name in self.select(profile, write_enabled)]
        inputs = input_schemas_for([definition.input_type for definition in chosen])
        return [
            BoundTool(spec=definition.spec(profile, schema), handler=definition.make(runtime))
            for definition, schema in zip(chosen, inputs, strict=True)
        ]


def _check_declared(definition: ToolDefinition, content_classes: Collection[str]) -> None:
    """Refuse a tool without an output schema file or with an unknown content class."""
    if definition.content_class not in content_classes:
        raise ValueError(
            f"tool {definition.name}: unknown egress content class {definition.content_class!r} "
            f"(one of {', '.join(content_classes)})"
        )
    if definition.output not in OUTPUT_SCHEMA_NAMES:
        raise ValueError(
            f"tool {definition.name}: no output schema {definition.output!r} "
            "(add output_schemas/<name>.schema.json)"
        )


__all__ = [
    "APPEND_ONLY_WRITE",
    "DEFAULT_PROFILE",
    "DESTRUCTIVE_WRITE",
    "IDEMPOTENT_WRITE",
    "NO_HINTS",
    "PROFILES",
    "PROFILE_CORE",
    "PROFILE_FULL",
    "READ_ONLY",
    "TASKS_FORBIDDEN",
    "Catalogue",
    "HandlerFactory",
    "ToolDefinition",
    "ToolText",
    "parse_profile",
    "read_tool",
    "write_tool",
]
