"""Start-up failures of ``gno-trio serve`` read as one line with a stable code, and exit 2."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def _serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "config").mkdir(exist_ok=True)
    env = {
        **os.environ,
        "GNO_CONFIG_DIR": str(tmp_path / "config"),
        "GNO_DATA_DIR": str(tmp_path / "data"),
        "GNO_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": str(REPO_ROOT),
    }
    return subprocess.run(
        [sys.executable, "-m", "gno_trio", "serve", *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _assert_one_line_failure(run: subprocess.CompletedProcess[str], *expected: str) -> None:
    assert run.returncode == 2, run.stderr
    assert "ExceptionGroup" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    for fragment in expected:
        assert fragment in lines[0], lines[0]
    assert run.stdout == ""


def test_a_busy_port_exits_2_naming_the_address(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        run = _serve(tmp_path, "--port", str(port))
    _assert_one_line_failure(
        run, "GATEWAY_LISTEN_FAILED", f"Cannot listen on 127.0.0.1:{port}", "address already in use"
    )


def test_a_token_file_readable_by_others_exits_2_naming_its_mode(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("k" * 48 + "\n")
    os.chmod(token, 0o644)
    run = _serve(tmp_path, "--port", "0", "--mcp-token-file", str(token))
    _assert_one_line_failure(run, "GATEWAY_TOKEN_INVALID", str(token), "mode 0644, expected 0600")
