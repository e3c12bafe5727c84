"""The layer graph, enforced: every import in ``gno_trio/`` and ``nurseries/`` points down.

The imports are read from the source (``ast``, every import anywhere in a
module, ``TYPE_CHECKING`` blocks and function bodies included), so the test
sees what a reader sees and costs no import side effects. It fails with the
offending ``file:line`` when a module imports a layer it may not, when a
surface reaches behind the engine's public face (``gno_trio.engine``), when
the sans-IO layers import an event loop, when modules import each other
in a circle, or when an engine subpackage imports one standing on a higher
floor of the engine (``ENGINE_FLOORS``). The tables are the architecture;
change them deliberately.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Layer of a module: the longest matching prefix wins.
LAYERS: dict[str, str] = {
    "gno_trio": "package",
    "gno_trio.__main__": "main",
    "gno_trio.errors": "foundation",
    "gno_trio.heap": "foundation",
    "gno_trio.collector": "foundation",
    "gno_trio.children": "foundation",
    "gno_trio.config": "foundation",
    "gno_trio.protocol": "protocol",
    "gno_trio.engine": "engine",
    "gno_trio.views": "views",
    "gno_trio.runtime": "runtime",
    "gno_trio.watch": "runtime",
    "gno_trio.server": "server",
    "gno_trio.tools": "tools",
    "gno_trio.compose": "compose",
    "gno_trio.transports": "transports",
    "gno_trio.cli": "cli",
    "nurseries": "nurseries",
}

# Which layers each layer may import (itself always included). Read top-down:
# the CLI wires everything; transports carry bytes to the server's dispatch;
# tools plug into the server's definition types and call the engine through
# the runtime, and with the CLI render answers through the text views, which
# read engine results only; the runtime bounds its threads with a generic piece of
# nurseries; the engine stands on the foundation alone.
ALLOWED: dict[str, frozenset[str]] = {
    "package": frozenset(),
    "foundation": frozenset({"package"}),
    "protocol": frozenset(),
    "nurseries": frozenset(),
    "engine": frozenset({"foundation", "package"}),
    "views": frozenset({"engine", "foundation", "package"}),
    "runtime": frozenset({"engine", "foundation", "nurseries"}),
    "server": frozenset({"protocol", "runtime", "foundation", "package"}),
    "tools": frozenset({"server", "runtime", "views", "engine", "foundation", "package"}),
    "compose": frozenset({"tools", "server", "runtime", "engine", "foundation", "package"}),
    "transports": frozenset({"server", "protocol", "engine", "foundation", "nurseries"}),
    "cli": frozenset(
        {"compose", "transports", "server", "views", "engine", "foundation", "package"}
    ),
    "main": frozenset({"cli"}),
}

# Layers that see the engine only through ``gno_trio.engine`` itself.
SURFACES = frozenset({"runtime", "server", "tools", "compose", "transports", "cli"})
# Layers that never touch an event loop or a server (sans-IO, synchronous).
NO_EVENT_LOOP = frozenset({"protocol", "engine", "foundation"})
EVENT_LOOP_PACKAGES = ("trio", "hypercorn", "nurseries")


@dataclass(frozen=True, slots=True)
class Import:
    source: str  # importing module, dotted
    path: Path
    line: int
    target: str  # imported module, dotted (a submodule where the name is one)

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}: {self.source} imports {self.target}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in ("gno_trio", "nurseries"):
        for path in sorted((ROOT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


MODULES = _modules()


def _resolve(node: ast.ImportFrom, source: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = source.split(".") if is_package else source.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imports() -> Iterator[Import]:
    for source, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield Import(source, path, node.lineno, alias.name)
            elif isinstance(node, ast.ImportFrom):
                module = _resolve(node, source, is_package)
                for alias in node.names:
                    submodule = f"{module}.{alias.name}"
                    target = submodule if submodule in MODULES else module
                    yield Import(source, path, node.lineno, target)


IMPORTS = list(_imports())


def layer_of(module: str) -> str | None:
    best = None
    for prefix in LAYERS:
        if (module == prefix or module.startswith(prefix + ".")) and (
            best is None or len(prefix) > len(best)
        ):
            best = prefix
    return LAYERS[best] if best is not None else None


def _ours(module: str) -> bool:
    return module.split(".")[0] in ("gno_trio", "nurseries")


def test_the_table_covers_every_module() -> None:
    unplaced = [name for name in MODULES if layer_of(name) is None]
    assert not unplaced, f"modules outside the layer table: {unplaced}"
    assert set(LAYERS.values()) == set(ALLOWED)


def test_every_import_points_down_the_layer_graph() -> None:
    wrong = []
    for imp in IMPORTS:
        if not _ours(imp.target):
            continue
        here, there = layer_of(imp.source), layer_of(imp.target)
        assert here is not None and there is not None
        if there != here and there not in ALLOWED[here]:
            wrong.append(f"{imp.where()} ({here} may not import {there})")
    assert not wrong, "upward or sideways imports:\n" + "\n".join(wrong)


# The engine's public face: ``Engine`` with its request and result types, and
# beside it the fixed words and bounds surfaces spell out, and the egress rules.
ENGINE_FACE: frozenset[str] = frozenset(
    {"gno_trio.engine", "gno_trio.engine.vocabulary", "gno_trio.engine.egress_rules"}
)
ENGINE_FACE_MAX_NAMES = 42
"""How many names ``gno_trio.engine`` may export: raise it only for a new request or result
type; a bound or a word belongs in ``vocabulary``, a service in a namespace of ``Engine``."""


def test_surfaces_import_the_engine_only_through_its_face() -> None:
    behind = [
        imp.where()
        for imp in IMPORTS
        if layer_of(imp.source) in SURFACES
        and imp.target.startswith("gno_trio.engine.")
        and imp.target not in ENGINE_FACE
    ]
    assert not behind, "imports behind gno_trio.engine:\n" + "\n".join(behind)


def test_the_engine_face_stays_small() -> None:
    import gno_trio.engine as face

    names = face.__all__
    assert len(names) <= ENGINE_FACE_MAX_NAMES, f"{len(names)} names: {sorted(names)}"
    assert "Engine" in names and "StoreError" in names


def test_engine_services_are_namespaces_not_mixins() -> None:
    """``Engine`` is the kernel and one attribute per service (``engine.search.query``)."""
    from gno_trio.engine import Engine
    from gno_trio.engine.ingest.indexer import IndexingKernel

    assert Engine.__bases__ == (IndexingKernel,), "services are composed, never mixed in"


def test_sans_io_layers_import_no_event_loop() -> None:
    looped = [
        imp.where()
        for imp in IMPORTS
        if layer_of(imp.source) in NO_EVENT_LOOP and imp.target.split(".")[0] in EVENT_LOOP_PACKAGES
    ]
    assert not looped, "event-loop imports in sans-IO code:\n" + "\n".join(looped)


def test_nurseries_know_nothing_of_gno() -> None:
    coupled = [
        imp.where()
        for imp in IMPORTS
        if imp.source.startswith("nurseries") and imp.target.startswith("gno_trio")
    ]
    assert not coupled, "\n".join(coupled)


def _circles() -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for imp in IMPORTS:
        if imp.target in MODULES and imp.target != imp.source:
            graph[imp.source].add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return groups


def test_no_module_imports_itself_in_a_circle() -> None:
    circles = _circles()
    lines = []
    for group in circles:
        members = set(group)
        lines.append(" <-> ".join(group))
        edges = dict.fromkeys(
            f"    {imp.where()}"
            for imp in IMPORTS
            if imp.source in members and imp.target in members and imp.target != imp.source
        )
        lines += list(edges)[:40]
    assert not circles, "import circles:\n" + "\n".join(lines)


# Inside the engine, subpackages (and the top-level modules beside them) stand
# in this order, ground floor first: a module may import only what stands on
# a lower floor, with no exception. Rooms on one floor do not import each
# other. The order is the engine's architecture: the document metadata types
# every floor reads (the change journal diffs them, so they stand below
# storage); storage and identities on them; the fact-file format and the
# reference lookup; the opened index (kernel: the lease and when upkeep runs,
# which the Engine binds to the floors that do it); egress policy, vectors,
# the link graph, ingestion (sync and reconcile included), search, memory,
# Capsules, the status/audit reads, traces and ask each built on what is
# below; ``core`` (the Engine) and the package face on top.
ENGINE_FLOORS: tuple[frozenset[str], ...] = (
    frozenset({"docmeta"}),
    frozenset({"canonical", "jobs", "lazy", "store", "uris"}),
    frozenset({"facts", "journal", "lookup", "team"}),
    frozenset({"kernel"}),
    frozenset({"egress"}),
    frozenset({"vectors"}),
    frozenset({"graph"}),
    frozenset({"ingest"}),
    frozenset({"search"}),
    frozenset({"memory"}),
    frozenset({"context"}),
    frozenset({"reads"}),
    frozenset({"traces"}),
    frozenset({"ask"}),
    frozenset({"core", "egress_rules", "vocabulary"}),
    frozenset({""}),  # gno_trio.engine itself: the public face
)


def engine_room(module: str) -> str | None:
    """The engine subpackage or top-level module ``module`` belongs to ("" = the face)."""
    if module == "gno_trio.engine":
        return ""
    if not module.startswith("gno_trio.engine."):
        return None
    return module.split(".")[2]


def engine_floor(room: str) -> int | None:
    return next((n for n, rooms in enumerate(ENGINE_FLOORS) if room in rooms), None)


def _engine_crossings() -> Iterator[tuple[Import, int, int]]:
    for imp in IMPORTS:
        here, there = engine_room(imp.source), engine_room(imp.target)
        if here is None or there is None or here == there:
            continue
        low, high = engine_floor(here), engine_floor(there)
        assert low is not None and high is not None
        yield imp, low, high


def test_every_engine_room_has_a_floor() -> None:
    rooms = {engine_room(name) for name in MODULES} - {None}
    unplaced = sorted(str(room) for room in rooms if engine_floor(str(room)) is None)
    assert not unplaced, f"engine subpackages without a floor in ENGINE_FLOORS: {unplaced}"
    placed = [room for rooms in ENGINE_FLOORS for room in rooms]
    assert len(placed) == len(set(placed)), "a room stands on two floors"


def test_engine_imports_point_down_its_floors() -> None:
    upward = [
        f"{imp.where()} (floor {here} imports floor {there})"
        for imp, here, there in _engine_crossings()
        if there >= here
    ]
    assert not upward, "engine imports that run up or sideways:\n" + "\n".join(upward)


@pytest.mark.parametrize(
    ("source", "target", "allowed"),
    [
        ("gno_trio.engine.core", "gno_trio.tools.retrieval", False),
        ("gno_trio.server.dispatch", "gno_trio.tools", False),
        ("gno_trio.tools.reading", "gno_trio.server.registry", True),
        ("gno_trio.transports.http.asgi", "gno_trio.compose", False),
        ("gno_trio.cli.serve", "gno_trio.compose", True),
    ],
)
def test_the_table_says_what_the_architecture_says(source: str, target: str, allowed: bool) -> None:
    here, there = layer_of(source), layer_of(target)
    assert here is not None and there is not None
    assert (there == here or there in ALLOWED[here]) is allowed


@pytest.mark.parametrize(
    ("source", "target", "allowed"),
    [
        ("gno_trio.engine.kernel", "gno_trio.engine.ingest.sync", False),
        ("gno_trio.engine.kernel", "gno_trio.engine.search.docindex.policy", False),
        ("gno_trio.engine.ingest.indexer", "gno_trio.engine.kernel", True),
        ("gno_trio.engine.ingest.writes", "gno_trio.engine.memory.service", False),
        ("gno_trio.engine.ingest.memory_projection", "gno_trio.engine.facts", True),
        ("gno_trio.engine.store.journal", "gno_trio.engine.docmeta", True),
        ("gno_trio.engine.docmeta", "gno_trio.engine.store.database", False),
        ("gno_trio.engine.facts", "gno_trio.engine.lookup", False),
        ("gno_trio.engine.core", "gno_trio.engine.search.docindex.policy", True),
    ],
)
def test_the_floors_say_what_the_architecture_says(source: str, target: str, allowed: bool) -> None:
    here, there = engine_room(source), engine_room(target)
    assert here is not None and there is not None
    low, high = engine_floor(here), engine_floor(there)
    assert low is not None and high is not None
    assert (high < low) is allowed
