"""The bundled tokenizer's prefix table in a few MiB instead of thirty.

The model package's tokenizer walks a flat table of every vocabulary piece
and every prefix of one: ``get(text)`` gives the piece id + 1, 0 for a
prefix that only keeps the walk going, None to stop it. As a dict of str
that is about 250,000 Python strings and ints: ~31 MiB held by every
process that loaded the model, to embed a handful of query words at rest.

:class:`PrefixTable` answers the same ``get`` from arrays: the sorted hashes
of the keys with their values, and the keys' UTF-8 bytes in one string. A hit
on a piece is confirmed against its text, so an answer naming a piece is
always exact; a hash shared by an unrelated text and a mere prefix can only
answer 0 where the dict said None, which makes the walk look one step
further and find nothing more (only pieces become tokens). The ids are
therefore the dict's, at about a microsecond a lookup: the word memo
(:mod:`.use_tokens`) walks each distinct word once.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


KEY_SEPARATOR: Final = "\x00"
"""Between two keys of the table's stored form (no vocabulary piece holds it)."""


class PrefixTable:
    """``get(text)``: what the package's prefix dict maps ``text`` to (see the module doc)."""

    __slots__ = ("_blob", "_hashes", "_starts", "_stops", "_values")

    def __init__(self, blob: npt.NDArray[np.uint8], values: npt.NDArray[np.int32]) -> None:
        """``blob``: every key in UTF-8, a :data:`KEY_SEPARATOR` after each but the last;
        ``values``: theirs.

        Built without holding a Python object per key at any moment (each is
        made, hashed and dropped), so loading leaves no scattered heap behind.
        """
        import numpy as np

        ends = np.flatnonzero(blob == ord(KEY_SEPARATOR))
        starts = np.concatenate(([0], ends + 1))
        stops = np.concatenate((ends, [len(blob)]))
        if len(starts) != len(values):
            raise ValueError("prefix table of unequal halves")
        self._blob = blob.tobytes()
        text = self._blob.decode("utf-8")
        hashes = array("q")
        append = hashes.append
        position = 0
        for _ in range(len(values)):
            end = text.find(KEY_SEPARATOR, position)
            end = len(text) if end < 0 else end
            append(hash(text[position:end]))
            position = end + 1
        del text
        hashed = np.frombuffer(hashes, dtype=np.int64)
        order = np.argsort(hashed, kind="stable")
        self._hashes = array("q", hashed[order].tobytes())
        self._values = array("i", values.astype(np.int32)[order].tobytes())
        pieces = values > 0
        count = int(values.max(initial=0))
        self._starts = _at_piece(starts[pieces], values[pieces], count)
        self._stops = _at_piece(stops[pieces], values[pieces], count)

    def get(self, text: str) -> int | None:
        key_hash = hash(text)
        hashes = self._hashes
        at = bisect_left(hashes, key_hash)
        found: int | None = None
        while at < len(hashes) and hashes[at] == key_hash:
            value = self._values[at]
            if not value:
                found = 0
            elif self._blob[self._starts[value - 1] : self._stops[value - 1]] == text.encode():
                return value
            at += 1
        return found

    def __len__(self) -> int:
        return len(self._hashes)


def _at_piece(
    offsets: npt.NDArray[np.int64], values: npt.NDArray[np.int32], count: int
) -> array[int]:
    """Each piece's byte offset, by piece id (a piece's value is its id + 1)."""
    import numpy as np

    by_piece = np.zeros(count, np.int64)
    by_piece[values - 1] = offsets
    return array("q", by_piece.tobytes())


__all__ = ["PrefixTable"]
