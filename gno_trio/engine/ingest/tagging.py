"""Tags a person adds to or takes off one document (``tags add`` / ``tags rm``).

A tag is checked against the index grammar first (lower-case letters,
digits, ``-``, ``.`` and ``/``-separated segments; upper case is lowered),
then, under the shared write lease:

* a Markdown note gets the change in its frontmatter ``tags`` list, edited
  in place: only the ``tags`` entry is rewritten, every other byte of the
  file stays as it was, and the file is replaced atomically and indexed
  again at once. A note that changed on disk since it was indexed is not
  touched (``CONFLICT``), nor is one whose frontmatter does not parse;
* every document also carries the tag in the index as a ``user`` tag, so
  a file without frontmatter (plain text, code, converted documents) can be
  tagged too and keeps its tags across syncs.

Removing a tag that comes from the note's text (an inline ``#tag``) is
refused: the next sync would bring it back.
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import yaml

from gno_trio.engine.ingest.frontmatter import extract_meta
from gno_trio.engine.ingest.indexer import IndexingKernel
from gno_trio.engine.ingest.meta_fields import normalize_tag
from gno_trio.engine.ingest.reading import note_text
from gno_trio.engine.ingest.write_paths import collection_root, real_folder
from gno_trio.engine.ingest.written import index_written
from gno_trio.engine.lookup import resolve
from gno_trio.engine.store import fulltext
from gno_trio.engine.store.aggregates import SQLITE_STORES
from gno_trio.engine.store.atomic import replace
from gno_trio.engine.store.database import Connection, RowView, write_transaction
from gno_trio.engine.store.lease import HeldLease
from gno_trio.engine.uris import parse_ref, sha256_hex
from gno_trio.errors import GnoError

_TAGS_KEY: Final = re.compile(r"(?i)(tags|tag)[ \t]*:")
_PLAIN_TAG: Final = re.compile(r"[^\W_][\w\-./]*")


def checked_tag(raw: str) -> str:
    """``raw`` as a tag of the index grammar, or ``INVALID_INPUT`` saying what is allowed."""
    wanted = raw.strip().lstrip("#").lower()
    tag = normalize_tag(raw)
    if tag is None or tag != wanted:
        raise GnoError(
            "INVALID_INPUT",
            f"Invalid tag {raw!r}: use lower-case letters, digits, '-' and '.', "
            "with '/' between segments (such as project/alpha)",
        )
    return tag


# ---------------------------------------------------------------------------
# Editing the frontmatter's tags list
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Frontmatter:
    bom: str
    newline: str
    lines: list[str]  # the text after the BOM, line endings kept
    closing: int  # index of the closing ``---`` line; 0 when there is no block


def _split(text: str) -> _Frontmatter:
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    lines = text[len(bom) :].splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    closing = 0
    if lines and lines[0].rstrip() == "---":
        for index in range(1, len(lines)):
            if lines[index].rstrip() in ("---", "..."):
                closing = index
                break
    return _Frontmatter(bom, newline, lines, closing)


def _raw_items(value: Any) -> list[str]:
    """The entries of a frontmatter ``tags`` value as the user wrote them."""
    if isinstance(value, str):
        pieces = value.split(",") if "," in value else value.split()
        return [piece.strip() for piece in pieces if piece.strip()]
    if isinstance(value, list):
        return [
            str(item)
            for item in value
            if isinstance(item, str | int | float) and not isinstance(item, bool)
        ]
    return []


def _yaml_item(item: str) -> str:
    """One list entry, quoted when YAML would read it as something other than this text."""
    try:
        plain = _PLAIN_TAG.fullmatch(item) is not None and yaml.safe_load(item) == item
    except yaml.YAMLError:
        plain = False
    return item if plain else json.dumps(item, ensure_ascii=False)


def _tags_value(frontmatter: Any) -> Any:
    if not isinstance(frontmatter, dict):
        return None
    for key in ("tags", "tag"):
        for name, value in frontmatter.items():
            if isinstance(name, str) and name.lower() == key:
                return value
    return None


def edit_tags(text: str, *, add: str | None = None, remove: str | None = None) -> str | None:
    """``text`` with ``add`` appended to / ``remove`` taken off its frontmatter tags.

    Returns None when the frontmatter needs no change (the tag is already
    there, or not there to remove) or cannot be edited safely (it does not
    parse). Only the ``tags`` entry is rewritten, as a block list; a note
    without frontmatter gets a block holding just the tag, and a block left
    empty by a removal goes away.
    """
    meta = extract_meta(text, "note.md")
    if meta.frontmatter_error:
        return None
    parts = _split(text)
    nl = parts.newline
    items = _raw_items(_tags_value(dict(meta.frontmatter)))
    if add is not None:
        if any(normalize_tag(item) == add for item in items):
            return None
        items = [*items, add]
    if remove is not None:
        kept = [item for item in items if normalize_tag(item) != remove]
        if len(kept) == len(items):
            return None
        items = kept
    entry = [f"tags:{nl}", *(f"  - {_yaml_item(item)}{nl}" for item in items)] if items else []
    lines = parts.lines
    if not parts.closing:
        if not entry:
            return None
        edited = [f"---{nl}", *entry, f"---{nl}", *lines]
    else:
        block = lines[1 : parts.closing]
        start = next((i for i, line in enumerate(block) if _TAGS_KEY.match(line)), None)
        if start is None:
            block = [*block, *entry]
        else:
            end = start + 1
            while end < len(block) and block[end][:1] in (" ", "\t", "-"):
                end += 1
            block = [*block[:start], *entry, *block[end:]]
        if any(line.strip() for line in block):
            edited = [lines[0], *block, *lines[parts.closing :]]
        else:  # the tags were all it held: no empty block is left behind
            edited = lines[parts.closing + 1 :]
    result = parts.bom + "".join(edited)
    check = extract_meta(result, "note.md")
    if check.frontmatter_error:  # never write a file this module cannot read back
        return None
    return result


# ---------------------------------------------------------------------------
# The service
# ---------------------------------------------------------------------------


def change_tag(
    engine: IndexingKernel,
    conn: Connection,
    ref: str,
    raw_tag: str,
    *,
    add: bool,
    should_stop: Callable[[], bool] | None = None,
    lease: HeldLease | None = None,
) -> dict[str, Any]:
    """Add or remove one tag of one document; the ``tags add``/``tags rm`` receipt.

    Raises ``INVALID_INPUT`` (bad tag, or a tag from the note's text),
    ``NOT_FOUND`` (document, or the tag is not on it), ``CONFLICT`` (the
    note changed on disk since it was indexed), ``LOCKED``.
    """
    tag = checked_tag(raw_tag)
    with engine.writing(lease, should_stop=should_stop) as held:
        row = resolve(conn, parse_ref(ref))
        tags = SQLITE_STORES.tags(conn)
        sources = tags.sources(int(row["id"]))
        if not add and tag not in sources:
            raise GnoError("NOT_FOUND", f"Tag {tag} is not on {row['uri']}")
        wrote = False
        if row["source_mime"] == "text/markdown":
            wrote = _rewrite_note(engine, conn, row, tag, add=add, lease=held)
            row = resolve(conn, parse_ref(str(row["uri"])))
        if not add:
            still = tags.source_of(int(row["id"]), tag)
            if still is not None and still != "user":
                raise GnoError(
                    "INVALID_INPUT",
                    f"Tag {tag} comes from the text of {row['uri']} (an inline #{tag}); "
                    "edit the note to remove it",
                )
        with write_transaction(conn):
            if add:
                tags.add_user(int(row["id"]), [tag])
            else:
                tags.remove_user(int(row["id"]), tag)
            fulltext.refresh_metadata(conn, int(row["id"]))
    flag = "wroteToFile" if add else "removedFromFile"
    return {
        "docid": str(row["docid"]),
        "uri": str(row["uri"]),
        "tag": tag,
        "action": "add" if add else "remove",
        flag: wrote,
    }


def _rewrite_note(
    engine: IndexingKernel,
    conn: Connection,
    row: RowView,
    tag: str,
    *,
    add: bool,
    lease: HeldLease,
) -> bool:
    """Change the note's frontmatter and index it again; False when the file needs no change.

    A removal the frontmatter cannot make (the tag is inline) is refused
    before anything is written.
    """
    rel_path = str(row["rel_path"])
    collection = engine.collection(str(row["collection"]))
    segments = rel_path.split("/")
    folder = real_folder(collection_root(collection, engine.location.dirs), segments[:-1])
    path = folder / segments[-1]
    try:
        mode = path.lstat().st_mode
    except OSError as exc:
        raise GnoError("PATH_NOT_FOUND", f"{rel_path} is not on disk any more") from exc
    if not stat.S_ISREG(mode):
        raise GnoError("INVALID_PATH", f"{rel_path} is not a regular file; it is not edited")
    text = note_text(path, rel_path, action="tagged")
    if sha256_hex(text.encode("utf-8")) != row["source_hash"]:
        raise GnoError(
            "CONFLICT",
            f"{rel_path} changed on disk since it was indexed; sync the collection and try again",
        )
    edited = edit_tags(text, add=tag if add else None, remove=None if add else tag)
    if edited is None:
        return False
    if not add and tag in extract_meta(edited, rel_path).tags:
        raise GnoError(
            "INVALID_INPUT",
            f"Tag {tag} also comes from the text of {row['uri']} (an inline #{tag}); "
            "edit the note to remove it",
        )
    try:
        replace(path, edited)
    except OSError as exc:
        raise GnoError("RUNTIME", f"Cannot write {rel_path}: {exc.strerror or exc}") from exc
    indexed = index_written(engine, collection.name, rel_path, conn, lease)
    if indexed.row is None:
        raise GnoError("RUNTIME", f"{rel_path} was written but not indexed: {indexed.status}")
    return True


__all__ = ["change_tag", "checked_tag", "edit_tags"]
