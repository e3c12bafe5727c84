"""A warm parent that forks one child per ``gno-trio`` command the CLI tests run.

A fresh ``python -m gno_trio`` spends most of its time importing the
package before the command does anything; the CLI tests run about a thousand
commands, so the suite mostly measured imports. This process imports the
package once and then, per request, forks: the child is a new process with
the request's own argv, environment, working directory and standard streams
(open files the test created), runs ``gno_trio``'s ``__main__`` exactly as
``python -m gno_trio`` does, and exits with the command's status. Every
environment variable the package reads is read when a command runs, never at
import, so a forked child sees what a fresh interpreter would.

Protocol over a ``SOCK_SEQPACKET`` pair: the test sends one JSON request
(``argv``, ``env``, ``cwd``) with three file descriptors (stdin, stdout,
stderr); this process answers ``{"pid": N}`` when the child starts and
``{"status": S}`` (``subprocess`` convention: negative for a signal) when
it ends. End of file on the socket ends this process.

Set ``GNO_TEST_FRESH_CLI=1`` to run every command in a fresh interpreter
instead (see :mod:`tests.support.cli_support`).
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import runpy
import socket
import sys

import gno_trio

MAX_REQUEST = 1 << 20


def _import_everything() -> None:
    """Import every module of the package, which a child would otherwise import per command.

    A command imports only its own family and the engine parts it calls
    (:mod:`gno_trio.cli.commands`); the tests run every command, so the warm
    parent holds them all.
    """
    for module in pkgutil.walk_packages(gno_trio.__path__, "gno_trio."):
        if module.name != "gno_trio.__main__":
            importlib.import_module(module.name)


def serve(sock: socket.socket) -> None:
    """Answer requests until the test process closes its end; return in each child."""
    while True:
        data, fds, _flags, _addr = socket.recv_fds(sock, MAX_REQUEST, 3)
        if not data:
            raise SystemExit(0)
        request = json.loads(data)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            sock.close()
            _become(request, fds)
            return
        for fd in fds:
            os.close(fd)
        sock.send(json.dumps({"pid": pid}).encode())
        _, status = os.waitpid(pid, 0)
        sock.send(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode())


def _become(request: dict[str, object], fds: list[int]) -> None:
    """Turn this forked child into ``python -m gno_trio ARGV`` run in the request's world."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    cwd = str(request["cwd"])
    os.chdir(cwd)
    env = request["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    argv = request["argv"]
    assert isinstance(argv, list)
    sys.path[0] = cwd  # what ``python -m`` puts first
    sys.argv = ["-m", *map(str, argv)]


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    _import_everything()
    serve(sock)
    # Only a forked child gets here: run the command as ``python -m gno_trio``.
    runpy.run_module("gno_trio", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
