"""A mixed folder as people keep one, generated: documents, notes, mail, calendars,
transcripts, exports, legacy encodings and the broken or foreign files every folder has.

Every file is written by the library that writes that format in real life
(python-docx, openpyxl, python-pptx, XlsxWriter, fpdf2, the standard
library's email and mailbox, icalendar, webvtt-py, Python's own codecs), so
the folder is what a first ``update`` meets. The shares follow a real folder:
mostly notes and text, then office documents and PDFs, a tail of other
formats. Returns what each file is expected to become: indexed (with a
planted word to search for), refused with a reason code, or skipped.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from tests.cli.test_cli_encodings import SAMPLES as ENCODED
from tests.support import document_factory as docs
from tests.support import message_factory as messages
from tests.support.document_factory import excel_workbook

SHARES: dict[str, float] = {
    "note": 0.30,
    "rest": 0.08,
    "code": 0.06,
    "legacy": 0.06,
    ".pdf": 0.10,
    ".docx": 0.06,
    ".xlsx": 0.04,
    "whole-grid": 0.01,
    "shared-strings": 0.01,
    ".pptx": 0.03,
    ".html": 0.06,
    ".eml": 0.04,
    ".mbox": 0.01,
    ".ics": 0.02,
    ".vtt": 0.02,
    ".srt": 0.02,
    ".jsonl": 0.03,
    "broken": 0.03,
    "foreign": 0.02,
}


def _word(rng: random.Random) -> str:
    return "zq" + "".join(rng.choice("bcdfghjklmnprstvwxz") for _ in range(9))


def _note(word: str) -> bytes:
    return (
        f"# Field note {word[:4]}\n\nWalked the river path; saw a {word} near the weir.\n\n"
        "- water level normal\n- two herons\n"
    ).encode()


def _rest(word: str) -> bytes:
    return (
        f".. _{word}:\n\n==========\nGuide {word[:4]}\n==========\n\n"
        f"This page explains the {word} setting.\n\nUsage\n=====\n\nRun the tool.\n"
    ).encode()


def _code(word: str) -> bytes:
    return f'"""Helpers."""\n\n\ndef {word}(x: int) -> int:\n    return x * 2\n'.encode()


def _legacy(word: str, rng: random.Random) -> tuple[str, bytes]:
    codec, text, _ = ENCODED[rng.choice(sorted(ENCODED))]
    return ".txt", f"{text}\n{word}\n".encode(codec)


def build(root: Path, count: int, seed: int = 7) -> dict[str, tuple[str, str]]:
    """Write about ``count`` files under ``root``; path -> (expected outcome, planted word).

    Outcomes: ``indexed``, ``error`` (a file of a type indexed here that is
    damaged or locked) or ``skipped`` (a type not indexed).
    """
    rng = random.Random(seed)
    writers: dict[str, Callable[[str], bytes]] = {
        **{ext: docs.WRITERS[ext] for ext in (".docx", ".xlsx", ".pptx", ".html")},
        **messages.WRITERS,
        ".pdf": lambda w: docs.pdf_bytes(w, pages=rng.choice((1, 2, 5, 12))),
    }
    expected: dict[str, tuple[str, str]] = {}
    for kind, share in SHARES.items():
        for index in range(max(1, round(count * share))):
            word = _word(rng)
            folder = kind.strip(".")
            outcome = "indexed"
            if kind == "note":
                ext, data = ".md", _note(word)
            elif kind == "rest":
                ext, data = ".txt", _rest(word)
            elif kind == "code":
                ext, data = ".py", _code(word)
            elif kind == "legacy":
                ext, data = _legacy(word, rng)
            elif kind == "whole-grid":
                ext, data = ".xlsx", excel_workbook(rewrite={"xl/worksheets/sheet1.xml"})
                word = ""
            elif kind == "shared-strings":
                renamed = {"xl/sharedStrings.xml": "xl/SharedStrings.xml"}
                ext, data = ".xlsx", excel_workbook(rename=renamed)
                word = ""
            elif kind == "broken":
                ext, outcome, word = ".pdf", "error", ""
                data = (
                    docs.locked_pdf_bytes() if index % 2 else docs.pdf_bytes("cut", pages=3)[:900]
                )
            elif kind == "foreign":
                ext, outcome, word, data = ".bin", "skipped", "", docs.random_bytes(4096)
            else:
                ext, data = kind, writers[kind](word)
            rel = f"{folder}/{index:04d}{ext}"
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            expected[rel] = (outcome, word)
    return expected
