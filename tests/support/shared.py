"""Where the reference material and fixture corpora beside the repository are,
and the one rule for when they (or another outside prerequisite) are missing.

The fixture corpora and GNO's reference files live in a ``shared`` folder
next to the repository and are read in place, never copied in. A developer's
clone without them still runs the rest of the suite: a test that needs them
is skipped. Under ``CI=true`` the same test fails instead, so a CI run that
lost its fixtures, its Node clients or a tool it installs cannot go green by
skipping what it was meant to check.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NoReturn

import pytest

SHARED = Path(__file__).resolve().parents[3] / "shared"
FIXTURES = SHARED / "fixtures"
REFERENCE = SHARED / "reference"
SCHEMAS = REFERENCE / "gno-1.35" / "spec" / "output-schemas"
SEED = REFERENCE / "seed"
EVALS_CORPUS = FIXTURES / "gno-evals" / "corpus"
MCP_DOCS = FIXTURES / "mcp-docs" / "corpus"


def on_ci() -> bool:
    """Whether this run is CI's, where nothing the suite needs may be missing."""
    return os.environ.get("CI") == "true"


def unavailable(reason: str) -> NoReturn:
    """Skip the test for ``reason`` locally; fail it under ``CI=true``."""
    if on_ci():
        pytest.fail(f"{reason} (CI=true: a missing prerequisite fails, never skips)")
    pytest.skip(reason)


def required(path: Path, what: str) -> Path:
    """``path`` if it exists; otherwise the test is ``unavailable``."""
    if not path.exists():
        unavailable(f"{what} is not available: {path} is missing")
    return path


def required_program(name: str) -> str:
    """The full path of program ``name`` on PATH; otherwise the test is ``unavailable``."""
    found = shutil.which(name)
    if found is None:
        unavailable(f"{name} is not installed")
    return found
