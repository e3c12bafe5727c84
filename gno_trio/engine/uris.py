"""Document identity: docids, ``gno://`` URIs and the references users type.

A docid is ``#`` plus the first 8 hex digits of sha256 over the source bytes,
so byte-identical files share one. A URI is ``gno://<collection>/<relPath>``
with every path segment percent-encoded the way JavaScript's
``encodeURIComponent`` does it (slashes kept), so URIs match the ones GNO
clients already hold.

A file name that is not UTF-8 (from a zip, a tar or an old share) reaches
Python with each stray byte as a lone surrogate (``surrogateescape``), which
neither SQLite nor JSON can hold. The index keeps such a name in its
:func:`indexed_path` spelling and its URI percent-encodes the name's own
bytes (``bad%FF%FE.md``), so the file is indexed, listed and read by a URI
that stays the same from one sync to the next.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from urllib.parse import parse_qs, quote, unquote

from gno_trio.config.dirs import validate_index_name
from gno_trio.errors import GnoError

SCHEME = "gno://"
# encodeURIComponent leaves these unescaped besides ASCII letters and digits.
_SEGMENT_SAFE = "-_.!~*'()"
# A path of these characters only (and slashes) is its own encoding.
_NOTHING_TO_ENCODE_RE = re.compile(r"[A-Za-z0-9\-_.!~*'()/]*")
_DOCID_RE = re.compile(r"^#([0-9a-fA-F]{6,64})$")
_LINE_SUFFIX_RE = re.compile(r":(\d+)$")
_BAD_PERCENT_RE = re.compile(r"%(?![0-9A-Fa-f]{2})")

# A stray byte 0x80-0xFF (the surrogate U+DC80-U+DCFF) is indexed as the
# private-use character U+F780-U+F7FF; a name that really holds U+F700 or a
# character of that block has it escaped by U+F700, so every name on disk has
# one indexed spelling and back. A UTF-8 name without them is kept as it is.
_STRAY_TO_INDEXED = 0xF780 - 0xDC80
_ESCAPE = "\uf700"
_TO_INDEXED_RE = re.compile("[\udc80-\udcff\uf700\uf780-\uf7ff]")
_TO_DISK_RE = re.compile("\uf700(.)|[\uf780-\uf7ff]", re.DOTALL)


def _indexed_char(match: re.Match[str]) -> str:
    char = match.group()
    if char >= "\uf700":
        return _ESCAPE + char
    return chr(ord(char) + _STRAY_TO_INDEXED)


def _disk_char(match: re.Match[str]) -> str:
    escaped = match.group(1)
    if escaped is not None:
        return escaped
    return chr(ord(match.group()) - _STRAY_TO_INDEXED)


def indexed_path(path: str) -> str:
    """How the index spells a path read from disk (``surrogateescape``): storable text."""
    if path.isascii():
        return path
    return _TO_INDEXED_RE.sub(_indexed_char, path)


def disk_path(indexed: str) -> str:
    """The path on disk (``surrogateescape``) of a path as the index spells it."""
    if indexed.isascii():
        return indexed
    return _TO_DISK_RE.sub(_disk_char, indexed)


def docid_for(source: bytes) -> str:
    return docid_of_hash(hashlib.sha256(source).hexdigest())


def docid_of_hash(source_hash: str) -> str:
    """The docid of the source whose SHA-256 (hex) is ``source_hash``."""
    return "#" + source_hash[:8]


def sha256_hex(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def encode_path(rel_path: str) -> str:
    """A relative path as the index spells it, percent-encoded from the bytes of its name."""
    if _NOTHING_TO_ENCODE_RE.fullmatch(rel_path):  # most names: no segment to quote
        return rel_path
    return "/".join(
        quote(segment, safe=_SEGMENT_SAFE, errors="surrogateescape")
        for segment in disk_path(rel_path).split("/")
    )


def make_uri(collection: str, rel_path: str) -> str:
    return f"{SCHEME}{collection}/{encode_path(rel_path)}"


@dataclass(frozen=True, slots=True)
class Ref:
    """A parsed document reference: exactly one of docid or (collection, rel_path)."""

    raw: str
    docid: str | None = None
    collection: str | None = None
    rel_path: str | None = None
    index: str | None = None
    line: int | None = None

    @property
    def uri(self) -> str | None:
        if self.collection is None or self.rel_path is None:
            return None
        return make_uri(self.collection, self.rel_path)


def _decode_segments(path: str, raw: str) -> str:
    """A URI's path as the index spells it (bytes that are not UTF-8 name a file that is not)."""
    segments = []
    for segment in path.split("/"):
        if _BAD_PERCENT_RE.search(segment):
            raise GnoError("INVALID_INPUT", f"Invalid URI encoding in reference: {raw}")
        decoded = unquote(segment, errors="surrogateescape")
        if decoded in ("", ".", "..") or "\x00" in decoded or "/" in decoded:
            raise GnoError("INVALID_INPUT", f"Invalid path in reference: {raw}")
        segments.append(indexed_path(decoded))
    return "/".join(segments)


def parse_uri(uri: str) -> tuple[str, str, str | None]:
    """``gno://coll/a%20b.md?index=x`` -> (collection, rel_path, index)."""
    if not uri.startswith(SCHEME):
        raise GnoError("INVALID_INPUT", f"Not a gno:// URI: {uri}")
    rest = uri[len(SCHEME) :]
    index: str | None = None
    if "?" in rest:
        rest, query = rest.split("?", 1)
        values = parse_qs(query).get("index")
        index = _index_name(values[0], uri) if values else None
    if "#" in rest:
        raise GnoError("INVALID_INPUT", f"Invalid URI (unencoded '#'): {uri}")
    collection, sep, path = rest.partition("/")
    if not collection or not sep or not path:
        raise GnoError("INVALID_INPUT", f"URI must be gno://<collection>/<path>: {uri}")
    return collection.lower(), _decode_segments(path, uri), index


def _index_name(name: str, uri: str) -> str:
    """The ``?index=`` name of a URI, checked before it can reach the filesystem."""
    try:
        return validate_index_name(name)
    except GnoError:
        raise GnoError("INVALID_INPUT", f"Invalid index name in URI: {uri}") from None


def with_index(uri: str, index_name: str) -> str:
    """``uri`` naming the index it was read from (``?index=<name>``, encoded like a segment)."""
    return f"{uri}?index={quote(index_name, safe=_SEGMENT_SAFE)}"


def parse_ref(raw: str) -> Ref:
    """Parse what a user or agent passes as ``ref``.

    Accepted: ``gno://collection/path[?index=name]``, ``collection/path``,
    ``#docid`` (6 or more hex digits). A ``:N`` line suffix (N >= 1) on a path
    form is parsed into ``line``, which reads start from; a docid takes none.
    """
    ref = raw.strip()
    if not ref:
        raise GnoError("INVALID_INPUT", "Reference is empty")
    if "\x00" in ref:
        raise GnoError("INVALID_INPUT", "Reference contains a NUL byte")
    if ref.startswith("#"):
        if _LINE_SUFFIX_RE.search(ref):
            raise GnoError("INVALID_INPUT", f"A docid reference cannot take a :line suffix: {raw}")
        match = _DOCID_RE.match(ref)
        if not match:
            raise GnoError(
                "INVALID_INPUT", f"Invalid docid reference (expected # and 6+ hex digits): {raw}"
            )
        return Ref(raw=raw, docid="#" + match.group(1).lower())
    line: int | None = None
    line_match = _LINE_SUFFIX_RE.search(ref)
    if line_match:
        line = int(line_match.group(1))
        if line < 1:
            raise GnoError("INVALID_INPUT", f"Invalid line suffix (lines count from 1): {raw}")
        ref = ref[: line_match.start()]
    if ref.startswith(SCHEME):
        collection, rel_path, index = parse_uri(ref)
        return Ref(raw=raw, collection=collection, rel_path=rel_path, index=index, line=line)
    if "://" in ref:
        raise GnoError("INVALID_INPUT", f"Unsupported reference scheme: {raw}")
    collection, sep, path = ref.partition("/")
    if not sep or not collection or not path:
        raise GnoError(
            "INVALID_INPUT",
            f"Invalid reference: {raw} (expected gno://collection/path, collection/path or #docid)",
        )
    segments = path.split("/")
    if any(s in ("", ".", "..") for s in segments):
        raise GnoError("INVALID_INPUT", f"Invalid path in reference: {raw}")
    return Ref(raw=raw, collection=collection.lower(), rel_path=indexed_path(path), line=line)
