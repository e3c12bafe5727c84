"""Helpers shared by the benchmark scripts: fixture paths and throwaway indexes."""

from __future__ import annotations

import atexit
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _stats import percentile as percentile  # noqa: E402  (re-exported for the benches)
from mcp.types import CallToolResult, TextContent  # noqa: E402

from gno_trio.dirs import Dirs  # noqa: E402
from gno_trio.engine import Engine, SearchRequest  # noqa: E402

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

FIXTURES = Path(os.environ.get("GNO_FIXTURES", REPO.parent / "shared" / "fixtures"))


def temp_engine(root: Path, *, backend: str | None = None) -> Engine:
    """An engine whose config and data live in a fresh temporary folder.

    The folder (an index of the corpus: tens of MB) is removed when the
    benchmark's process exits. ``backend`` sets ``search.backend`` (which
    index ranks documents; default: the configuration's default).
    """
    base = Path(tempfile.mkdtemp(prefix="gno-bench-"))
    atexit.register(shutil.rmtree, base, ignore_errors=True)
    dirs = Dirs(config=base / "config", data=base / "data", cache=base / "cache")
    if backend is not None:
        dirs.config.mkdir(parents=True)
        (dirs.config / "index.yml").write_text(f"search:\n  backend: {backend}\n", "utf-8")
    del root
    return Engine.open(dirs=dirs)


def describe_ms(label: str, samples_s: Sequence[float]) -> str:
    ms = [s * 1000 for s in samples_s]
    return (
        f"{label}: n={len(ms)} p50={percentile(ms, 50):.3f} ms p95={percentile(ms, 95):.3f} ms "
        f"p99={percentile(ms, 99):.3f} ms mean={statistics.fmean(ms):.3f} ms"
    )


def serving_engine() -> Engine:
    """The index the environment names, opened as a serving process runs it.

    ``gno-trio mcp`` and ``serve`` hold the chunk index in memory; every peer
    and floor making "the same engine call" holds it too, built before the
    first timed call, so only the servers differ.
    """
    from gno_trio.dirs import resolve_dirs

    engine = Engine.open(dirs=resolve_dirs(), create=False)
    engine.hold_chunk_index()
    engine.chunk_index_held(timeout=120)
    return engine


def sdk_search_peer(engine: Engine) -> MCPServer[Any]:
    """The official SDK's ``MCPServer`` with one ``gno_search`` tool over ``engine``.

    The tool makes the engine call ``gno-trio``'s ``gno_search`` makes and
    returns the same payload: the same summary text and the same structured
    result. (A returned dict would go out as indented JSON text beside it,
    twice gno-trio's bytes, and the comparison would not be of the same work.)
    """
    from mcp.server.mcpserver import MCPServer

    from gno_trio.tools.retrieval import search_text

    server: MCPServer[Any] = MCPServer("gno-sdk-peer", log_level="WARNING")

    def gno_search(query: str, limit: int = 5) -> CallToolResult:
        """BM25 keyword search over the index."""
        found = engine.search(SearchRequest(query=query, limit=limit))
        return CallToolResult(
            content=[TextContent(type="text", text=search_text(found))],
            structured_content=found,
        )

    server.add_tool(gno_search)
    return server
