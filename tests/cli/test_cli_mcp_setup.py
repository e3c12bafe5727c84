"""``mcp install|uninstall|status``: gno-trio in each MCP client's own configuration file.

Every run has ``HOME``, ``XDG_CONFIG_HOME`` and the working directory in a
temporary folder (``APPDATA`` unset), so no real client configuration is
read or written. The entry written is then started exactly as a client
would start it, to show that it reaches the same index.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gno_trio.cli import main
from gno_trio.cli.clients import jsonc
from tests.conftest import write_corpus
from tests.support.cli_support import Cli, make_cli
from tests.support.stdio_session import ProcessSession, open_stdio_process

OTHER = {"command": "/usr/bin/other-server", "args": ["--flag"]}


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    sandbox = make_cli(tmp_path)
    notes = write_corpus(sandbox.home / "notes", {"okapi.md": "# Okapi\n\nokapi facts\n"})
    sandbox.run("init", str(notes), "--name", "notes")
    sandbox.run("update")
    return sandbox


@pytest.fixture
def project(cli: Cli) -> Path:
    folder = cli.home / "project"
    folder.mkdir()
    return folder


def _expected_file(cli: Cli, project: Path, target: str, scope: str) -> Path:
    config = cli.home / ".config"
    return {
        ("claude-desktop", "user"): config / "Claude" / "claude_desktop_config.json",
        ("claude-code", "user"): cli.home / ".claude.json",
        ("claude-code", "project"): project / ".mcp.json",
        ("codex", "user"): cli.home / ".codex" / "config.toml",
        ("codex", "project"): project / ".codex" / "config.toml",
        ("cursor", "user"): cli.home / ".cursor" / "mcp.json",
        ("cursor", "project"): project / ".cursor" / "mcp.json",
        ("zed", "user"): config / "zed" / "settings.json",
        ("windsurf", "user"): cli.home / ".codeium" / "windsurf" / "mcp_config.json",
        ("opencode", "user"): config / "opencode" / "opencode.json",
        ("opencode", "project"): project / "opencode.json",
        ("vscode", "user"): config / "Code" / "User" / "mcp.json",
        ("vscode", "project"): project / ".vscode" / "mcp.json",
    }[(target, scope)]


def test_cursor_project_install_done_when(cli: Cli, project: Path) -> None:
    preview = cli.json(
        "mcp", "install", "--target", "cursor", "--scope", "project", "--dry-run", cwd=project
    )
    entry = preview["installed"]["serverEntry"]
    assert os.path.isabs(entry["command"]) and Path(entry["command"]).exists()
    assert entry["args"][-1] == "mcp" and "--index" in entry["args"]
    assert preview["installed"]["dryRun"] is True
    assert not (project / ".cursor").exists()

    target = project / ".cursor" / "mcp.json"
    target.parent.mkdir()
    target.write_text(json.dumps({"mcpServers": {"other": OTHER}}, indent=4) + "\n")
    before = target.read_text()
    done = cli.json("mcp", "install", "--target", "cursor", "--scope", "project", cwd=project)
    assert done["installed"]["action"] == "added"
    written = json.loads(target.read_text())
    assert written["mcpServers"]["other"] == OTHER
    assert written["mcpServers"]["gno"]["command"] == entry["command"]
    assert Path(done["installed"]["backupPath"]).read_text() == before


async def test_the_installed_entry_starts_a_server_on_the_same_index(
    cli: Cli, project: Path
) -> None:
    cli.run("mcp", "install", "-t", "claude-code", "--scope", "project", cwd=project)
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["gno"]
    assert entry["type"] == "stdio"
    # A client passes only the entry's env; PYTHONPATH keeps this checkout's code in use.
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": cli.env["PYTHONPATH"], **entry["env"]}
    command = [entry["command"], *entry["args"]]
    assert command[-1] == "mcp"
    async with open_stdio_process(command, env=env) as process:
        session = ProcessSession(process)
        await session.initialize("installed")
        answer = await session.tool("gno_search", {"query": "okapi"})
    assert [hit["uri"] for hit in answer["structuredContent"]["results"]] == [
        "gno://notes/okapi.md"
    ]


TARGET_SCOPES = [
    ("claude-desktop", "user"),
    ("claude-code", "user"),
    ("claude-code", "project"),
    ("codex", "user"),
    ("codex", "project"),
    ("cursor", "user"),
    ("cursor", "project"),
    ("zed", "user"),
    ("windsurf", "user"),
    ("opencode", "user"),
    ("opencode", "project"),
    ("vscode", "user"),
    ("vscode", "project"),
]


def _servers(path: Path, target: str) -> dict[str, Any]:
    if target == "codex":
        return dict(tomllib.loads(path.read_text()).get("mcp_servers", {}))
    key = {"zed": "context_servers", "opencode": "mcp", "vscode": "servers"}.get(
        target, "mcpServers"
    )
    return dict(jsonc.loads(path.read_text()).get(key, {}))


class InProcess:
    """``gno-trio`` run through ``main()`` in this process, in the sandbox's environment.

    The same exit codes and output as the subprocess, in a fraction of the
    time, for the tests that run dozens of commands.
    """

    def __init__(self, cli: Cli, cwd: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
        for name in [n for n in os.environ if n.startswith(("GNO_", "XDG_")) or n == "APPDATA"]:
            monkeypatch.delenv(name)
        for name, value in cli.env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.chdir(cwd)
        self.capsys = capsys

    def json(self, *argv: str, code: int = 0) -> Any:
        assert main([*argv, "--json"]) == code
        return json.loads(self.capsys.readouterr().out)

    def run(self, *argv: str, code: int = 0) -> str:
        assert main(list(argv)) == code
        return str(self.capsys.readouterr().err)


@pytest.mark.parametrize(("target", "scope"), TARGET_SCOPES)
def test_install_status_uninstall_for_every_target(
    cli: Cli,
    project: Path,
    target: str,
    scope: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    here = InProcess(cli, project, monkeypatch, capsys)
    path = _expected_file(cli, project, target, scope)
    done = here.json("mcp", "install", "-t", target, "--scope", scope, "--enable-write")[
        "installed"
    ]
    assert done["configPath"] == str(path) and done["action"] == "created"
    gno = _servers(path, target)["gno"]
    launch = done["serverEntry"]
    if target == "opencode":
        assert gno == {
            "type": "local",
            "command": [launch["command"], *launch["args"]],
            "enabled": True,
            "environment": launch["env"],
        }
    else:
        assert gno["command"] == launch["command"] and gno["args"] == launch["args"]
        assert gno["env"] == launch["env"]
        assert gno.get("type") == {"claude-code": "stdio", "vscode": "stdio"}.get(target)
        assert gno.get("source") == ("custom" if target == "zed" else None)
    assert launch["args"][-2:] == ["mcp", "--enable-write"]

    status = here.json("mcp", "status", "-t", target, "--scope", scope)
    assert status["summary"] == {"configured": 1, "total": 1}
    assert status["targets"][0]["serverEntry"] == launch

    refused = here.run("mcp", "install", "-t", target, "--scope", scope, code=1)
    assert "--force" in refused
    forced = here.json("mcp", "install", "-t", target, "--scope", scope, "--force")
    assert forced["installed"]["action"] == "replaced"

    gone = here.json("mcp", "uninstall", "-t", target, "--scope", scope)
    assert gone["uninstalled"]["action"] == "removed"
    assert "gno" not in _servers(path, target)
    again = here.json("mcp", "uninstall", "-t", target, "--scope", scope)
    assert again["uninstalled"]["action"] == "not_found"


def test_zed_settings_keep_their_comments_and_other_servers(cli: Cli, project: Path) -> None:
    settings_file = cli.home / ".config" / "zed" / "settings.json"
    settings_file.parent.mkdir(parents=True)
    original = (
        "// Zed settings\n"
        "{\n"
        '  "theme": "One Dark", // my theme\n'
        "  /* servers below */\n"
        '  "context_servers": {\n'
        '    "other": {"source": "custom", "command": "/usr/bin/other", "args": []},\n'
        "  },\n"
        '  "vim_mode": true,\n'
        "}\n"
    )
    settings_file.write_text(original)
    cli.run("mcp", "install", "-t", "zed", cwd=project)
    edited = settings_file.read_text()
    assert edited.startswith('// Zed settings\n{\n  "theme": "One Dark", // my theme\n')
    assert '"vim_mode": true,\n}' in edited
    servers = jsonc.loads(edited)["context_servers"]
    assert set(servers) == {"other", "gno"}
    cli.run("mcp", "uninstall", "-t", "zed", cwd=project)
    assert settings_file.read_text() == original


def test_codex_toml_keeps_comments_and_other_tables(cli: Cli, project: Path) -> None:
    config = cli.home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = '# my codex\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "/usr/bin/x"\n'
    config.write_text(original)
    cli.run("mcp", "install", "-t", "codex", "--tool-profile", "core", cwd=project)
    text = config.read_text()
    assert text.startswith(original)
    parsed = tomllib.loads(text)
    assert parsed["model"] == "o3" and parsed["mcp_servers"]["other"] == {"command": "/usr/bin/x"}
    gno = parsed["mcp_servers"]["gno"]
    assert gno["args"][-3:] == ["mcp", "--tool-profile", "core"]
    assert set(gno["env"]) == {"GNO_DATA_DIR", "GNO_CACHE_DIR"}
    cli.run("mcp", "uninstall", "-t", "codex", cwd=project)
    assert tomllib.loads(config.read_text()) == tomllib.loads(original)
    assert config.read_text().startswith(original.rstrip("\n"))


def test_the_entry_pins_index_config_and_folders(cli: Cli, project: Path) -> None:
    launch = cli.json(
        "--index", "work", "mcp", "install", "-t", "cursor", "--dry-run", cwd=project
    )["installed"]["serverEntry"]
    args = launch["args"]
    assert args[args.index("--index") + 1] == "work"
    assert args[args.index("--config") + 1] == str(cli.config_file)
    assert launch["env"] == {
        "GNO_DATA_DIR": str(cli.data_dir),
        "GNO_CACHE_DIR": cli.env["GNO_CACHE_DIR"],
    }
    note = cli.run("--index", "work", "mcp", "install", "-t", "cursor", "--dry-run", cwd=project)
    assert "run `gno-trio --index work init`" in note.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("-t", "zed", "--scope", "project"), "Zed has no project scope"),
        (("-t", "claude-desktop", "--scope", "project"), "Claude Desktop has no project scope"),
        (("-t", "cursr"), "did you mean cursor?"),
        (("-t", "cursor", "--tool-profile", "tiny"), "Unknown tool profile"),
    ],
)
def test_bad_install_requests_exit_1_and_write_nothing(
    cli: Cli, project: Path, args: tuple[str, ...], needle: str
) -> None:
    done = cli.run("mcp", "install", *args, cwd=project, code=1)
    assert needle in done.stderr
    assert not any(project.iterdir()) and not (cli.home / ".cursor").exists()


def test_an_unreadable_config_is_left_alone(cli: Cli, project: Path) -> None:
    path = project / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"servers": {oops}}')
    done = cli.run("mcp", "install", "-t", "vscode", "--scope", "project", cwd=project, code=1)
    assert "Cannot parse" in done.stderr and "Nothing was written" in done.stderr
    assert path.read_text() == '{"servers": {oops}}'
    assert not path.with_name("mcp.json.bak").exists()
    status = cli.json("mcp", "status", "-t", "vscode", cwd=project)
    assert any("Cannot parse" in row.get("error", "") for row in status["targets"])


def test_status_lists_every_target_and_scope(cli: Cli, project: Path) -> None:
    status = cli.json("mcp", "status", cwd=project)
    pairs = {(row["target"], row["scope"]) for row in status["targets"]}
    assert pairs == set(TARGET_SCOPES)
    assert status["summary"] == {"configured": 0, "total": len(TARGET_SCOPES)}
    human = cli.run("mcp", "status", cwd=project).stdout
    assert human.rstrip().endswith(f"0/{len(TARGET_SCOPES)} targets configured")


def test_mcp_on_a_terminal_says_what_it_is(cli: Cli) -> None:
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "gno_trio", "mcp"],
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli.env,
            cwd=cli.home,
        )
        os.write(controller, b"\x04")  # Ctrl+D: the end of input, read once it starts
        out, err = process.communicate(timeout=30)
    finally:
        os.close(controller)
        os.close(terminal)
    said = err.decode()
    assert "speaks the Model Context Protocol" in said and "Ctrl+D or Ctrl+C" in said
    assert "mcp install --target" in said
    assert out == b""
    assert process.returncode == 0


def test_mcp_from_a_client_stays_quiet(cli: Cli) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gno_trio", "mcp"],
        input=b"",
        capture_output=True,
        env=cli.env,
        cwd=cli.home,
        timeout=30,
        check=False,
    )
    assert done.stdout == b"" and b"speaks the Model Context Protocol" not in done.stderr


# ---------------------------------------------------------------------------
# The JSON-with-comments editor
# ---------------------------------------------------------------------------

_keys = st.text(st.characters(codec="utf-8", exclude_characters='"\\'), min_size=1, max_size=6)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.text(max_size=8))
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3)),
    max_leaves=8,
)
_gaps = st.sampled_from(["", " ", "\n  ", " // note\n  ", " /* c */ ", "\t"])


def _decorated(value: dict[str, Any], gaps: list[str], trailing: bool) -> str:
    """``value`` as JSON text with comments and blank space between its members."""
    members = [
        f"{gaps[i % len(gaps)]}{json.dumps(k)}: {json.dumps(v)}"
        for i, (k, v) in enumerate(value.items())
    ]
    tail = "," if trailing and members else ""
    return "{" + ",".join(members) + tail + "\n}"


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(_keys, _values, max_size=5),
    st.lists(_gaps, min_size=1, max_size=4),
    st.booleans(),
    st.dictionaries(_keys, _values, max_size=3),
    _values,
)
def test_jsonc_edits_touch_one_member_only(
    document: dict[str, Any],
    gaps: list[str],
    trailing: bool,
    servers: dict[str, Any],
    entry: Any,
) -> None:
    document = {k: v for k, v in document.items() if k != "mcpServers"}
    document["mcpServers"] = servers
    text = _decorated(document, gaps, trailing)
    assert jsonc.loads(text) == document
    edited = jsonc.set_member(text, ["mcpServers", "gno"], entry)
    expected = dict(document, mcpServers=dict(servers, gno=entry))
    assert jsonc.loads(edited) == expected
    for comment in ("// note", "/* c */"):
        assert edited.count(comment) == text.count(comment)
    removed = jsonc.remove_member(edited, ["mcpServers", "gno"])
    assert removed is not None
    restored = dict(document, mcpServers={k: v for k, v in servers.items() if k != "gno"})
    assert jsonc.loads(removed) == restored
    if "gno" not in servers:
        assert removed == text or jsonc.loads(removed) == jsonc.loads(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_jsonc_rejects_garbage_with_its_own_error(text: str) -> None:
    try:
        jsonc.loads(text)
    except jsonc.JsoncError:
        return
    except RecursionError:  # pragma: no cover - the depth bound must prevent this
        pytest.fail("deep nesting was not bounded")
