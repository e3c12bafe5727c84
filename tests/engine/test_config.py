"""index.yml: GNO compatibility, defaults, round-trips and error messages."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gno_trio.config import (
    DEFAULT_EXCLUDES,
    FTS_TOKENIZERS,
    Collection,
    Config,
    Context,
    Gateway,
    GatewayLimits,
    dump_config,
    dumps_config,
    fts5_tokenize_clause,
    load_config,
    loads_config,
    normalize_collection_name,
    parse_config,
)
from gno_trio.config.features import RetrievalTraces, TraceRetention
from gno_trio.engine.store.config_file import save_config
from gno_trio.errors import GnoError

# The shape GNO documents for index.yml, including keys gno-trio only carries.
GNO_WRITTEN = """
version: "1.0"
ftsTokenizer: snowball english
editorUriTemplate: "vscode://file/{path}:{line}:{col}"
collections:
  - name: notes
    path: /srv/notes
    pattern: "**/*"
    include: []
    exclude: [.git, node_modules]
    updateCmd: git pull
    languageHint: en
    sourceAvailability: any
    egressPolicy: lan
    egressPolicyRevision: 3
    models:
      embed: file:/models/embed.gguf
    recordAdapters:
      jsonl: {}
  - name: memory
    path: /srv/memory
    memoryManaged: true
contexts:
  - scopeType: global
    scopeKey: /
    text: Shared retrieval context
  - scopeType: collection
    scopeKey: "notes:"
    text: Personal notes
  - scopeType: prefix
    scopeKey: gno://notes/work
    text: Work notes
models:
  activePreset: slim-tuned
contentTypes:
  - id: person
    prefixes: [people/, contacts/]
    searchBoost: 1.15
retrievalTraces:
  enabled: true
  redactionMode: metadata
  retention: {maxAgeDays: 30, maxTraces: 1000, maxRecordsPerTrace: 10000, maxBytes: 16777216}
projectAffinity: {}
projectProfileBindings: []
gateway:
  host: 127.0.0.1
  tokenFile: /srv/gno/mcp-token
  allowedHosts: [127.0.0.1:3000, localhost:3000]
  allowedOrigins: [http://127.0.0.1:3000, http://localhost:3000]
  enableWrite: false
  toolProfile: core
  limits:
    maxBodyBytes: 2097152
    maxRequestsPerMinute: 120
    maxConcurrentRequests: 64
    maxQueuedRequests: 16
    maxSessions: 32
    sessionIdleTimeoutMs: 300000
    keepAliveTimeoutMs: 5000
    writeTimeoutMs: 10000
"""


def minimal(**collection: Any) -> dict[str, Any]:
    return {
        "version": "1.0",
        "collections": [{"name": "notes", "path": "/srv/notes", **collection}],
    }


def config_error(data: object) -> GnoError:
    with pytest.raises(GnoError) as info:
        parse_config(data, source="cfg.yml")
    assert info.value.code == "CONFIG_INVALID"
    assert info.value.message.startswith("cfg.yml: ")
    return info.value


def reported(error: GnoError) -> list[dict[str, str]]:
    return cast(list[dict[str, str]], error.details["errors"])


# --- defaults -------------------------------------------------------------


def test_missing_file_gives_the_default_config(tmp_path: Path) -> None:
    config = load_config(tmp_path / "nowhere" / "index.yml")
    assert config == Config()
    assert config.version == "1.0"
    assert config.fts_tokenizer == "snowball english"
    assert config.collections == () and config.contexts == ()


def test_empty_file_gives_the_default_config(tmp_path: Path) -> None:
    path = tmp_path / "index.yml"
    path.write_text("")
    assert load_config(path) == Config()


def test_gateway_defaults_match_gno() -> None:
    gateway = Config().gateway
    assert (gateway.host, gateway.port) == ("127.0.0.1", 3000)
    assert gateway.token_file is None
    assert gateway.allowed_hosts is None and gateway.allowed_origins is None
    assert gateway.enable_write is False
    assert gateway.tool_profile == "full"
    assert gateway.limits == GatewayLimits(
        max_body_bytes=1_048_576,
        max_requests_per_minute=120,
        max_concurrent_requests=64,
        max_queued_requests=16,
        max_sessions=32,
        session_idle_timeout_ms=300_000,
    )


def test_collection_defaults() -> None:
    collection = parse_config(minimal()).collections[0]
    assert collection.pattern == "**/*"
    assert collection.include == ()
    assert collection.exclude == DEFAULT_EXCLUDES
    assert ".git" in collection.exclude and "Thumbs.db" in collection.exclude
    assert collection.memory_managed is False
    assert collection.egress_policy is None
    assert collection.effective_egress_policy == "local_only"
    assert collection.egress_policy_source == "config_default"


def test_version_may_be_omitted() -> None:
    assert parse_config({"collections": []}).version == "1.0"


# --- GNO compatibility ----------------------------------------------------


def test_gno_written_file_loads_with_every_field() -> None:
    config = loads_config(GNO_WRITTEN)
    notes = config.collection("notes")
    assert notes is not None
    assert notes.path == Path("/srv/notes")
    assert notes.exclude == (".git", "node_modules")
    assert notes.update_cmd == "git pull"
    assert notes.language_hint == "en"
    assert notes.egress_policy == "lan"
    assert notes.egress_policy_source == "explicit"
    assert notes.egress_policy_revision == 3
    assert notes.source_availability == "any"
    assert notes.models == {"embed": "file:/models/embed.gguf"}
    memory = config.collection("memory")
    assert memory is not None and memory.memory_managed is True
    assert [c.scope_type for c in config.contexts] == ["global", "collection", "prefix"]
    assert [c.collection_name for c in config.contexts] == [None, "notes", "notes"]
    assert config.editor_uri_template == "vscode://file/{path}:{line}:{col}"
    assert config.gateway.tool_profile == "core"
    assert config.gateway.token_file == Path("/srv/gno/mcp-token")
    assert config.gateway.allowed_hosts == ("127.0.0.1:3000", "localhost:3000")
    assert config.gateway.limits.max_body_bytes == 2_097_152
    assert config.models == {"activePreset": "slim-tuned"}
    assert config.content_types[0]["id"] == "person"


def test_gno_only_keys_survive_a_save(tmp_path: Path) -> None:
    path = tmp_path / "index.yml"
    save_config(path, loads_config(GNO_WRITTEN))
    written = yaml.safe_load(path.read_text())
    for key in ("models", "contentTypes", "retrievalTraces", "projectAffinity"):
        assert written[key] == yaml.safe_load(GNO_WRITTEN)[key]
    assert written["collections"][0]["recordAdapters"] == {"jsonl": {}}
    assert load_config(path) == loads_config(GNO_WRITTEN)


@pytest.mark.parametrize(
    ("traces", "problem"),
    [
        ({"enabled": True}, "retrievalTraces.redactionMode: is required when enabled is true"),
        (
            {"enabled": False, "redactionMode": "replay"},
            "retrievalTraces.redactionMode: is only allowed when enabled is true",
        ),
        (
            {"enabled": True, "redactionMode": "full", "retention": {}},
            "retrievalTraces.redactionMode: must be one of",
        ),
        (
            {"enabled": True, "redactionMode": "replay", "retention": {"maxBytes": 1}},
            "retrievalTraces.retention.maxBytes: must be between 65536",
        ),
        (
            {"enabled": True, "redactionMode": "replay", "retention": {"maxTrace": 1}},
            "retrievalTraces.retention.maxTrace: unknown key",
        ),
    ],
)
def test_retrieval_traces_follow_gnos_rules(traces: dict[str, Any], problem: str) -> None:
    with pytest.raises(GnoError) as caught:
        parse_config({"version": "1.0", "retrievalTraces": traces})
    assert problem in caught.value.message


def test_disabled_traces_are_written_as_gno_requires() -> None:
    text = dumps_config(parse_config({"version": "1.0", "retrievalTraces": {"enabled": False}}))
    assert yaml.safe_load(text)["retrievalTraces"] == {"enabled": False}


def test_dump_uses_gno_key_names_and_order() -> None:
    data = dump_config(loads_config(GNO_WRITTEN))
    assert list(data)[:4] == ["version", "ftsTokenizer", "editorUriTemplate", "collections"]
    notes = data["collections"][0]
    assert notes["updateCmd"] == "git pull" and notes["languageHint"] == "en"
    assert data["gateway"]["limits"] == {"maxBodyBytes": 2_097_152}  # defaults omitted
    assert data["gateway"]["toolProfile"] == "core"


def test_dump_of_defaults_is_small_but_complete() -> None:
    data = dump_config(Config(collections=(Collection(name="a", path=Path("/a")),)))
    assert data == {
        "version": "1.0",
        "ftsTokenizer": "snowball english",
        "collections": [
            {
                "name": "a",
                "path": "/a",
                "pattern": "**/*",
                "include": [],
                "exclude": list(DEFAULT_EXCLUDES),
            }
        ],
        "contexts": [],
    }


def test_collection_name_input_is_normalised_to_lowercase() -> None:
    assert parse_config(minimal(name="My-Notes")).collections[0].name == "my-notes"
    assert normalize_collection_name("  Work_2 ") == "work_2"


@pytest.mark.parametrize("raw", ["", "-x", "_x", "a b", "a.b", "a" * 65, "ü", "a/b"])
def test_invalid_collection_names(raw: str) -> None:
    with pytest.raises(GnoError) as info:
        normalize_collection_name(raw)
    assert info.value.code == "INVALID_NAME"


def test_home_relative_paths_are_expanded() -> None:
    collection = parse_config(minimal(path="~/notes")).collections[0]
    assert collection.path == Path(os.path.expanduser("~/notes"))
    assert collection.path.is_absolute()


# --- errors name their key --------------------------------------------------


@pytest.mark.parametrize(
    ("data", "where", "what"),
    [
        ({"version": "2.0"}, "version", 'must be one of "1.0"'),
        ({"version": 1.0}, "version", 'must be one of "1.0"'),
        ({"ftsTokenizer": "icu"}, "ftsTokenizer", "must be one of"),
        ({"editorUriTemplate": 5}, "editorUriTemplate", "must be a string"),
        ({"collections": {"notes": {}}}, "collections", "must be a list"),
        ({"collections": ["notes"]}, "collections[0]", "must be a mapping"),
        ({"collections": [{"path": "/x"}]}, "collections[0].name", "is required"),
        ({"collections": [{"name": "n"}]}, "collections[0].path", "is required"),
        (minimal(name="bad name"), "collections[0].name", "must match ^[a-z0-9]"),
        (minimal(name=7), "collections[0].name", "must be a string"),
        (minimal(path="relative/dir"), "collections[0].path", "must be an absolute path"),
        (minimal(path=""), "collections[0].path", "must not be empty"),
        (minimal(pattern=""), "collections[0].pattern", "must not be empty"),
        (minimal(include=".md"), "collections[0].include", "must be a list"),
        (minimal(exclude=[".git", 3]), "collections[0].exclude[1]", "must be a string"),
        (minimal(updateCmd=["git", "pull"]), "collections[0].updateCmd", "must be a string"),
        (minimal(languageHint="english"), "collections[0].languageHint", "BCP-47"),
        (minimal(egressPolicy="public"), "collections[0].egressPolicy", "must be one of"),
        (minimal(egressPolicyRevision=-1), "collections[0].egressPolicyRevision", "at least 0"),
        (
            minimal(sourceAvailability="cloud"),
            "collections[0].sourceAvailability",
            "must be one of",
        ),
        (minimal(memoryManaged="yes"), "collections[0].memoryManaged", "must be true or false"),
        (minimal(memoryManaged=1), "collections[0].memoryManaged", "must be true or false"),
        (minimal(patern="*.md"), "collections[0].patern", "unknown key"),
        (
            {"collections": [{"name": "a", "path": "/a"}, {"name": "A", "path": "/b"}]},
            "collections[1].name",
            "duplicate collection name 'a'",
        ),
        (
            {"contexts": [{"scopeType": "global", "scopeKey": "/"}]},
            "contexts[0].text",
            "is required",
        ),
        (
            {"contexts": [{"scopeType": "folder", "scopeKey": "/", "text": "t"}]},
            "contexts[0].scopeType",
            "must be one of",
        ),
        (
            {"contexts": [{"scopeType": "global", "scopeKey": "notes:", "text": "t"}]},
            "contexts[0].scopeKey",
            'must be "/"',
        ),
        (
            {"contexts": [{"scopeType": "collection", "scopeKey": "notes", "text": "t"}]},
            "contexts[0].scopeKey",
            "collection name",
        ),
        (
            {"contexts": [{"scopeType": "prefix", "scopeKey": "notes/x", "text": "t"}]},
            "contexts[0].scopeKey",
            "gno://",
        ),
        (
            {"contexts": [{"scopeType": "global", "scopeKey": "/", "text": " "}]},
            "contexts[0].text",
            "empty",
        ),
        ({"gateway": []}, "gateway", "must be a mapping"),
        ({"gateway": {"host": ""}}, "gateway.host", "must not be empty"),
        ({"gateway": {"port": 70000}}, "gateway.port", "between 0 and 65535"),
        ({"gateway": {"port": "3000"}}, "gateway.port", "must be an integer"),
        ({"gateway": {"enableWrite": "true"}}, "gateway.enableWrite", "must be true or false"),
        ({"gateway": {"toolProfile": "slim"}}, "gateway.toolProfile", 'one of "full", "core"'),
        ({"gateway": {"allowedHosts": "localhost"}}, "gateway.allowedHosts", "must be a list"),
        ({"gateway": {"allowedHosts": ["*.example"]}}, "gateway.allowedHosts[0]", "exact host"),
        ({"gateway": {"allowedHosts": ["ok:1", "a:b"]}}, "gateway.allowedHosts[1]", "exact host"),
        (
            {"gateway": {"allowedOrigins": ["http://x/"]}},
            "gateway.allowedOrigins[0]",
            "exact origin",
        ),
        ({"gateway": {"allowedOrigins": ["ftp://x"]}}, "gateway.allowedOrigins[0]", "exact origin"),
        (
            {"gateway": {"allowedOrigins": ["http://x:80"]}},
            "gateway.allowedOrigins[0]",
            "exact origin",
        ),
        ({"gateway": {"tokenFile": 42}}, "gateway.tokenFile", "must be a string"),
        (
            {"gateway": {"limits": {"maxBodyBytes": 0}}},
            "gateway.limits.maxBodyBytes",
            "between 1 and",
        ),
        (
            {"gateway": {"limits": {"maxBodyBytes": 16 * 1024 * 1024 + 1}}},
            "gateway.limits.maxBodyBytes",
            "between 1 and 16777216",
        ),
        (
            {"gateway": {"limits": {"sessionIdleTimeoutMs": 999}}},
            "gateway.limits.sessionIdleTimeoutMs",
            "at least 1000",
        ),
        ({"gateway": {"limits": {"maxSessions": 0}}}, "gateway.limits.maxSessions", "at least 1"),
        (
            {"gateway": {"limits": {"maxQueuedRequests": -1}}},
            "gateway.limits.maxQueuedRequests",
            "at least 0",
        ),
        ({"gateway": {"limits": {"rateLimit": 5}}}, "gateway.limits.rateLimit", "unknown key"),
        (
            {"gateway": {"limits": {"maxSessions": 2.5}}},
            "gateway.limits.maxSessions",
            "must be an integer",
        ),
        (
            {"gateway": {"limits": {"maxSessions": True}}},
            "gateway.limits.maxSessions",
            "must be an integer",
        ),
        ({"colections": []}, "colections", "unknown key"),
        ({1: "x"}, "1", "unknown key"),
    ],
)
def test_bad_values_name_their_key(data: object, where: str, what: str) -> None:
    error = config_error(data)
    assert f"cfg.yml: {where}: " in error.message
    assert what in error.message
    assert any(e["path"] == where and what in e["message"] for e in reported(error))


def test_non_mapping_document_is_rejected() -> None:
    assert config_error(["a"]).message == "cfg.yml: must be a mapping (got ['a'])"


def test_all_independent_problems_are_reported_together() -> None:
    error = config_error({"ftsTokenizer": "x", "gateway": {"port": "1"}, "extra": 1})
    paths = {e["path"] for e in reported(error)}
    assert paths == {"ftsTokenizer", "gateway.port", "extra"}


def test_yaml_syntax_error_is_config_invalid() -> None:
    with pytest.raises(GnoError) as info:
        loads_config("collections: [unclosed", source="x.yml")
    assert info.value.code == "CONFIG_INVALID"
    assert info.value.message.startswith("x.yml: not valid YAML")


def test_load_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "index.yml"
    path.write_text("ftsTokenizer: icu\n")
    with pytest.raises(GnoError) as info:
        load_config(path)
    assert info.value.message.startswith(f"{path}: ftsTokenizer: ")


def test_non_utf8_file_is_config_invalid(tmp_path: Path) -> None:
    path = tmp_path / "index.yml"
    path.write_bytes(b"version: '1.0'\nname: \xff\xfe\n")
    with pytest.raises(GnoError) as info:
        load_config(path)
    assert info.value.code == "CONFIG_INVALID"


def test_unreadable_config_is_a_runtime_error(tmp_path: Path) -> None:
    with pytest.raises(GnoError) as info:
        load_config(tmp_path)  # a directory
    assert info.value.code == "RUNTIME"


def test_programmatic_construction_is_validated_too() -> None:
    with pytest.raises(ValueError, match="absolute"):
        Collection(name="a", path=Path("relative"))
    with pytest.raises(ValueError, match="must match"):
        Collection(name="a b", path=Path("/a"))
    with pytest.raises(ValueError, match="duplicate"):
        Config(
            collections=(
                Collection(name="a", path=Path("/a")),
                Collection(name="A", path=Path("/b")),
            )
        )


# --- editing ----------------------------------------------------------------


def test_with_collection_appends_or_replaces_in_place() -> None:
    a, b = Collection(name="a", path=Path("/a")), Collection(name="b", path=Path("/b"))
    config = Config().with_collection(a).with_collection(b)
    assert [c.name for c in config.collections] == ["a", "b"]
    tightened = Collection(name="a", path=Path("/a"), egress_policy="local_only")
    updated = config.with_collection(tightened)
    assert updated.collections == (tightened, b)
    assert config.collections == (a, b)  # the original is untouched


def test_collection_lookup_ignores_case() -> None:
    config = Config().with_collection(Collection(name="notes", path=Path("/n")))
    assert config.collection("NOTES") is config.collections[0]
    assert config.collection("other") is None


def test_without_collection() -> None:
    config = Config().with_collection(Collection(name="notes", path=Path("/n")))
    assert config.without_collection("Notes").collections == ()
    with pytest.raises(GnoError) as info:
        config.without_collection("missing")
    assert info.value.code == "NOT_FOUND"


# --- tokenizer ----------------------------------------------------------------


def test_tokenize_clauses() -> None:
    assert fts5_tokenize_clause("snowball english") == "porter unicode61 remove_diacritics 2"
    assert fts5_tokenize_clause("porter") == "porter unicode61 remove_diacritics 2"
    assert fts5_tokenize_clause("unicode61") == "unicode61 remove_diacritics 2"
    assert fts5_tokenize_clause("trigram") == "trigram"
    with pytest.raises(GnoError) as info:
        fts5_tokenize_clause("icu")
    assert info.value.code == "VALIDATION"


@pytest.mark.parametrize("tokenizer", FTS_TOKENIZERS)
def test_every_tokenizer_clause_works_in_sqlite(tokenizer: str) -> None:
    conn = sqlite3.connect(":memory:")
    clause = fts5_tokenize_clause(tokenizer).replace("'", "''")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{clause}')")
    conn.execute("INSERT INTO t(body) VALUES ('Crème brûlée recipes')")
    query = "recipes" if tokenizer != "trigram" else "ecipe"
    assert conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (query,)).fetchone() == (1,)
    conn.close()


# --- saving -------------------------------------------------------------------


def test_save_creates_parent_directories_and_loads_back(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "index.yml"
    config = loads_config(GNO_WRITTEN)
    save_config(path, config)
    assert load_config(path) == config
    assert [p.name for p in path.parent.iterdir()] == ["index.yml"]  # no temp files left


def test_save_keeps_existing_permissions(tmp_path: Path) -> None:
    path = tmp_path / "index.yml"
    path.write_text("version: '1.0'\n")
    path.chmod(0o640)
    save_config(path, Config())
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_failed_save_leaves_the_old_file_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "index.yml"
    save_config(path, Config())
    before = path.read_bytes()

    def broken_replace(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(GnoError) as info:
        save_config(path, loads_config(GNO_WRITTEN))
    assert info.value.code == "RUNTIME"
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["index.yml"]


# --- property tests -------------------------------------------------------------

names = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,20}", fullmatch=True)
words = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12)
paths = st.lists(
    st.from_regex(r"[A-Za-z0-9 ._-]{1,8}", fullmatch=True), min_size=1, max_size=3
).map(lambda parts: Path("/", *parts))
opaque = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
limits = st.builds(
    GatewayLimits,
    max_body_bytes=st.integers(1, 16 * 1024 * 1024),
    max_requests_per_minute=st.integers(1, 10_000),
    max_concurrent_requests=st.integers(1, 1000),
    max_queued_requests=st.integers(0, 1000),
    max_sessions=st.integers(1, 1000),
    session_idle_timeout_ms=st.integers(1000, 10**9),
)
gateways = st.builds(
    Gateway,
    host=st.sampled_from(["127.0.0.1", "0.0.0.0", "::1", "gno.lan"]),
    port=st.integers(0, 65535),
    token_file=st.none() | paths,
    allowed_hosts=st.none()
    | st.lists(st.sampled_from(["localhost:3000", "[::1]:1", "a.b"]), max_size=3),
    allowed_origins=st.none()
    | st.lists(st.sampled_from(["http://localhost:3000", "https://a.b"]), max_size=2),
    enable_write=st.booleans(),
    tool_profile=st.sampled_from(["full", "core"]),
    limits=limits,
)
collections = st.builds(
    Collection,
    name=names,
    path=paths,
    pattern=st.sampled_from(["**/*", "**/*.md", "notes/*"]),
    include=st.lists(st.sampled_from([".md", ".txt", ".pdf"]), max_size=3),
    exclude=st.lists(words, max_size=3),
    update_cmd=st.none() | words,
    language_hint=st.none() | st.sampled_from(["en", "de", "zh-CN", "zh-Hans", "und"]),
    egress_policy=st.none() | st.sampled_from(["local_only", "lan", "remote"]),
    egress_policy_revision=st.none() | st.integers(0, 10**6),
    source_availability=st.none() | st.sampled_from(["any", "local"]),
    memory_managed=st.booleans(),
    models=st.none() | st.dictionaries(st.sampled_from(["embed", "rerank"]), words, min_size=1),
    record_adapters=st.none() | opaque.filter(lambda v: v is not None),
)
contexts = st.one_of(
    st.builds(
        Context, scope_type=st.just("global"), scope_key=st.just("/"), text=words.filter(str.strip)
    ),
    st.builds(
        Context,
        scope_type=st.just("collection"),
        scope_key=names.map(lambda n: n + ":"),
        text=words.filter(str.strip),
    ),
    st.builds(
        Context,
        scope_type=st.just("prefix"),
        scope_key=names.map(lambda n: f"gno://{n}/sub"),
        text=words.filter(str.strip),
    ),
)
configs = st.builds(
    Config,
    fts_tokenizer=st.sampled_from(FTS_TOKENIZERS),
    editor_uri_template=st.none() | words,
    collections=st.lists(collections, max_size=3, unique_by=lambda c: c.name),
    contexts=st.lists(contexts, max_size=3),
    gateway=gateways,
    content_types=st.none() | st.lists(opaque, min_size=1, max_size=2),
    models=st.none() | st.dictionaries(st.text(max_size=5), opaque, min_size=1, max_size=2),
    retrieval_traces=st.none()
    | st.just(RetrievalTraces())
    | st.builds(
        RetrievalTraces,
        enabled=st.just(True),
        redaction_mode=st.sampled_from(["metadata", "replay"]),
        retention=st.builds(
            TraceRetention,
            max_age_days=st.integers(1, 3650),
            max_traces=st.integers(1, 1_000_000),
        ),
    ),
    project_affinity=st.none() | opaque.filter(lambda v: v is not None),
    project_profile_bindings=st.none() | opaque.filter(lambda v: v is not None),
)


@settings(max_examples=60, deadline=None)
@given(configs)
def test_dump_then_parse_is_identity(config: Config) -> None:
    data = dump_config(config)
    assert parse_config(data) == config
    # ... and the YAML text form loses nothing either.
    assert loads_config(dumps_config(config)) == config


yamlish = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=10)
    | st.sampled_from(["1.0", "/abs", "rel", "notes", "lan", "global", "/", "notes:", "full"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "version",
                    "ftsTokenizer",
                    "collections",
                    "contexts",
                    "gateway",
                    "name",
                    "path",
                    "include",
                    "exclude",
                    "limits",
                    "maxBodyBytes",
                    "scopeType",
                    "scopeKey",
                    "text",
                    "egressPolicy",
                    "allowedHosts",
                    "allowedOrigins",
                    "port",
                    "memoryManaged",
                    "models",
                ]
            )
            | st.text(max_size=5)
            | st.integers(),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=250, deadline=None)
@given(yamlish)
def test_parse_never_raises_anything_but_gnoerror(data: object) -> None:
    try:
        config = parse_config(data)
    except GnoError as exc:
        assert exc.code == "CONFIG_INVALID"
        assert exc.details["errors"]
    else:
        assert isinstance(config, Config)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_loads_never_raises_anything_but_gnoerror(text: str) -> None:
    try:
        loads_config(text)
    except GnoError as exc:
        assert exc.code == "CONFIG_INVALID"
