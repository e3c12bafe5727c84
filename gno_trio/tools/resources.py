"""MCP resources: every document as ``gno://{collection}/{path}``, plus ``gno://tags``."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from gno_trio.errors import GnoError
from gno_trio.runtime import Runtime
from gno_trio.server.context import RequestContext

TAGS_URI = "gno://tags"
_LIST_LIMIT = 100_000


class DocumentResources:
    """Serves the index's documents and its tag list as MCP resources."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def list_resources(self, ctx: RequestContext) -> list[dict[str, Any]]:
        listing = await self.runtime.run(
            lambda: self.runtime.engine.documents.ls(limit=_LIST_LIMIT)
        )
        resources = []
        for doc in listing["documents"]:
            entry: dict[str, Any] = {
                "uri": doc["uri"],
                "name": doc["relPath"],
                "mimeType": doc["mime"],
            }
            if doc.get("title"):
                entry["description"] = doc["title"]
            resources.append(entry)
        return resources

    def list_templates(self) -> list[dict[str, Any]]:
        return [
            {
                "uriTemplate": "gno://{collection}/{+path}",
                "name": "document",
                "description": "An indexed document as line-numbered Markdown",
                "mimeType": "text/markdown",
            },
            {
                "uriTemplate": "gno://tags{?collection,prefix}",
                "name": "tags",
                "description": "Tags with document counts, optionally by collection or prefix",
                "mimeType": "application/json",
            },
        ]

    async def read(self, uri: str, ctx: RequestContext) -> list[dict[str, Any]]:
        if uri == TAGS_URI or uri.startswith(TAGS_URI + "?"):
            return [await self._read_tags(uri)]
        if not uri.startswith("gno://"):
            raise GnoError("NOT_FOUND", f"Resource not found: {uri}")
        doc = await self.runtime.run(
            lambda: self.runtime.engine.documents.get(uri, line_numbers=True)
        )
        source = doc["source"]
        header = [f"<!-- {doc['uri']}", f"docid: {doc['docid']}"]
        if source.get("absPath"):
            header.append(f"source: {source['absPath']}")
        header.append(f"mime: {source['mime']}")
        if doc.get("language"):
            header.append(f"language: {doc['language']}")
        text = "\n".join(header) + " -->\n\n" + doc["content"]
        return [{"uri": doc["uri"], "mimeType": "text/markdown", "text": text}]

    async def _read_tags(self, uri: str) -> dict[str, Any]:
        query = parse_qs(uri.partition("?")[2])
        collection = query.get("collection", [None])[0]
        prefix = query.get("prefix", [None])[0]
        tags = await self.runtime.run(
            lambda: self.runtime.engine.documents.tags(collection=collection, prefix=prefix)
        )
        return {"uri": uri, "mimeType": "application/json", "text": json.dumps(tags)}
