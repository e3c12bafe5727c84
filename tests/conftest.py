"""Shared fixtures for the engine and CLI behaviour tests.

Every test gets its own directories and SQLite file under ``tmp_path``; the
small generated corpus is written fresh each time so tests may edit, rename
or delete files freely. Reference data (the GNO output schemas, the shared
fixture corpora) is located relative to this file, never by absolute path.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine
from gno_trio.engine.team.database import TeamDatabase, open_team
from gno_trio.engine.team.url import TeamStore
from gno_trio.errors import GnoError
from tests.support import postgres as postgres_support
from tests.support.shared import EVALS_CORPUS, SCHEMAS, SEED, required, unavailable

pytest_plugins = ["tests.support.cli_support", "tests.support.guarded_gateway"]

STORES = ("sqlite", "postgresql")
"""The stores of the coordination plane; its contract tests run on both."""

# A team store in the developer's environment must never be joined by the tests' commands
# (they would rewrite that team's configuration); team tests name their own throwaway one.
os.environ.pop("GNO_STORE", None)


# A small corpus whose every file exercises something: frontmatter fields,
# the title rule, inline tags, code, plain text, awkward file names and the
# default excludes.
CORPUS: dict[str, str] = {
    "alpha.md": (
        "---\n"
        "title: Alpha Planning\n"
        "tags: [project, Planning]\n"
        "author: Jane Doe\n"
        "categories: [meeting]\n"
        "date: 2024-03-01\n"
        "relations:\n"
        "  depends_on: beta\n"
        "---\n"
        "# A heading that is not the title\n"
        "\n"
        "The kubernetes rollout needs a plan.\n"
        "\n"
        "Inline #roadmap tag here.\n"
        "\n"
        "Later lines mention giraffes once.\n"
    ),
    "beta.md": (
        "# Beta Notes On Caching\n"
        "\n"
        "Body about real-time processing and banana split desserts.\n"
        "See [[alpha]] for context.\n"
    ),
    "gamma.md": (
        "---\n"
        "author: John Smith\n"
        "date: 2025-06-15\n"
        "tags: roadmap\n"
        "type: decision\n"
        "---\n"
        "# Notes\n"
        "\n"
        "## Gamma Decision Record\n"
        "\n"
        "We chose real databases; time will tell. Also split the banana.\n"
    ),
    "code/hello.py": 'def hello():\n    """Greets in kubernetes land."""\n    return "hello"\n',
    "plain.txt": "plain text mentioning zebra crossings\n",
    "sub dir/my note #1?%.md": "# Awkward Name\n\nquokka content lives here\n",
    "unicode/café ünï.md": "# Unicode Name\n\nnarwhal content lives here\n",
    ".git/ignored.md": "# Git internals\n\nquokka inside git\n",
    "node_modules/pkg/readme.md": "# Dependency\n\nquokka inside node_modules\n",
    "image.png": "not really an image\n",
}


def gno_env(base: Path) -> dict[str, str]:
    """The environment of a ``gno-trio`` child process whose index lives under ``base``."""
    return {
        **os.environ,
        "GNO_CONFIG_DIR": str(base / "config"),
        "GNO_DATA_DIR": str(base / "data"),
        "GNO_CACHE_DIR": str(base / "cache"),
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }


BACKENDS = ("fts5", "tantivy")
"""The document-ranking backends (``search.backend``); behavioural search tests run on both."""


def choose_backend(config_dir: Path, backend: str, *, tokenizer: str | None = None) -> None:
    """Start an index's ``index.yml`` with ``search.backend`` (and maybe the tokenizer) set.

    Call it before the index is first opened.
    """
    config_dir.mkdir(parents=True, exist_ok=True)
    text = f"search:\n  backend: {backend}\n"
    if tokenizer is not None:
        text = f"ftsTokenizer: {tokenizer}\n{text}"
    (config_dir / "index.yml").write_text(text, "utf-8")


def write_corpus(root: Path, files: dict[str, str] | None = None) -> Path:
    """Write ``files`` (default: ``CORPUS``) under ``root`` and return ``root``."""
    for rel, text in (CORPUS if files is None else files).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def db_snapshot(db_path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every ordinary table, for "nothing changed" assertions."""
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%fts%' ORDER BY name"
            )
        ]
        return {
            t: sorted(conn.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables
        }
    finally:
        conn.close()


@cache
def error_code(call: Callable[[], object]) -> str:
    """The ``GnoError`` code ``call()`` fails with (the test fails if it succeeds)."""
    with pytest.raises(GnoError) as caught:
        call()
    return caught.value.code


def load_schema(name: str) -> dict[str, Any]:
    """GNO's output schema ``name``: 1.35's published set, else the seed's (memory)."""
    path = SCHEMAS / f"{name}.schema.json"
    if not path.is_file():
        path = SEED / f"{name}.schema.json"
    schema: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return schema


@cache
def _gno_registry() -> Registry[Any]:
    """Every published GNO schema under its ``$id``, so cross-schema references resolve."""
    resources = []
    for path in sorted([*SCHEMAS.glob("*.schema.json"), *SEED.glob("*.schema.json")]):
        document = json.loads(path.read_text("utf-8"))
        resource = Resource.from_contents(document, default_specification=DRAFT7)
        resources.append((document.get("$id") or path.name, resource))
    return Registry().with_resources(resources)


def gno_schema_errors(name: str, instance: Any) -> list[str]:
    """Every way ``instance`` breaks GNO's output schema ``name``, as ``path: message`` lines.

    Formats are asserted, as GNO's own validator does: that is what tells a
    calendar date from a timestamp in GNO's ``oneOf`` of the two.
    """
    schema = load_schema(name)
    validator_cls = jsonschema.validators.validator_for(schema)
    validator_cls.check_schema(schema)
    validator = validator_cls(
        schema, registry=_gno_registry(), format_checker=validator_cls.FORMAT_CHECKER
    )
    return [
        f"{'/'.join(str(part) for part in error.absolute_path) or '(root)'}: {error.message}"
        for error in sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.path)))
    ]


def validate(name: str, instance: Any) -> None:
    """Validate against GNO's published output schema (draft-07), formats included."""
    problems = gno_schema_errors(name, instance)
    assert problems == [], problems


@pytest.fixture
def schema_check() -> Callable[[str, Any], None]:
    required(SCHEMAS, "GNO's output schemas")
    return validate


@pytest.fixture
def dirs(tmp_path: Path) -> Dirs:
    return Dirs(config=tmp_path / "config", data=tmp_path / "data", cache=tmp_path / "cache")


@pytest.fixture
def engine(dirs: Dirs) -> Iterator[Engine]:
    opened = Engine.open(dirs=dirs)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "corpus")


@pytest.fixture
def indexed(engine: Engine, corpus: Path) -> Engine:
    """The engine with ``corpus`` registered as collection ``notes`` and synced."""
    engine.collections.add(str(corpus), name="notes")
    engine.sync()
    return engine


@pytest.fixture
def gno_evals() -> Path:
    return required(EVALS_CORPUS, "the shared gno-evals fixture corpus")


def bump_mtime(path: Path, seconds: float = 5.0) -> None:
    """Move a file's mtime forward so a re-sync cannot mistake it for unchanged."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + int(seconds * 1e9)))


@pytest.fixture
def team_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TeamStore]:
    """A PostgreSQL database of this test's own on the run's throwaway server."""
    try:
        info = postgres_support.server(tmp_path_factory.getbasetemp())
    except Exception as exc:
        unavailable(f"the PostgreSQL test server did not start: {type(exc).__name__}: {exc}")
    with postgres_support.fresh_database(info) as store:
        yield store


@pytest.fixture
def team(team_store: TeamStore) -> Iterator[TeamDatabase]:
    """That database opened as a store (migrated, pooled); closed after the test."""
    database = open_team(team_store)
    try:
        yield database
    finally:
        database.close()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The process that owns the run stops the PostgreSQL test server, if it was started."""
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is None or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    with contextlib.suppress(Exception):
        postgres_support.stop(factory.getbasetemp())
