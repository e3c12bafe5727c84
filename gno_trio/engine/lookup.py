"""The document row a parsed reference names, for every subpackage that takes a reference.

Reading, linking, graph walks, tagging, filing and refactor plans all start
from a reference a user typed (a docid, a ``gno://`` URI or a path); one
lookup answers them all the same way, and it sits beside
:mod:`gno_trio.engine.uris` at the bottom of the engine so that none of
them has to import another subpackage to find a document.
"""

from __future__ import annotations

from pathlib import Path

from gno_trio.config.dirs import database_file_name
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.database import Connection, RowView
from gno_trio.engine.uris import Ref
from gno_trio.errors import GnoError


def resolve(conn: Connection, ref: Ref, *, inactive: bool = False) -> RowView:
    """The active document a parsed reference names, or ``NOT_FOUND``.

    With ``inactive`` an inactivated document is found too (its history is
    still there), an active one with the same name first. A URI naming
    another index (``?index=<name>``) is refused here: looking it up in this
    database would answer with whatever document happens to share its path.
    Reads that honour the name open that index first.
    """
    if ref.index is not None:
        require_index(conn, ref)
    documents = SQLITE_STORES.documents(conn)
    row: RowView | None
    if ref.docid is None:
        assert ref.collection is not None and ref.rel_path is not None
        row = documents.by_path(ref.collection, ref.rel_path, inactive=inactive)
    elif len(ref.docid) >= 9:  # a stored docid is "#" plus 8 hex digits
        row = documents.by_docid(ref.docid[:9], prefix=False, inactive=inactive)
    else:
        row = documents.by_docid(ref.docid, prefix=True, inactive=inactive)
    if row is None:
        raise GnoError("NOT_FOUND", f"Document not found: {ref.raw}")
    return row


def require_index(conn: Connection, ref: Ref) -> None:
    """Fail unless ``conn`` is the database of the index ``ref`` names."""
    assert ref.index is not None
    opened = Path(SQLITE_STORES.documents(conn).database_file()).name
    if opened != database_file_name(ref.index):
        raise GnoError(
            "INVALID_INPUT",
            f"{ref.raw} names index {ref.index!r}; this call reads only the index being served",
        )
