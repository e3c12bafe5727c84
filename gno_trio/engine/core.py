"""``Engine``: one object per opened index, the only door into the engine.

Every surface (CLI, MCP tools, HTTP gateway) calls ``Engine`` and the
namespaces it holds; none calls the modules behind them. The calling
convention is the same for every service: a synchronous method that takes
keyword options and returns the result object of its contract or raises
:class:`~gno_trio.errors.GnoError`. The engine binds one pooled connection
to each call (:mod:`gno_trio.engine.store.binding`); an async caller runs
calls through :meth:`~gno_trio.engine.kernel.EngineKernel.call_slot` so
that a cancelled request interrupts the statement running for it.

``Engine`` is the opened index itself (the kernel: location, configuration,
connections, the write lease, sync and reconcile from
:class:`~gno_trio.engine.ingest.indexer.IndexingKernel`) and one namespace
per service, each a class of its own module that is handed the kernel and
the other services it calls when the engine opens; no namespace reaches
into another's state. The kernel calls the upkeep its rules need through
:class:`~gno_trio.engine.kernel.IndexUpkeep`, bound here to the floors that
do the work (:class:`EngineUpkeep`).

* ``collections`` (:mod:`.ingest.face`): add, remove, rename, update, clean up;
* ``notes`` (:mod:`.ingest.notes_face`): capture, folders, duplicates,
  refactors, tags;
* ``documents`` (:mod:`.reads.face`): get, multi-get, sections, ls, tags,
  changes, diff;
* ``index`` (:mod:`.reads.index_face`): status, peek, the watcher, audit;
* ``search`` (:mod:`.search.face`): lexical, vector, query, similar,
  diagnose, contexts;
* ``vectors`` (:mod:`.vectors.face`): the embed phase, clearing vectors,
  models;
* ``graph`` (:mod:`.graph.face`): links, backlinks, neighbours, paths, the
  overview, typed walks;
* ``egress`` (:mod:`.egress.face`): policy views, the confirmed policy
  change, receipts;
* ``memory`` (:mod:`.memory.face`): recall and remember;
* ``capsules`` (:mod:`.context.face`): Context Capsules, compiled and verified;
* ``traces`` (:mod:`.traces.face`): retrieval traces (recording and
  management);
* ``retrieval`` (:mod:`.traces.traced`): a retrieval or a Capsule, traced;
* ``answers`` (:mod:`.ask.face`): answers checked claim by claim against a
  Context Capsule.
"""

from __future__ import annotations

from typing import ClassVar

from gno_trio.config import Config
from gno_trio.engine.ask.face import AskFace
from gno_trio.engine.context.face import ContextFace
from gno_trio.engine.egress.face import EgressFace
from gno_trio.engine.graph.face import GraphFace
from gno_trio.engine.ingest.face import CollectionsFace
from gno_trio.engine.ingest.indexer import IndexingKernel
from gno_trio.engine.ingest.notes_face import NotesFace
from gno_trio.engine.ingest.upkeep import finish_upgrades
from gno_trio.engine.kernel import IndexLocation, IndexUpkeep
from gno_trio.engine.memory.face import MemoryFace
from gno_trio.engine.reads.face import DocumentsFace
from gno_trio.engine.reads.index_face import IndexFace
from gno_trio.engine.search.docindex.policy import (
    document_index_lags,
    document_indexing,
    heal_document_index,
)
from gno_trio.engine.search.face import SearchFace
from gno_trio.engine.traces.face import TracesFace
from gno_trio.engine.traces.traced import Retrieval
from gno_trio.engine.vectors.face import VectorsFace


class EngineUpkeep:
    """What the kernel's rules call for, done where it lives: ingest's upgrades, search's index."""

    finish_upgrades = staticmethod(finish_upgrades)
    document_index_lags = staticmethod(document_index_lags)
    heal_document_index = staticmethod(heal_document_index)
    document_indexing = staticmethod(document_indexing)


class Engine(IndexingKernel):
    """An opened index and every service over it (see the module docstring for the map)."""

    upkeep: ClassVar[IndexUpkeep] = EngineUpkeep()

    def __init__(self, location: IndexLocation, config: Config) -> None:
        super().__init__(location, config)
        self.collections = CollectionsFace(self)
        """The configured collections: add, remove, rename, update (:mod:`.ingest.face`)."""
        self.notes = NotesFace(self)
        """Capture, folders, duplicates, refactors, tags (:mod:`.ingest.notes_face`)."""
        self.documents = DocumentsFace(self)
        """Documents by reference, sections, listings, tags, changes, diffs (:mod:`.reads.face`)."""
        self.index = IndexFace(self)
        """Status, peek, the watcher, audit (:mod:`.reads.index_face`)."""
        self.egress = EgressFace(self)
        """Egress policies and decision receipts (:mod:`.egress.face`)."""
        self.search = SearchFace(self)
        """Keyword, vector and hybrid search, diagnosis, contexts (:mod:`.search.face`)."""
        self.vectors = VectorsFace(self)
        """The embed phase, clearing vectors, models (:mod:`.vectors.face`)."""
        self.graph = GraphFace(self)
        """Links, backlinks, neighbours, paths, the overview, typed walks (:mod:`.graph.face`)."""
        self.capsules = ContextFace(self)
        """Context Capsules: compiled and verified (:mod:`.context.face`)."""
        self.memory = MemoryFace(self)
        """Scoped, cited facts: recall and remember (:mod:`.memory.face`)."""
        self.traces = TracesFace(self)
        """Retrieval traces: recording and management (:mod:`.traces.face`)."""
        self.retrieval = Retrieval(self.search, self.capsules, self.traces)
        """Ranked retrievals and Capsules, each recorded as a trace (:mod:`.traces.traced`)."""
        self.answers = AskFace(self, self.search, self.capsules, self.traces)
        """Answers checked claim by claim against a Context Capsule (:mod:`.ask.face`)."""

    def close(self) -> None:
        self.search.release()
        super().close()


__all__ = ["Engine", "EngineUpkeep"]
