"""Text in whatever encoding a person's tools wrote it, or a clear "this is binary".

Order of decisions, cheapest and surest first:

1. A byte-order mark (UTF-8, UTF-32, UTF-16) names the encoding.
2. Valid UTF-8 is UTF-8 (the common case costs one decode; a declaration
   saying otherwise is taken to be stale, as editors re-save files in UTF-8).
3. A charset the file declares: a PEP 263 ``coding:`` cookie on one of the
   first two lines, an XML declaration's ``encoding``, an HTML
   ``<meta charset>`` (see :func:`declared_charset`).
4. UTF-16 without a mark shows in one of the two byte positions: NUL bytes
   (Latin text) or a couple of values (the Unicode block of the script).
5. Other NUL bytes, or C0 control characters in more than 1 % of the head,
   mean binary data: no legacy text encoding uses them.
6. Mostly-UTF-8 with a few stray bytes is UTF-8 with those bytes replaced
   (a ``LOSSY`` warning): decoding it as a single-byte code page would turn
   every accented letter into two wrong ones.
7. Western single-byte text (Latin-1, Windows-1252) is recognised by how its
   non-ASCII letters sit inside otherwise ASCII words; statistical detectors
   are weak there on short files. Words made mostly of "accented letters"
   are another alphabet read wrongly (Cyrillic in Windows-1251 reads as
   ``Ïðîâåðêà``), and the six letters where Turkish Windows-1254 differs
   from Windows-1252 (ğ ı ş for ð ý þ) decide between those two.
8. Everything else (Shift-JIS, GB18030, EUC, KOI8, Windows-125x...) goes to
   ``charset-normalizer``; no plausible encoding means binary.

Line endings are normalised to ``\\n`` so line numbers agree everywhere.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections import Counter
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
_LABELS: Final = {"cp1252": "Windows-1252", "latin-1": "Latin-1", "cp1254": "Windows-1254"}
# Control characters no text encoding produces from real text (C0 but the
# whitespace ones and ESC, DEL, C1), and the UTF-16 noncharacters.
_NOT_TEXT: Final = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f\ufffe\uffff]")
_IN_WORD: Final = frozenset("’·")
_CP1252_UNDEFINED: Final = frozenset(b"\x81\x8d\x8f\x90\x9d")
# Where Windows-1254 (Turkish) differs from Windows-1252: Ğ İ Ş ğ ı ş for Ð Ý Þ ð ý þ.
_TURKISH_BYTES: Final = frozenset(b"\xd0\xdd\xde\xf0\xfd\xfe")
# Letters Icelandic and Faroese (the Windows-1252 users of ð þ ý) write and Turkish does not.
_NORDIC_BYTES: Final = frozenset(b"\xc1\xc6\xcd\xd3\xda\xe1\xe6\xed\xf3\xfa")
_WORD: Final = re.compile(r"[^\W\d_]+")
_COOKIE: Final = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)
_XML_DECLARATION: Final = re.compile(rb"^<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9._:-]+)")
_META_CHARSET: Final = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.I)
_DECLARED_HEAD: Final = 4096
# Symbols of the Windows code pages (Latin-1 signs, general punctuation, €, ™)
# standing between two letters; ’ and · do so in real words (don’t, l·l).
_HOLE: Final = re.compile(
    r"(?<=[^\W\d_])[\x80-\xb6\xb8-\xbf\xd7\xf7\u02c6\u02dc\u2010-\u2018\u201a-\u206f"
    r"\u20ac\u2122](?=[^\W\d_])"
)
_READINGS: Final = 4


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


def _codec(name: bytes) -> str | None:
    try:
        return codecs.lookup(name.decode("ascii")).name
    except (LookupError, UnicodeDecodeError):
        return None


def declared_charset(data: bytes, *, html: bool = False) -> str | None:
    """The encoding the file names for itself, as a Python codec name, or ``None``.

    Read from a PEP 263 ``coding:`` cookie on the first two lines, an XML
    declaration, and (``html``, or any file that is not UTF-8) a
    ``<meta charset>`` in the first 4 KiB. A declared UTF-16 or UTF-32 is
    ignored: a header readable as ASCII cannot be in either.
    """
    head = data[:_DECLARED_HEAD]
    two_lines = b"\n".join(head.split(b"\n", 2)[:2])
    found = _COOKIE.search(two_lines) or _XML_DECLARATION.match(head)
    found = found or (_META_CHARSET.search(head) if html or b"<" in head else None)
    encoding = _codec(found.group(1)) if found else None
    if encoding is None or encoding.startswith(("utf-16", "utf-32")):
        return None
    return encoding


def _utf16_without_bom(data: bytes) -> str | None:
    """The UTF-16 byte order whose high bytes look like text's, else ``None``.

    In UTF-16 text the high byte of each character names its Unicode block:
    NUL for ASCII (spaces, digits, punctuation) and one or two values for a
    script (0x04 for Cyrillic, 0x06 for Arabic), while the low bytes vary and
    are rarely NUL. Single-byte text shows no such split.
    """
    head = data[: _HEAD - _HEAD % 2]
    if len(head) < 4 or len(data) % 2:
        return None
    even, odd = head[0::2], head[1::2]
    half = len(head) // 2
    for high, low, encoding in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
        if low.count(0) > half * 0.05:
            continue
        if high.count(0) >= half * 0.4:
            return encoding
        common = Counter(high).most_common(2)
        if any(value == 0 for value, _ in common) and sum(n for _, n in common) >= half * 0.9:
            return encoding
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


def _another_alphabet(text: str) -> bool:
    """Whether words are mostly "accented letters": Cyrillic or Greek read as Latin.

    Western languages put one or two accented letters in a word of ASCII ones
    (``größer``, ``ações``); a word of three or more, most of its letters,
    is a single-byte code page of another alphabet decoded as Windows-1252.
    """
    accented_words = foreign = 0
    for word in _WORD.findall(text):
        accented = sum(1 for ch in word if ch > "\x7f")
        if accented:
            accented_words += 1
            if accented >= 3 and accented * 10 >= len(word) * 6:
                foreign += 1
    return foreign * 5 > accented_words


def _western_encoding(head: bytes) -> str | None:
    """Windows-1252, Latin-1 or Windows-1254 when the head reads as Western text, else ``None``."""
    encoding = "latin-1" if any(b in _CP1252_UNDEFINED for b in head) else "cp1252"
    turkish = sum(1 for b in head if b in _TURKISH_BYTES)
    nordic = sum(1 for b in head if b in _NORDIC_BYTES)
    if encoding == "cp1252" and turkish > nordic and not any(b in b"\x8e\x9e" for b in head):
        encoding = "cp1254"
    text = head.decode(encoding)
    if _another_alphabet(text):
        return None
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


def _holes_in_words(text: str) -> int:
    """Symbols standing between two letters: a letter the code page got wrong (``poci¹giem``)."""
    return len(_HOLE.findall(text[:_HEAD]))


def _detected(data: bytes) -> tuple[str, str] | None:
    """The detector's best plausible reading, among its first few the one with fewest holes.

    ``charset-normalizer`` ranks by statistics over the whole file; on text
    that is mostly ASCII (a README with a Polish paragraph) its first pick
    may be Windows-1252, which leaves symbols inside words where the letters
    of the right code page belong.
    """
    from charset_normalizer import from_bytes  # imported on first legacy file only

    readings: list[tuple[int, int, str, str]] = []
    for rank, match in enumerate(from_bytes(data)):
        # UTF-16/32 without a mark were ruled out by the NUL-pattern test;
        # the detector's guess of them on other bytes is noise.
        if match.encoding.startswith(("utf_16", "utf_32")):
            continue
        text = str(match)
        if plausible_text(text):
            readings.append((_holes_in_words(text), rank, text, match.encoding))
        if len(readings) >= _READINGS:
            break
    if not readings:
        return None
    _, _, text, encoding = min(readings, key=lambda r: (r[0], r[1]))
    return text, encoding


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


def _declared(data: bytes) -> tuple[str, tuple[str, ...]] | None:
    encoding = declared_charset(data)
    if encoding is None or encoding == "utf-8":
        return None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        return None  # the declaration is wrong: judge the bytes themselves
    return (text, ()) if plausible_text(text) else None


def _legacy(rel_path: str, data: bytes) -> tuple[str, tuple[str, ...]]:
    # Decide on the head (a Python-level scan), then decode the whole in C.
    declared = _declared(data)
    if declared is not None:
        return declared
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
