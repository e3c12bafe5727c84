"""The ``index.yml`` configuration: typed, validated, and compatible with GNO.

A GNO installation and gno-trio can share one config file, so the key names,
defaults and value rules follow GNO's schema. Keys that GNO understands but
gno-trio does not use yet (``contentTypes``, ``models`` ...) are kept as opaque
data: a GNO-written file loads, and saving it again does not lose them. Any
other unknown key is an error, because a misspelt key silently ignored is a
setting the user believes is active but is not.

Parsing goes through cattrs with detailed validation into frozen attrs
classes; every failure becomes one ``CONFIG_INVALID`` error whose message
names the exact key path (``collections[1].name: ...``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, NoReturn, TypeAlias, cast, get_args, get_origin
from urllib.parse import urlsplit

import attrs
import cattrs
import yaml
from cattrs.errors import (
    AttributeValidationNote,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from gno_trio.errors import GnoError

__all__ = [
    "DEFAULT_EXCLUDES",
    "DEFAULT_FTS_TOKENIZER",
    "DEFAULT_GATEWAY_PORT",
    "DEFAULT_PATTERN",
    "FTS_TOKENIZERS",
    "Collection",
    "Config",
    "Context",
    "EgressPolicy",
    "FtsTokenizer",
    "Gateway",
    "GatewayLimits",
    "RetrievalTraces",
    "ScopeType",
    "Search",
    "SearchBackend",
    "SourceAvailability",
    "ToolProfile",
    "TraceRedactionMode",
    "TraceRetention",
    "dump_config",
    "dumps_config",
    "fts5_tokenize_clause",
    "load_config",
    "loads_config",
    "normalize_collection_name",
    "parse_config",
]

# ---------------------------------------------------------------------------
# Vocabularies and defaults (GNO's names and values)
# ---------------------------------------------------------------------------

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

_COLLECTION_NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_COLLECTION_SCOPE_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}:")
# GNO's simplified BCP-47 check; ASCII so that e.g. the Kelvin sign is no "k".
_LANGUAGE_HINT_RE = re.compile(r"[a-z]{2,3}(?:-[a-z]{2}|-[a-z]{4})?", re.IGNORECASE | re.ASCII)


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
    if name is None or not _COLLECTION_NAME_RE.fullmatch(name):
        raise GnoError(
            "INVALID_NAME",
            f"Invalid collection name {raw!r}: use 1-64 of a-z, 0-9, '_' and '-', "
            "starting with a letter or digit",
        )
    return name


# ---------------------------------------------------------------------------
# Field-level validation
# ---------------------------------------------------------------------------


class ConfigValueError(ValueError):
    """A value that has the right type but breaks a rule.

    ``path`` is relative to the object being built (empty when the failing
    value is the one being structured), so the error reporter can prefix the
    location it has already walked.
    """

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


_Validator: TypeAlias = Callable[[Any, "attrs.Attribute[Any]", Any], None]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _fail(attribute: attrs.Attribute[Any], message: str) -> NoReturn:
    raise ConfigValueError((_camel(attribute.name),), message)


def _int_range(low: int, high: int | None = None) -> _Validator:
    def check(_: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
        if value is None:
            return
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            _fail(attribute, f"must be {bound} (got {value})")

    return check


def _non_empty(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not value.strip():
        _fail(attribute, "must not be empty")


def _absolute_path(_: object, attribute: attrs.Attribute[Any], value: Path) -> None:
    if not value.is_absolute():
        _fail(attribute, f"must be an absolute path (got {str(value)!r})")


def _language_hint(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not _LANGUAGE_HINT_RE.fullmatch(value):
        _fail(attribute, f"must be a BCP-47 language tag such as en, de or zh-CN (got {value!r})")


def _each(check: Callable[[str], str | None]) -> _Validator:
    """Apply ``check`` (returning a problem or None) to every list entry."""

    def validate(_: object, attribute: attrs.Attribute[Any], values: Sequence[str] | None) -> None:
        for index, value in enumerate(values or ()):
            problem = check(value)
            if problem is not None:
                raise ConfigValueError((_camel(attribute.name), index), problem)

    return validate


def _host_entry_problem(value: str) -> str | None:
    """An allowed Host value must be exactly what a client sends: ``host[:port]``."""
    if not value or value != value.strip() or any(c in value for c in "*,/ \t@?#"):
        return f"must be an exact host[:port] value (got {value!r})"
    try:
        parts = urlsplit(f"http://{value}")
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return f"must be an exact host[:port] value (got {value!r})"
    if not parts.hostname or parts.netloc != value:
        return f"must be an exact host[:port] value (got {value!r})"
    return None


def _origin_entry_problem(value: str) -> str | None:
    """An allowed Origin must be serialised exactly as a browser sends it."""
    problem = f"must be an exact origin such as http://localhost:3000 (got {value!r})"
    if not value or "*" in value or value != value.strip():
        return problem
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return problem
    if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
        return problem
    if parts.path or parts.query or parts.fragment or value != f"{parts.scheme}://{parts.netloc}":
        return problem
    default_port = 80 if parts.scheme == "http" else 443
    if parts.netloc != parts.netloc.lower() or port == default_port:
        return problem
    return None


def _lower_name(value: object) -> object:
    return value.strip().lower() if isinstance(value, str) else value


def _collection_name(_: object, attribute: attrs.Attribute[Any], value: str) -> None:
    if not _COLLECTION_NAME_RE.fullmatch(value):
        _fail(attribute, f"must match ^[a-z0-9][a-z0-9_-]{{0,63}}$ (got {value!r})")


def _tuple(value: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(value)


# ---------------------------------------------------------------------------
# The configuration model
# ---------------------------------------------------------------------------


@attrs.frozen
class GatewayLimits:
    """Resource bounds of the resident HTTP gateway (GNO's key names)."""

    max_body_bytes: int = attrs.field(
        default=1024 * 1024, validator=_int_range(1, MAX_BODY_BYTES_LIMIT)
    )
    max_requests_per_minute: int = attrs.field(default=120, validator=_int_range(1))
    max_concurrent_requests: int = attrs.field(default=64, validator=_int_range(1))
    max_queued_requests: int = attrs.field(default=16, validator=_int_range(0))
    max_sessions: int = attrs.field(default=32, validator=_int_range(1))
    session_idle_timeout_ms: int = attrs.field(default=300_000, validator=_int_range(1000))
    # Extensions (GNO has no such keys): how long a connection may sit idle
    # between requests, and how long a client may take to read each 64 KiB.
    keep_alive_timeout_ms: int = attrs.field(default=5_000, validator=_int_range(100))
    write_timeout_ms: int = attrs.field(default=10_000, validator=_int_range(100))


@attrs.frozen
class Gateway:
    """Settings of the resident HTTP MCP gateway (``gno serve`` / ``gno daemon``).

    ``allowed_hosts`` / ``allowed_origins`` stay ``None`` when not configured:
    the transport then derives loopback defaults from host and port, whereas an
    explicit empty list allows nothing.
    """

    host: str = attrs.field(default=DEFAULT_GATEWAY_HOST, validator=_non_empty)
    port: int = attrs.field(default=DEFAULT_GATEWAY_PORT, validator=_int_range(0, 65535))
    token_file: Path | None = None
    allowed_hosts: tuple[str, ...] | None = attrs.field(
        default=None,
        converter=attrs.converters.optional(_tuple),
        validator=_each(_host_entry_problem),
    )
    allowed_origins: tuple[str, ...] | None = attrs.field(
        default=None,
        converter=attrs.converters.optional(_tuple),
        validator=_each(_origin_entry_problem),
    )
    enable_write: bool = False
    tool_profile: ToolProfile = "full"
    limits: GatewayLimits = attrs.field(factory=GatewayLimits)


TraceRedactionMode: TypeAlias = Literal["metadata", "replay"]


@attrs.frozen
class TraceRetention:
    """How much retrieval trace data is kept (GNO's ``retrievalTraces.retention``)."""

    max_age_days: int = attrs.field(default=30, validator=_int_range(1, 3650))
    max_traces: int = attrs.field(default=1000, validator=_int_range(1, 1_000_000))
    max_records_per_trace: int = attrs.field(default=10_000, validator=_int_range(1, 100_000))
    max_bytes: int = attrs.field(
        default=16 * 1024 * 1024, validator=_int_range(64 * 1024, 1024 * 1024 * 1024)
    )


def _trace_settings(instance: RetrievalTraces, attribute: attrs.Attribute[Any], value: Any) -> None:
    """Enabled tracing names its redaction mode and retention; disabled tracing names neither."""
    if instance.enabled and value is None:
        _fail(attribute, "is required when enabled is true")
    if not instance.enabled and value is not None:
        _fail(attribute, "is only allowed when enabled is true")


@attrs.frozen
class RetrievalTraces:
    """Opt-in local recording of retrieval traces (off unless ``enabled: true``).

    ``replay`` keeps the query text and filters so a trace can be replayed;
    choosing it is explicit consent. ``metadata`` keeps only their shape.
    """

    enabled: bool = False
    redaction_mode: TraceRedactionMode | None = attrs.field(default=None, validator=_trace_settings)
    retention: TraceRetention | None = attrs.field(default=None, validator=_trace_settings)


@attrs.frozen
class Conversion:
    """Bounds of document conversion (``conversion:`` in ``index.yml``).

    The first three are GNO's limits (100 MB per file, 60 s, 50 M output
    characters); a worker's memory and the number of workers are ours.
    ``workers: 0`` means one per usable core.
    """

    max_bytes: int = attrs.field(default=100 * 1024 * 1024, validator=_int_range(1))
    timeout_ms: int = attrs.field(default=60_000, validator=_int_range(100))
    max_output_chars: int = attrs.field(default=50_000_000, validator=_int_range(1000))
    max_memory_mb: int = attrs.field(default=2048, validator=_int_range(256))
    workers: int = attrs.field(default=0, validator=_int_range(0, 64))


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
    text: str = attrs.field(validator=_non_empty)

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
            _fail(attribute, f"must be {expected} for scopeType {self.scope_type} (got {value!r})")

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

    name: str = attrs.field(converter=_lower_name, validator=_collection_name)
    path: Path = attrs.field(validator=_absolute_path)
    pattern: str = attrs.field(default=DEFAULT_PATTERN, validator=_non_empty)
    include: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    exclude: tuple[str, ...] = attrs.field(default=DEFAULT_EXCLUDES, converter=_tuple)
    update_cmd: str | None = None
    language_hint: str | None = attrs.field(default=None, validator=_language_hint)
    egress_policy: EgressPolicy | None = None
    egress_policy_revision: int | None = attrs.field(default=None, validator=_int_range(0))
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
        default=(), converter=_tuple, validator=_unique_collection_names
    )
    contexts: tuple[Context, ...] = attrs.field(default=(), converter=_tuple)
    gateway: Gateway = attrs.field(factory=Gateway)
    conversion: Conversion = attrs.field(factory=Conversion)
    search: Search = attrs.field(factory=Search)
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

# ---------------------------------------------------------------------------
# cattrs: strict structuring and camelCase keys
# ---------------------------------------------------------------------------


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _structure_str(value: object, _: type) -> str:
    if not isinstance(value, str):
        raise ConfigValueError((), f"must be a string (got {_describe(value)})")
    return value


def _structure_int(value: object, _: type) -> int:
    # bool is an int subclass; YAML "yes" must not become 1.
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigValueError((), f"must be an integer (got {_describe(value)})")
    return value


def _structure_bool(value: object, _: type) -> bool:
    if not isinstance(value, bool):
        raise ConfigValueError((), f"must be true or false (got {_describe(value)})")
    return value


def _structure_path(value: object, _: type) -> Path:
    text = _structure_str(value, str)
    if not text.strip():
        raise ConfigValueError((), "must not be empty")
    if "\x00" in text:
        raise ConfigValueError((), "must not contain a NUL character")
    return Path(os.path.expanduser(text))


def _is_literal(tp: Any) -> bool:
    return get_origin(tp) is Literal


def _structure_literal(value: object, tp: Any) -> object:
    choices = get_args(tp)
    if isinstance(value, str) and value in choices:
        return value
    listed = ", ".join(f'"{c}"' for c in choices)
    raise ConfigValueError((), f"must be one of {listed} (got {_describe(value)})")


def _is_tuple_of(tp: Any) -> bool:
    args = get_args(tp)
    return get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis


def _tuple_hook(tp: Any, converter: cattrs.Converter) -> Callable[[object, Any], tuple[Any, ...]]:
    element_type = get_args(tp)[0]
    structure_element = converter.get_structure_hook(element_type)

    def structure(value: object, _: Any) -> tuple[Any, ...]:
        # A string or mapping is iterable too; only a YAML sequence is a list here.
        if not isinstance(value, list | tuple):
            raise ConfigValueError((), f"must be a list (got {_describe(value)})")
        items: list[Any] = []
        errors: list[Exception] = []
        for index, item in enumerate(value):
            try:
                items.append(structure_element(item, element_type))
            except Exception as exc:  # collected and reported with its index
                exc.add_note(IterableValidationNote(f"item {index}", index, element_type))
                errors.append(exc)
        if errors:
            raise IterableValidationError(f"While structuring {tp!r}", errors, tp)
        return tuple(items)

    return structure


def _attrs_hook(cls: type, converter: cattrs.Converter) -> Callable[[object, Any], Any]:
    # Typed loosely: cattrs types its ``**kwargs`` overrides like its flags.
    renames: dict[str, Any] = {a.name: override(rename=_camel(a.name)) for a in attrs.fields(cls)}
    generated: Callable[[Any, Any], Any] = make_dict_structure_fn(cls, converter, **renames)

    def structure(value: object, tp: Any) -> Any:
        if not isinstance(value, dict):
            raise ConfigValueError((), f"must be a mapping (got {_describe(value)})")
        return generated(value, tp)

    return structure


def _attrs_unstructure_hook(
    cls: type, converter: cattrs.Converter
) -> Callable[[Any], dict[str, Any]]:
    always = _ALWAYS_WRITTEN.get(cls, frozenset())
    renames: dict[str, Any] = {
        a.name: override(rename=_camel(a.name), omit_if_default=a.name not in always)
        for a in attrs.fields(cls)
    }
    generated: Callable[[Any], dict[str, Any]] = make_dict_unstructure_fn(
        cls, converter, _cattrs_omit_if_default=True, **renames
    )
    key_order = [_camel(a.name) for a in attrs.fields(cls)]

    def unstructure(value: Any) -> dict[str, Any]:
        # cattrs emits always-written keys first; restore declaration order,
        # which is also the order GNO's own files use.
        data = generated(value)
        return {key: data[key] for key in key_order if key in data}

    return unstructure


def _build_converter() -> cattrs.Converter:
    converter = cattrs.Converter(
        forbid_extra_keys=True,
        detailed_validation=True,
        unstruct_collection_overrides={Sequence: list},
    )
    converter.register_structure_hook(str, _structure_str)
    converter.register_structure_hook(int, _structure_int)
    converter.register_structure_hook(bool, _structure_bool)
    converter.register_structure_hook(Path, _structure_path)
    converter.register_structure_hook_func(_is_literal, _structure_literal)
    converter.register_structure_hook_factory(_is_tuple_of, lambda tp: _tuple_hook(tp, converter))
    converter.register_structure_hook_factory(attrs.has, lambda cls: _attrs_hook(cls, converter))
    converter.register_unstructure_hook(Path, str)
    converter.register_unstructure_hook_factory(
        attrs.has, lambda cls: _attrs_unstructure_hook(cls, converter)
    )
    return converter


_CONVERTER = _build_converter()

# ---------------------------------------------------------------------------
# Error reporting
# ---------------------------------------------------------------------------

_Path: TypeAlias = tuple[str | int, ...]


def _note_step(exc: BaseException) -> _Path:
    """The key or index cattrs recorded for a sub-error (camelCase on disk)."""
    for note in getattr(exc, "__notes__", ()):
        if isinstance(note, AttributeValidationNote):
            return (_camel(note.name),)
        if isinstance(note, IterableValidationNote):
            return (note.index,)
    return ()


def _collect_errors(exc: BaseException, path: _Path, out: list[tuple[_Path, str]]) -> None:
    if isinstance(exc, ForbiddenExtraKeysError):
        for key in sorted(exc.extra_fields, key=repr):
            # A YAML key can be a number or a boolean; quote those so they
            # do not read like list indexes.
            out.append(((*path, key if isinstance(key, str) else repr(key)), "unknown key"))
    elif isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            _collect_errors(sub, (*path, *_note_step(sub)), out)
    elif isinstance(exc, ConfigValueError):
        out.append(((*path, *exc.path), exc.message))
    elif isinstance(exc, KeyError):
        out.append((path, "is required"))
    else:
        out.append((path, str(exc) or type(exc).__name__))


def _render_path(path: _Path) -> str:
    text = ""
    for step in path:
        if isinstance(step, int):
            text += f"[{step}]"
        else:
            text += f".{step}" if text else str(step)
    return text


def _config_error(source: str, exc: BaseException) -> GnoError:
    found: list[tuple[_Path, str]] = []
    _collect_errors(exc, (), found)
    rendered = [(_render_path(path), message) for path, message in found]
    parts = [f"{where}: {message}" if where else message for where, message in rendered]
    return GnoError(
        "CONFIG_INVALID",
        f"{source}: " + "; ".join(parts),
        details={"errors": [{"path": where, "message": message} for where, message in rendered]},
    )


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def parse_config(data: object, *, source: str = "index.yml") -> Config:
    """Build a ``Config`` from decoded YAML; ``CONFIG_INVALID`` names each bad key.

    ``None`` (an empty document) yields the default configuration.
    """
    if data is None:
        return Config()
    try:
        return _CONVERTER.structure(data, Config)
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as exc:
        raise _config_error(source, exc) from None


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
