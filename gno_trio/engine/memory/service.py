"""The memory service: argument validation, the write lease, and the engine calls.

Every surface (MCP tools, CLI) goes through here, so validation order and
error codes are the same everywhere: identity, then text or query, then the
collection (it must exist and be memory-managed), then scopes, decision,
receipt, fences and predecessor. Writes take the shared write lease
themselves, so a caller (the MCP adapter included) never locks around them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from gno_trio.config import Collection
from gno_trio.engine.facts import (
    FactRecord,
    content_hash,
    normalize_scopes,
    normalize_text,
    record_id_for,
    rel_path_for,
    render,
    sweep_facts,
    validate_source,
    validate_text,
    write_new_file,
)
from gno_trio.engine.ingest import pending
from gno_trio.engine.ingest.convert import converter_for
from gno_trio.engine.ingest.indexer import IndexingKernel
from gno_trio.engine.ingest.roots import checked_root
from gno_trio.engine.ingest.walker import admits
from gno_trio.engine.memory import recall as recall_mod
from gno_trio.engine.memory import remember as remember_mod
from gno_trio.engine.memory.identity import Identity
from gno_trio.engine.memory.queries import StoredFact
from gno_trio.engine.memory.recall import CollectionPolicy, now_iso
from gno_trio.engine.memory.receipts import PresentedReceipt, fenced_spans, parse_presented
from gno_trio.engine.store.database import Connection, StoreError
from gno_trio.engine.store.lease import MEMORY_WAIT_SECONDS, HeldLease, wait_from_env
from gno_trio.engine.store.memory import FactStore
from gno_trio.errors import GnoError

DECISIONS = ("add", "supersede")
MAX_FACTS_LIMIT = 64
MAX_TOKENS_LIMIT = 8192
T = TypeVar("T")
LEASE_BUSY_MESSAGE = "Another gno-trio writer holds the write lease; try again shortly."


def _budget_ok(value: object, ceiling: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= ceiling


def _discard(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


class MemoryService:
    """Recall and remember over one engine; safe to share between threads."""

    def __init__(self, engine: IndexingKernel, *, lease_wait_seconds: float | None = None) -> None:
        self.engine = engine
        self.lease_wait = (
            lease_wait_seconds
            if lease_wait_seconds is not None
            else wait_from_env(MEMORY_WAIT_SECONDS)
        )

    # -- validation --------------------------------------------------------

    def managed_collection(self, name: str | None) -> Collection:
        if not isinstance(name, str) or not name.strip():
            raise GnoError("MEMORY_COLLECTION_REQUIRED", "A memory collection is required")
        found = self.engine.config.collection(name.strip().lower())
        if found is None:
            raise GnoError("MEMORY_COLLECTION_NOT_FOUND", f"Collection not found: {name}")
        if not found.memory_managed:
            raise GnoError(
                "MEMORY_COLLECTION_UNMANAGED",
                f"Collection {found.name} is not memory-managed (set memoryManaged: true)",
            )
        return found

    @staticmethod
    def policy(collection: Collection) -> CollectionPolicy:
        return CollectionPolicy(
            name=collection.name,
            policy=collection.effective_egress_policy,
            source=collection.egress_policy_source,
        )

    # -- recall ------------------------------------------------------------

    def recall(
        self,
        *,
        query: str | None,
        collection: str | None,
        scopes: Sequence[str] | None,
        identity: Identity,
        max_facts: int = recall_mod.DEFAULT_MAX_FACTS,
        max_tokens: int = recall_mod.DEFAULT_MAX_TOKENS,
    ) -> dict[str, Any]:
        who = identity.checked()
        if not isinstance(query, str) or not normalize_text(query):
            raise GnoError("MEMORY_QUERY_REQUIRED", "A recall query is required")
        if "\x00" in query or not _encodable(query):
            raise GnoError("MEMORY_QUERY_REQUIRED", "A recall query must be plain text")
        if not _budget_ok(max_facts, MAX_FACTS_LIMIT) or not _budget_ok(
            max_tokens, MAX_TOKENS_LIMIT
        ):
            raise GnoError(
                "MEMORY_BUDGET_INVALID",
                f"maxFacts must be 1-{MAX_FACTS_LIMIT} and maxTokens 1-{MAX_TOKENS_LIMIT}",
            )
        managed = self.managed_collection(collection)
        clean_scopes = normalize_scopes(scopes)
        with self.engine.connection() as c:
            vector_hits, unavailable = self._vector_leg(
                c, managed.name, clean_scopes, query, recall_mod.candidate_limit(max_facts)
            )
            return recall_mod.recall(
                c,
                self.engine.stores.memory_facts(c),
                query=query,
                collection=self.policy(managed),
                scopes=clean_scopes,
                identity=who,
                max_facts=max_facts,
                max_tokens=max_tokens,
                vector_hits=vector_hits,
                semantic_unavailable=unavailable,
            )

    def _matcher(
        self, conn: Connection, collection: str, scopes: Sequence[str], text: str
    ) -> tuple[list[StoredFact], remember_mod.Similarity | None, dict[str, Any]]:
        """Remember's candidate matching: semantic when the collection is embedded."""
        from gno_trio.engine.memory import semantic

        memory = semantic.semantic_memory(conn, self.engine.config, collection)
        if isinstance(memory, str):
            return [], None, remember_mod.matching_block(unavailable=memory)
        try:
            nearby = [
                fact
                for fact, _ in semantic.vector_candidates(
                    conn,
                    self.engine.stores.memory_facts(conn),
                    memory,
                    collection,
                    scopes,
                    text,
                    remember_mod.CANDIDATE_LIMIT,
                )
            ]
        except GnoError as error:
            return (
                [],
                None,
                remember_mod.matching_block(unavailable=f"{error.code}: {error.message}"),
            )

        def similarity(mine: str, others: Sequence[str]) -> list[float]:
            return semantic.similarities(memory, mine, others)

        block = remember_mod.matching_block(semantic_threshold=memory.threshold)
        return nearby, similarity, block

    def _vector_leg(
        self,
        conn: Connection,
        collection: str,
        scopes: Sequence[str],
        query: str,
        limit: int,
    ) -> tuple[list[tuple[StoredFact, float]] | None, str]:
        """Recall's vector leg when the collection is embedded, else why not."""
        from gno_trio.engine.memory import semantic

        memory = semantic.semantic_memory(conn, self.engine.config, collection)
        if isinstance(memory, str):
            return None, memory
        try:
            facts = self.engine.stores.memory_facts(conn)
            return semantic.vector_candidates(
                conn, facts, memory, collection, scopes, query, limit
            ), ""
        except GnoError as error:  # the model stopped answering: the lexical leg still does
            return None, f"{error.code}: {error.message}"

    # -- remember ----------------------------------------------------------

    def remember(
        self,
        *,
        text: str | None,
        collection: str | None,
        scopes: Sequence[str] | None,
        identity: Identity,
        decision: str | None = None,
        predecessor_uri: str | None = None,
        predecessor_hash: str | None = None,
        receipt: PresentedReceipt | Mapping[str, Any] | None = None,
        derived_from: Sequence[str] = (),
        source: str | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """Propose, add or supersede one fact (``memory-remember@1.0``).

        ``receipt`` is the receipt of the recall the fact came from (as
        returned, or as parsed JSON); it fences replays of recalled spans.
        ``cancelled`` tells whether the caller gave up: it is checked while
        waiting for the write lease and once more before the file is written.
        """
        who = identity.checked()
        normalized = validate_text(text)
        managed = self.managed_collection(collection)
        clean_scopes = normalize_scopes(scopes)
        if decision is not None and decision not in DECISIONS:
            raise GnoError(
                "MEMORY_DECISION_INVALID", f"decision must be add or supersede, not {decision!r}"
            )
        clean_source = validate_source(source)
        hash_hex = content_hash(normalized)
        presented = receipt if isinstance(receipt, PresentedReceipt | None) else None
        if receipt is not None and presented is None:
            presented = parse_presented(receipt)
        origins = [derived_from] if isinstance(derived_from, str) else list(derived_from)
        remember_mod.check_fences(hash_hex, fenced_spans(presented, who), origins)
        wanted_uri = (predecessor_uri or "").strip() if isinstance(predecessor_uri, str) else ""
        wanted_hash = (predecessor_hash or "").strip() if isinstance(predecessor_hash, str) else ""
        if decision == "supersede" and not (wanted_uri and wanted_hash):
            raise GnoError(
                "MEMORY_PREDECESSOR_REQUIRED",
                "supersede needs predecessorUri and predecessorHash (from gno_recall)",
            )
        with self.engine.connection() as c:
            facts = self.engine.stores.memory_facts(c)
            nearby, similarity, matching = self._matcher(c, managed.name, clean_scopes, normalized)
            if decision != "supersede":
                existing = _query(
                    lambda: remember_mod.find_exact(facts, managed.name, clean_scopes, hash_hex)
                )
                if existing is not None:
                    return {
                        "outcome": "existing",
                        "record": existing.as_dict(),
                        "matching": matching,
                    }
            if decision is None:
                found = _query(
                    lambda: remember_mod.candidates(
                        facts,
                        managed.name,
                        clean_scopes,
                        normalized,
                        hash_hex,
                        nearby=nearby,
                        similarity=similarity,
                        threshold=float(matching["threshold"]),
                    )
                )
                return {"outcome": "candidates", "candidates": found, "matching": matching}
            with self.engine.lease(
                wait_seconds=self.lease_wait,
                busy_code="MEMORY_WRITE_LEASE_BUSY",
                busy_message=LEASE_BUSY_MESSAGE,
                should_stop=cancelled,
            ) as held:
                if cancelled is not None and cancelled():
                    raise GnoError("MEMORY_WRITE_LEASE_BUSY", "The call was cancelled")
                draft = FactRecord(
                    record_id="",
                    text=normalized,
                    scopes=tuple(clean_scopes),
                    caller=who.caller,
                    session=who.session,
                    created_at="",
                    content_hash=hash_hex,
                    supersedes=(),
                    source=clean_source,
                )
                # A collection made memory-managed by hand gets its facts projected
                # first, so the checks below see every fact already on disk.
                self.engine.reconcile(lease=held)
                return self._write(
                    facts, held, managed, draft, decision, wanted_uri, wanted_hash, matching
                )

    def _write(
        self,
        facts: FactStore,
        lease: HeldLease,
        managed: Collection,
        draft: FactRecord,
        decision: str,
        predecessor_uri: str,
        predecessor_hash: str,
        matching: dict[str, Any],
    ) -> dict[str, Any]:
        """Under the lease: re-check, write the file atomically, index it."""
        supersedes: tuple[str, ...] = ()
        if decision == "add":
            existing = _query(
                lambda: remember_mod.find_exact(
                    facts, managed.name, draft.scopes, draft.content_hash
                )
            )
            if existing is not None:
                return {"outcome": "existing", "record": existing.as_dict(), "matching": matching}
        else:
            previous = _query(
                lambda: remember_mod.predecessor(
                    facts, managed.name, predecessor_uri, predecessor_hash
                )
            )
            supersedes = (previous.uri,)
        created_at = now_iso()
        record = FactRecord(
            record_id=record_id_for(draft.content_hash, created_at, draft.caller, draft.session),
            text=draft.text,
            scopes=draft.scopes,
            caller=draft.caller,
            session=draft.session,
            created_at=created_at,
            content_hash=draft.content_hash,
            supersedes=supersedes,
            source=draft.source,
        )
        rel_path = rel_path_for(record)
        abs_path = Path(managed.path) / rel_path
        if not admits(
            rel_path,
            pattern=managed.pattern,
            include=tuple(managed.include),
            exclude=tuple(managed.exclude),
            supported=lambda rel: converter_for(rel) is not None,
        ):
            # Indexing it now would only last until the next full sync drops it.
            raise GnoError(
                "MEMORY_SYNC_FAILED",
                f"Collection {managed.name} does not index {rel_path} (its pattern, include or "
                "exclude leave out facts/**/*.md); nothing was written",
            )
        checked_root(managed.path, self.engine.location.dirs)
        sweep_facts(Path(managed.path))
        with pending.marked(self.engine.location, managed.name):  # a crash here: see .pending
            try:
                write_new_file(abs_path, render(record))
            except OSError as exc:
                raise GnoError("RUNTIME", f"Cannot write fact file {abs_path}: {exc}") from exc
            try:
                report = self.engine.sync_paths(managed.name, [rel_path], lease=lease)
            except (GnoError, StoreError, OSError) as exc:
                # The sync rolled back: drop the file too, so nothing half-stored remains.
                _discard(abs_path)
                raise GnoError(
                    "MEMORY_SYNC_FAILED", f"The fact could not be indexed and was not kept: {exc}"
                ) from exc
        if report.errors:
            _discard(abs_path)
            raise GnoError(
                "MEMORY_SYNC_FAILED",
                f"The fact could not be indexed and was not kept: {report.errors[0]['message']}",
            )
        row = _query(lambda: facts.indexed(managed.name, rel_path))
        if row is None or not row["valid"]:
            raise GnoError(
                "MEMORY_SYNC_FAILED",
                f"Fact written to {abs_path} but not indexed as a valid fact (see status)",
            )
        if supersedes and (
            _query(lambda: remember_mod.successor_of(facts, supersedes[0], managed.name))
            != row["uri"]
        ):
            raise GnoError(
                "MEMORY_SUPERSEDE_PROJECTION_FAILED",
                f"Fact written to {abs_path} but its supersedes edge did not project",
            )
        return {
            "outcome": "superseded" if supersedes else "added",
            "record": record.as_dict(uri=row["uri"], docid=row["docid"]),
            "absPath": str(abs_path),
            "sync": {"status": "completed"},
            "matching": matching,
        }


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _query(run: Callable[[], T]) -> T:
    """Run a read against the index; a SQLite failure is ``MEMORY_QUERY_FAILED``."""
    try:
        return run()
    except StoreError as exc:
        raise GnoError("MEMORY_QUERY_FAILED", f"Memory query failed: {exc}") from exc
