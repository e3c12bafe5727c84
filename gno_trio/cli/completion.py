"""``completion bash|zsh|fish|install``: a shell completion script, generated from the parser.

The script is built from the same argparse tree that parses the command
line, so every command, sub-command and flag completes, and a new one does
without touching this module. It completes words only (no file or
collection lookups), and nothing runs ``gno-trio`` while you type.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Iterator

from gno_trio.cli.commands import CommandChoices
from gno_trio.cli.common import EXIT_OK, emit_json
from gno_trio.cli.completion_install import detect_shell, install, reload_hint
from gno_trio.errors import GnoError

SHELLS = ("bash", "zsh", "fish")
PROG = "gno-trio"


def _children(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    if isinstance(parser, _Root):
        return dict(parser.commands.choices)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


class _Root(argparse.ArgumentParser):
    """The top level as completion sees it: the commands, and the options every level has."""

    def __init__(self, commands: CommandChoices, common: argparse.ArgumentParser) -> None:
        super().__init__(prog=PROG, parents=[common], add_help=False)
        self.add_argument("--version", action="store_true")
        commands.load_all()
        self.commands = commands


def _flags(parser: argparse.ArgumentParser) -> list[str]:
    return sorted(
        {option for action in parser._actions for option in action.option_strings}
        - {"-h", "--help"}
    )


def _tree(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], list[str], list[str]]]:
    """Every command path with its sub-command names and its flags, depth first."""
    children = _children(parser)
    yield path, sorted(children), [*_flags(parser), "--help"]
    for name, child in sorted(children.items()):
        yield from _tree(child, (*path, name))


def bash_script(parser: argparse.ArgumentParser) -> str:
    """Completion for bash (and zsh through ``bashcompinit``)."""
    table = "\n".join(
        f"    [{shlex.quote(' '.join(path) or '.')}]={shlex.quote(' '.join(subs + flags))}"
        for path, subs, flags in _tree(parser)
    )
    return f"""# {PROG} completion for bash: add `eval "$({PROG} completion bash)"` to ~/.bashrc
_gno_trio_complete() {{
    local -A words=(
{table}
    )
    local path="" word i
    for ((i = 1; i < COMP_CWORD; i++)); do
        word="${{COMP_WORDS[i]}}"
        [[ "$word" == -* ]] && continue
        if [[ -n "${{words[${{path:+$path }}$word]+set}}" ]]; then
            path="${{path:+$path }}$word"
        fi
    done
    COMPREPLY=($(compgen -W "${{words[${{path:-.}}]}}" -- "${{COMP_WORDS[COMP_CWORD]}}"))
}}
complete -F _gno_trio_complete {PROG}
"""


def zsh_script(parser: argparse.ArgumentParser) -> str:
    return (
        f"# {PROG} completion for zsh: source this file from ~/.zshrc\n"
        "autoload -U +X bashcompinit && bashcompinit\n" + bash_script(parser)
    )


def fish_script(parser: argparse.ArgumentParser) -> str:
    lines = [f"# {PROG} completion for fish: save as ~/.config/fish/completions/{PROG}.fish"]
    for path, subs, flags in _tree(parser):
        if path:
            seen = "; and ".join(f"__fish_seen_subcommand_from {word}" for word in path)
            condition = f"{seen}; and not __fish_seen_subcommand_from {' '.join(subs)}"
            condition = seen if not subs else condition
        else:
            condition = "__fish_use_subcommand"
        for sub in subs:
            lines.append(f"complete -c {PROG} -f -n {shlex.quote(condition)} -a {sub}")
        for flag in flags:
            spec = f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}"
            lines.append(f"complete -c {PROG} -n {shlex.quote(condition)} {spec}")
    return "\n".join(lines) + "\n"


def _checked(shell: str) -> str:
    if shell not in SHELLS:
        raise GnoError(
            "VALIDATION", f"Unsupported shell {shell!r}: choose one of {', '.join(SHELLS)}"
        )
    return shell


def _script(args: argparse.Namespace, shell: str) -> str:
    parser = _Root(*args.completion_root)
    return {"bash": bash_script, "zsh": zsh_script, "fish": fish_script}[shell](parser)


def cmd_completion(args: argparse.Namespace) -> int:
    if args.shell == "install":
        shell = _checked(args.install_shell) if args.install_shell else detect_shell()
        result = install(shell, _script(args, shell))
        if args.json:
            emit_json(result)
        else:
            print(f"Completion for {shell} {result['action']}: {result['path']}")
            if result["action"] != "unchanged":
                print(reload_hint(result))
        return EXIT_OK
    if args.install_shell:
        raise GnoError(
            "VALIDATION", "--shell belongs to: gno-trio completion install --shell SHELL"
        )
    print(_script(args, _checked(args.shell)), end="")
    return EXIT_OK


def add_parsers(sub: CommandChoices, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "completion",
        parents=[common],
        description="`completion SHELL` prints the script; `completion install [--shell SHELL]` "
        "puts it in ~/.bashrc, ~/.zshrc or fish's completions folder (again: replaced in place).",
    )
    p.add_argument(
        "shell", metavar="SHELL|install", help="bash, zsh or fish; or install (for your shell)"
    )
    p.add_argument(
        "-s",
        "--shell",
        dest="install_shell",
        metavar="SHELL",
        help="with install: the shell to install for (default: from $SHELL)",
    )
    p.set_defaults(handler=cmd_completion, completion_root=(sub, common))


__all__ = ["add_parsers", "bash_script", "fish_script", "zsh_script"]
