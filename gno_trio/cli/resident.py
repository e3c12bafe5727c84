"""``serve``/``daemon`` in the background: ``--detach``, ``--status`` and ``--stop``.

GNO's process contract. ``--detach`` starts the same command again as a new
session whose output is appended to a log file; the child writes a JSON
pid-file (``pid``, ``port``, ``cmd``, ``version``, ``started_at``) once its
listener is up, so the parent prints ``{pid, url}`` only for a gateway that
really answers, and a child that fails to start is reported with its log.
``--status`` reads the pid-file and probes the process with signal 0: a
pid-file whose process is gone is stale (``running: false``, exit 3);
a live one gets a best-effort copy of the listener's own resident snapshot.
``--stop`` sends SIGTERM, waits up to 10 s, then SIGKILL and 2 s more.

One data directory has one resident owner: every ``serve`` or ``daemon``,
in the foreground or not, holds an exclusive lock on ``resident.lock`` in
the data directory for its whole life, so a second start fails at once
(exit 2) instead of two gateways sharing one index and one background embedder.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from gno_trio.children import isolated_module
from gno_trio.cli.common import EXIT_OK, emit_json
from gno_trio.config.dirs import resolve_dirs
from gno_trio.engine import write_file_atomically
from gno_trio.errors import GnoError, kind_of

ACTIONS: Final = ("detach", "status", "stop")
RECORD_OPTION: Final = "--resident-record"
"""Hidden option of the detached child: where to write the pid-file once it listens."""
LOCK_NAME: Final = "resident.lock"
START_TIMEOUT_S: Final = 60.0
STOP_GRACE_S: Final = 10.0
KILL_GRACE_S: Final = 2.0
POLL_S: Final = 0.1
STATUS_PROBE_TIMEOUT_S: Final = 1.0
LOG_TAIL_LINES: Final = 8


@dataclass(frozen=True, slots=True)
class ResidentFiles:
    """The pid-file and log file of one resident command (absolute paths)."""

    mode: str
    pid_file: Path
    log_file: Path


def files_for(args: Any, mode: str) -> ResidentFiles:
    """``--pid-file``/``--log-file``, else ``{data}/<mode>.pid`` and ``{data}/<mode>.log``."""
    data = resolve_dirs().data
    pid = Path(args.pid_file) if args.pid_file else data / f"{mode}.pid"
    log = Path(args.log_file) if args.log_file else data / f"{mode}.log"
    return ResidentFiles(mode, pid.expanduser().absolute(), log.expanduser().absolute())


def chosen_action(args: Any) -> str | None:
    """The one process action asked for; two at once is a ``VALIDATION`` error (exit 1)."""
    picked = [name for name in ACTIONS if getattr(args, name, False)]
    if len(picked) > 1:
        flags = ", ".join(f"--{name}" for name in picked)
        raise GnoError("VALIDATION", f"--detach, --status and --stop exclude each other: {flags}")
    return picked[0] if picked else None


# -- the pid-file ------------------------------------------------------------------------


def _read_record(pid_file: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(pid_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise GnoError("RUNTIME", f"cannot read the pid-file {pid_file}: {exc}") from exc
    if not isinstance(record, dict) or not isinstance(record.get("pid"), int):
        raise GnoError("RUNTIME", f"the pid-file {pid_file} holds no pid; remove it by hand")
    return record


def _alive(pid: int) -> bool:
    """Whether ``pid`` names a live process that is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive, though not ours to signal
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def write_record(pid_file: Path, *, mode: str, port: int, url: str, log_file: Path | None) -> None:
    """The child's pid-file, written atomically once its listener is up."""
    from gno_trio import __version__

    record = {
        "pid": os.getpid(),
        "port": port,
        "cmd": mode,
        "version": __version__,
        "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "url": url,
        "log_file": str(log_file) if log_file else None,
    }
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    # Workers write beside it as it is written: their temporaries are not ours to sweep.
    write_file_atomically(pid_file, json.dumps(record) + "\n", clean=False)


def remove_record(pid_file: Path, pid: int) -> None:
    """Remove ``pid_file`` if it still names ``pid`` (a newer resident's file stays)."""
    with contextlib.suppress(GnoError, OSError):
        record = _read_record(pid_file)
        if record is not None and record["pid"] == pid:
            pid_file.unlink()


# -- one owner per data directory ------------------------------------------------------------


@contextlib.contextmanager
def ownership(data_dir: Path, mode: str) -> Iterator[None]:
    """Hold the data directory's resident lock for the ``with`` block, or fail at once."""
    try:
        import fcntl
    except ImportError:  # no advisory locks here: nothing to enforce with
        yield
        return
    data_dir.mkdir(parents=True, exist_ok=True)
    handle: IO[str] = open(data_dir / LOCK_NAME, "a+", encoding="utf-8")  # noqa: SIM115
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            try:
                owner = json.loads(handle.read())
                who = f"gno-trio {owner['cmd']} (pid {owner['pid']})"
                fix = f"gno-trio {owner['cmd']} --stop, or end that process"
            except (ValueError, KeyError, TypeError):
                who, fix = "another gno-trio serve or daemon", "stop that process"
            raise GnoError(
                "RESIDENT_ACTIVE",
                f"{who} already serves the data directory {data_dir}, and one resident owns "
                f"it; stop it first ({fix})",
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"cmd": mode, "pid": os.getpid()}) + "\n")
        handle.flush()
        yield
    finally:
        handle.close()


# -- the three actions ---------------------------------------------------------------------


def _child_command(command_line: list[str], pid_file: Path) -> list[str]:
    kept = [word for word in command_line if word != "--detach"]
    return isolated_module("gno_trio", *kept, RECORD_OPTION, str(pid_file))


def _log_tail(log_file: Path) -> str:
    try:
        lines = log_file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-LOG_TAIL_LINES:])


def detach(args: Any, files: ResidentFiles) -> int:
    """Start the command as a detached child; print ``{pid, url}`` once it listens."""
    if os.name == "nt":
        raise GnoError("VALIDATION", "--detach is not supported on Windows; run it under WSL")
    existing = _read_record(files.pid_file)
    if existing is not None and _alive(existing["pid"]):
        raise GnoError(
            "RESIDENT_ACTIVE",
            f"a detached {files.mode} already runs (pid {existing['pid']}); "
            f"see gno-trio {files.mode} --status",
        )
    files.log_file.parent.mkdir(parents=True, exist_ok=True)
    with open(files.log_file, "ab") as log:
        child = subprocess.Popen(
            _child_command(args.command_line, files.pid_file),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        code = child.poll()
        if code is not None:
            tail = _log_tail(files.log_file)
            raise GnoError(
                "RESIDENT_START_FAILED",
                f"the detached {files.mode} exited with code {code} before listening "
                f"(log: {files.log_file})" + (f":\n{tail}" if tail else ""),
            )
        record = _read_record(files.pid_file)
        if record is not None and record["pid"] == child.pid:
            break
        if time.monotonic() > deadline:
            child.terminate()
            raise GnoError(
                "RESIDENT_START_FAILED",
                f"the detached {files.mode} did not listen within {START_TIMEOUT_S:.0f} s "
                f"(log: {files.log_file}); it was stopped",
            )
        time.sleep(POLL_S)
    started = {"pid": child.pid, "url": record.get("url")}
    if args.json:
        emit_json(started)
    else:
        print(
            f"gno-trio {files.mode}: running in the background (pid {child.pid}) at "
            f"{record.get('url')}\nLog: {files.log_file}\n"
            f"Status: gno-trio {files.mode} --status; stop: gno-trio {files.mode} --stop"
        )
    return EXIT_OK


def _resident_snapshot(record: dict[str, Any]) -> dict[str, Any] | None:
    """The listener's own resident status, or None when it cannot be had quickly."""
    import urllib.request  # the HTTP client: only the commands that ask a resident load it

    url = record.get("url")
    if not isinstance(url, str) or not url.startswith("http://"):
        return None
    base = url.split("/", 3)
    status_url = f"{base[0]}//{base[2]}/api/resident/status"
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
        with opener.open(status_url, timeout=STATUS_PROBE_TIMEOUT_S) as answer:
            snapshot = json.loads(answer.read(1 << 20))
    except (OSError, ValueError):
        return None
    return snapshot if isinstance(snapshot, dict) else None


def process_status(files: ResidentFiles) -> dict[str, Any]:
    """The ``process-status@1.0`` document for ``files``."""
    record = _read_record(files.pid_file)
    running = record is not None and _alive(record["pid"])
    uptime: int | None = None
    if running and record is not None:
        started = dt.datetime.fromisoformat(str(record["started_at"]))
        uptime = max(0, int((dt.datetime.now(dt.UTC) - started).total_seconds()))
    try:
        log_size: int | None = files.log_file.stat().st_size
    except OSError:
        log_size = None
    return {
        "running": running,
        "pid": record["pid"] if record else None,
        "port": record.get("port") if running and record else None,
        "cmd": files.mode,
        "version": record.get("version") if record else None,
        "started_at": record.get("started_at") if record else None,
        "uptime_seconds": uptime,
        "resident": _resident_snapshot(record) if running and record else None,
        "pid_file": str(files.pid_file),
        "log_file": str(files.log_file),
        "log_size_bytes": log_size,
    }


def status(args: Any, files: ResidentFiles) -> int:
    """Print the process status; exit 0 when a live process answers, 3 otherwise."""
    found = process_status(files)
    if args.json:
        emit_json(found)
    elif found["running"]:
        log = found["log_file"]
        if found["log_size_bytes"] is None:  # a resident started in the foreground writes none
            log = f"none ({log} is written by --detach only)"
        print(
            f"gno-trio {files.mode}: running (pid {found['pid']}, port {found['port']}, "
            f"up {found['uptime_seconds']} s)\nLog: {log}"
        )
    elif found["pid"] is not None:
        print(
            f"gno-trio {files.mode}: not running; the pid-file {files.pid_file} names "
            f"pid {found['pid']}, which is gone (stale)"
        )
    else:
        print(f"gno-trio {files.mode}: not running (no pid-file at {files.pid_file})")
    return EXIT_OK if found["running"] else kind_of("NOT_RUNNING").exit_code


def _wait_gone(pid: int, seconds: float, reap: Callable[[], None]) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        reap()
        if not _alive(pid):
            return True
        time.sleep(POLL_S)
    return not _alive(pid)


def stop(args: Any, files: ResidentFiles) -> int:
    """SIGTERM, up to 10 s, then SIGKILL (its whole session) and 2 s more."""
    record = _read_record(files.pid_file)
    if record is None or not _alive(record["pid"]):
        if record is not None:
            remove_record(files.pid_file, record["pid"])
        where = f"the stale pid-file {files.pid_file} was removed" if record else "no pid-file"
        raise GnoError("NOT_RUNNING", f"no detached {files.mode} is running ({where})")
    pid = int(record["pid"])

    def reap() -> None:  # our own child (tests, shells that wait): collect its exit
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)

    os.kill(pid, signal.SIGTERM)
    used = "SIGTERM"
    if not _wait_gone(pid, STOP_GRACE_S, reap):
        used = "SIGKILL"
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)  # its workers too
            else:
                os.kill(pid, signal.SIGKILL)
        if not _wait_gone(pid, KILL_GRACE_S, reap):
            raise GnoError("RUNTIME", f"pid {pid} is still alive after SIGKILL")
    remove_record(files.pid_file, pid)
    if args.json:
        emit_json({"stopped": True, "pid": pid, "cmd": files.mode, "signal": used})
    else:
        print(f"gno-trio {files.mode}: stopped pid {pid} ({used})")
    return EXIT_OK


def run_action(action: str, args: Any, mode: str) -> int:
    """Dispatch ``--detach``/``--status``/``--stop`` for ``mode``."""
    files = files_for(args, mode)
    if action == "detach":
        return detach(args, files)
    if action == "status":
        return status(args, files)
    return stop(args, files)


__all__ = [
    "RECORD_OPTION",
    "ResidentFiles",
    "chosen_action",
    "ownership",
    "process_status",
    "remove_record",
    "run_action",
    "write_record",
]
