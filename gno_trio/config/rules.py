"""The value rules of ``index.yml`` fields, as attrs validators, and the error they raise.

A value of the right type can still break a rule (a port out of range, a
Host entry with a wildcard, a collection name with a capital). Each rule
raises :class:`ConfigValueError` with the field's camelCase key, so the
error reporter can name the exact key path the user has to fix.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeAlias
from urllib.parse import urlsplit

import attrs

COLLECTION_NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")

# GNO's simplified BCP-47 check; ASCII so that e.g. the Kelvin sign is no "k".
_LANGUAGE_HINT_RE = re.compile(r"[a-z]{2,3}(?:-[a-z]{2}|-[a-z]{4})?", re.IGNORECASE | re.ASCII)


class ConfigValueError(ValueError):
    """A value that has the right type but breaks a rule.

    ``path`` is relative to the object being built (empty when the failing
    value is the one being structured), so the error reporter can prefix the
    location it has already walked.
    """

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


_Validator: TypeAlias = Callable[[Any, "attrs.Attribute[Any]", Any], None]


def camel_key(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def fail(attribute: attrs.Attribute[Any], message: str) -> NoReturn:
    raise ConfigValueError((camel_key(attribute.name),), message)


def int_range(low: int, high: int | None = None) -> _Validator:
    def check(_: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
        if value is None:
            return
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            fail(attribute, f"must be {bound} (got {value})")

    return check


def non_empty(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not value.strip():
        fail(attribute, "must not be empty")


def absolute_path(_: object, attribute: attrs.Attribute[Any], value: Path) -> None:
    if not value.is_absolute():
        fail(attribute, f"must be an absolute path (got {str(value)!r})")


def language_hint(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not _LANGUAGE_HINT_RE.fullmatch(value):
        fail(attribute, f"must be a BCP-47 language tag such as en, de or zh-CN (got {value!r})")


def each_entry(check: Callable[[str], str | None]) -> _Validator:
    """Apply ``check`` (returning a problem or None) to every list entry."""

    def validate(_: object, attribute: attrs.Attribute[Any], values: Sequence[str] | None) -> None:
        for index, value in enumerate(values or ()):
            problem = check(value)
            if problem is not None:
                raise ConfigValueError((camel_key(attribute.name), index), problem)

    return validate


def host_entry_problem(value: str) -> str | None:
    """An allowed Host value must be exactly what a client sends: ``host[:port]``."""
    if not value or value != value.strip() or any(c in value for c in "*,/ \t@?#"):
        return f"must be an exact host[:port] value (got {value!r})"
    try:
        parts = urlsplit(f"http://{value}")
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return f"must be an exact host[:port] value (got {value!r})"
    if not parts.hostname or parts.netloc != value:
        return f"must be an exact host[:port] value (got {value!r})"
    return None


def origin_entry_problem(value: str) -> str | None:
    """An allowed Origin must be serialised exactly as a browser sends it."""
    problem = f"must be an exact origin such as http://localhost:3000 (got {value!r})"
    if not value or "*" in value or value != value.strip():
        return problem
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return problem
    if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
        return problem
    if parts.path or parts.query or parts.fragment or value != f"{parts.scheme}://{parts.netloc}":
        return problem
    default_port = 80 if parts.scheme == "http" else 443
    if parts.netloc != parts.netloc.lower() or port == default_port:
        return problem
    return None


def lower_name(value: object) -> object:
    return value.strip().lower() if isinstance(value, str) else value


def check_collection_name(_: object, attribute: attrs.Attribute[Any], value: str) -> None:
    if not COLLECTION_NAME_RE.fullmatch(value):
        fail(attribute, f"must match ^[a-z0-9][a-z0-9_-]{{0,63}}$ (got {value!r})")


def as_tuple(value: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(value)
