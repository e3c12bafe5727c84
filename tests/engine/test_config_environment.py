"""The process environment is read in one place, ``gno_trio/config/environment.py``,
and what it says reaches the settings that depend on it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from gno_trio.config.dirs import resolve_dirs
from gno_trio.config.environment import variable_set
from gno_trio.engine.store.lease import wait_from_env

PACKAGE = Path(__file__).resolve().parents[2] / "gno_trio"
HOME = PACKAGE / "config" / "environment.py"
READS = re.compile(r"\bos\.environ\b|\bgetenv\b|\bputenv\b|from os import .*\benviron\b")


def test_no_module_but_the_environment_module_touches_the_environment() -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != HOME
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if READS.search(line)
    ]
    assert found == [], "read the environment through gno_trio.config.environment"


def test_a_variable_set_after_start_up_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GNO_DATA_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GNO_WRITE_LOCK_WAIT_MS", "250")
    assert resolve_dirs().data == tmp_path / "elsewhere"
    assert wait_from_env(30.0) == 0.25


def test_a_variable_set_for_a_block_is_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GNO_TEST_ONLY", raising=False)
    with variable_set("GNO_TEST_ONLY", "1"):
        assert os.environ["GNO_TEST_ONLY"] == "1"
    assert "GNO_TEST_ONLY" not in os.environ
    monkeypatch.setenv("GNO_TEST_ONLY", "before")
    with variable_set("GNO_TEST_ONLY", "1"):
        pass
    assert os.environ["GNO_TEST_ONLY"] == "before"
