"""A search reads one state of the index, even while another process syncs a change.

A BM25 search ranks documents in one statement and reads their chunks in
later ones; a sync that commits in between (another engine on the same
index: the CLI beside a running server) replaces the changed document's
chunks. Each hit must still carry the snippet and anchor of the text it was
ranked on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine, SearchRequest
from gno_trio.engine.search import lexical
from tests.conftest import write_corpus

_BEFORE = "# Pangolins\n\nThe pangolin rolls into a ball when it is afraid.\n"
_AFTER = "# Armadillos\n\nNothing about the other animal is left in this note.\n"


def _dirs(base: Path) -> Dirs:
    return Dirs(config=base / "config", data=base / "data", cache=base / "cache")


@pytest.mark.parametrize("surface", ["lexical", "query"])
def test_a_sync_committing_mid_search_does_not_strip_the_hits_snippets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, surface: str
) -> None:
    notes = write_corpus(tmp_path / "notes", {"pangolin.md": _BEFORE, "other.md": "# Other\n"})
    with Engine.open(dirs=_dirs(tmp_path / "index")) as reader:
        reader.collections.add(str(notes), name="notes")
        reader.sync()
        writer = Engine.open(dirs=_dirs(tmp_path / "index"), create=False)
        anchors_for: Callable[..., Any] = lexical.anchors_for

        def sync_in_between(*args: Any, **kwargs: Any) -> Any:
            # The documents are ranked; now the note changes and is re-synced
            # by another engine before this search reads the hits' chunks.
            (notes / "pangolin.md").write_text(_AFTER, encoding="utf-8")
            (report,) = writer.sync()
            assert report.updated == 1
            return anchors_for(*args, **kwargs)

        monkeypatch.setattr(lexical, "anchors_for", sync_in_between)
        try:
            run = getattr(reader.search, surface)
            found = run(SearchRequest(query="pangolin rolls", limit=5))
        finally:
            writer.close()
        (hit,) = [hit for hit in found["results"] if hit["uri"].endswith("pangolin.md")]
        assert "<mark>pangolin</mark> <mark>rolls</mark>" in hit["snippet"]
        assert hit["snippetRange"]["startLine"] >= 1
        monkeypatch.undo()
        # The next search sees the change (the file name still matches).
        (later,) = reader.search.lexical(SearchRequest(query="pangolin rolls", limit=5))["results"]
        assert later["conversion"]["mirrorHash"] != hit["conversion"]["mirrorHash"]
        assert "rolls" not in later["snippet"]
