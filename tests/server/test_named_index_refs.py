"""References that name an index: ``gno://collection/path?index=<name>``.

Two indexes share one data directory and hold different documents under the
same collection and path, so a read that ignored ``?index=`` would return the
wrong document rather than fail. ``gno_get``, ``gno_multi_get`` and resource
reads open the named index (read-only, never creating it); the other tools
that take a ref refuse a ref for another index instead of guessing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from gno_trio.compose import build_app
from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.errors import GnoError
from gno_trio.protocol.versions import Era
from gno_trio.runtime import Runtime
from gno_trio.server.context import RequestContext
from tests.conftest import error_code
from tests.support.tool_results import tool_error_code, tool_error_message

REPO_ROOT = Path(__file__).resolve().parents[2]
LEGACY = "2025-11-25"
SERVED = "gno://notes/same.md"
IN_RESEARCH = "gno://notes/same.md?index=research"


@pytest.fixture(scope="module")
def two_indexes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Dirs, Engine]]:
    """The default index (served) and an index named ``research``, same paths, other text."""
    base = tmp_path_factory.mktemp("named-index")
    for folder, text in (("served", "served copy of the note"), ("research", "research copy")):
        (base / folder).mkdir()
        (base / folder / "same.md").write_text(f"# Same\n\n{text}\n", encoding="utf-8")
    (base / "research" / "only.md").write_text("# Only\n\nonly in research\n", encoding="utf-8")
    dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    with Engine.open(
        dirs=dirs, index_name="research", config_path=base / "research.yml"
    ) as research:
        research.collections.add(str(base / "research"), name="notes")
        research.sync()
    engine = Engine.open(dirs=dirs)
    engine.collections.add(str(base / "served"), name="notes")
    engine.sync()
    try:
        yield dirs, engine
    finally:
        engine.close()


@pytest.fixture
def engine(two_indexes: tuple[Dirs, Engine]) -> Engine:
    return two_indexes[1]


def data_files(dirs: Dirs) -> set[str]:
    """The index databases in the data directory (SQLite's -wal/-shm files aside)."""
    return {path.name for path in dirs.data.glob("*.sqlite")}


def test_get_reads_the_named_index_and_says_so_in_the_uri(engine: Engine) -> None:
    assert "served copy" in engine.documents.get(SERVED)["content"]
    other = engine.documents.get(IN_RESEARCH)
    assert "research copy" in other["content"]
    assert other["uri"] == IN_RESEARCH
    # Names are matched case-folded, and the URI gives the canonical one back.
    assert engine.documents.get("gno://notes/only.md?index=Research")["uri"] == (
        "gno://notes/only.md?index=research"
    )
    with pytest.raises(GnoError, match=r"only\.md"):
        engine.documents.get("gno://notes/only.md")


def test_naming_the_served_index_is_the_same_as_naming_none(engine: Engine) -> None:
    for ref in (f"{SERVED}?index=default", f"{SERVED}?index=DEFAULT"):
        answer = engine.documents.get(ref)
        assert answer["uri"] == SERVED
        assert "served copy" in answer["content"]


def test_a_missing_index_is_not_found_and_never_created(
    two_indexes: tuple[Dirs, Engine],
) -> None:
    dirs, engine = two_indexes
    before = data_files(dirs)
    with pytest.raises(GnoError) as missing:
        engine.documents.get("gno://notes/same.md?index=archive")
    assert (missing.value.code, missing.value.message) == ("NOT_FOUND", "Index not found: archive")
    assert data_files(dirs) == before


@pytest.mark.parametrize("name", ["..", "a%2Fb", "%20lead", "x" * 65, "bad."])
def test_an_invalid_index_name_is_refused_before_the_filesystem(
    two_indexes: tuple[Dirs, Engine], name: str
) -> None:
    dirs, engine = two_indexes
    before = data_files(dirs)
    assert (
        error_code(lambda: engine.documents.get(f"gno://notes/same.md?index={name}"))
        == "INVALID_INPUT"
    )
    assert data_files(dirs) == before


def test_multi_get_reads_one_named_index(engine: Engine) -> None:
    answer = engine.documents.multi_get(
        refs=[
            IN_RESEARCH,
            "gno://notes/only.md?index=RESEARCH",
            "gno://notes/gone.md?index=research",
        ]
    )
    assert [d["uri"] for d in answer["documents"]] == [
        IN_RESEARCH,
        "gno://notes/only.md?index=research",
    ]
    assert "research copy" in answer["documents"][0]["content"]
    assert answer["skipped"] == [
        {"ref": "gno://notes/gone.md?index=research", "reason": "not_found"}
    ]
    # The served index named explicitly mixes with plain refs: both mean this index.
    mixed = engine.documents.multi_get(refs=[f"{SERVED}?index=default", "notes/same.md"])
    assert [d["uri"] for d in mixed["documents"]] == [SERVED, SERVED]


@pytest.mark.parametrize(
    "refs",
    [
        [IN_RESEARCH, "notes/same.md"],  # another index beside a ref to this one
        [IN_RESEARCH, f"{SERVED}?index=default"],  # two indexes named
    ],
)
def test_multi_get_refuses_a_batch_spanning_indexes(engine: Engine, refs: list[str]) -> None:
    with pytest.raises(GnoError) as refused:
        engine.documents.multi_get(refs=refs)
    assert refused.value.code == "INVALID_INPUT"
    assert "split the batch by index" in refused.value.message


# -- over MCP --------------------------------------------------------------------------


async def call(engine: Engine, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    app = build_app(Runtime(engine=engine))
    ctx = RequestContext(era=Era.LEGACY, protocol_version=LEGACY, session_id="named-index")
    answer = await app.handle_request("tools/call", {"name": tool, "arguments": arguments}, ctx)
    return dict(answer)


async def test_tools_that_cannot_open_another_index_refuse_its_refs(engine: Engine) -> None:
    for tool in ("gno_links", "gno_backlinks", "gno_impact", "gno_diff"):
        answer = await call(engine, tool, {"ref": IN_RESEARCH})
        assert answer.get("isError"), tool
        assert tool_error_code(answer) == "INVALID_INPUT", tool
        assert "research" in tool_error_message(answer), tool
    served = await call(engine, "gno_links", {"ref": f"{SERVED}?index=default"})
    assert not served.get("isError")


async def test_gno_get_and_multi_get_tools_read_the_named_index(engine: Engine) -> None:
    got = await call(engine, "gno_get", {"ref": IN_RESEARCH})
    assert not got.get("isError")
    assert got["structuredContent"]["uri"] == IN_RESEARCH
    missing = await call(engine, "gno_get", {"ref": "gno://notes/same.md?index=archive"})
    assert missing["isError"] and tool_error_code(missing) == "NOT_FOUND"
    spanning = await call(engine, "gno_multi_get", {"refs": [IN_RESEARCH, "notes/same.md"]})
    assert spanning["isError"] and tool_error_code(spanning) == "INVALID_INPUT"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_official_client_reads_a_resource_of_the_named_index(
    two_indexes: tuple[Dirs, Engine], mode: str
) -> None:
    dirs, _ = two_indexes
    env = {
        "GNO_CONFIG_DIR": str(dirs.config),
        "GNO_DATA_DIR": str(dirs.data),
        "GNO_CACHE_DIR": str(dirs.cache),
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "gno_trio", "mcp"], env=env, cwd=REPO_ROOT
    )
    before = data_files(dirs)
    with trio.fail_after(30):
        async with Client(params, mode=mode, cache=None) as client:
            contents = (await client.read_resource(IN_RESEARCH)).contents
            assert str(contents[0].uri) == IN_RESEARCH
            assert "research copy" in contents[0].text  # type: ignore[union-attr]
            served = (await client.read_resource(SERVED)).contents
            assert "served copy" in served[0].text  # type: ignore[union-attr]
            with pytest.raises(MCPError) as missing:
                await client.read_resource("gno://notes/same.md?index=archive")
            assert missing.value.error.code == (-32002 if mode == "legacy" else -32602)
            got = await client.call_tool("gno_get", {"ref": IN_RESEARCH})
            assert not got.is_error
            assert "research copy" in (got.structured_content or {})["content"]
    assert data_files(dirs) == before
