"""Transcripts and subtitles (``.vtt``, ``.srt``) -> Markdown with ``webvtt-py``.

A cue holds a few words shown for a few seconds; read one per line, a
transcript is unreadable and its chunks cut sentences apart. Cues are merged
into paragraphs, each starting with its first cue's time as an anchor
(``[00:12:03]``), so a search hit says where in the recording it is. A new
paragraph starts when the speaker changes (a WebVTT ``<v Speaker>`` voice,
or a capitalised ``NAME:`` label at the start of a cue, kept as
``Speaker:``), after a pause of :data:`PAUSE_S` seconds, or once a
paragraph is long. A cue repeating the previous one (rolling captions) is
written once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from gno_trio.engine.ingest.convert import extension_of
from gno_trio.engine.ingest.documents.base import TextDocumentConverter
from gno_trio.engine.ingest.documents.limits import Ticker
from gno_trio.engine.ingest.documents.markdown import MarkdownWriter

PAUSE_S: Final = 2.0
_PARAGRAPH_CHARS: Final = 600
# "JOHN: ..." or "DR. LEE: ...": how SubRip files (which have no voice tags) name a
# speaker; capitals only, so "Note: ..." in a line of dialogue stays text.
_LABEL: Final = re.compile(r"([A-Z][A-Z0-9.'-]+(?: [A-Z][A-Z0-9.'-]*){0,3}):\s+")


@dataclass(slots=True)
class _Paragraph:
    start: str = ""
    speaker: str | None = None
    texts: list[str] = field(default_factory=list)
    end_s: float = 0.0
    size: int = 0


def _anchor(start: str) -> str:
    return start.split(".")[0].split(",")[0]


class SubtitleConverter(TextDocumentConverter):
    id = "document/subtitles"
    library = "webvtt-py"
    mimes: ClassVar[Mapping[str, str]] = {".vtt": "text/vtt", ".srt": "application/x-subrip"}

    def render_text(self, rel_path: str, text: str, out: MarkdownWriter) -> list[str]:
        import webvtt

        kind = "srt" if extension_of(rel_path) == ".srt" else "vtt"
        captions: list[Any] = webvtt.from_buffer(text.split("\n"), format=kind).captions
        ticker = Ticker(len(captions))
        paragraph = _Paragraph()
        previous = ""

        def flush() -> None:
            if paragraph.texts:
                who = f"{paragraph.speaker}: " if paragraph.speaker else ""
                out.paragraph(f"[{_anchor(paragraph.start)}] {who}" + " ".join(paragraph.texts))

        for number, caption in enumerate(captions, 1):
            words = " ".join(str(caption.text).split())
            speaker = caption.voice or None
            label = _LABEL.match(words) if speaker is None else None
            if label:
                speaker, words = label.group(1), words[label.end() :]
            elif speaker is None and paragraph.speaker and not words.startswith("- "):
                speaker = paragraph.speaker  # a label holds until the next one
            if not words or words == previous:
                continue
            previous = words
            starts = float(caption.start_in_seconds)
            if paragraph.texts and (
                speaker != paragraph.speaker
                or starts - paragraph.end_s >= PAUSE_S
                or paragraph.size >= _PARAGRAPH_CHARS
            ):
                flush()
                paragraph = _Paragraph()
            if not paragraph.texts:
                paragraph.start, paragraph.speaker = str(caption.start), speaker
            paragraph.texts.append(words)
            paragraph.size += len(words)
            paragraph.end_s = float(caption.end_in_seconds)
            ticker.tick(number)
        flush()
        return []
