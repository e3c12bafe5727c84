"""``engine.documents``: reads of what is indexed: documents, sections, listings, tags, changes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gno_trio.config.dirs import canonical_index_name
from gno_trio.engine import journal
from gno_trio.engine.kernel import EngineKernel
from gno_trio.engine.reads import diff as diff_mod
from gno_trio.engine.reads import documents, sections
from gno_trio.engine.store.database import Connection, connect, schema_version
from gno_trio.engine.uris import parse_ref, with_index
from gno_trio.errors import GnoError


class DocumentsFace:
    """The documents of an opened index (and, by ``?index=<name>`` refs, of a neighbour)."""

    def __init__(self, kernel: EngineKernel) -> None:
        self._kernel = kernel

    def get(
        self,
        ref: str,
        *,
        from_line: int | None = None,
        line_count: int | None = None,
        line_numbers: bool = True,
    ) -> dict[str, Any]:
        named = self._named_index([ref])
        with self._index_connection(named) as c:
            result = documents.get(
                c, ref, from_line=from_line, line_count=line_count, line_numbers=line_numbers
            )
        if named is not None:
            result["uri"] = with_index(result["uri"], named)
        return result

    def multi_get(
        self,
        *,
        refs: Sequence[str] | None = None,
        pattern: str | None = None,
        max_bytes: int = documents.DEFAULT_MAX_BYTES,
        line_numbers: bool = True,
    ) -> dict[str, Any]:
        named = self._named_index(refs or ())
        with self._index_connection(named) as c:
            result = documents.multi_get(
                c, refs=refs, pattern=pattern, max_bytes=max_bytes, line_numbers=line_numbers
            )
        if named is not None:
            for document in result["documents"]:
                document["uri"] = with_index(document["uri"], named)
        return result

    def section(
        self,
        action: str,
        ref: str,
        *,
        anchor: str | None = None,
        line: int | None = None,
        target: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``section@1.0``: create a durable section target, or resolve one against today's text.

        The document is always this index's; create takes exactly one of
        ``anchor`` and ``line``, resolve takes ``target`` and neither of them.
        """
        if self._named_index([ref]) is not None:
            raise GnoError("INVALID_INPUT", "Section targets are made and resolved in this index")
        with self._kernel.connection() as c:
            if action == "create":
                if target is not None:
                    raise GnoError("INVALID_INPUT", "action=create takes no target")
                return sections.create(c, ref, anchor=anchor, line=line)
            if action == "resolve":
                if target is None or anchor is not None or line is not None:
                    raise GnoError(
                        "INVALID_INPUT", "action=resolve takes a target and neither anchor nor line"
                    )
                return sections.resolve_target(c, ref, target)
        raise GnoError("INVALID_INPUT", f"Unknown section action: {action} (create or resolve)")

    def _named_index(self, refs: Sequence[str]) -> str | None:
        """The other index a batch of refs names (``?index=<name>``, canonical), or None.

        One request reads one index: refs naming two indexes, or naming
        another index beside plain refs (which mean this one), are refused so
        the caller splits the batch. Refs that do not parse are left to the
        read, which reports them.
        """
        named: set[str] = set()
        plain = False
        for ref in refs:
            try:
                index = parse_ref(ref).index
            except GnoError:
                continue
            if index is None:
                plain = True
            else:
                named.add(canonical_index_name(index))
        other = sorted(named - {canonical_index_name(self._kernel.location.index_name)})
        if len(named) > 1 or (other and plain):
            raise GnoError(
                "INVALID_INPUT",
                "All refs in one request must name one index; split the batch by index",
            )
        return other[0] if other else None

    @contextlib.contextmanager
    def _index_connection(self, named: str | None) -> Iterator[Connection]:
        """This index's connection, or a read-only one to the named index.

        A named index that does not exist is an error; it is never created.
        """
        if named is None:
            with self._kernel.connection() as c:
                yield c
            return
        path = self._kernel.location.dirs.database(named)
        if not path.is_file():
            raise GnoError("NOT_FOUND", f"Index not found: {named}")
        other = connect(path, readonly=True)
        try:
            if schema_version(other) < 1:
                raise GnoError("RUNTIME", f"Not a gno index: {named}")
            yield other
        finally:
            other.close()

    def ls(
        self,
        *,
        collection: str | None = None,
        prefix: str | None = None,
        limit: int = 1000,
        offset: int = 0,
    ) -> dict[str, Any]:
        with self._kernel.connection() as c:
            return documents.ls(c, collection=collection, prefix=prefix, limit=limit, offset=offset)

    def browse(
        self,
        *,
        collection: str | None = None,
        path: str = "",
    ) -> dict[str, Any]:
        """One level of the browse tree (see :func:`documents.browse`)."""
        with self._kernel.connection() as c:
            return documents.browse(c, collection=collection, path=path)

    def tags(
        self,
        *,
        collection: str | None = None,
        prefix: str | None = None,
    ) -> dict[str, Any]:
        with self._kernel.connection() as c:
            return documents.list_tags(c, collection=collection, prefix=prefix)

    def changes(
        self,
        *,
        since: str | None = None,
        collection: str | None = None,
        limit: int = 100,
    ) -> dict[str, Any]:
        with self._kernel.connection() as c:
            return journal.feed(
                self._kernel.stores.journal(c), since=since, collection=collection, limit=limit
            )

    def diff(self, ref: str, change: str | None = None) -> dict[str, Any]:
        """The retained structural diff of one document change (the latest by default)."""
        with self._kernel.connection() as c:
            return diff_mod.document_diff(c, self._kernel.stores.journal(c), ref, change)


__all__ = ["DocumentsFace"]
