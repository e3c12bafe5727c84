"""The bearer token file: created once, re-read on every request, never printed.

The gateway holds no token in memory between requests. Each request re-reads
the file, so rotating the token (or deleting the file, or loosening its mode)
takes effect on the very next request; the caller compares the returned
*revision* with the previous one to notice that credentials changed and to
revoke authenticated sessions.

A usable file is a regular file (not a symlink, re-checked after opening),
readable by its owner only, holding 32-512 visible ASCII characters once
surrounding whitespace is trimmed.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import os
import secrets
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from gno_trio.errors import GnoError

MIN_TOKEN_CHARS: Final = 32
MAX_TOKEN_CHARS: Final = 512
_MAX_FILE_BYTES: Final = 4096
_GENERATED_BYTES: Final = 32  # 256 random bits
_LOOSE_MODE_BITS: Final = stat.S_IRWXG | stat.S_IRWXO
_EXHAUSTION_ERRNOS: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM})


@dataclass(frozen=True, slots=True)
class TokenFileState:
    """One reading of the token file.

    ``digest`` is the SHA-256 of the trimmed token when the file is usable,
    ``None`` otherwise (``problem`` then says why, without quoting content).
    ``revision`` changes whenever the file is replaced, rewritten, removed or
    broken, so two readings with equal revisions saw the same credentials.
    """

    digest: bytes | None
    revision: tuple[object, ...]
    problem: str | None = None
    transient: bool = False
    """The file could not be read for lack of descriptors or memory: nothing is known
    about it, so the credentials must not be taken as changed."""

    @property
    def usable(self) -> bool:
        return self.digest is not None


def _visible_ascii(text: str) -> bool:
    return text.isascii() and text.isprintable() and " " not in text


def token_digest(token: str) -> bytes:
    """SHA-256 of a token: compared in constant time, and the basis of the caller identity."""
    return hashlib.sha256(token.encode("ascii", "surrogateescape")).digest()


def _broken(problem: str, *identity: object) -> TokenFileState:
    return TokenFileState(digest=None, revision=("broken", problem, *identity), problem=problem)


def read_token_file(path: Path) -> TokenFileState:
    """Read and check the token file; never raises for a bad or missing file."""
    try:
        before = os.lstat(path)
    except FileNotFoundError:
        return _broken("missing")
    except OSError:
        return _broken("unreadable")
    if not stat.S_ISREG(before.st_mode):
        return _broken("not a regular file", before.st_ino)
    if before.st_mode & _LOOSE_MODE_BITS:
        mode = stat.S_IMODE(before.st_mode)
        return _broken(f"mode {mode:04o}, expected 0600", before.st_ino, before.st_mode)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in _EXHAUSTION_ERRNOS:
            return TokenFileState(digest=None, revision=(), problem="no descriptor", transient=True)
        return _broken("unreadable", before.st_ino)
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
            return _broken("replaced while reading", opened.st_ino)
        raw = os.read(fd, _MAX_FILE_BYTES + 1)
    except OSError:
        return _broken("unreadable", before.st_ino)
    finally:
        os.close(fd)
    identity = (opened.st_dev, opened.st_ino, opened.st_size, opened.st_mtime_ns)
    if len(raw) > _MAX_FILE_BYTES:
        return _broken("too large", *identity)
    try:
        token = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        return _broken("not ASCII", *identity)
    if not (MIN_TOKEN_CHARS <= len(token) <= MAX_TOKEN_CHARS) or not _visible_ascii(token):
        return _broken("malformed token", *identity)
    digest = token_digest(token)
    return TokenFileState(digest=digest, revision=(*identity, digest))


def create_secret_file(path: Path, what: str) -> None:
    """Create ``path`` holding 256 fresh random bits (hex) unless it exists; never overwrite.

    The secret is written to a private temporary file (mode 0600) beside it and
    then linked into place, so no reader ever sees the file empty or half
    written, and of two processes creating it at once one wins and the other
    keeps the winner's secret. ``what`` names the file in the ``GnoError``.
    """
    if os.path.lexists(path):
        return
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise GnoError("RUNTIME", f"Cannot create {what} {path}: {exc.strerror or exc}") from None
    try:
        try:
            os.write(fd, (secrets.token_hex(_GENERATED_BYTES) + "\n").encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(temporary, path)
    except FileExistsError:
        pass  # created concurrently; the caller reads and checks it like any existing file
    except OSError as exc:
        raise GnoError("RUNTIME", f"Cannot create {what} {path}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def ensure_token_file(path: Path) -> TokenFileState:
    """At start-up: create a missing file with a fresh random token, then insist it is usable.

    Creation (:func:`create_secret_file`) never overwrites an existing file
    and never lets the token be readable by others, even briefly. The token
    itself is not returned or logged. Raises ``GnoError`` when the file exists
    but cannot be used.
    """
    create_secret_file(path, "token file")
    state = read_token_file(path)
    if not state.usable:
        raise GnoError(
            "GATEWAY_TOKEN_INVALID",
            f"token file {path}: {state.problem} (it must be a regular file with mode 0600 "
            f"or stricter holding {MIN_TOKEN_CHARS}-{MAX_TOKEN_CHARS} visible ASCII characters)",
        )
    return state


def digests_match(presented: bytes, expected: bytes) -> bool:
    """Constant-time comparison of two SHA-256 digests."""
    return hmac.compare_digest(presented, expected)


__all__ = [
    "MAX_TOKEN_CHARS",
    "MIN_TOKEN_CHARS",
    "TokenFileState",
    "create_secret_file",
    "digests_match",
    "ensure_token_file",
    "read_token_file",
    "token_digest",
]
