"""``git pull --ff-only`` in a collection that is a git work tree, before it is synced.

GNO's ``gitPull`` option (``update --git-pull``, ``gno_sync``, ``gno_index``,
``gno_add_collection``) brings a collection's folder up to date from its
upstream first. Here that pull is judged and bounded before git runs:

- only a folder with its own ``.git`` (the root of a work tree) is pulled;
  another folder is refused (``NOT_A_GIT_REPOSITORY``), never the repository
  around it;
- the upstream's URL is a destination: the collection's egress policy must
  allow its network zone (a path or ``file://`` is this machine), and the
  decision leaves its receipt in the egress audit (``EGRESS_DENIED``);
- git runs from an argument list, never a shell, with the inherited ``GIT_*``
  variables dropped (they could point it at another repository), no HTTP
  proxy (neither the environment's nor one configured) and no redirect
  followed (their hosts were never judged), prompts off
  (``GIT_TERMINAL_PROMPT=0``, no askpass, no terminal: a new session with
  stdin closed), only the file, git, ssh and http(s) transports allowed,
  submodules left alone, under a time limit;
- a fast-forward only: a pull that would merge is refused by git and reported.

Each collection gets one outcome, ``{collection, status, ok, ...}``, with
``status`` ``updated``, ``up_to_date``, ``refused`` or ``failed``; the sync
then reads the folder as it is, whatever the pull did.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from gno_trio.config import Collection
from gno_trio.config.environment import environment
from gno_trio.engine.egress.decision import Decision
from gno_trio.engine.egress.policy import EGRESS_DENIED_CODE, Zone, repository_zone
from gno_trio.engine.ingest.child_process import run_bounded

GIT_PULL_TIMEOUT_S: Final = 120.0
"""How long one collection's pull may take (fetch included) before it is stopped."""
GIT_QUERY_TIMEOUT_S: Final = 10.0
GIT_PULL_FAILED: Final = "GIT_PULL_FAILED"
NOT_A_GIT_REPOSITORY: Final = "NOT_A_GIT_REPOSITORY"
NO_UPSTREAM: Final = "NO_UPSTREAM"
GIT_NOT_FOUND: Final = "GIT_NOT_FOUND"
ALLOWED_PROTOCOLS: Final = "file:git:ssh:http:https"
_KEPT_ENVIRONMENT: Final = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "TMPDIR",
    "SSH_AUTH_SOCK",
    "XDG_CONFIG_HOME",
)
"""Inherited as they are; proxy variables are not: the judged host is the one git must reach."""

Judge = Callable[[str, Zone], Decision]
"""Decides (and records) whether collection ``name`` may reach a remote in ``zone``."""


def git_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """What git runs with: a few inherited variables, no ``GIT_*`` ones, and no way to prompt."""
    source = environment() if environ is None else environ
    env = {name: source[name] for name in _KEPT_ENVIRONMENT if name in source}
    env.update(
        LC_ALL="C",
        GIT_TERMINAL_PROMPT="0",
        GIT_ASKPASS="",
        SSH_ASKPASS="",
        GCM_INTERACTIVE="never",
        GIT_ALLOW_PROTOCOL=ALLOWED_PROTOCOLS,
    )
    return env


def _git(folder: Path, *args: str, timeout_s: float = GIT_QUERY_TIMEOUT_S) -> tuple[bool, str]:
    done = run_bounded(
        ["git", "-C", str(folder), *args],
        cwd=folder,
        timeout_s=timeout_s,
        env=git_environment(),
    )
    return done.exit_code == 0, done.output.strip()


def _upstream_remote(folder: Path) -> tuple[str, str] | None:
    """The current branch's upstream: (remote name, fetch URL), or None when there is none."""
    ok, branch = _git(folder, "symbolic-ref", "--quiet", "--short", "HEAD")
    if not ok or not branch:
        return None
    ok, remote = _git(folder, "config", "--get", f"branch.{branch}.remote")
    if not ok or not remote or remote == ".":
        return None
    ok, url = _git(folder, "remote", "get-url", remote)
    return (remote, url) if ok and url else None


def _straight_to(remote: str) -> list[str]:
    """Options that keep git on the judged URL: no configured HTTP proxy, no redirect.

    An empty proxy setting overrides both the configuration's and the
    environment's; ``remote.<name>.proxy`` would win over ``http.proxy``.
    """
    return [
        "-c",
        "http.followRedirects=false",
        "-c",
        "http.proxy=",
        "-c",
        f"remote.{remote}.proxy=",
    ]


def pull_collection(collection: Collection, judge: Judge) -> dict[str, Any]:
    """Pull one collection's folder from its upstream (see the module text); its outcome."""
    folder = Path(collection.path)
    outcome: dict[str, Any] = {"collection": collection.name}

    def refused(code: str, message: str) -> dict[str, Any]:
        return {**outcome, "status": "refused", "ok": False, "code": code, "message": message}

    if not (folder / ".git").exists():
        return refused(
            NOT_A_GIT_REPOSITORY, f"{folder} is not a git work tree (it has no .git); not pulled"
        )
    if shutil.which("git") is None:
        return refused(GIT_NOT_FOUND, "git is not installed (not on PATH); not pulled")
    ok, before = _git(folder, "rev-parse", "--verify", "--quiet", "HEAD")
    upstream = _upstream_remote(folder)
    if upstream is None:
        return refused(
            NO_UPSTREAM,
            "the checked-out branch has no upstream to pull from (git branch --set-upstream-to)",
        )
    remote, url = upstream
    zone = repository_zone(url)
    outcome.update(remote=remote, destinationZone=zone)
    decision = judge(collection.name, zone)
    if not decision.allowed:
        return refused(
            EGRESS_DENIED_CODE,
            f"egress policy {collection.effective_egress_policy} does not allow reaching remote "
            f"{remote!r} ({zone}): {decision.reason}",
        )
    done = run_bounded(
        [
            "git",
            "-C",
            str(folder),
            *_straight_to(remote),
            "pull",
            "--ff-only",
            "--no-recurse-submodules",
            "--quiet",
        ],
        cwd=folder,
        timeout_s=GIT_PULL_TIMEOUT_S,
        env=git_environment(),
    )
    if done.exit_code != 0:
        why = "timed out" if done.timed_out else f"exit {done.exit_code}"
        return {
            **outcome,
            "status": "failed",
            "ok": False,
            "code": GIT_PULL_FAILED,
            "message": f"git pull --ff-only failed ({why}): {done.output.strip()}".rstrip(": "),
        }
    _, after = _git(folder, "rev-parse", "--verify", "--quiet", "HEAD")
    status = "up_to_date" if ok and before == after else "updated"
    return {**outcome, "status": status, "ok": True, "head": after}


__all__ = [
    "GIT_PULL_FAILED",
    "GIT_PULL_TIMEOUT_S",
    "NOT_A_GIT_REPOSITORY",
    "git_environment",
    "pull_collection",
]
