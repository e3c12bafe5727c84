"""Text in whatever encoding a person's tools wrote it, or a clear "this is binary".

Order of decisions, cheapest and surest first:

1. A byte-order mark (UTF-8, UTF-32, UTF-16) names the encoding.
2. Valid UTF-8 is UTF-8 (the common case costs one decode).
3. UTF-16 without a mark shows as NUL bytes in every other position.
4. Other NUL bytes, or C0 control characters in more than 1 % of the head,
   mean binary data: no legacy text encoding uses them.
5. Mostly-UTF-8 with a few stray bytes is UTF-8 with those bytes replaced
   (a ``LOSSY`` warning): decoding it as a single-byte code page would turn
   every accented letter into two wrong ones.
6. Western single-byte text (Latin-1, Windows-1252) is recognised by how its
   non-ASCII letters sit inside otherwise ASCII words; statistical detectors
   are weak there on short files.
7. Everything else (Shift-JIS, GB18030, EUC, KOI8, Windows-125x...) goes to
   ``charset-normalizer``; no plausible encoding means binary.

Line endings are normalised to ``\\n`` so line numbers agree everywhere.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from typing import Final

from gno_trio.engine.ingest.documents.reasons import BINARY_FILE, warning
from gno_trio.errors import GnoError

_BOMS: Final = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_HEAD: Final = 64 * 1024
_TEXT_CONTROLS: Final = frozenset(b"\t\n\r\x0b\x0c\x1b")
_CONTROL_BYTES: Final = bytes(b for b in range(32) if b not in _TEXT_CONTROLS) + b"\x7f"
# Windows-1252 punctuation and symbols that Western text uses next to letters.
_WESTERN_SYMBOLS: Final = frozenset("‘’“”–—…€£¥§©®°±«»·¿¡ªº¹²³¼½¾×÷•™¢¤¦¨¯´¸¬µ¶")
_LABELS: Final = {"cp1252": "Windows-1252", "latin-1": "Latin-1"}
# Control characters no text encoding produces from real text (C0 but the
# whitespace ones and ESC, DEL, C1), and the UTF-16 noncharacters.
_NOT_TEXT: Final = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f\ufffe\uffff]")
_IN_WORD: Final = frozenset("’·")
_CP1252_UNDEFINED: Final = frozenset(b"\x81\x8d\x8f\x90\x9d")


def _binary(rel_path: str, why: str) -> GnoError:
    return GnoError(BINARY_FILE, f"{rel_path}: {why} (binary file, not indexed)")


def _normalise_newlines(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _from_bom(rel_path: str, data: bytes) -> tuple[str, tuple[str, ...]] | None:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(encoding), ()
            except UnicodeDecodeError as exc:
                raise _binary(
                    rel_path,
                    f"starts with a {encoding.upper()} byte-order mark but is not valid "
                    f"{encoding.upper()} (byte offset {exc.start + len(bom)})",
                ) from None
    return None


def _utf16_without_bom(data: bytes) -> str | None:
    """The encoding when NUL bytes fill one of the two byte positions, else ``None``."""
    head = data[: _HEAD - _HEAD % 2]
    if len(head) < 4 or len(data) % 2:
        return None
    even, odd = head[0::2], head[1::2]
    half = len(head) // 2
    if odd.count(0) >= half * 0.4 and even.count(0) <= half * 0.05:
        return "utf-16-le"
    if even.count(0) >= half * 0.4 and odd.count(0) <= half * 0.05:
        return "utf-16-be"
    return None


def looks_binary(data: bytes) -> bool:
    """Whether the head of ``data`` holds NUL bytes or too many control characters."""
    head = data[:_HEAD]
    if b"\x00" in head:
        return True
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    return controls * 100 > len(head)


def plausible_text(text: str) -> bool:
    """Whether a guessed decoding reads as text: control characters under 1 % of the head."""
    head = text[:_HEAD]
    return len(_NOT_TEXT.findall(head)) * 100 <= len(head)


def _mostly_utf8(head: bytes) -> bool:
    """Whether valid multi-byte UTF-8 outnumbers the bytes that are not UTF-8."""
    text = head.decode("utf-8", "replace")
    bad = text.count("\ufffd")
    multibyte = sum(1 for ch in text if ch > "\x7f" and ch != "\ufffd")
    return multibyte >= 2 and bad <= multibyte


def _western_encoding(head: bytes) -> str | None:
    """Windows-1252 (or Latin-1) when the head reads as Western text, else ``None``."""
    encoding = "latin-1" if any(b in _CP1252_UNDEFINED for b in head) else "cp1252"
    text = head.decode(encoding)
    letters = accented = odd = 0
    for index, ch in enumerate(text):
        if ch.isalpha():
            letters += 1
            if ch > "\x7f":
                accented += 1
                if "LATIN" not in unicodedata.name(ch, ""):
                    odd += 1
        elif ch > "\x7f" and not ch.isspace():
            # A symbol is odd unless Western text uses it, and even then when
            # it sits inside a word (how Central European letters look here).
            inside = 0 < index < len(text) - 1 and text[index - 1].isalpha()
            inside = inside and text[index + 1].isalpha() and ch not in _IN_WORD
            if ch not in _WESTERN_SYMBOLS or inside:
                odd += 1
    non_ascii = sum(1 for ch in text if ch > "\x7f")
    if not non_ascii or not letters:
        return None
    if odd * 10 > non_ascii or accented * 10 > letters * 4:
        return None
    return encoding


def _detected(data: bytes) -> tuple[str, str] | None:
    from charset_normalizer import from_bytes  # imported on first legacy file only

    for match in from_bytes(data):
        # UTF-16/32 without a mark were ruled out by the NUL-pattern test;
        # the detector's guess of them on other bytes is noise.
        if match.encoding.startswith(("utf_16", "utf_32")):
            continue
        text = str(match)
        if plausible_text(text):
            return text, match.encoding
    return None


def decode_text(rel_path: str, data: bytes) -> tuple[str, tuple[str, ...]]:
    """Decode source bytes as text in whatever encoding they are, or raise ``BINARY_FILE``.

    Returns the text (newlines normalised) and converter warnings
    (``LOW_CONFIDENCE`` when the encoding was guessed, ``LOSSY`` when bytes
    were replaced).
    """
    decoded = _from_bom(rel_path, data)
    if decoded is None and b"\x00" not in data[:_HEAD]:
        try:
            decoded = data.decode("utf-8"), ()
        except UnicodeDecodeError:
            decoded = None
    if decoded is None:
        utf16 = _utf16_without_bom(data)
        if utf16 is not None:
            try:
                text = data.decode(utf16)
            except UnicodeDecodeError:
                text = ""
            if text and plausible_text(text):
                decoded = text, (warning("LOW_CONFIDENCE", f"decoded as {utf16.upper()}"),)
    if decoded is None:
        decoded = _legacy(rel_path, data)
    text, warnings = decoded
    if "\x00" in text:
        raise _binary(rel_path, "contains NUL characters")
    return _normalise_newlines(text), warnings


def _legacy(rel_path: str, data: bytes) -> tuple[str, tuple[str, ...]]:
    # Decide on the head (a Python-level scan), then decode the whole in C.
    head = data[:_HEAD]
    if looks_binary(head):
        raise _binary(rel_path, "contains NUL bytes or control characters")
    if _mostly_utf8(head):
        text = data.decode("utf-8", "replace")
        bad = text.count("\ufffd")
        return text, (warning("LOSSY", f"{bad} bytes that are not UTF-8 were replaced"),)
    western = _western_encoding(head)
    if western is not None:
        text = data.decode(western)
        if plausible_text(text):
            note = warning("LOW_CONFIDENCE", f"decoded as {_LABELS[western]} (detected)")
            return text, (note,)
    detected = _detected(data)
    if detected is None:
        raise _binary(rel_path, "not text in any encoding recognised")
    text, encoding = detected
    return text, (warning("LOW_CONFIDENCE", f"decoded as {encoding} (detected)"),)
