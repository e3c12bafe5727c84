"""``completion bash|zsh|fish``: the scripts complete real commands and flags in a real shell."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.cli_support import Cli

CASES = [
    (("coll",), ["collection"]),
    (("collection", "c"), ["clear-embeddings"]),
    (("collection", "clear-embeddings", "--a"), ["--all"]),
    (("--index", "other", "search", "--li"), ["--limit", "--line-numbers"]),
    (("mcp", "install", "--t"), ["--target", "--tool-profile"]),
    (("graph", "q"), ["query"]),
    (("context", "r"), ["rm"]),
]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_the_bash_script_completes_commands_and_flags(cli: Cli) -> None:
    script = cli.home / "gno-trio.bash"
    script.write_text(cli.run("completion", "bash").stdout)
    probe = "\n".join(
        f"COMP_WORDS=(gno-trio {' '.join(repr(w) for w in words)}); "
        "COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _gno_trio_complete; "
        'echo "${COMPREPLY[*]}"'
        for words, _ in CASES
    )
    done = subprocess.run(
        ["bash", "-c", f"source {script}\n{probe}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    answers = done.stdout.splitlines()
    for (words, expected), answer in zip(CASES, answers, strict=True):
        assert answer.split() == expected, words


def test_zsh_and_fish_scripts_and_an_unknown_shell(cli: Cli) -> None:
    zsh = cli.run("completion", "zsh").stdout
    assert "bashcompinit" in zsh and "complete -F _gno_trio_complete gno-trio" in zsh
    fish = cli.run("completion", "fish").stdout.splitlines()
    assert "complete -c gno-trio -f -n __fish_use_subcommand -a query" in fish
    assert any(
        "__fish_seen_subcommand_from collection" in line and "-a clear-embeddings" in line
        for line in fish
    )
    refused = cli.run("completion", "tcsh", code=1)
    assert "bash, zsh, fish" in refused.stderr
