"""The ``index.yml`` sections of two opt-in features: retrieval traces and document conversion.

Each is a small self-contained block with its own limits; GNO's schema for
the trace block is strict (every key present), which the config writer in
:mod:`gno_trio.config` honours.
They sit apart from the core model (collections, contexts) that every
command reads.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from gno_trio.config.rules import (
    fail,
    int_range,
)

TraceRedactionMode: TypeAlias = Literal["metadata", "replay"]


@attrs.frozen
class TraceRetention:
    """How much retrieval trace data is kept (GNO's ``retrievalTraces.retention``)."""

    max_age_days: int = attrs.field(default=30, validator=int_range(1, 3650))
    max_traces: int = attrs.field(default=1000, validator=int_range(1, 1_000_000))
    max_records_per_trace: int = attrs.field(default=10_000, validator=int_range(1, 100_000))
    max_bytes: int = attrs.field(
        default=16 * 1024 * 1024, validator=int_range(64 * 1024, 1024 * 1024 * 1024)
    )


def _trace_settings(instance: RetrievalTraces, attribute: attrs.Attribute[Any], value: Any) -> None:
    """Enabled tracing names its redaction mode and retention; disabled tracing names neither."""
    if instance.enabled and value is None:
        fail(attribute, "is required when enabled is true")
    if not instance.enabled and value is not None:
        fail(attribute, "is only allowed when enabled is true")


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

    max_bytes: int = attrs.field(default=100 * 1024 * 1024, validator=int_range(1))
    timeout_ms: int = attrs.field(default=60_000, validator=int_range(100))
    max_output_chars: int = attrs.field(default=50_000_000, validator=int_range(1000))
    max_memory_mb: int = attrs.field(default=2048, validator=int_range(256))
    workers: int = attrs.field(default=0, validator=int_range(0, 64))
