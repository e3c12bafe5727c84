"""Reading and parsing text files in worker processes while the sync writes.

On a large sync the writer's thread spent about a third of its time
reading files, hashing them, parsing front matter and cutting chunks: work
that needs no database. Here that work runs in worker processes, a few
files at a time, while the one writer keeps writing what they sent back, in
the plan's order. Only syncs of many files use them (:data:`PARALLEL_FROM`):
a worker takes a few tenths of a second to start, more than a few hundred
notes take to prepare in-process.

Workers are fresh interpreters (``spawn``, never a ``fork`` of a process
that runs threads; nothing in the working directory is importable in them,
:mod:`gno_trio.children`), ignore Ctrl-C (the sync stops them) and hold at most
:data:`IN_FLIGHT_PER_WORKER` groups of files each, so memory stays bounded.
A document (PDF, Office, HTML) is not converted here: its bytes come back
for the sandboxed conversion runner. If a worker dies, its files are
prepared in-process and the sync goes on without workers.
"""

from __future__ import annotations

import contextlib
import signal
from collections import deque
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, TypeVar

from gno_trio.children.spawn import isolated_spawn_context
from gno_trio.engine.docmeta import DocumentMeta, Link
from gno_trio.engine.ingest.chunker import Chunk
from gno_trio.engine.ingest.convert import Converted
from gno_trio.engine.ingest.documents import records
from gno_trio.engine.ingest.documents.limits import ConversionLimits
from gno_trio.engine.ingest.documents.reasons import TOO_LARGE
from gno_trio.engine.ingest.documents.routing import route
from gno_trio.engine.ingest.documents.runner import ConversionJob, ConversionRunner, usable_cores
from gno_trio.engine.ingest.plan import StoredDoc
from gno_trio.engine.ingest.prepare import (
    FileProgress,
    Item,
    Outcome,
    Prepared,
    Refused,
    Relisted,
    SameBytes,
    converted_outcome,
    prepare,
    read_source,
)
from gno_trio.engine.ingest.walker import FoundFile
from gno_trio.engine.store.database import RowView
from gno_trio.engine.uris import sha256_hex
from gno_trio.errors import GnoError

PARALLEL_FROM: Final = 2000
"""Files to read from which a sync prepares them in worker processes."""
MAX_WORKERS: Final = 4
GROUP_FILES: Final = 32
GROUP_BYTES: Final = 2_000_000
"""A group of files sent to a worker holds at most this many files and bytes (or one file)."""
IN_FLIGHT_PER_WORKER: Final = 3


@dataclass(frozen=True, slots=True)
class ToConvert:
    """A document for the conversion runner: the bytes the worker read."""

    data: bytes


Ready = Prepared | SameBytes | Refused | ToConvert
Task = tuple[FoundFile, str | None]
"""A file to prepare, with the source hash of its indexed mirror (None: nothing indexed)."""
Key = TypeVar("Key")


def prepare_file(found: FoundFile, indexed_hash: str | None, limits: ConversionLimits) -> Ready:
    """Read one file and make of it what the writer needs (in a worker, or in-process)."""
    try:
        data = read_source(found, limits.max_bytes)
    except GnoError as error:
        return Refused(error, judged=error.code == TOO_LARGE)
    source_hash = sha256_hex(data)
    if indexed_hash is not None and indexed_hash == source_hash:
        return SameBytes()
    routed = route(found.rel_path, data, limits)
    if routed.converter_id is not None:
        return ToConvert(data)
    if routed.error is not None:
        return Refused(routed.error, judged=True, unsupported=routed.unsupported)
    assert routed.converted is not None
    return prepare(found, data, routed.converted, source_hash=source_hash, chunked=True)


_META_SHIPPED: Final = tuple(
    name for name in DocumentMeta.__slots__ if name not in ("frontmatter", "body", "links")
)
Packed = tuple[Any, ...]
"""A :class:`Prepared` as plain values: what crosses the pipe (see :func:`pack`)."""


def pack(prepared: Prepared) -> Packed:
    """``prepared`` as tuples of plain values, without the text it holds twice.

    The body and every chunk's text are slices of the mirror, so only their
    positions cross the pipe; the rest goes as tuples, which pickle several
    times faster than dataclass instances (unpickling whole ``Prepared``
    objects cost the writer's process 0.8 s per 10,000 notes).
    """
    converted, meta = prepared.converted, prepared.meta
    markdown = converted.markdown
    chunks = prepared.chunks
    assert chunks is not None and markdown.endswith(meta.body)
    for chunk in chunks:
        if not markdown.startswith(chunk.text, chunk.pos):  # the chunker's promise, kept
            raise AssertionError(f"chunk {chunk.seq} is not the mirror's text at {chunk.pos}")
    return (
        tuple(prepared.found),
        prepared.source_hash,
        prepared.docid,
        tuple(getattr(converted, name) for name in converted.__slots__),
        dict(meta.frontmatter),
        tuple(getattr(meta, name) for name in _META_SHIPPED),
        len(markdown) - len(meta.body),
        tuple(tuple(getattr(link, name) for name in link.__slots__) for link in meta.links),
        prepared.mirror_hash,
        tuple((c.seq, c.pos, len(c.text), c.start_line, c.end_line, c.token_count) for c in chunks),
    )


def unpack(packed: Packed) -> Prepared:
    """The :class:`Prepared` that :func:`pack` made ``packed`` of."""
    found, source_hash, docid, converted_values, frontmatter, meta_values = packed[:6]
    body_pos, links, mirror_hash, chunks = packed[6:]
    converted = Converted(*converted_values)
    markdown = converted.markdown
    fields = dict(zip(_META_SHIPPED, meta_values, strict=True))
    fields["body"] = markdown[body_pos:]
    fields["links"] = tuple(Link(*link) for link in links)
    return Prepared(
        found=FoundFile(*found),
        source_hash=source_hash,
        docid=docid,
        converted=converted,
        meta=DocumentMeta(MappingProxyType(frontmatter), **fields),
        mirror_hash=mirror_hash,
        chunks=tuple(
            Chunk(seq, pos, markdown[pos : pos + length], start, end, tokens)
            for seq, pos, length, start, end, tokens in chunks
        ),
    )


Sent = Packed | SameBytes | Refused | ToConvert


def prepare_group(tasks: Sequence[Task], limits: ConversionLimits) -> list[Sent]:
    """A worker's job: each file prepared, a prepared one packed."""
    sent: list[Sent] = []
    for found, indexed_hash in tasks:
        ready = prepare_file(found, indexed_hash, limits)
        sent.append(pack(ready) if isinstance(ready, Prepared) else ready)
    return sent


def _received(sent: list[Sent]) -> list[Ready]:
    return [unpack(item) if isinstance(item, tuple) else item for item in sent]


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def worker_count(files: int) -> int:
    """Workers for a sync that reads ``files`` files (0: prepare in-process)."""
    cores = usable_cores()
    if files < PARALLEL_FROM or cores < 2:
        return 0
    return min(MAX_WORKERS, cores - 1)


Group = list[tuple[Key, Task | None]]
"""Consecutive items of a plan; those without a task were decided without reading."""


def groups(items: Iterable[tuple[Key, Task | None]]) -> Iterator[Group[Key]]:
    """Items cut into groups of at most :data:`GROUP_FILES` files to read and about
    :data:`GROUP_BYTES` bytes (a larger file is a group of its own)."""
    group: Group[Key] = []
    files = size = 0
    for item in items:
        task = item[1]
        if task is not None:
            if files and (files >= GROUP_FILES or size + task[0].size > GROUP_BYTES):
                yield group
                group, files, size = [], 0, 0
            files += 1
            size += task[0].size
        group.append(item)
    if group:
        yield group


def _tasks(group: Group[Key]) -> list[Task]:
    return [task for _, task in group if task is not None]


class TextPool:
    """Worker processes preparing groups of files; results come back in submission order."""

    def __init__(self, workers: int, limits: ConversionLimits) -> None:
        self._limits = limits
        self._workers = workers
        self._executor: ProcessPoolExecutor | None = ProcessPoolExecutor(
            workers,
            mp_context=isolated_spawn_context(),
            initializer=_ignore_interrupts,
        )

    def __enter__(self) -> TextPool:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)

    def prepared(self, batches: Iterable[Group[Key]]) -> Iterator[tuple[Group[Key], list[Ready]]]:
        """Each group with the results of its tasks, in order, a few groups ahead in the workers."""
        ahead: deque[tuple[Group[Key], Future[list[Sent]] | None]] = deque()
        limit = self._workers * IN_FLIGHT_PER_WORKER
        try:
            for group in batches:
                ahead.append((group, self._submit(group)))
                if len(ahead) >= limit:
                    yield self._result(*ahead.popleft())
            while ahead:
                yield self._result(*ahead.popleft())
        finally:
            for _, future in ahead:
                if future is not None:
                    future.cancel()

    def _submit(self, group: Group[Key]) -> Future[list[Sent]] | None:
        if self._executor is None:
            return None
        try:
            return self._executor.submit(prepare_group, _tasks(group), self._limits)
        except (BrokenProcessPool, RuntimeError):
            self._broken()
            return None

    def _result(
        self, group: Group[Key], future: Future[list[Sent]] | None
    ) -> tuple[Group[Key], list[Ready]]:
        if future is not None:
            try:
                return group, _received(future.result())
            except BrokenProcessPool:
                self._broken()
        return group, _received(prepare_group(_tasks(group), self._limits))

    def _broken(self) -> None:
        """A worker died: the rest is prepared in-process."""
        executor, self._executor = self._executor, None
        if executor is not None:
            with contextlib.suppress(Exception):
                executor.shutdown(wait=False, cancel_futures=True)


PlanKey = tuple[int, FoundFile, StoredDoc | None]


def pooled_outcomes(
    to_read: Sequence[tuple[FoundFile, StoredDoc | None]],
    runner: ConversionRunner,
    judged: Mapping[str, RowView],
    workers: int,
    *,
    on_progress: FileProgress | None = None,
) -> Generator[Item, None, None]:
    """What :func:`.prepare.outcomes` yields, with the files prepared by ``workers`` processes."""
    policy = records.policy_fingerprint(runner.limits)

    def items() -> Iterator[tuple[PlanKey, Task | None]]:
        for index, (found, row) in enumerate(to_read, 1):
            record = judged.get(found.rel_path)
            if records.still_valid(record, found.size, found.mtime_ns, policy):
                yield (index, found, row), None
            else:
                indexed = None if row is None else row.reusable_hash
                yield (index, found, row), (found, indexed)

    def file_progress(job: ConversionJob, done: int, units: int) -> None:
        if on_progress is not None:
            index, found, _ = job.key
            on_progress(index, found, done, units)

    with TextPool(workers, runner.limits) as pool:
        for group, results in pool.prepared(groups(items())):
            ready = iter(results)
            decided: list[tuple[PlanKey, Outcome | ToConvert]] = []
            for key, task in group:
                if task is None:
                    record = judged[key[1].rel_path]
                    decided.append((key, Relisted(record)))
                else:
                    decided.append((key, next(ready)))
            jobs = [
                ConversionJob(key[1].rel_path, outcome.data, key=key)
                for key, outcome in decided
                if isinstance(outcome, ToConvert)
            ]
            converted = iter(
                runner.run(jobs, on_progress=file_progress, ordered=True) if jobs else ()
            )
            for (index, found, row), outcome in decided:
                if isinstance(outcome, ToConvert):
                    outcome = converted_outcome(next(converted))
                yield index, found, row, outcome
