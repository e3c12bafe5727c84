"""Which store a process uses: the embedded SQLite file, or a PostgreSQL URL.

``--store`` on the command line, else ``GNO_STORE`` in the environment. The
URL is checked for its form here (scheme, no stray query keys psycopg would
reject later with a less precise message); whether the server answers is
learned when it is opened (:func:`gno_trio.engine.team.database.open_team`).
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import Final

from gno_trio.config.environment import STORE, variable
from gno_trio.errors import GnoError

STORE_ENV: Final = STORE
SCHEMES: Final = ("postgresql", "postgres")


@dataclass(frozen=True, slots=True)
class TeamStore:
    """A PostgreSQL store named by URL (``postgresql://user@host:5432/db``)."""

    url: str

    @property
    def shown(self) -> str:
        """The URL with any password replaced, fit for messages and logs."""
        parts = urllib.parse.urlsplit(self.url)
        if parts.password is None:
            return self.url
        netloc = parts.netloc.rsplit("@", 1)[1]
        user = parts.username or ""
        return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


def parse_store(value: str | None) -> TeamStore | None:
    """``None`` for the embedded default (no value, or ``sqlite``); a :class:`TeamStore` else.

    Anything else is ``INVALID_INPUT`` naming what is accepted, so a typo
    never silently falls back to a private SQLite file.
    """
    if value is None or value.strip() in ("", "sqlite"):
        return None
    text = value.strip()
    scheme = text.split(":", 1)[0].lower() if ":" in text else ""
    if scheme not in SCHEMES or not text[len(scheme) :].startswith("://"):
        raise GnoError(
            "INVALID_INPUT",
            f"Unsupported store {_redacted(text)!r}: use postgresql://[user[:password]@]host"
            "[:port]/database (or leave it unset for the embedded SQLite index)",
        )
    try:
        parts = urllib.parse.urlsplit(text)
        _ = parts.port  # raises on a port that is not a number
    except ValueError as exc:
        raise GnoError("INVALID_INPUT", f"Malformed store URL {_redacted(text)!r}: {exc}") from exc
    database = parts.path.lstrip("/")
    if not database:
        raise GnoError(
            "INVALID_INPUT",
            f"The store URL {_redacted(text)!r} names no database (postgresql://host/database)",
        )
    return TeamStore(text)


def store_from(option: str | None) -> TeamStore | None:
    """The store a command uses: its ``--store`` option, else ``GNO_STORE``."""
    return parse_store(option if option is not None else variable(STORE_ENV))


def _redacted(text: str) -> str:
    head, sep, tail = text.rpartition("@")
    if not sep or "://" not in head:
        return text
    scheme, _, credentials = head.partition("://")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{tail}" if ":" in credentials else text


__all__ = ["SCHEMES", "STORE_ENV", "TeamStore", "parse_store", "store_from"]
