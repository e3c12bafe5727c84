"""``gno-trio recall`` / ``remember`` and ``collection add --memory`` as a user runs them.

Most tests call the CLI's ``main`` in this process (fast, same exit codes and
output); the lease and concurrency tests run real ``python -m gno_trio``
processes so the write lease is contended by separate processes.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gno_trio.cli import main
from gno_trio.engine import Engine
from tests.support.lease_holder import LeaseHolder
from tests.support.memory_schemas import valid_recall, valid_remember

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(__file__).resolve().parents[3] / "shared"
SCOPE = "team:web"
FACT = "The staging database is rebuilt every Sunday night."
ADD = ["remember", FACT, "--scope", SCOPE, "--add"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An environment pointing gno-trio at folders under ``tmp_path``."""
    env = {
        "GNO_CONFIG_DIR": str(tmp_path / "config"),
        "GNO_DATA_DIR": str(tmp_path / "data"),
        "GNO_CACHE_DIR": str(tmp_path / "cache"),
    }
    for name in ("GNO_MEMORY_CALLER", "GNO_MEMORY_SESSION", "GNO_WRITE_LOCK_WAIT_MS"):
        monkeypatch.delenv(name, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


@pytest.fixture
def facts_dir(tmp_path: Path, home: dict[str, str], capsys: pytest.CaptureFixture[str]) -> Path:
    folder = tmp_path / "facts"
    folder.mkdir()
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nnote\n", "utf-8")
    assert main(["collection", "add", str(folder), "--name", "facts", "--memory"]) == 0
    assert main(["collection", "add", str(notes), "--name", "notes"]) == 0
    assert main(["update"]) == 0
    capsys.readouterr()
    return folder


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    """Exit status, parsed ``--json`` stdout, and stderr of one in-process CLI call."""
    status = main(list(argv))
    captured = capsys.readouterr()
    data = json.loads(captured.out) if "--json" in argv and captured.out.strip() else captured.out
    return status, data, captured.err


def fact_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def test_collection_add_memory_flag_makes_a_memory_managed_collection(
    facts_dir: Path, home: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, listed, _ = run(capsys, "collection", "list", "--json")
    assert status == 0
    managed = {c["name"]: c["memoryManaged"] for c in listed["collections"]}
    assert managed == {"facts": True, "notes": False}
    config = yaml.safe_load((Path(home["GNO_CONFIG_DIR"]) / "index.yml").read_text("utf-8"))
    entry = next(c for c in config["collections"] if c["name"] == "facts")
    assert entry["memoryManaged"] is True


def test_remember_then_recall_with_json(
    facts_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, proposal, _ = run(capsys, "remember", FACT, "--scope", SCOPE, "--json")
    assert status == 0 and proposal["outcome"] == "candidates" and proposal["candidates"] == []
    assert fact_files(facts_dir) == []
    status, added, _ = run(capsys, "remember", FACT, "--scope", SCOPE, "--add", "--json")
    assert status == 0 and added["outcome"] == "added"
    valid_remember(added)
    assert [str(p) for p in fact_files(facts_dir)] == [added["absPath"]]
    assert added["record"]["caller"].startswith("cli:")
    assert added["record"]["session"] == f"ppid:{os.getppid()}"
    status, recalled, _ = run(capsys, "recall", "staging database", "--scope", SCOPE, "--json")
    assert status == 0
    valid_recall(recalled)
    assert [f["text"] for f in recalled["facts"]] == [FACT]
    status, text, _ = run(capsys, "recall", "staging database", "--scope", SCOPE)
    assert status == 0 and FACT in text and added["record"]["uri"] in text
    status, searched, _ = run(capsys, "search", "staging rebuilt", "--json")
    assert [hit["uri"] for hit in searched["results"]] == [added["record"]["uri"]]


def test_recall_in_an_empty_scope_teaches_how_to_remember(
    facts_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, text, _ = run(capsys, "recall", "anything", "--scope", SCOPE)
    assert status == 0
    assert "gno-trio remember" in text and f"--scope {SCOPE}" in text


def test_identity_comes_from_flags_or_environment(
    facts_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, by_flag, _ = run(
        capsys, "remember", "Fact one.", "--scope", SCOPE, "--add", "--json",
        "--caller", "ci-bot", "--session", "run-42",
    )  # fmt: skip
    assert (by_flag["record"]["caller"], by_flag["record"]["session"]) == ("ci-bot", "run-42")
    monkeypatch.setenv("GNO_MEMORY_CALLER", "env-bot")
    monkeypatch.setenv("GNO_MEMORY_SESSION", "env-session")
    _, by_env, _ = run(capsys, "remember", "Fact two.", "--scope", SCOPE, "--add", "--json")
    assert (by_env["record"]["caller"], by_env["record"]["session"]) == ("env-bot", "env-session")
    _, recalled, _ = run(capsys, "recall", "fact", "--scope", SCOPE, "--json")
    assert (recalled["receipt"]["caller"], recalled["receipt"]["session"]) == (
        "env-bot",
        "env-session",
    )


def test_text_can_come_from_stdin(
    facts_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(FACT + "\n"))
    status, added, _ = run(capsys, "remember", "-", "--scope", SCOPE, "--add", "--json")
    assert status == 0 and added["record"]["text"] == FACT


@pytest.mark.parametrize("whole_answer", [True, False], ids=["recall-json", "receipt-only"])
def test_receipt_file_fences_a_replay(
    facts_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], whole_answer: bool
) -> None:
    run(capsys, "remember", FACT, "--scope", SCOPE, "--add", "--json")
    _, recalled, _ = run(capsys, "recall", "staging", "--scope", SCOPE, "--json")
    receipt_file = tmp_path / "receipt.json"
    receipt_file.write_text(json.dumps(recalled if whole_answer else recalled["receipt"]), "utf-8")
    status, error, err = run(
        capsys, "remember", FACT, "--scope", "team:other", "--add", "--json",
        "--receipt", str(receipt_file),
    )  # fmt: skip
    assert status == 1 and error["error"] == "MEMORY_FENCED_REPLAY"
    assert "MEMORY_FENCED_REPLAY" in err
    assert len(fact_files(facts_dir)) == 1


def test_receipt_file_problems(
    facts_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "remember", FACT, "--scope", SCOPE, "--add", "--json")
    _, recalled, _ = run(capsys, "recall", "staging", "--scope", SCOPE, "--json")
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps({**recalled["receipt"], "spanHashes": []}), "utf-8")
    args = ["remember", "Other fact.", "--scope", SCOPE, "--add", "--json", "--receipt"]
    status, error, _ = run(capsys, *args, str(forged))
    assert (status, error["error"]) == (1, "MEMORY_RECEIPT_INVALID")
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps(recalled), "utf-8")
    status, error, _ = run(capsys, *args, str(stale), "--session", "another-shell")
    assert (status, error["error"]) == (1, "MEMORY_RECEIPT_INVALID")
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json", "utf-8")
    status, error, _ = run(capsys, *args, str(garbage))
    assert (status, error["error"]) == (1, "INVALID_INPUT")
    assert len(fact_files(facts_dir)) == 1


def test_derived_from_an_indexed_document_is_fenced(
    facts_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, error, _ = run(
        capsys, "remember", "Notes say hi.", "--scope", SCOPE, "--add", "--json",
        "--derived-from", "https://example.com", "--derived-from", "gno://notes/a.md",
    )  # fmt: skip
    assert (status, error["error"]) == (1, "MEMORY_FENCED_DERIVED")
    assert fact_files(facts_dir) == []


def test_supersede_with_predecessor_hash_and_conflict_exit_code(
    facts_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, added, _ = run(capsys, "remember", FACT, "--scope", SCOPE, "--add", "--json")
    uri, digest = added["record"]["uri"], added["record"]["contentHash"]
    newer = "The staging database is rebuilt every Saturday night."
    status, error, _ = run(
        capsys, "remember", newer, "--scope", SCOPE, "--supersede", uri, "--json"
    )
    assert (status, error["error"]) == (1, "MEMORY_PREDECESSOR_REQUIRED")
    status, error, _ = run(
        capsys, "remember", newer, "--scope", SCOPE, "--supersede", uri,
        "--predecessor-hash", "0" * 64, "--json",
    )  # fmt: skip
    assert (status, error["error"]) == (1, "MEMORY_PREDECESSOR_HASH_MISMATCH")
    status, done, _ = run(
        capsys, "remember", newer, "--scope", SCOPE, "--supersede", uri,
        "--predecessor-hash", digest, "--json",
    )  # fmt: skip
    assert status == 0 and done["outcome"] == "superseded"
    assert done["record"]["supersedes"] == [uri]
    status, error, _ = run(
        capsys, "remember", "Rebuilt on Mondays.", "--scope", SCOPE,
        "--decision", "supersede", "--predecessor", uri, "--predecessor-hash", digest, "--json",
    )  # fmt: skip
    assert (status, error["error"]) == (4, "MEMORY_SUPERSEDE_CONFLICT")
    _, recalled, _ = run(capsys, "recall", "staging database", "--scope", SCOPE, "--json")
    assert [f["text"] for f in recalled["facts"]] == [newer]


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        ([*ADD, "--supersede", "gno://facts/x.md"], "MEMORY_DECISION_INVALID"),
        (["remember", FACT, "--scope", SCOPE, "--decision", "upsert"], "MEMORY_DECISION_INVALID"),
        (["remember", "", "--scope", SCOPE, "--add"], "MEMORY_TEXT_REQUIRED"),
        (["remember", "x" * 5000, "--scope", SCOPE, "--add"], "MEMORY_TEXT_TOO_LARGE"),
        (["remember", FACT, "--add"], "MEMORY_SCOPES_REQUIRED"),
        (["remember", FACT, "--scope", "bad scope", "--add"], "MEMORY_SCOPES_INVALID"),
        ([*ADD, "-c", "notes"], "MEMORY_COLLECTION_UNMANAGED"),
        ([*ADD, "-c", "nope"], "MEMORY_COLLECTION_NOT_FOUND"),
        (["recall", "x", "--scope", SCOPE, "--max-facts", "0"], "MEMORY_BUDGET_INVALID"),
        (["recall", "x", "--scope", SCOPE, "--max-tokens", "9000"], "MEMORY_BUDGET_INVALID"),
        (["recall", "?!", "--scope", SCOPE], "MEMORY_QUERY_REQUIRED"),
        (["recall", "x"], "MEMORY_SCOPES_REQUIRED"),
        (["recall", "x", "--scope", SCOPE, "--caller", " "], "MEMORY_IDENTITY_REQUIRED"),
    ],
)  # fmt: skip
def test_bad_input_exits_1_with_its_code(
    facts_dir: Path, capsys: pytest.CaptureFixture[str], argv: list[str], code: str
) -> None:
    status, error, err = run(capsys, *argv, "--json")
    assert (status, error["error"]) == (1, code)
    assert code in err
    assert fact_files(facts_dir) == []


def test_collection_is_required_when_several_are_memory_managed(
    facts_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    second = tmp_path / "more-facts"
    second.mkdir()
    assert main(["collection", "add", str(second), "--name", "more", "--memory"]) == 0
    capsys.readouterr()
    status, error, _ = run(capsys, "remember", FACT, "--scope", SCOPE, "--add", "--json")
    assert (status, error["error"]) == (1, "MEMORY_COLLECTION_REQUIRED")
    status, added, _ = run(
        capsys, "remember", FACT, "--scope", SCOPE, "--add", "-c", "more", "--json"
    )
    assert status == 0 and added["record"]["uri"].startswith("gno://more/")


def test_index_failure_exits_2(
    facts_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(Engine, "sync_paths", broken)
    status, error, _ = run(capsys, "remember", FACT, "--scope", SCOPE, "--add", "--json")
    assert (status, error["error"]) == (2, "MEMORY_SYNC_FAILED")
    assert fact_files(facts_dir) == []


# ---------------------------------------------------------------------------
# Real processes: the lease and concurrent supersedes
# ---------------------------------------------------------------------------


@pytest.fixture
def holder(home: dict[str, str]) -> Iterator[LeaseHolder]:
    held = LeaseHolder(Path(home["GNO_DATA_DIR"]) / ".mcp-write.lock")
    try:
        yield held
    finally:
        held.release()


def cli(env: dict[str, str], *argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "gno_trio", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, **env},
    )


def test_writer_waits_then_exits_4_while_another_process_holds_the_lease(
    facts_dir: Path, home: dict[str, str], holder: LeaseHolder
) -> None:
    env = {**home, "GNO_WRITE_LOCK_WAIT_MS": "200"}
    busy = cli(env, "remember", FACT, "--scope", SCOPE, "--add", "--json")
    out, err = busy.communicate(timeout=30)
    assert busy.returncode == 4, err
    assert json.loads(out)["error"] == "MEMORY_WRITE_LEASE_BUSY"
    proposal = cli(env, "remember", FACT, "--scope", SCOPE, "--json")  # reads need no lease
    out, err = proposal.communicate(timeout=30)
    assert proposal.returncode == 0 and json.loads(out)["outcome"] == "candidates", err
    assert fact_files(facts_dir) == []
    holder.release()
    done = cli(env, "remember", FACT, "--scope", SCOPE, "--add", "--json")
    out, err = done.communicate(timeout=30)
    assert done.returncode == 0 and json.loads(out)["outcome"] == "added", err


def test_concurrent_supersedes_of_one_fact_from_two_processes_one_wins(
    facts_dir: Path, home: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, added, _ = run(capsys, "remember", FACT, "--scope", SCOPE, "--add", "--json")
    uri, digest = added["record"]["uri"], added["record"]["contentHash"]
    env = {**home, "GNO_WRITE_LOCK_WAIT_MS": "20000"}
    held = LeaseHolder(Path(home["GNO_DATA_DIR"]) / ".mcp-write.lock")
    try:
        racers = [
            cli(
                env,
                "remember",
                text,
                "--scope",
                SCOPE,
                "--supersede",
                uri,
                "--predecessor-hash",
                digest,
                "--json",
            )
            for text in ("Rebuilt by racer one.", "Rebuilt by racer two.")
        ]
        time.sleep(1.5)  # both are past validation and waiting on the lease
    finally:
        held.release()
    results = []
    for racer in racers:
        out, err = racer.communicate(timeout=60)
        results.append((racer.returncode, json.loads(out), err))
    statuses = sorted(status for status, _, _ in results)
    assert statuses == [0, 4], results
    winner = next(data for status, data, _ in results if status == 0)
    loser = next(data for status, data, _ in results if status == 4)
    assert winner["outcome"] == "superseded" and winner["record"]["supersedes"] == [uri]
    assert loser["error"] == "MEMORY_SUPERSEDE_CONFLICT"
    files = fact_files(facts_dir)
    assert len(files) == 2 and not any(p.name.startswith(".") for p in files)
    _, recalled, _ = run(capsys, "recall", "staging rebuilt racer", "--scope", SCOPE, "--json")
    assert [f["uri"] for f in recalled["facts"]] == [winner["record"]["uri"]]


def test_remember_without_add_says_nothing_was_stored(
    facts_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "remember", FACT, "--scope", SCOPE)
    assert status == 0 and fact_files(facts_dir) == []
    assert "Nothing stored" in err and "--add" in err
    run(capsys, *ADD)
    status, out, err = run(
        capsys, "remember", "The staging database is rebuilt weekly.", "--scope", SCOPE
    )
    assert status == 0 and "Nothing stored: 1 similar fact above" in err
    status, out, _ = run(capsys, *ADD)
    assert status == 0 and out.startswith("Already stored (nothing written): gno://facts/")


def test_cli_supersede_errors_name_cli_flags(
    facts_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (
        ["remember", "Newer fact.", "--scope", SCOPE, "--supersede", "gno://facts/x.md"],
        ["remember", "Newer fact.", "--scope", SCOPE, "--decision", "supersede"],
    ):
        status, _, err = run(capsys, *argv)
        assert status == 1 and "MEMORY_PREDECESSOR_REQUIRED" in err
        assert "--predecessor-hash" in err and "gno-trio recall" in err
        assert "predecessorHash" not in err and "gno_recall" not in err
