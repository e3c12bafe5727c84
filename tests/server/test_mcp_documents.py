"""Documents over MCP: search and get carry the conversion, status lists what was not indexed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from tests.support import document_factory as make
from tests.support.stdio_session import spawn

WORD = "mcpmarmoset"


@pytest.fixture(scope="module")
def documents_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    base = tmp_path_factory.mktemp("gno-mcp-documents")
    papers = base / "papers"
    papers.mkdir()
    (papers / "field.pdf").write_bytes(make.pdf_bytes(WORD, pages=3))
    (papers / "noise.xyz").write_bytes(make.random_bytes())
    (papers / "cut.docx").write_bytes(make.docx_bytes("x")[:900])
    dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    with Engine.open(dirs=dirs) as engine:
        engine.collections.add(str(papers), name="papers")
        engine.sync()
    yield {
        "GNO_CONFIG_DIR": str(dirs.config),
        "GNO_DATA_DIR": str(dirs.data),
        "GNO_CACHE_DIR": str(dirs.cache),
    }


async def _tool(wire: Any, request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    answer = await wire.call(request_id, "tools/call", {"name": name, "arguments": arguments})
    structured: dict[str, Any] = answer["result"]["structuredContent"]
    return structured


async def test_search_get_and_status_over_stdio(
    documents_env: dict[str, str], tmp_path: Path
) -> None:
    async with spawn(documents_env, tmp_path) as wire:
        await wire.handshake()
        (hit,) = (await _tool(wire, 1, "gno_search", query=WORD))["results"]
        assert hit["uri"] == "gno://papers/field.pdf"
        assert hit["source"]["mime"] == "application/pdf"
        assert hit["conversion"]["converterId"] == "document/pdf"
        # The converter's own render version, then the library and its version.
        assert re.fullmatch(r"\d+\+pypdfium2\.\S+", hit["conversion"]["converterVersion"])
        got = await _tool(wire, 2, "gno_get", ref=hit["uri"], fromLine=hit["line"], lineCount=40)
        assert WORD in got["content"]
        assert got["conversion"]["mirrorHash"] == hit["conversion"]["mirrorHash"]
        (collection,) = (await _tool(wire, 3, "gno_status"))["collections"]
        assert [(e["relPath"], e["code"]) for e in collection["errors"]] == [
            ("cut.docx", "CONVERSION_FAILED")
        ]
        assert [(e["relPath"], e["code"]) for e in collection["skipped"]] == [
            ("noise.xyz", "BINARY_FILE")
        ]
