"""The ``index.yml`` configuration: typed, validated, and compatible with GNO.

A GNO installation and gno-trio can share one config file, so the key names,
defaults and value rules follow GNO's schema. Keys that GNO understands but
gno-trio does not use yet (``contentTypes``, ``models`` ...) are kept as opaque
data: a GNO-written file loads, and saving it again does not lose them. Any
other unknown key is an error, because a misspelt key silently ignored is a
setting the user believes is active but is not.

Parsing goes through cattrs with detailed validation into frozen attrs
classes; every failure becomes one ``CONFIG_INVALID`` error whose message
names the exact key path (``collections[1].name: ...``). The hooks live in
:mod:`gno_trio.config.codec`, the value rules in :mod:`gno_trio.config.rules`;
this module holds the model and the functions that read and write it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal, TypeAlias, cast, get_args

import attrs
import cattrs
import yaml

from gno_trio.config.codec import build_converter, config_error
from gno_trio.config.features import Conversion, RetrievalTraces, TraceRetention
from gno_trio.config.rules import (
    COLLECTION_NAME_RE,
    ConfigValueError,
    absolute_path,
    as_tuple,
    check_collection_name,
    each_entry,
    fail,
    host_entry_problem,
    int_range,
    language_hint,
    lower_name,
    non_empty,
    origin_entry_problem,
)
from gno_trio.errors import GnoError

ConfigVersion: TypeAlias = Literal["1.0"]
CONFIG_VERSION: ConfigVersion = "1.0"
FtsTokenizer: TypeAlias = Literal["unicode61", "porter", "trigram", "snowball english"]
EgressPolicy: TypeAlias = Literal["local_only", "lan", "remote"]
EgressPolicySource: TypeAlias = Literal["explicit", "config_default"]
SourceAvailability: TypeAlias = Literal["any", "local"]
ScopeType: TypeAlias = Literal["global", "collection", "prefix"]
ToolProfile: TypeAlias = Literal["full", "core"]
SearchBackend: TypeAlias = Literal["auto", "fts5", "tantivy"]

FTS_TOKENIZERS: tuple[FtsTokenizer, ...] = get_args(FtsTokenizer)
DEFAULT_FTS_TOKENIZER: FtsTokenizer = "snowball english"
DEFAULT_PATTERN = "**/*"
# Folders and files a collection skips unless its ``exclude`` list says otherwise.
DEFAULT_EXCLUDES = (
    ".git",
    "node_modules",
    ".venv",
    ".idea",
    "dist",
    "build",
    "__pycache__",
    ".DS_Store",
    "Thumbs.db",
)
DEFAULT_EGRESS_POLICY: EgressPolicy = "local_only"
# GNO has no config key for the port (only ``--port``, default 3000); gno-trio
# accepts ``gateway.port`` as an extension with the same default.
DEFAULT_GATEWAY_PORT = 3000
DEFAULT_GATEWAY_HOST = "127.0.0.1"
MAX_BODY_BYTES_LIMIT = 16 * 1024 * 1024
URI_PREFIX = "gno://"

# stdlib SQLite ships no snowball stemmer, so "snowball english" maps to the
# porter stemmer, the closest English stemmer FTS5 has built in.
# ``remove_diacritics 2`` also folds diacritics of precomposed characters;
# trigram gets no option because SQLite before 3.45 rejects it there.
_FTS5_TOKENIZE: dict[FtsTokenizer, str] = {
    "unicode61": "unicode61 remove_diacritics 2",
    "porter": "porter unicode61 remove_diacritics 2",
    "trigram": "trigram",
    "snowball english": "porter unicode61 remove_diacritics 2",
}

_COLLECTION_SCOPE_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}:")


def fts5_tokenize_clause(name: str) -> str:
    """The FTS5 ``tokenize=`` value that implements a configured tokenizer."""
    try:
        return _FTS5_TOKENIZE[cast(FtsTokenizer, name)]
    except KeyError:
        choices = ", ".join(FTS_TOKENIZERS)
        raise GnoError(
            "VALIDATION", f"Unknown FTS tokenizer {name!r}; use one of: {choices}"
        ) from None


def normalize_collection_name(raw: str) -> str:
    """Lower-case a collection name and check it, raising ``INVALID_NAME``."""
    name = raw.strip().lower() if isinstance(raw, str) else None
    if name is None or not COLLECTION_NAME_RE.fullmatch(name):
        raise GnoError(
            "INVALID_NAME",
            f"Invalid collection name {raw!r}: use 1-64 of a-z, 0-9, '_' and '-', "
            "starting with a letter or digit",
        )
    return name


@attrs.frozen
class GatewayLimits:
    """Resource bounds of the resident HTTP gateway (GNO's key names)."""

    max_body_bytes: int = attrs.field(
        default=1024 * 1024, validator=int_range(1, MAX_BODY_BYTES_LIMIT)
    )
    max_requests_per_minute: int = attrs.field(default=120, validator=int_range(1))
    max_concurrent_requests: int = attrs.field(default=64, validator=int_range(1))
    max_queued_requests: int = attrs.field(default=16, validator=int_range(0))
    max_sessions: int = attrs.field(default=32, validator=int_range(1))
    session_idle_timeout_ms: int = attrs.field(default=300_000, validator=int_range(1000))
    # Extensions (GNO has no such keys): how long a connection may sit idle
    # between requests, how long a client may take to read each 64 KiB, and
    # how many of the sessions one caller (one token, or all of loopback
    # without one) may hold, so no caller alone can fill them all.
    keep_alive_timeout_ms: int = attrs.field(default=5_000, validator=int_range(100))
    write_timeout_ms: int = attrs.field(default=10_000, validator=int_range(100))
    max_sessions_per_identity: int = attrs.field(default=16, validator=int_range(1))


@attrs.frozen
class Gateway:
    """Settings of the resident HTTP MCP gateway (``gno serve`` / ``gno daemon``).

    ``allowed_hosts`` / ``allowed_origins`` stay ``None`` when not configured:
    the transport then derives loopback defaults from host and port, whereas an
    explicit empty list allows nothing.
    """

    host: str = attrs.field(default=DEFAULT_GATEWAY_HOST, validator=non_empty)
    port: int = attrs.field(default=DEFAULT_GATEWAY_PORT, validator=int_range(0, 65535))
    token_file: Path | None = None
    allowed_hosts: tuple[str, ...] | None = attrs.field(
        default=None,
        converter=attrs.converters.optional(as_tuple),
        validator=each_entry(host_entry_problem),
    )
    allowed_origins: tuple[str, ...] | None = attrs.field(
        default=None,
        converter=attrs.converters.optional(as_tuple),
        validator=each_entry(origin_entry_problem),
    )
    enable_write: bool = False
    tool_profile: ToolProfile = "full"
    limits: GatewayLimits = attrs.field(factory=GatewayLimits)


@attrs.frozen
class Watch:
    """Whether residents follow the collection folders (``watch:`` in ``index.yml``).

    ``serve``, ``daemon`` and ``mcp`` watch every collection root while
    ``enabled`` (the default; ``--no-watch`` turns it off for one run).
    ``polling`` makes every watch poll the folders instead of asking the
    operating system, for file systems whose change events do not reach
    this machine; a watch that the system refuses polls by itself.
    ``subscriptions`` lets MCP clients listen for document changes (off by
    default; ``--subscriptions`` turns it on for one run).
    """

    enabled: bool = True
    polling: bool = False
    subscriptions: bool = False


@attrs.frozen
class Search:
    """Which index ranks documents (``search:`` in ``index.yml``).

    ``fts5`` ranks in SQLite's full-text index, ``tantivy`` in a tantivy
    index beside the database (much faster on large corpora, a smaller
    database); ``auto`` (the default) uses FTS5 for small indexes, whose
    ranking it keeps exactly, and tantivy from
    ``AUTO_TANTIVY_DOCUMENTS`` active documents on. A change takes effect at
    the next sync. Snippets and line anchors come from FTS5 either way.
    """

    backend: SearchBackend = "auto"


@attrs.frozen
class Context:
    """User guidance attached to results in a scope; never treated as evidence."""

    scope_type: ScopeType
    scope_key: str = attrs.field()
    text: str = attrs.field(validator=non_empty)

    @scope_key.validator
    def _check_scope_key(self, attribute: attrs.Attribute[str], value: str) -> None:
        if self.scope_type == "global":
            ok, expected = value == "/", '"/"'
        elif self.scope_type == "collection":
            ok, expected = bool(_COLLECTION_SCOPE_RE.fullmatch(value)), 'a collection name and ":"'
        else:
            ok = value.startswith(URI_PREFIX) and len(value) > len(URI_PREFIX)
            expected = f'a "{URI_PREFIX}<collection>/<path>" prefix'
        if not ok:
            fail(attribute, f"must be {expected} for scopeType {self.scope_type} (got {value!r})")

    @property
    def collection_name(self) -> str | None:
        """The collection this context is limited to, or None when global."""
        if self.scope_type == "collection":
            return self.scope_key[:-1]
        if self.scope_type == "prefix":
            return self.scope_key[len(URI_PREFIX) :].split("/", 1)[0]
        return None


@attrs.frozen
class Collection:
    """One indexed folder.

    ``egress_policy`` is ``None`` when the file does not set it; the effective
    policy is then ``local_only`` and its source ``config_default``, which the
    egress layer reports differently from an explicit ``local_only``.
    ``models`` and ``record_adapters`` are GNO settings kept verbatim.
    """

    name: str = attrs.field(converter=lower_name, validator=check_collection_name)
    path: Path = attrs.field(validator=absolute_path)
    pattern: str = attrs.field(default=DEFAULT_PATTERN, validator=non_empty)
    include: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    exclude: tuple[str, ...] = attrs.field(default=DEFAULT_EXCLUDES, converter=as_tuple)
    update_cmd: str | None = None
    language_hint: str | None = attrs.field(default=None, validator=language_hint)
    egress_policy: EgressPolicy | None = None
    egress_policy_revision: int | None = attrs.field(default=None, validator=int_range(0))
    source_availability: SourceAvailability | None = None
    memory_managed: bool = False
    models: Any = attrs.field(default=None, hash=False)
    record_adapters: Any = attrs.field(default=None, hash=False)

    @property
    def effective_egress_policy(self) -> EgressPolicy:
        return self.egress_policy or DEFAULT_EGRESS_POLICY

    @property
    def egress_policy_source(self) -> EgressPolicySource:
        return "config_default" if self.egress_policy is None else "explicit"


def _unique_collection_names(
    _: object, attribute: attrs.Attribute[Any], value: tuple[Collection, ...]
) -> None:
    seen: set[str] = set()
    for index, collection in enumerate(value):
        if collection.name in seen:
            raise ConfigValueError(
                (attribute.name, index, "name"),
                f"duplicate collection name {collection.name!r}",
            )
        seen.add(collection.name)


@attrs.frozen
class Config:
    """The whole ``index.yml``.

    ``content_types``, ``models``, ``project_affinity`` and
    ``project_profile_bindings`` are GNO settings gno-trio does not interpret
    yet; they are stored verbatim so that rewriting a GNO file preserves them.
    """

    version: ConfigVersion = CONFIG_VERSION
    fts_tokenizer: FtsTokenizer = DEFAULT_FTS_TOKENIZER
    editor_uri_template: str | None = None
    collections: tuple[Collection, ...] = attrs.field(
        default=(), converter=as_tuple, validator=_unique_collection_names
    )
    contexts: tuple[Context, ...] = attrs.field(default=(), converter=as_tuple)
    gateway: Gateway = attrs.field(factory=Gateway)
    conversion: Conversion = attrs.field(factory=Conversion)
    search: Search = attrs.field(factory=Search)
    watch: Watch = attrs.field(factory=Watch)
    content_types: Any = attrs.field(default=None, hash=False)
    models: Any = attrs.field(default=None, hash=False)
    retrieval_traces: RetrievalTraces | None = None
    project_affinity: Any = attrs.field(default=None, hash=False)
    project_profile_bindings: Any = attrs.field(default=None, hash=False)

    def collection(self, name: str) -> Collection | None:
        """The collection called ``name`` (any letter case), or None."""
        wanted = name.strip().lower()
        return next((c for c in self.collections if c.name == wanted), None)

    def with_collection(self, collection: Collection) -> Config:
        """A copy where ``collection`` replaces its namesake in place, or is appended."""
        replaced = False
        updated: list[Collection] = []
        for existing in self.collections:
            if existing.name == collection.name:
                updated.append(collection)
                replaced = True
            else:
                updated.append(existing)
        if not replaced:
            updated.append(collection)
        return attrs.evolve(self, collections=tuple(updated))

    def without_collection(self, name: str) -> Config:
        """A copy without the named collection; ``NOT_FOUND`` when it is absent."""
        target = self.collection(name)
        if target is None:
            raise GnoError("NOT_FOUND", f"Collection not found: {name}")
        return attrs.evolve(self, collections=tuple(c for c in self.collections if c is not target))


# Keys written even when they hold their default: GNO requires ``version``;
# the tokenizer decides the database layout; and the collection fields make
# the file self-explanatory to a person editing it.
_ALWAYS_WRITTEN: dict[type, frozenset[str]] = {
    Config: frozenset({"version", "fts_tokenizer", "collections", "contexts"}),
    Collection: frozenset({"pattern", "include", "exclude"}),
    # GNO's schema for these is strict: every key must be present.
    RetrievalTraces: frozenset({"enabled"}),
    TraceRetention: frozenset({"max_age_days", "max_traces", "max_records_per_trace", "max_bytes"}),
}

_CONVERTER = build_converter(_ALWAYS_WRITTEN)


def parse_config(data: object, *, source: str = "index.yml") -> Config:
    """Build a ``Config`` from decoded YAML; ``CONFIG_INVALID`` names each bad key.

    ``None`` (an empty document) yields the default configuration.
    """
    if data is None:
        return Config()
    try:
        return _CONVERTER.structure(data, Config)
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as exc:
        raise config_error(source, exc) from None


def loads_config(text: str, *, source: str = "index.yml") -> Config:
    """Parse ``index.yml`` text (YAML errors are ``CONFIG_INVALID`` too)."""
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError) as exc:
        raise GnoError("CONFIG_INVALID", f"{source}: not valid YAML: {exc}") from None
    return parse_config(data, source=source)


def load_config(path: Path) -> Config:
    """Read ``index.yml``; a missing file means the default (empty) configuration."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        raise GnoError("RUNTIME", f"Cannot read config {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GnoError("CONFIG_INVALID", f"{path}: not UTF-8 text: {exc.reason}") from None
    return loads_config(text, source=str(path))


def dump_config(config: Config) -> dict[str, Any]:
    """Plain data with GNO's camelCase keys; optional settings left at their
    default are omitted. ``parse_config(dump_config(c)) == c``."""
    return cast(dict[str, Any], _CONVERTER.unstructure(config))


def dumps_config(config: Config) -> str:
    """``index.yml`` text for ``config``; ``loads_config`` reads it back unchanged."""
    data = dump_config(config)
    text: str = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)
    if "\x85" in text:
        # PyYAML writes NEL raw but reads it back as a line break; escaping
        # all non-ASCII is the only way to keep such a value intact.
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=False, default_flow_style=False)
    return text
