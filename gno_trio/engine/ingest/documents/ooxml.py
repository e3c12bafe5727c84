"""The zip container of DOCX, XLSX and PPTX files, checked before any parser opens it.

An Office file is a zip of XML parts. The parsing libraries read parts whole
(python-docx even loads every part, media included), so a few hundred
kilobytes of zeros compressed a thousandfold would become gigabytes in
memory. Each entry's declared size is checked first: Python's ``zipfile``
never inflates an entry past the size its directory declares (and fails the
CRC check when the data says otherwise), so the declared sizes are a bound
the parser cannot exceed.

Part names are case-insensitive in the packaging standard, so a part stored
as ``xl/SharedStrings.xml`` is renamed to the spelling its references use
before a parser looks it up (:func:`with_canonical_part_names`).

A password-protected Office file is not a zip at all but an OLE compound file
holding an ``EncryptedPackage`` stream: that is ``ENCRYPTED``, not damage.
"""

from __future__ import annotations

import io
import posixpath
import re
import urllib.parse
import zipfile
from typing import Final

from gno_trio.engine.ingest.documents.limits import MIB, current
from gno_trio.engine.ingest.documents.reasons import CONVERSION_FAILED, ENCRYPTED, TOO_LARGE
from gno_trio.errors import GnoError

_OLE_MAGIC: Final = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_STREAM: Final = "EncryptedPackage".encode("utf-16-le")


def check_container(rel_path: str, data: bytes, kind: str) -> bytes:
    """Refuse a container that is encrypted, not a zip, or that would inflate too far.

    ``kind`` names the format in messages ("Word document"...). Returns the
    container to parse: ``data``, or its copy with part names as referenced.
    """
    if data.startswith(_OLE_MAGIC):
        if _ENCRYPTED_STREAM in data:
            raise GnoError(ENCRYPTED, f"{rel_path}: the {kind} is password-protected")
        raise GnoError(
            CONVERSION_FAILED,
            f"{rel_path}: an old binary Office file (not a {kind} in the Office Open XML format)",
        )
    limits = current().limits
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, ValueError, EOFError) as exc:
        raise GnoError(CONVERSION_FAILED, f"{rel_path}: not a readable {kind} ({exc})") from None
    if len(entries) > limits.max_zip_entries:
        raise GnoError(
            TOO_LARGE,
            f"{rel_path}: {len(entries):,} parts in the {kind} (limit {limits.max_zip_entries:,})",
        )
    total = 0
    for entry in entries:
        total += entry.file_size
        if entry.file_size > MIB and entry.file_size > entry.compress_size * limits.max_zip_ratio:
            ratio = entry.file_size // max(entry.compress_size, 1)
            raise GnoError(
                TOO_LARGE,
                f"{rel_path}: part {entry.filename} would inflate {ratio:,}-fold to "
                f"{entry.file_size:,} bytes (a zip bomb?)",
            )
    if total > limits.max_unpacked_bytes:
        raise GnoError(
            TOO_LARGE,
            f"{rel_path}: the {kind} unpacks to {total:,} bytes "
            f"(limit {limits.max_unpacked_bytes:,})",
        )
    if not any(entry.filename == "[Content_Types].xml" for entry in entries):
        raise GnoError(CONVERSION_FAILED, f"{rel_path}: a zip file, but not a {kind}")
    return with_canonical_part_names(data)


_PART_NAME: Final = re.compile(rb'PartName="/([^"]+)"')
_TARGET: Final = re.compile(rb'Target="([^"#]+)"')


def _referenced_parts(archive: zipfile.ZipFile, names: list[str]) -> set[str]:
    """Part names as ``[Content_Types].xml`` and the relationship parts spell them."""
    referenced: set[str] = set()
    for name in names:
        if name == "[Content_Types].xml":
            found = _PART_NAME.findall(archive.read(name))
            referenced.update(urllib.parse.unquote(p.decode("utf-8", "replace")) for p in found)
        elif name.lower().endswith(".rels"):
            source_dir = posixpath.dirname(posixpath.dirname(name))  # xl/_rels/x.rels -> xl
            for target in _TARGET.findall(archive.read(name)):
                text = urllib.parse.unquote(target.decode("utf-8", "replace"))
                if "://" in text:
                    continue
                path = text[1:] if text.startswith("/") else posixpath.join(source_dir, text)
                referenced.add(posixpath.normpath(path))
    return referenced


def with_canonical_part_names(data: bytes) -> bytes:
    """The container with each part renamed to the spelling its references use.

    OPC part names are case-insensitive (ECMA-376 part 2), so a writer may
    store ``xl/SharedStrings.xml`` while the content types and relationships
    say ``xl/sharedStrings.xml``; the parsing libraries look parts up by exact
    name and would fail with ``KeyError``. Only when such a mismatch exists is
    the container rewritten (its sizes were checked by :func:`check_container`).
    """
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        present = set(names)
        referenced = _referenced_parts(archive, names) - present
        if not referenced:
            return data
        wanted = {name.lower(): name for name in referenced}
        renames = {n: wanted[n.lower()] for n in names if n.lower() in wanted}
        if not renames:
            return data
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
            for info in archive.infolist():
                target.writestr(renames.get(info.filename, info.filename), archive.read(info))
    return out.getvalue()
