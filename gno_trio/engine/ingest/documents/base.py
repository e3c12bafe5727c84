"""What every document converter shares: identity, the output bound, failure codes.

A format module implements :meth:`DocumentConverter.render`, writing into a
:class:`~.markdown.MarkdownWriter`; :meth:`DocumentConverter.convert` wraps it
in the rules that hold for all of them:

- output past the character limit is cut with a ``TRUNCATED`` warning;
- a :class:`GnoError` (``ENCRYPTED``, ``TOO_LARGE`` ...) passes through;
- any other exception, including ``MemoryError`` and ``RecursionError``, is
  ``CONVERSION_FAILED`` for this file: a parser's bug must not end a sync.

The converter version joins our own rendering version with the parsing
library's, so a library upgrade is visible in ``conversion.converterVersion``.
"""

from __future__ import annotations

import contextlib
import functools
import warnings as warnings_module
from collections.abc import Iterator, Mapping
from pathlib import PurePosixPath
from typing import ClassVar, Final

from gno_trio.engine.ingest.convert import Converted, extension_of
from gno_trio.engine.ingest.documents.encoding import decode_text
from gno_trio.engine.ingest.documents.markdown import MarkdownWriter, OutputFull
from gno_trio.engine.ingest.documents.reasons import CONVERSION_FAILED, warning
from gno_trio.errors import GnoError


@functools.cache
def library_version(distribution: str) -> str:
    from importlib import metadata  # costs ~0.1 s of imports: only where versions are read

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"


_MAX_LIBRARY_WARNINGS: Final = 5


@contextlib.contextmanager
def _library_warnings(into: list[str]) -> Iterator[None]:
    """Collect what the parsing library warns about as ``UNSUPPORTED_FEATURE`` warnings.

    openpyxl and python-pptx warn (on stderr, by default) about parts they
    skip, such as data validation or unknown extensions; those are facts
    about this document's conversion, so they belong in its warnings.
    """
    with warnings_module.catch_warnings(record=True) as caught:
        warnings_module.simplefilter("always")
        try:
            yield
        finally:
            _keep_warnings(caught, into)


def _keep_warnings(caught: list[warnings_module.WarningMessage], into: list[str]) -> None:
    seen: list[str] = []
    for item in caught:
        message = " ".join(str(item.message).split())[:200]
        if message not in seen:
            seen.append(message)
    into += [warning("UNSUPPORTED_FEATURE", m) for m in seen[:_MAX_LIBRARY_WARNINGS]]


def file_stem(rel_path: str) -> str:
    """The file name without folders and extension: the title of last resort."""
    return PurePosixPath(rel_path).stem


class DocumentConverter:
    """Base of the PDF, Office and HTML converters (see the module docstring)."""

    id: ClassVar[str]
    render_version: ClassVar[str] = "1"
    library: ClassVar[str | None] = None
    """Distribution name of the parsing library, folded into :attr:`version`."""
    mimes: ClassVar[Mapping[str, str]]
    """Extension (lower-case, with the dot) -> MIME type of the source."""

    @property
    def version(self) -> str:
        if self.library is None:
            return self.render_version
        return f"{self.render_version}+{self.library}.{library_version(self.library)}"

    @property
    def extensions(self) -> frozenset[str]:
        return frozenset(self.mimes)

    def render(self, rel_path: str, data: bytes, out: MarkdownWriter) -> list[str]:
        """Write the mirror of ``data`` into ``out``; return converter warnings."""
        raise NotImplementedError

    def convert(self, rel_path: str, data: bytes) -> Converted:
        ext = extension_of(rel_path)
        out = MarkdownWriter()
        warnings: list[str] = []
        try:
            with _library_warnings(warnings):
                warnings += self.render(rel_path, data, out)
        except OutputFull:
            pass
        except GnoError:
            raise
        except MemoryError:
            raise GnoError(
                CONVERSION_FAILED, f"{rel_path}: the converter ran out of memory"
            ) from None
        except RecursionError:
            raise GnoError(
                CONVERSION_FAILED, f"{rel_path}: the document is nested too deeply to convert"
            ) from None
        except Exception as exc:  # a damaged or hostile file, or a parser bug
            raise GnoError(
                CONVERSION_FAILED,
                f"{rel_path}: cannot be read as {ext or 'this type'} ({type(exc).__name__}: "
                f"{str(exc)[:200]})",
            ) from exc
        if out.truncated:
            warnings.append(
                warning("TRUNCATED", f"the text was cut at {out.size:,} characters (the limit)")
            )
        return Converted(
            markdown=out.text(),
            # A file recognised by its bytes has the format's first (main) type.
            mime=self.mimes.get(ext) or next(iter(self.mimes.values())),
            ext=ext,
            converter_id=self.id,
            converter_version=self.version,
            language=None,
            is_code=False,
            warnings=tuple(warnings),
        )


class TextDocumentConverter(DocumentConverter):
    """A format stored as text (calendars, subtitles, JSON Lines): its bytes are decoded
    by the text rules (any encoding, with their ``LOW_CONFIDENCE`` warning) before
    :meth:`render_text` reads them."""

    def render(self, rel_path: str, data: bytes, out: MarkdownWriter) -> list[str]:
        text, warnings = decode_text(rel_path, data)
        return [*warnings, *self.render_text(rel_path, text, out)]

    def render_text(self, rel_path: str, text: str, out: MarkdownWriter) -> list[str]:
        """Write the mirror of the decoded ``text`` into ``out``; return converter warnings."""
        raise NotImplementedError
