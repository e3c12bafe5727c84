"""Turn source bytes into the canonical text mirror that everything else indexes.

Every supported file goes through one :class:`Converter`, chosen by extension
from a small registry. Today all converters are "native" (the source already is
text), but callers only ever see :func:`converter_for` and :func:`convert`, so a
PDF or Office converter can be registered later without touching the walker,
the chunker or the store.

The mirror is the text a user reads back through ``gno_get``: line numbers in
search results refer to it, so decoding rules (BOM removal, newline
normalisation) live here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Final, Protocol

from gno_trio.errors import GnoError

MAX_SOURCE_BYTES: Final[int] = 100 * 1024 * 1024
"""Largest source :func:`convert` accepts (100 MiB); bigger ones fail with ``TOO_LARGE``.

A sync reads its limit from the index's ``conversion:`` settings instead.
"""


@dataclass(frozen=True, slots=True)
class Converted:
    """The result of converting one source file."""

    markdown: str
    mime: str
    ext: str
    converter_id: str
    converter_version: str
    language: str | None
    is_code: bool
    warnings: tuple[str, ...]


class Converter(Protocol):
    """What the registry needs from a converter.

    ``extensions`` are lower-case and include the dot. ``id``/``version`` are
    stored with each document so a converter upgrade can trigger re-conversion.
    """

    @property
    def id(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def extensions(self) -> frozenset[str]: ...

    def convert(self, rel_path: str, data: bytes) -> Converted: ...


def extension_of(rel_path: str) -> str:
    """Lower-case extension with the dot (``""`` when there is none).

    Asked once per walked file, so the usual name is cut with string
    methods (a ``PurePosixPath`` per file was half of a no-change sync's
    time); names pathlib would normalise first (``.``, ``..``, empty) go
    through it.
    """
    path = rel_path.replace("\\", "/")
    name = path.rstrip("/").rpartition("/")[2]
    if name in ("", ".", ".."):
        return PurePosixPath(path).suffix.lower()
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""


def decode_text(rel_path: str, data: bytes) -> tuple[str, tuple[str, ...]]:
    """Decode source bytes as text in whatever encoding they are, or raise ``BINARY_FILE``.

    The rules (byte-order marks, UTF-8, legacy code pages, binary detection)
    live in :mod:`gno_trio.engine.ingest.documents.encoding`; line endings
    come back normalised to ``\\n`` so line numbers mean the same thing on
    every platform.
    """
    from gno_trio.engine.ingest.documents.encoding import decode_text as decode

    return decode(rel_path, data)


@dataclass(frozen=True, slots=True)
class NativeTextConverter:
    """Converter for sources that already are text: the mirror is the text itself.

    ``mime_by_ext`` decides which extensions it claims; ``language_by_ext``
    marks the ones that are program source (they are chunked on declarations).
    """

    id: str
    version: str
    mime_by_ext: Mapping[str, str]
    language_by_ext: Mapping[str, str]

    @property
    def extensions(self) -> frozenset[str]:
        return frozenset(self.mime_by_ext)

    def convert(self, rel_path: str, data: bytes) -> Converted:
        ext = extension_of(rel_path)
        mime = self.mime_by_ext.get(ext)
        if mime is None:
            raise GnoError(
                "UNSUPPORTED_TYPE", f"{rel_path}: converter {self.id} does not handle '{ext}'"
            )
        text, warnings = decode_text(rel_path, data)
        language = self.language_by_ext.get(ext)
        return Converted(
            markdown=text,
            mime=mime,
            ext=ext,
            converter_id=self.id,
            converter_version=self.version,
            language=language,
            is_code=language is not None,
            warnings=warnings,
        )


_MARKDOWN_MIMES: Final = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".mdx": "text/markdown",
}

# Prose and configuration text. Logs are left out on purpose: they are usually
# large, repetitive and machine-written, so they drown real notes in results.
# ``.env`` is left out because it typically holds secrets.
_PLAINTEXT_MIMES: Final = {
    ".txt": "text/plain",
    ".text": "text/plain",
    ".rst": "text/x-rst",
    ".org": "text/org",
    ".adoc": "text/asciidoc",
    ".json": "application/json",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".ini": "text/plain",
    ".cfg": "text/plain",
}

# extension -> (language, mime)
_CODE_TYPES: Final = {
    ".py": ("python", "text/x-python"),
    ".ts": ("typescript", "text/x-typescript"),
    ".tsx": ("tsx", "text/x-typescript"),
    ".js": ("javascript", "text/javascript"),
    ".jsx": ("jsx", "text/javascript"),
    ".mjs": ("javascript", "text/javascript"),
    ".cjs": ("javascript", "text/javascript"),
    ".go": ("go", "text/x-go"),
    ".rs": ("rust", "text/x-rust"),
    ".swift": ("swift", "text/x-swift"),
    ".c": ("c", "text/x-c"),
    ".h": ("c", "text/x-c"),
    ".cc": ("cpp", "text/x-c++"),
    ".cpp": ("cpp", "text/x-c++"),
    ".hpp": ("cpp", "text/x-c++"),
    ".java": ("java", "text/x-java"),
    ".kt": ("kotlin", "text/x-kotlin"),
    ".rb": ("ruby", "text/x-ruby"),
    ".php": ("php", "text/x-php"),
    ".cs": ("csharp", "text/x-csharp"),
    ".sh": ("shell", "text/x-shellscript"),
    ".bash": ("shell", "text/x-shellscript"),
    ".zsh": ("shell", "text/x-shellscript"),
    ".sql": ("sql", "text/x-sql"),
    ".lua": ("lua", "text/x-lua"),
    ".scala": ("scala", "text/x-scala"),
}

MARKDOWN = NativeTextConverter("native/markdown", "1", _MARKDOWN_MIMES, {})
PLAINTEXT = NativeTextConverter("native/plaintext", "1", _PLAINTEXT_MIMES, {})
CODE = NativeTextConverter(
    "native/code",
    "1",
    {ext: mime for ext, (_, mime) in _CODE_TYPES.items()},
    {ext: language for ext, (language, _) in _CODE_TYPES.items()},
)

REGISTRY: Final[tuple[Converter, ...]] = (MARKDOWN, PLAINTEXT, CODE)
"""Converters in priority order: the first one claiming an extension wins."""


def _index_by_extension(converters: tuple[Converter, ...]) -> dict[str, Converter]:
    by_ext: dict[str, Converter] = {}
    for converter in converters:
        for ext in converter.extensions:
            by_ext.setdefault(ext, converter)
    return by_ext


_BY_EXTENSION: Final = _index_by_extension(REGISTRY)


def supported_extensions() -> frozenset[str]:
    """Every extension some converter accepts (lower-case, with the dot)."""
    return frozenset(_BY_EXTENSION)


def converter_for(rel_path: str) -> Converter | None:
    """The converter for this path, or ``None`` when its extension is not supported.

    Must be cheap and must not raise: it is asked about every file a sync sees.
    """
    return _BY_EXTENSION.get(extension_of(rel_path))


def convert(rel_path: str, data: bytes, *, max_bytes: int | None = None) -> Converted:
    """Convert one source file to its text mirror.

    ``max_bytes`` defaults to :data:`MAX_SOURCE_BYTES` (read at call time).
    Raises :class:`GnoError` with code ``UNSUPPORTED_TYPE``,
    ``TOO_LARGE`` or ``BINARY_FILE``.
    """
    converter = converter_for(rel_path)
    if converter is None:
        ext = extension_of(rel_path) or "(no extension)"
        raise GnoError("UNSUPPORTED_TYPE", f"{rel_path}: unsupported file type {ext}")
    limit = MAX_SOURCE_BYTES if max_bytes is None else max_bytes
    if len(data) > limit:
        raise GnoError(
            "TOO_LARGE",
            f"{rel_path}: {len(data)} bytes exceeds the {limit}-byte limit",
            details={"size": len(data), "limit": limit},
        )
    return converter.convert(rel_path, data)
