"""A test that needs something from outside the repository skips on a
developer's clone without it, and fails under ``CI=true``: a CI run that lost
its fixture corpora, reference files, Node clients or a program it installs
must go red, not green by skipping what it was meant to check.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent

# A test module as a clone without ``../shared`` would run it.
NEEDS_A_CORPUS = """
from pathlib import Path

from tests.support.shared import required


def test_reads_the_corpus(tmp_path: Path) -> None:
    corpus = required(tmp_path / "shared" / "fixtures" / "gno-evals" / "corpus", "the corpus")
    assert corpus.is_dir()
"""

# Skips that depend on the machine itself, never on something CI installs:
# the platform, the user, the network interfaces, an optional system font.
MACHINE_SKIPS = {
    "test_cli_completion.py": 2,  # bash is not installed
    "test_documents_convert.py": 1,  # no Unicode TrueType font
    "test_engine_sync.py": 1,  # root reads a chmod 000 file
    "test_http_guards.py": 1,  # no non-loopback address
    "test_nurseries_supervisor.py": 1,  # no POSIX signals
    "test_sync_workers.py": 1,  # no /proc
}
SKIP = re.compile(r"pytest\.skip\(|\.skipif\(|importorskip\(|mark\.skip\b")


def _run(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_tiny.py").write_text(NEEDS_A_CORPUS, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = str(REPO)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_tiny.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_missing_corpus_skips_on_a_developer_clone(tmp_path: Path) -> None:
    done = _run(tmp_path, None)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout


def test_a_missing_corpus_fails_under_ci(tmp_path: Path) -> None:
    done = _run(tmp_path, "true")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed" in done.stdout
    assert "the corpus is not available" in done.stdout


def test_every_other_skip_is_about_the_machine() -> None:
    """Anything the suite needs from outside goes through ``tests.support.shared``."""
    mine = {Path(__file__).resolve(), (TESTS / "support" / "shared.py").resolve()}
    found = {
        path.name: count
        for path in sorted(TESTS.rglob("*.py"))
        if "node_modules" not in path.parts
        and path.resolve() not in mine
        and (count := len(SKIP.findall(path.read_text(encoding="utf-8"))))
    }
    assert found == MACHINE_SKIPS, "skip through tests.support.shared.required or unavailable"
