"""The title of a reStructuredText (Sphinx) document: its first adorned section title.

reST marks a section title by underlining it (and optionally overlining it)
with a run of one punctuation character::

    =================
    Writing your docs
    =================

Markdown's ``#`` rule finds nothing in such a file, so without this the
document was titled by its file-name slug. Only the head of the file is read
(a title further down is a section, not the document's name), one line at a
time with anchored patterns, so the cost is bounded whatever the file holds.
"""

from __future__ import annotations

import re
from typing import Final

REST_EXTENSIONS: Final = frozenset({".rst", ".rest", ".txt", ".text"})
"""Extensions whose files may be reST (Sphinx projects such as Django's keep ``.txt``)."""

_HEAD_LINES: Final = 400
_ADORNMENT: Final = re.compile(r"([!-/:-@\[-`{-~])\1{2,}[ \t]*")
_ROLE: Final = re.compile(r":[\w.+-]+:`([^`<]*?)\s*(?:<[^>`]*>)?`")
_LITERAL: Final = re.compile(r"``([^`]+)``")


def _plain(title: str) -> str:
    """The title without inline markup (roles, literals, emphasis stars)."""
    title = _LITERAL.sub(r"\1", _ROLE.sub(r"\1", title))
    return title.replace("**", "").strip("* ").strip()


def rest_title(text: str) -> str | None:
    """The first over/underlined title in the head of ``text``, or ``None``."""
    lines = text.split("\n", _HEAD_LINES)[:_HEAD_LINES]
    for index in range(len(lines) - 1):
        line = lines[index].rstrip()
        under = lines[index + 1].rstrip()
        if not line.strip() or _ADORNMENT.fullmatch(line) or not _ADORNMENT.fullmatch(under):
            continue
        above = lines[index - 1].rstrip() if index else ""
        overlined = bool(above) and above[0] == under[0] and _ADORNMENT.fullmatch(above)
        if not overlined and (above or line[0].isspace()):
            continue  # a title starts a block and is not indented unless overlined
        if line.lstrip().startswith(".. ") or len(under) < min(len(line.strip()), 3):
            continue
        title = _plain(line.strip())
        if title:
            return title
    return None
