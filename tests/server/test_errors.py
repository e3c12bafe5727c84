"""The one error table: every surface derives what a code means from it."""

from __future__ import annotations

import pytest

from gno_trio.errors import CODE_KINDS, GnoError, Kind, kind_of


@pytest.mark.parametrize(
    ("code", "kind", "exit_code"),
    [
        ("INVALID_INPUT", Kind.INVALID, 1),
        ("CONFIG_NOT_FOUND", Kind.INVALID, 1),
        ("HAS_REFERENCES", Kind.INVALID, 1),
        ("MEMORY_DECISION_INVALID", Kind.INVALID, 1),
        ("NOT_FOUND", Kind.NOT_FOUND, 1),
        ("PATH_NOT_FOUND", Kind.NOT_FOUND, 1),
        ("FORBIDDEN_ROOT", Kind.FORBIDDEN, 1),
        ("CONFLICT", Kind.CONFLICT, 2),
        ("LOCKED", Kind.BUSY, 4),
        ("MEMORY_WRITE_LEASE_BUSY", Kind.BUSY, 4),
        ("MEMORY_SUPERSEDE_CONFLICT", Kind.BUSY, 4),
        ("NOT_RUNNING", Kind.NOT_RUNNING, 3),
        ("RESIDENT_ACTIVE", Kind.CONFLICT, 2),
        ("EGRESS_DENIED", Kind.FORBIDDEN, 1),
        ("SYMLINK", Kind.FORBIDDEN, 1),
        ("MODEL_NOT_FOUND", Kind.RUNTIME, 2),
        ("MEMORY_SYNC_FAILED", Kind.RUNTIME, 2),
        ("NOT_INITIALIZED", Kind.RUNTIME, 2),
        ("RUNTIME", Kind.RUNTIME, 2),
        ("STORE_UNAVAILABLE", Kind.UNAVAILABLE, 2),
        ("SOMETHING_NEW", Kind.RUNTIME, 2),
    ],
)
def test_each_code_has_one_kind_and_one_exit_code(code: str, kind: Kind, exit_code: int) -> None:
    assert kind_of(code) is kind
    assert GnoError(code, "x").kind.exit_code == exit_code


def test_the_table_uses_every_kind_and_kinds_have_distinct_labels() -> None:
    assert set(CODE_KINDS.values()) == set(Kind)  # runtime codes are listed too
    assert len({kind.label for kind in Kind}) == len(Kind)
    assert {kind.exit_code for kind in Kind} == {1, 2, 3, 4}  # 3: no such resident process
    assert Kind.FORBIDDEN.http_status == 403 and Kind.NOT_FOUND.http_status == 404
    assert Kind.UNAVAILABLE.http_status == 503  # retry later, as for a server that is away
    assert [kind for kind in Kind if kind.is_caller_error] == [
        Kind.INVALID,
        Kind.NOT_FOUND,
        Kind.FORBIDDEN,
    ]
