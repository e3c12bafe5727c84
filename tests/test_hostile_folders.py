"""Hostile folders: names that are not UTF-8, files swapped between the walk and the read,
FIFOs, device nodes and links. A sync lists what it does not index and goes on."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.cli_support import Cli, make_cli
from tests.test_mcp_gno_server import spawn

NOT_UTF8 = b"bad\xff\xfe.md"
NOT_UTF8_URI = "gno://notes/bad%FF%FE.md"


def _notes(tmp_path: Path) -> tuple[Cli, Path]:
    cli = make_cli(tmp_path)
    notes = tmp_path / "notes"
    notes.mkdir()
    cli.run("init", str(notes), "--name", "notes")
    return cli, notes


def _server_env(cli: Cli) -> dict[str, str]:
    return {k: v for k, v in cli.env.items() if k.startswith("GNO_")}


async def _tool(wire: Any, request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    answer = await wire.call(request_id, "tools/call", {"name": name, "arguments": arguments})
    assert not answer["result"].get("isError"), answer
    structured: dict[str, Any] = answer["result"]["structuredContent"]
    return structured


async def test_a_name_that_is_not_utf8_is_indexed_under_its_escaped_bytes(tmp_path: Path) -> None:
    cli, notes = _notes(tmp_path)
    (notes / "a.md").write_text("# A\nalpha\n")
    with open(os.path.join(os.fsencode(notes), NOT_UTF8), "wb") as handle:
        handle.write(b"# Bad\nbravo words\n")
    (notes / "z.md").write_text("# Z\nzulu\n")

    assert "3 added" in cli.run("update").stdout
    uris = [doc["uri"] for doc in cli.json("ls")["documents"]]
    assert uris == ["gno://notes/a.md", NOT_UTF8_URI, "gno://notes/z.md"]
    assert "bravo words" in cli.run("get", NOT_UTF8_URI).stdout
    (hit,) = cli.json("search", "bravo")["results"]
    assert hit["uri"] == NOT_UTF8_URI
    # The URI is stable: the next sync finds the file unchanged under it.
    assert "3 unchanged" in cli.run("update").stdout

    async with spawn(_server_env(cli), tmp_path) as wire:
        await wire.handshake()
        got = await _tool(wire, 1, "gno_get", ref=NOT_UTF8_URI)
        assert "bravo words" in got["content"]
        assert got["uri"] == NOT_UTF8_URI
