"""The stores of an index's aggregates, by backend: the one object a second database replaces.

Each aggregate the rules above read and write through a protocol of its own
(:class:`~.egress_receipts.ReceiptStore`, :class:`~.traces.TraceStore`,
:class:`~.memory.FactStore`, :class:`~.journal.JournalStore`,
:class:`~.vectors.VectorStore`, :class:`~.sentence_vectors.SentenceVectorStore`,
:class:`~.chunks.ChunkStore`, :class:`~.links.LinkStore`,
:class:`~.documents.DocumentStore`, :class:`~.counts.IndexCounts`,
:class:`~.tags.TagStore`, :class:`~.collections.CollectionStore`,
:class:`~.ingest_records.IngestRecordStore`,
:class:`~.search_documents.SearchDocumentStore`,
:class:`~.document_matches.DocumentMatchStore`,
:class:`~.mirrors.MirrorStore`,
:class:`~.document_index.DocumentIndexStore`,
:class:`~.document_rows.DocumentRowStore`) is opened
here on a connection of the call.
:class:`Stores` is what the kernel holds; :data:`SQLITE_STORES` answers it
for the embedded SQLite index. A backend on another database is another
:class:`Stores` whose aggregates take that database's connection.
"""

from __future__ import annotations

import sqlite3
from typing import Final, Protocol

from gno_trio.engine.store.chunk_matches import ChunkMatchStore, SqliteChunkMatches
from gno_trio.engine.store.chunks import ChunkStore, SqliteChunks
from gno_trio.engine.store.collections import CollectionStore, SqliteCollections
from gno_trio.engine.store.counts import IndexCounts, SqliteCounts
from gno_trio.engine.store.document_index import DocumentIndexStore, SqliteDocumentIndex
from gno_trio.engine.store.document_matches import DocumentMatchStore, SqliteDocumentMatches
from gno_trio.engine.store.document_rows import DocumentRowStore, SqliteDocumentRows
from gno_trio.engine.store.documents import DocumentStore, SqliteDocuments
from gno_trio.engine.store.egress_receipts import ReceiptStore, SqliteReceipts
from gno_trio.engine.store.fulltext_copy import FullTextCopyStore, SqliteFullTextCopy
from gno_trio.engine.store.ingest_records import IngestRecordStore, SqliteIngestRecords
from gno_trio.engine.store.journal import JournalStore, SqliteJournal
from gno_trio.engine.store.link_neighbours import NeighbourLinkStore, SqliteNeighbourLinks
from gno_trio.engine.store.links import LinkStore, SqliteLinks
from gno_trio.engine.store.memory import FactStore, SqliteFacts
from gno_trio.engine.store.mirrors import MirrorStore, SqliteMirrors
from gno_trio.engine.store.search_documents import SearchDocumentStore, SqliteSearchDocuments
from gno_trio.engine.store.sentence_vectors import SentenceVectorStore, SqliteSentenceVectors
from gno_trio.engine.store.tags import SqliteTags, TagStore
from gno_trio.engine.store.traces import SqliteTraces, TraceStore
from gno_trio.engine.store.vectors import SqliteVectors, VectorStore


class Stores(Protocol):
    """Each aggregate's store, opened on the connection the engine bound to the call."""

    def egress_receipts(self, conn: sqlite3.Connection) -> ReceiptStore: ...

    def traces(self, conn: sqlite3.Connection) -> TraceStore: ...

    def memory_facts(self, conn: sqlite3.Connection) -> FactStore: ...

    def journal(self, conn: sqlite3.Connection) -> JournalStore: ...

    def vectors(self, conn: sqlite3.Connection) -> VectorStore: ...

    def sentence_vectors(self, conn: sqlite3.Connection) -> SentenceVectorStore: ...

    def chunks(self, conn: sqlite3.Connection) -> ChunkStore: ...

    def links(self, conn: sqlite3.Connection) -> LinkStore: ...

    def documents(self, conn: sqlite3.Connection) -> DocumentStore: ...

    def counts(self, conn: sqlite3.Connection) -> IndexCounts: ...

    def tags(self, conn: sqlite3.Connection) -> TagStore: ...

    def collections(self, conn: sqlite3.Connection) -> CollectionStore: ...

    def ingest_records(self, conn: sqlite3.Connection) -> IngestRecordStore: ...

    def search_documents(self, conn: sqlite3.Connection) -> SearchDocumentStore: ...

    def document_matches(self, conn: sqlite3.Connection) -> DocumentMatchStore: ...

    def mirrors(self, conn: sqlite3.Connection) -> MirrorStore: ...

    def document_index(self, conn: sqlite3.Connection) -> DocumentIndexStore: ...

    def chunk_matches(self, conn: sqlite3.Connection) -> ChunkMatchStore: ...

    def fulltext_copy(self, conn: sqlite3.Connection) -> FullTextCopyStore: ...

    def neighbour_links(self, conn: sqlite3.Connection) -> NeighbourLinkStore: ...

    def document_rows(self, conn: sqlite3.Connection) -> DocumentRowStore: ...


class SqliteStores:
    """:class:`Stores` of the embedded SQLite index."""

    def egress_receipts(self, conn: sqlite3.Connection) -> ReceiptStore:
        return SqliteReceipts(conn)

    def traces(self, conn: sqlite3.Connection) -> TraceStore:
        return SqliteTraces(conn)

    def memory_facts(self, conn: sqlite3.Connection) -> FactStore:
        return SqliteFacts(conn)

    def journal(self, conn: sqlite3.Connection) -> JournalStore:
        return SqliteJournal(conn)

    def vectors(self, conn: sqlite3.Connection) -> VectorStore:
        return SqliteVectors(conn)

    def sentence_vectors(self, conn: sqlite3.Connection) -> SentenceVectorStore:
        return SqliteSentenceVectors(conn)

    def chunks(self, conn: sqlite3.Connection) -> ChunkStore:
        return SqliteChunks(conn)

    def links(self, conn: sqlite3.Connection) -> LinkStore:
        return SqliteLinks(conn)

    def documents(self, conn: sqlite3.Connection) -> DocumentStore:
        return SqliteDocuments(conn)

    def counts(self, conn: sqlite3.Connection) -> IndexCounts:
        return SqliteCounts(conn)

    def tags(self, conn: sqlite3.Connection) -> TagStore:
        return SqliteTags(conn)

    def collections(self, conn: sqlite3.Connection) -> CollectionStore:
        return SqliteCollections(conn)

    def ingest_records(self, conn: sqlite3.Connection) -> IngestRecordStore:
        return SqliteIngestRecords(conn)

    def search_documents(self, conn: sqlite3.Connection) -> SearchDocumentStore:
        return SqliteSearchDocuments(conn)

    def document_matches(self, conn: sqlite3.Connection) -> DocumentMatchStore:
        return SqliteDocumentMatches(conn)

    def mirrors(self, conn: sqlite3.Connection) -> MirrorStore:
        return SqliteMirrors(conn)

    def document_index(self, conn: sqlite3.Connection) -> DocumentIndexStore:
        return SqliteDocumentIndex(conn)

    def chunk_matches(self, conn: sqlite3.Connection) -> ChunkMatchStore:
        return SqliteChunkMatches(conn)

    def fulltext_copy(self, conn: sqlite3.Connection) -> FullTextCopyStore:
        return SqliteFullTextCopy(conn)

    def neighbour_links(self, conn: sqlite3.Connection) -> NeighbourLinkStore:
        return SqliteNeighbourLinks(conn)

    def document_rows(self, conn: sqlite3.Connection) -> DocumentRowStore:
        return SqliteDocumentRows(conn)


SQLITE_STORES: Final = SqliteStores()

__all__ = ["SQLITE_STORES", "SqliteStores", "Stores"]
