"""Catalogued tools this server does not implement yet: their names and descriptions.

They are part of the target surface (the catalogue order in
:mod:`gno_trio.tools.catalogue` lists them), so their read/write class is
known to the write gate before they exist. Implementing one means moving its
row into the family module that declares it whole.
"""

from __future__ import annotations

from typing import Final

from gno_trio.server.registry import ToolText

PLANNED: Final[tuple[ToolText, ...]] = (
    ToolText(
        "gno_vsearch",
        write=False,
        full=(
            "Semantic search over stored chunk embeddings: finds passages that match the meaning "
            "of the query when the words differ. Needs current embeddings; intent helps with short "
            "or ambiguous terms. gno_query is the general entry point."
        ),
    ),
    ToolText(
        "gno_similar",
        write=False,
        full=(
            "Find documents near a given document by the mean of its chunk embeddings, within a "
            "limit and similarity threshold. Needs stored vectors."
        ),
    ),
    ToolText(
        "gno_embed",
        write=True,
        full=(
            "Embed every chunk still waiting for a vector, optionally for one collection, as a "
            "background job; poll it with gno_job_status."
        ),
    ),
    ToolText(
        "gno_index",
        write=True,
        full=(
            "Sync files from disk and then embed them, as one background job; poll it with "
            "gno_job_status."
        ),
    ),
    ToolText(
        "gno_clear_collection_embeddings",
        write=True,
        full=(
            "Delete a collection's embeddings: those of models no longer in use (mode=stale) or "
            "all of them (mode=all)."
        ),
    ),
)
