"""Team mode's data plane: an index written on one host is searched on another.

PostgreSQL holds the rows; each host's index file is a cache caught up from
the index's change sequence. A host that joins later, or that catches up
after another host wrote, answers searches exactly as an embedded index of
the same files does (same documents, scores, snippets), reads the same
documents and the same change journal, and a write that was committed on a
host that died before sharing it is visible nowhere.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import psycopg
import pytest

from gno_trio.config.dirs import Dirs
from gno_trio.config.model import SearchBackend
from gno_trio.engine import CaptureRequest, Engine, QueryOptions, SearchRequest, Team
from gno_trio.engine.ingest.apply import BATCH_DOCS
from gno_trio.engine.team import changes
from gno_trio.engine.team.replica import Replica
from gno_trio.engine.team.url import TeamStore
from gno_trio.errors import GnoError
from tests.conftest import BACKENDS, choose_backend
from tests.support.requests import flat_search
from tests.support.shared import EVALS_CORPUS, required

QUERIES = (
    "memory",
    "search index",
    '"the"',
    "rechercher",
    "suche",
    "ricerca",
    "data -index",
    "lang*",
)


def host_dirs(base: Path) -> Dirs:
    return Dirs(config=base / "config", data=base / "data", cache=base / "cache")


def open_host(base: Path, store: TeamStore | None) -> Engine:
    """A host's engine: its own data directory, joined to ``store``'s team when given."""
    engine = Engine.open(dirs=host_dirs(base))
    if store is not None:
        try:
            engine.join_team(Team.open(store, "default"))
        except BaseException:
            engine.close()
            raise
    return engine


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A writable copy of the small multilingual fixture corpus."""
    copy = tmp_path / "corpus"
    shutil.copytree(required(EVALS_CORPUS, "the shared gno-evals fixture corpus"), copy)
    return copy


def answers(engine: Engine) -> list[Any]:
    found = []
    for query in QUERIES:
        results = engine.search.lexical(flat_search(query=query, limit=50))["results"]
        found.append([(r["docid"], r["uri"], r["score"], r.get("snippet")) for r in results])
    return found


@pytest.fixture
def hosts(
    request: pytest.FixtureRequest, tmp_path: Path, team_store: TeamStore, corpus: Path
) -> Iterator[tuple[Engine, Engine]]:
    """Host A (indexed the corpus through the team) and host B (joined afterwards); the
    team ranks documents with ``request.param`` (FTS5 unless a test says otherwise)."""
    choose_backend(tmp_path / "a" / "config", getattr(request, "param", "fts5"))
    a = open_host(tmp_path / "a", team_store)
    try:
        a.collections.add(str(corpus), name="notes")
        a.sync()
        b = open_host(tmp_path / "b", team_store)
        try:
            yield a, b
        finally:
            b.close()
    finally:
        a.close()


@pytest.mark.parametrize("hosts", BACKENDS, indirect=True)
def test_a_host_that_joins_later_answers_as_an_embedded_index(
    hosts: tuple[Engine, Engine], tmp_path: Path, corpus: Path
) -> None:
    a, b = hosts
    choose_backend(tmp_path / "embedded" / "config", a.config.search.backend)
    with open_host(tmp_path / "embedded", None) as embedded:
        embedded.collections.add(str(corpus), name="notes")
        embedded.sync()
        expected = answers(embedded)
    assert any(expected), "the queries find something"
    assert answers(b) == expected
    assert answers(a) == expected
    first = expected[0][0][0]
    assert b.documents.get(first)["content"] == a.documents.get(first)["content"]
    assert b.documents.changes(limit=1000) == a.documents.changes(limit=1000)


@pytest.mark.parametrize("hosts", BACKENDS, indirect=True)
def test_a_change_on_one_host_reaches_the_other(hosts: tuple[Engine, Engine], corpus: Path) -> None:
    a, b = hosts
    (corpus / "en" / "zebra.md").write_text("# Zebra\n\nA quagga grazes beside the okapi.\n")
    gone = sorted((corpus / "de").iterdir())[0]
    gone.unlink()
    a.sync()
    assert b.team is not None and b.team.catch_up()
    found = b.search.lexical(flat_search(query="quagga"))["results"]
    assert [r["uri"] for r in found] == ["gno://notes/en/zebra.md"]
    assert b.search.lexical(flat_search(query="quagga")) == a.search.lexical(
        flat_search(query="quagga")
    )
    assert answers(b) == answers(a)
    with pytest.raises(GnoError) as missing:
        b.documents.get(f"gno://notes/de/{gone.name}")
    assert missing.value.code == "NOT_FOUND"
    assert b.documents.changes(limit=1000) == a.documents.changes(limit=1000)


def test_a_host_reaches_a_change_another_wrote_or_says_why_it_cannot(
    hosts: tuple[Engine, Engine], corpus: Path
) -> None:
    """``reach_change`` waits for a change (read-your-writes), bounded; a change not on the
    store is ``behind`` once the time is up, one of another incarnation ``other``."""
    a, b = hosts
    assert a.team is not None and b.team is not None
    (corpus / "en" / "zebra.md").write_text("# Zebra\n\nA quagga grazes beside the okapi.\n")
    a.sync()
    token = a.team.known_change()
    assert token is not None and token != b.team.known_change()
    assert b.team.reach_change(token, seconds=5) == "reached"
    assert b.team.known_change() == token
    assert [r["uri"] for r in b.search.lexical(flat_search(query="quagga"))["results"]]
    epoch, _, seq = token.partition(":")
    assert b.team.reach_change(f"{epoch}:{int(seq) + 1}", seconds=0.2) == "behind"
    assert b.team.reach_change(f"{'0' * 32}:1", seconds=5) == "other"
    for malformed in ("", "12", f"{epoch}:", f"{epoch}:-1", f"{epoch.upper()}:1"):
        with pytest.raises(GnoError) as refused:
            b.team.reach_change(malformed, seconds=0)
        assert refused.value.code == "INVALID_INPUT"


_DIE_BEFORE_SHARING = (
    "import os, sys\n"
    "from pathlib import Path\n"
    "from gno_trio.config.dirs import Dirs\n"
    "from gno_trio.engine import Engine, Team\n"
    "from gno_trio.engine.team.replica import Replica\n"
    "from gno_trio.engine.team.url import TeamStore\n"
    "base = Path(sys.argv[2])\n"
    "engine = Engine.open(dirs=Dirs(base / 'config', base / 'data', base / 'cache'))\n"
    "engine.join_team(Team.open(TeamStore(sys.argv[1]), 'default'))\n"
    "Replica.ship = lambda self, pg: os.kill(os.getpid(), 9)  # dies before sharing\n"
    "engine.sync()\n"
)


def test_a_write_committed_by_a_host_killed_before_sharing_is_visible_nowhere(
    hosts: tuple[Engine, Engine], tmp_path: Path, team_store: TeamStore, corpus: Path
) -> None:
    a, b = hosts
    a.close()
    (corpus / "en" / "zebra.md").write_text("# Zebra\n\nA quagga grazes beside the okapi.\n")
    died = subprocess.run(
        [sys.executable, "-c", _DIE_BEFORE_SHARING, team_store.url, str(tmp_path / "a")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert died.returncode == -9, died.stderr
    assert b.team is not None and b.team.catch_up()
    assert b.search.lexical(flat_search(query="quagga"))["results"] == []
    with open_host(tmp_path / "a", team_store) as again:  # its next start converges
        assert again.search.lexical(flat_search(query="quagga"))["results"] == []
        assert answers(again) == answers(b)
        again.sync()  # the file is still there: a sync shares it now
    assert b.team.catch_up()
    assert [r["uri"] for r in b.search.lexical(flat_search(query="quagga"))["results"]] == [
        "gno://notes/en/zebra.md"
    ]


def test_vectors_shipped_by_one_host_rank_the_same_on_another(
    hosts: tuple[Engine, Engine],
) -> None:
    """The writer's file is what an embedded index holds; B's cache must answer as it does."""
    a, b = hosts
    a.vectors.embed()
    assert b.team is not None and b.team.catch_up()
    for text in ("how does memory work", "recherche"):
        request = SearchRequest(query=text, limit=5)
        expected = a.search.query(request, QueryOptions())
        assert expected["meta"]["vectorsUsed"] is True and expected["results"]
        assert b.search.query(request, QueryOptions())["results"] == expected["results"]
        assert b.search.vector(request)["results"] == a.search.vector(request)["results"]


def test_a_store_that_drops_mid_ship_fails_the_write_retryably_and_loses_nothing(
    hosts: tuple[Engine, Engine], corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = hosts
    before = answers(b)
    ship = Replica.ship

    def dropped(self: Replica, pg: Any) -> int | None:
        with psycopg.connect(pg.info.dsn, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", (pg.info.backend_pid,))
        return ship(self, pg)

    (corpus / "en" / "zebra.md").write_text("# Zebra\n\nA quagga grazes beside the okapi.\n")
    monkeypatch.setattr(Replica, "ship", dropped)
    with pytest.raises(GnoError) as failed:
        a.sync()
    assert failed.value.code == "STORE_UNAVAILABLE" and "try again" in failed.value.message
    assert b.team is not None and b.team.catch_up()
    assert answers(b) == before  # nothing half-shared
    monkeypatch.setattr(Replica, "ship", ship)
    a.sync()  # the retry
    assert b.team.catch_up()
    assert [r["uri"] for r in b.search.lexical(flat_search(query="quagga"))["results"]] == [
        "gno://notes/en/zebra.md"
    ]
    assert answers(b) == answers(a)


def test_a_backend_switch_on_the_writer_reaches_every_host(
    hosts: tuple[Engine, Engine], corpus: Path
) -> None:
    """FTS5 -> tantivy -> FTS5 on the writer: a note written while tantivy ranked is found
    by FTS5 on the other host too (the switch back ships every document's full-text row)."""
    a, b = hosts

    def rank_with(backend: SearchBackend) -> None:
        a.update_config(
            lambda config: attrs.evolve(config, search=attrs.evolve(config.search, backend=backend))
        )
        a.sync()

    rank_with("tantivy")
    (corpus / "en" / "zebra.md").write_text("# Zebra\n\nA quagga grazes beside the okapi.\n")
    a.sync()
    rank_with("fts5")
    assert b.team is not None and b.team.catch_up()
    assert b.config.search.backend == "fts5"
    found = b.search.lexical(flat_search(query="quagga"))["results"]
    assert [r["uri"] for r in found] == ["gno://notes/en/zebra.md"]
    assert answers(b) == answers(a)


def test_a_long_sync_is_shared_batch_by_batch(tmp_path: Path, team_store: TeamStore) -> None:
    """Each committed batch of a sync is shipped as it commits, not all at the lease's end."""
    notes = tmp_path / "many"
    notes.mkdir()
    for index in range(BATCH_DOCS + 20):
        (notes / f"n{index:04d}.md").write_text(f"# Note {index}\n\nokapi {index}\n")
    with open_host(tmp_path / "a", team_store) as a, open_host(tmp_path / "b", team_store) as b:
        a.collections.add(str(notes), name="many")
        assert a.team is not None and a.team.replica is not None
        before = a.team.replica.change_seq()
        a.sync()
        assert a.team.replica.change_seq() - before >= 2  # one per batch
        assert b.team is not None and b.team.catch_up()
        last = f"gno://many/n{BATCH_DOCS + 19:04d}.md"  # written by the second batch
        assert b.documents.get(last)["content"] == a.documents.get(last)["content"]


def test_writers_on_either_host_take_turns_and_every_copy_stays_the_same(
    hosts: tuple[Engine, Engine], corpus: Path
) -> None:
    """Each writer catches up before it writes, so ids, journal cursors and answers agree."""
    a, b = hosts
    for turn, (writer, reader) in enumerate(((a, b), (b, a), (a, b), (b, a))):
        writer.notes.capture(CaptureRequest(collection="notes", title=f"Turn {turn}",
                                      content=f"The okapi took turn {turn}.\n"))  # fmt: skip
        (corpus / "it" / f"turn-{turn}.md").write_text(f"# Giro {turn}\n\nokapi {turn}\n")
        writer.sync()
        assert reader.team is not None and reader.team.catch_up()
    assert answers(a) == answers(b)
    assert a.documents.changes(limit=1000) == b.documents.changes(limit=1000)
    found = a.search.lexical(flat_search(query="okapi", limit=20))["results"]
    assert len(found) == 8
    assert found == b.search.lexical(flat_search(query="okapi", limit=20))["results"]


def test_a_host_of_an_older_build_follows_a_writer_with_a_column_it_lacks(
    tmp_path: Path, team_store: TeamStore, corpus: Path
) -> None:
    """During a rolling upgrade a newer writer may ship a column an older host lacks."""
    with open_host(tmp_path / "a", team_store) as a:
        with a.connection() as conn:  # what a newer build's migration would have added
            conn.execute("ALTER TABLE documents ADD COLUMN reading_minutes INTEGER DEFAULT 3")
        a.collections.add(str(corpus), name="notes")
        a.sync()
        with open_host(tmp_path / "b", team_store) as b:
            assert answers(b) == answers(a) and any(answers(b))


def test_pruned_tombstones_start_a_host_left_behind_over_and_let_a_current_one_follow(
    hosts: tuple[Engine, Engine],
    tmp_path: Path,
    team_store: TeamStore,
    corpus: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    a, b = hosts
    open_host(tmp_path / "c", team_store).close()  # host C is caught up, then goes away
    monkeypatch.setattr(changes, "PRUNE_EVERY", 10**9)
    gone = sorted((corpus / "de").iterdir())[0]
    gone.unlink()
    a.sync()
    a.collections.cleanup()  # the deleted note's rows go: tombstones
    assert b.team is not None and b.team.catch_up()  # B is past it
    with psycopg.connect(team_store.url) as pg:
        kept = pg.execute("SELECT count(*) FROM gno_index_units WHERE body IS NULL").fetchone()
    assert kept is not None and kept[0] > 0

    monkeypatch.setattr(changes, "PRUNE_EVERY", 1)
    monkeypatch.setattr(changes, "KEEP_TOMBSTONES", 0)
    (corpus / "en" / "zebra.md").write_text("# Zebra\n\nA quagga grazes beside the okapi.\n")
    a.sync()  # the writer drops every tombstone as it ships this change
    with psycopg.connect(team_store.url) as pg:
        tombstones = pg.execute("SELECT count(*) FROM gno_index_units WHERE body IS NULL")
        assert tombstones.fetchone() == (0,)

    with caplog.at_level(logging.INFO, logger="gno_trio.engine.team"):
        assert b.team.catch_up()
        assert not [r for r in caplog.records if "rebuilding" in r.getMessage()]  # it followed
        assert answers(b) == answers(a)
        with open_host(tmp_path / "c", team_store) as c:  # behind the pruned tombstone
            assert [r for r in caplog.records if "rebuilding" in r.getMessage()]
            assert answers(c) == answers(a)
            with pytest.raises(GnoError) as missing:
                c.documents.get(f"gno://notes/de/{gone.name}")
            assert missing.value.code == "NOT_FOUND"
            found = c.search.lexical(flat_search(query="quagga"))["results"]
            assert [r["uri"] for r in found] == ["gno://notes/en/zebra.md"]
