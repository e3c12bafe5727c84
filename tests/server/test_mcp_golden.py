"""``tools/list`` as served by ``gno-trio mcp``, pinned by golden files.

Each tool profile crossed with the write gate has its own file in
``tests/golden/``; the exact wire listing (names, order, descriptions, input
and output schemas, annotations) must match it. A change to the tool surface
is therefore always a visible diff in review.

To regenerate the files after an intended change::

    UPDATE_GOLDEN=1 python -m pytest tests/server/test_mcp_golden.py

then read the diff of ``tests/golden/`` before committing it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import trio

from gno_trio.tools import CATALOGUE, TOOL_ORDER

REPO_ROOT = Path(__file__).resolve().parents[2]
GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
LEGACY = "2025-11-25"
MODERN = "2026-07-28"

# (golden file stem, command-line flags, extra environment)
COMBINATIONS: list[tuple[str, tuple[str, ...], dict[str, str]]] = [
    ("tools-list-full", (), {}),
    ("tools-list-full-write", ("--enable-write",), {}),
    ("tools-list-full-write", (), {"GNO_MCP_ENABLE_WRITE": "1"}),
    ("tools-list-core", ("--tool-profile", "core"), {}),
    ("tools-list-core-write", ("--tool-profile", "core", "--enable-write"), {}),
    ("tools-list-core-write", ("--tool-profile", "core"), {"GNO_MCP_ENABLE_WRITE": "1"}),
]


def _line(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


LEGACY_SCRIPT = b"".join(
    [
        _line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": LEGACY,
                    "capabilities": {},
                    "clientInfo": {"name": "golden", "version": "1"},
                },
            }
        ),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ]
)
MODERN_SCRIPT = _line(
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/list",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "golden", "version": "1"},
            }
        },
    }
)


async def served_tools(
    tmp_path: Path, flags: Sequence[str], extra_env: Mapping[str, str], script: bytes
) -> list[dict[str, Any]]:
    """Run ``gno-trio mcp`` on an empty index, feed it ``script``, return its tool list.

    The server answers everything it read before stdin's EOF, then exits 0.
    """
    environ = {k: v for k, v in os.environ.items() if k != "GNO_MCP_ENABLE_WRITE"}
    (tmp_path / "config").mkdir(parents=True, exist_ok=True)  # GNO_CONFIG_DIR must exist
    environ.update(
        GNO_CONFIG_DIR=str(tmp_path / "config"),
        GNO_DATA_DIR=str(tmp_path / "data"),
        GNO_CACHE_DIR=str(tmp_path / "cache"),
        **extra_env,
    )
    with trio.fail_after(20):
        completed = await trio.run_process(
            [sys.executable, "-m", "gno_trio", "mcp", *flags],
            stdin=script,
            capture_stdout=True,
            capture_stderr=True,
            cwd=REPO_ROOT,
            env=environ,
            check=False,
        )
    assert completed.returncode == 0, completed.stderr.decode(errors="replace")
    answers = [json.loads(line) for line in completed.stdout.splitlines()]
    listing = next(answer for answer in answers if answer.get("id") == 2)
    tools: list[dict[str, Any]] = listing["result"]["tools"]
    return tools


def golden_path(stem: str) -> Path:
    return GOLDEN_DIR / f"{stem}.json"


def render(tools: list[dict[str, Any]]) -> str:
    return json.dumps(tools, indent=2, ensure_ascii=False) + "\n"


@pytest.fixture
async def listings(tmp_path: Path) -> dict[int, list[dict[str, Any]]]:
    """The legacy-era listing of every combination, fetched side by side."""
    found: dict[int, list[dict[str, Any]]] = {}

    async def fetch(position: int, flags: tuple[str, ...], extra_env: dict[str, str]) -> None:
        index_dir = tmp_path / f"index-{position}"
        found[position] = await served_tools(index_dir, flags, extra_env, LEGACY_SCRIPT)

    async with trio.open_nursery() as nursery:
        for position, (_, flags, extra_env) in enumerate(COMBINATIONS):
            nursery.start_soon(fetch, position, flags, extra_env)
    return found


async def test_tools_list_matches_the_golden_file_for_every_combination(
    listings: dict[int, list[dict[str, Any]]],
) -> None:
    if UPDATE:
        GOLDEN_DIR.mkdir(exist_ok=True)
        for position, (stem, _, _) in enumerate(COMBINATIONS):
            golden_path(stem).write_text(render(listings[position]), encoding="utf-8")
    for position, (stem, flags, extra_env) in enumerate(COMBINATIONS):
        path = golden_path(stem)
        assert path.is_file(), f"missing {path.name}; regenerate with UPDATE_GOLDEN=1"
        expected = json.loads(path.read_text(encoding="utf-8"))
        served = listings[position]
        assert [t["name"] for t in served] == [t["name"] for t in expected], (
            stem,
            flags,
            extra_env,
        )
        assert served == expected, (
            f"tools/list for {' '.join(flags) or 'no flags'} {extra_env or ''} drifted from "
            f"{path.name}; if intended, regenerate with UPDATE_GOLDEN=1 and review the diff"
        )


async def test_golden_files_are_canonical_and_agree_on_shared_tools() -> None:
    """The files are what the regenerator writes, and one tool reads the same in each."""
    stems = sorted({stem for stem, _, _ in COMBINATIONS})
    by_profile: dict[str, dict[str, dict[str, Any]]] = {}
    for stem in stems:
        text = golden_path(stem).read_text(encoding="utf-8")
        tools = json.loads(text)
        assert text == render(tools), f"{stem}.json is not in canonical form"
        profile = stem.split("-")[2]
        for tool in tools:
            seen = by_profile.setdefault(profile, {}).setdefault(tool["name"], tool)
            assert seen == tool, f"{tool['name']} differs between {profile} files"


async def test_only_core_tools_change_description_between_profiles(tmp_path: Path) -> None:
    flags = ("--enable-write",)
    full = await served_tools(tmp_path / "full", flags, {}, LEGACY_SCRIPT)
    core = await served_tools(
        tmp_path / "core", (*flags, "--tool-profile", "core"), {}, LEGACY_SCRIPT
    )
    full_by_name = {tool["name"]: tool for tool in full}
    core_names = [tool["name"] for tool in core]
    assert core_names, "the core profile serves no tool"
    assert set(core_names) < set(full_by_name)
    # Same relative order in both profiles: the catalogue order.
    assert core_names == [name for name in full_by_name if name in set(core_names)]

    changed = set()
    for tool in core:
        twin = full_by_name[tool["name"]]
        if tool["description"] != twin["description"]:
            changed.add(tool["name"])
        # Everything but the description is identical.
        assert {k: v for k, v in tool.items() if k != "description"} == {
            k: v for k, v in twin.items() if k != "description"
        }, tool["name"]
    assert changed == set(core_names)


async def test_modern_listing_is_the_legacy_listing(tmp_path: Path) -> None:
    """Lists must not vary per connection or era: only the result stamping differs."""
    legacy = await served_tools(tmp_path / "legacy", ("--enable-write",), {}, LEGACY_SCRIPT)
    modern = await served_tools(tmp_path / "modern", ("--enable-write",), {}, MODERN_SCRIPT)
    assert modern == legacy


def test_missing_target_tools_are_reported(capsys: pytest.CaptureFixture[str]) -> None:
    """Prints which of the 53 catalogue tools have no handler yet (informational)."""
    missing = CATALOGUE.missing()
    assert set(CATALOGUE.definitions) <= set(TOOL_ORDER), (
        "a handler for a tool outside the catalogue"
    )
    assert len(missing) + len(CATALOGUE.definitions) == len(TOOL_ORDER) == 53
    assert missing == [name for name in TOOL_ORDER if name not in CATALOGUE.definitions]
    served = json.loads(golden_path("tools-list-full-write").read_text(encoding="utf-8"))
    assert [tool["name"] for tool in served] == [
        n for n in TOOL_ORDER if n in CATALOGUE.definitions
    ]
    with capsys.disabled():
        print(
            f"\n[gno-trio] {len(CATALOGUE.definitions)} of {len(TOOL_ORDER)} target tools "
            "implemented; "
            f"{len(missing)} missing: {', '.join(missing) or 'none'}"
        )


# Keywords whose value is data, not a subschema: an empty object there says nothing wrong.
_DATA_KEYWORDS = frozenset({"const", "default", "enum", "examples"})


def _empty_subschemas(node: Any, path: str = "") -> list[str]:
    """Where a schema holds ``{}`` as a subschema (it admits anything and says nothing)."""
    found: list[str] = []
    if isinstance(node, dict):
        if not node and path:
            found.append(path)
        for key, value in node.items():
            if key not in _DATA_KEYWORDS:
                found += _empty_subschemas(value, f"{path}/{key}")
    elif isinstance(node, list):
        for position, value in enumerate(node):
            found += _empty_subschemas(value, f"{path}/{position}")
    return found


def test_no_listed_output_schema_has_an_empty_subschema() -> None:
    # The MCP Inspector's --strict mode flags every `{}`; each property a schema
    # names gets a type, even inside if/then conditions.
    listing = json.loads((GOLDEN_DIR / "tools-list-full-write.json").read_text("utf-8"))
    empty = {
        tool["name"]: _empty_subschemas(tool["outputSchema"])
        for tool in listing
        if _empty_subschemas(tool.get("outputSchema", {}))
    }
    assert empty == {}
