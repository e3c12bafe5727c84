"""The conversion worker: a child process that converts one document at a time.

Started by :mod:`.runner` as ``python -m gno_trio.engine.ingest.documents.worker``
(a fresh interpreter, never a fork of a threaded server). Before it reads
anything it bounds itself: an address-space limit (``RLIMIT_AS``), no core
dumps, and for each job an alarm a little past the job's time limit, so a
worker whose parent vanished cannot run on. It ignores ``SIGINT`` (the
parent decides when to stop) and moves ``stdout`` aside, so a library that
prints cannot corrupt the message stream.

A failure inside a conversion is answered as an ``error`` message with its
code; only a crash (a signal in C code) or a kill ends the process, and the
runner reports that as ``CONVERSION_FAILED`` for the one file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import Any

from gno_trio.engine.ingest.documents import frames


def _bound_self(memory_bytes: int) -> None:
    try:
        import resource
    except ImportError:  # not a POSIX system: the parent's timeout still holds
        return
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if memory_bytes > 0:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))


def _arm_alarm(seconds: float) -> None:
    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, seconds)


def _on_alarm(_signum: int, _frame: Any) -> None:
    os._exit(3)  # the runner has given up on this job (or is gone)


def _converted_message(converted: Any) -> dict[str, Any]:
    return {
        "op": "ok",
        "markdown": converted.markdown,
        "mime": converted.mime,
        "ext": converted.ext,
        "converter_id": converted.converter_id,
        "converter_version": converted.converter_version,
        "warnings": list(converted.warnings),
    }


def serve(in_fd: int, out_fd: int) -> None:
    """Answer ``convert`` messages until the parent closes the pipe."""
    hello = frames.read_frame(in_fd)
    if hello is None or hello.get("op") != "hello":
        return
    from gno_trio.engine.ingest.documents.limits import ConversionLimits, applied
    from gno_trio.engine.ingest.documents.reasons import CONVERSION_FAILED
    from gno_trio.engine.ingest.documents.registry import converter_by_id
    from gno_trio.errors import GnoError

    limits = ConversionLimits.from_tuple(tuple(hello["limits"]))  # type: ignore[arg-type]
    _bound_self(limits.max_memory_bytes)
    for module in hello.get("preload", ()):
        with contextlib.suppress(ImportError):
            __import__(module)
    frames.write_all(out_fd, frames.encode({"op": "ready", "pid": os.getpid()}))

    def progress(done: int, total: int) -> None:
        frames.write_all(out_fd, frames.encode({"op": "progress", "done": done, "total": total}))

    while True:
        job = frames.read_frame(in_fd)
        if job is None:
            return
        converter = converter_by_id(str(job.get("converter", "")))
        rel_path = str(job.get("rel_path", ""))
        _arm_alarm(limits.timeout_s * 1.5 + 5)
        try:
            if converter is None:
                raise GnoError(
                    CONVERSION_FAILED, f"{rel_path}: no converter {job.get('converter')}"
                )
            with applied(limits, progress):
                reply = _converted_message(converter.convert(rel_path, job["data"]))
        except GnoError as error:
            reply = {"op": "error", "code": error.code, "message": error.message}
        except MemoryError:
            reply = {
                "op": "error",
                "code": CONVERSION_FAILED,
                "message": f"{rel_path}: the conversion ran out of memory",
            }
        finally:
            _arm_alarm(0)
        del job
        frames.write_all(out_fd, frames.encode(reply))


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, _on_alarm)
    out_fd = os.dup(1)
    os.dup2(2, 1)  # anything a library prints goes to stderr, not into the stream
    sys.stdout = sys.stderr
    serve(0, out_fd)


if __name__ == "__main__":
    main()
