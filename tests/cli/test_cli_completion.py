"""``completion SHELL`` and ``completion install``: commands and flags complete in real shells."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.cli_support import Cli

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


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_install_puts_the_script_in_bashrc_once_and_keeps_the_rest(cli: Cli) -> None:
    bashrc = cli.home / ".bashrc"
    bashrc.write_text("export PATH=$HOME/bin:$PATH\nalias ll='ls -l'")
    done = cli.json("completion", "install", "--shell", "bash")
    assert done["action"] == "installed" and done["path"] == str(bashrc)
    text = bashrc.read_text()
    assert text.startswith("export PATH=$HOME/bin:$PATH\nalias ll='ls -l'\n\n# >>> gno-trio")
    assert text.count("_gno_trio_complete()") == 1
    assert Path(done["backupPath"]).read_text() == "export PATH=$HOME/bin:$PATH\nalias ll='ls -l'"
    assert cli.json("completion", "install", "--shell", "bash")["action"] == "unchanged"
    bashrc.write_text(text.replace("complete -F", "complete -o default -F") + "echo after\n")
    assert cli.json("completion", "install", "-s", "bash")["action"] == "updated"
    again = bashrc.read_text()
    assert again.count(">>> gno-trio completion") == 1 and again.endswith("echo after\n")
    probe = (
        f"source {bashrc}\nCOMP_WORDS=(gno-trio coll); COMP_CWORD=1; _gno_trio_complete; "
        'echo "${COMPREPLY[*]}"'
    )
    shell = subprocess.run(
        ["bash", "-c", probe], capture_output=True, text=True, timeout=30, check=True
    )
    assert shell.stdout.splitlines() == ["after", "collection"]  # the rest of .bashrc ran too


def test_install_detects_the_shell_and_follows_links(cli: Cli) -> None:
    real = cli.home / "dotfiles" / "zshrc"
    real.parent.mkdir()
    real.write_text("setopt autocd\n")
    (cli.home / ".zshrc").symlink_to(real)
    text = cli.run("completion", "install", env={"SHELL": "/usr/bin/zsh"}).stdout
    assert text.startswith(f"Completion for zsh installed: {real}\n")
    assert (cli.home / ".zshrc").is_symlink() and "bashcompinit" in real.read_text()
    fish = cli.json("completion", "install", "--shell", "fish")
    assert fish["path"] == str(cli.home / ".config" / "fish" / "completions" / "gno-trio.fish")
    assert "complete -c gno-trio" in Path(fish["path"]).read_text()
    unknown = cli.run("completion", "install", "--json", env={"SHELL": "/bin/tcsh"}, code=1)
    assert "pass --shell bash|zsh|fish" in json.loads(unknown.stdout)["message"]
    refused = cli.json("completion", "install", "--shell", "csh", code=1)
    assert refused["error"] == "VALIDATION" and "Unsupported shell 'csh'" in refused["message"]
