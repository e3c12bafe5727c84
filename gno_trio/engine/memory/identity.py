"""Who remembers and who recalls: the ``caller`` and ``session`` of a memory call.

Identity comes from the surface (the MCP handshake or envelope, the HTTP
session, the CLI's flags or environment), never from tool arguments. It is
written into every fact's frontmatter and bound into every receipt, so it is
cleaned the same way fact text is: a value that YAML or the text converter
would alter on the way to disk and back (a NEL line break, a NUL byte) must
not reach a file, or the stored fact would name someone else.
"""

from __future__ import annotations

from dataclasses import dataclass

from gno_trio.engine.facts import normalize_text
from gno_trio.errors import GnoError

MAX_IDENTITY_CHARS = 256


def clean_identity_part(value: str, what: str) -> str:
    """One identity value, normalised; ``MEMORY_IDENTITY_REQUIRED`` when unusable."""
    cleaned = normalize_text(value) if isinstance(value, str) else ""
    problem = None
    if not cleaned:
        problem = f"A {what} identity is required"
    elif "\x00" in cleaned:
        problem = f"The {what} identity contains a NUL character"
    elif len(cleaned) > MAX_IDENTITY_CHARS:
        problem = f"The {what} identity is longer than {MAX_IDENTITY_CHARS} characters"
    else:
        try:
            cleaned.encode("utf-8")
        except UnicodeEncodeError:
            problem = f"The {what} identity is not valid Unicode text"
    if problem is not None:
        raise GnoError("MEMORY_IDENTITY_REQUIRED", problem)
    return cleaned


@dataclass(frozen=True, slots=True)
class Identity:
    """``caller`` (the client's name) and ``session`` (the connection's identity)."""

    caller: str
    session: str

    def checked(self) -> Identity:
        """This identity as it will be stored, or ``MEMORY_IDENTITY_REQUIRED``."""
        return Identity(
            caller=clean_identity_part(self.caller, "caller"),
            session=clean_identity_part(self.session, "session"),
        )

    def check(self) -> None:
        self.checked()
