"""The middle step of a sync: what each file to read turns out to be, without writing.

:func:`outcomes` takes the files a plan says to read and yields, in the
plan's order, one :data:`Outcome` per file: an earlier verdict that still
holds (a ``stat``), bytes that hash as indexed (a read), a refusal (too
large, unreadable, unsupported, failed to convert), or a prepared document
(converted, its front matter parsed) ready for :mod:`.apply` to write.
Conversions go through the :class:`ConversionRunner` (documents in its
worker processes, text in-process); nothing here touches the database, so
the writer alone decides what a batch holds.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass

from gno_trio.engine.docmeta import DocumentMeta
from gno_trio.engine.ingest.chunker import Chunk, chunk_text
from gno_trio.engine.ingest.convert import Converted
from gno_trio.engine.ingest.documents import records
from gno_trio.engine.ingest.documents.reasons import FILE_REPLACED, TOO_LARGE
from gno_trio.engine.ingest.documents.runner import (
    ConversionJob,
    ConversionOutcome,
    ConversionRunner,
)
from gno_trio.engine.ingest.frontmatter import extract_meta
from gno_trio.engine.ingest.plan import StoredDoc
from gno_trio.engine.ingest.reading import opened_regular
from gno_trio.engine.ingest.walker import FoundFile
from gno_trio.engine.store.database import RowView
from gno_trio.engine.uris import docid_of_hash, sha256_hex
from gno_trio.errors import GnoError


@dataclass(frozen=True, slots=True)
class Prepared:
    """A converted and parsed file, ready to be written."""

    found: FoundFile
    source_hash: str
    docid: str
    converted: Converted
    meta: DocumentMeta
    mirror_hash: str
    chunks: tuple[Chunk, ...] | None = None
    """The body's chunks, when cut already (by a preparing worker: see :mod:`.textpool`)."""


@dataclass(frozen=True, slots=True)
class SameBytes:
    """The file's bytes hash as indexed: only its stat columns need refreshing."""


@dataclass(frozen=True, slots=True)
class Relisted:
    """The file was judged before and is unchanged since: report the old verdict."""

    record: RowView


@dataclass(frozen=True, slots=True)
class Refused:
    """Not indexed this time. ``judged``: the verdict holds until the file or policy changes."""

    error: GnoError
    judged: bool
    unsupported: bool = False


Outcome = Prepared | SameBytes | Relisted | Refused
FileProgress = Callable[[int, FoundFile, int, int], None]
"""``(position in the plan, file, units done, units)``: pages, sheets, slides of one file;
``(0, 0)`` each second a worker holds the file without reporting (still converting)."""


def has_frontmatter(mime: str) -> bool:
    """Whether documents of this source type carry a frontmatter block (Markdown does)."""
    return mime == "text/markdown"


def prepare(
    found: FoundFile,
    data: bytes,
    converted: Converted,
    *,
    source_hash: str | None = None,
    chunked: bool = False,
) -> Prepared:
    """Parse a converted file (``chunked``: cut its chunks too); ``source_hash`` if known."""
    meta = extract_meta(
        converted.markdown, found.rel_path, frontmatter=has_frontmatter(converted.mime)
    )
    source_hash = source_hash or sha256_hex(data)
    return Prepared(
        found=found,
        source_hash=source_hash,
        docid=docid_of_hash(source_hash),
        converted=converted,
        meta=meta,
        mirror_hash=sha256_hex(converted.markdown),
        chunks=(
            tuple(body_chunks(converted.markdown, meta, code=converted.is_code))
            if chunked
            else None
        ),
    )


def body_chunks(markdown: str, meta: DocumentMeta, *, code: bool) -> list[Chunk]:
    """The chunks of a mirror's text after its frontmatter, addressed in the whole text.

    Chunks are what snippets, line anchors and embeddings are made of; the
    frontmatter is metadata (indexed in its own fields), so no snippet ever
    shows a ``---`` block. Only Markdown has frontmatter (see
    :func:`.prepare.has_frontmatter`): a YAML file's ``---`` is content.
    Positions and line numbers still count from the top of the mirror, so
    ``get(ref, fromLine=line)`` lands where a hit points.
    """
    if meta.body_start_line <= 1:  # no frontmatter block was taken off
        return chunk_text(markdown, code=code)
    offset = len(markdown) - len(meta.body)
    skipped_lines = markdown.count("\n", 0, offset)
    return [
        Chunk(
            chunk.seq,
            chunk.pos + offset,
            chunk.text,
            chunk.start_line + skipped_lines,
            chunk.end_line + skipped_lines,
            chunk.token_count,
        )
        for chunk in chunk_text(markdown[offset:], code=code)
    ]


def read_source(found: FoundFile, limit: int) -> bytes:
    """The bytes of the file the walk saw, or why they are not read.

    Between the walk and this read the name may have come to hold something
    else: a link to a file outside the collection, a FIFO that would block
    the sync (and the write lease) for good, or another file through a
    parent folder swapped for a link. The name is opened as
    :func:`.reading.opened_regular` opens it, and only the regular file the
    walk saw (same device and inode) is read.
    """
    # The conversion limit decides "too large to read" too: such a file costs a stat.
    if found.size > limit:
        raise GnoError(TOO_LARGE, f"{found.rel_path}: {found.size:,} bytes (limit {limit:,})")
    with opened_regular(found.abs_path, found.rel_path) as (handle, seen):
        if found.inode is not None and (seen.st_dev, seen.st_ino) != (found.device, found.inode):
            raise GnoError(
                FILE_REPLACED, f"{found.rel_path}: replaced by another file while the sync ran"
            )
        try:
            # Ask for the size the walk saw (and one byte more): a read of the
            # limit's size allocates that much first (100 MiB for a 4 KB note,
            # a quarter of the indexing time of small files). A file that grew
            # since is read on, up to the limit.
            data = handle.read(found.size + 1)
            if len(data) > found.size:
                data += handle.read(limit + 1 - len(data))
            return data
        except OSError as exc:
            raise GnoError(
                "READ_ERROR", f"Cannot read {found.rel_path}: {exc.strerror or exc}"
            ) from exc


Item = tuple[int, FoundFile, StoredDoc | None, Outcome]
"""``(position in the plan, from 1; the file; its stored row; what it turned out to be)``."""


WINDOW = 512
"""Files handed to the runner at a time: bounds the queue of files decided without converting."""


def outcomes(
    to_read: Sequence[tuple[FoundFile, StoredDoc | None]],
    runner: ConversionRunner,
    judged: Mapping[str, RowView],
    *,
    on_progress: FileProgress | None = None,
) -> Generator[Item, None, None]:
    """Each file to read with its outcome, in the order of ``to_read``.

    Files that need converting go through ``runner``, which draws a few
    ahead to keep its workers busy; the files decided without converting
    meanwhile wait in a queue (at most :data:`WINDOW`) so the order never
    changes.
    """
    if not to_read:
        return  # the policy below asks every converter library for its version
    policy = records.policy_fingerprint(runner.limits)
    for start in range(0, len(to_read), WINDOW):
        window = to_read[start : start + WINDOW]
        yield from _window(window, start, runner, judged, policy, on_progress)


def _window(
    window: Sequence[tuple[FoundFile, StoredDoc | None]],
    start: int,
    runner: ConversionRunner,
    judged: Mapping[str, RowView],
    policy: str,
    on_progress: FileProgress | None,
) -> Generator[Item, None, None]:
    decided: deque[Item] = deque()

    def to_convert() -> Iterator[ConversionJob]:
        for index, (found, row) in enumerate(window, start + 1):
            record = judged.get(found.rel_path)
            if records.still_valid(record, found.size, found.mtime_ns, policy):
                assert record is not None
                decided.append((index, found, row, Relisted(record)))
                continue
            try:
                data = read_source(found, runner.limits.max_bytes)
            except GnoError as error:
                decided.append((index, found, row, Refused(error, judged=error.code == TOO_LARGE)))
                continue
            if row is not None and row.reusable_hash == sha256_hex(data):
                decided.append((index, found, row, SameBytes()))
                continue
            yield ConversionJob(found.rel_path, data, key=(index, found, row))

    def file_progress(job: ConversionJob, done: int, units: int) -> None:
        if on_progress is not None:
            index, found, _ = job.key
            on_progress(index, found, done, units)

    for result in runner.run(to_convert(), on_progress=file_progress, ordered=True):
        index, found, row = result.job.key
        while decided and decided[0][0] < index:
            yield decided.popleft()
        yield index, found, row, converted_outcome(result)
    yield from decided


def converted_outcome(result: ConversionOutcome) -> Outcome:
    """What a file the conversion runner took turned out to be (its job's key: the file first)."""
    if result.error is not None:
        return Refused(result.error, judged=True, unsupported=result.unsupported)
    assert result.converted is not None
    found: FoundFile = result.job.key[1]
    return prepare(found, result.job.data, result.converted)
