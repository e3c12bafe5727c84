"""The zip container of DOCX, XLSX and PPTX files, checked before any parser opens it.

An Office file is a zip of XML parts. The parsing libraries read parts whole
(python-docx even loads every part, media included), so a few hundred
kilobytes of zeros compressed a thousandfold would become gigabytes in
memory. Each entry's declared size is checked first: Python's ``zipfile``
never inflates an entry past the size its directory declares (and fails the
CRC check when the data says otherwise), so the declared sizes are a bound
the parser cannot exceed.

A password-protected Office file is not a zip at all but an OLE compound file
holding an ``EncryptedPackage`` stream: that is ``ENCRYPTED``, not damage.
"""

from __future__ import annotations

import io
import zipfile
from typing import Final

from gno_trio.engine.ingest.documents.limits import MIB, current
from gno_trio.engine.ingest.documents.reasons import CONVERSION_FAILED, ENCRYPTED, TOO_LARGE
from gno_trio.errors import GnoError

_OLE_MAGIC: Final = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_STREAM: Final = "EncryptedPackage".encode("utf-16-le")


def check_container(rel_path: str, data: bytes, kind: str) -> None:
    """Refuse a container that is encrypted, not a zip, or that would inflate too far.

    ``kind`` names the format in messages ("Word document"...).
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
