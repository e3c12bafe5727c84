"""A raw JSON-RPC client for ``python -m gno_trio mcp`` over stdio, shared by tests.

Several test files drive a spawned server line by line instead of through the
SDK, so they can see exactly what goes over the pipe. They all need the same
few moves: frame a message, read one answer back with a deadline, check that
the answer belongs to the request, and run the ``initialize`` handshake. Having
one client keeps those moves identical everywhere and keeps a wedged server
from hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import trio

from gno_trio.config.dirs import Dirs

REPO_ROOT = Path(__file__).resolve().parents[2]
PROTOCOL_VERSION = "2025-11-25"
ANSWER_TIMEOUT_S = 15.0
MODERN_VERSION = "2026-07-28"
JOB_WAIT_S = 30.0
"""How long a background job (sync, embed) may take to leave ``running``."""
RAW_ENVELOPE: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw-probe", "version": "1"},
}
"""The 2026-07-28 envelope a raw-line probe sends in ``_meta``."""


def raw_initialize_params(version: str = PROTOCOL_VERSION) -> dict[str, Any]:
    """``initialize`` params of a raw-line 2025-era probe."""
    return {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "raw-legacy", "version": "1"},
    }


def modern(**params: Any) -> dict[str, Any]:
    """``params`` with the raw probe's 2026-07-28 envelope merged into ``_meta``."""
    meta = {**RAW_ENVELOPE, **params.pop("_meta", {})}
    return {**params, "_meta": meta}


def frame(message: Mapping[str, Any]) -> bytes:
    """One message as one newline-terminated JSON line."""
    return json.dumps(message).encode() + b"\n"


def request_line(request_id: int | str, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return frame(message)


def notification_line(method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return frame(message)


class LineBuffer:
    """What a stream sent, handed back one newline-terminated line at a time."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.buffer = bytearray()

    async def next_line(self, timeout: float) -> bytes | None:
        """The next line without its newline; None at a clean EOF, a failure at a torn one."""
        with trio.fail_after(timeout):
            while b"\n" not in self.buffer:
                chunk = await self.stream.receive_some(65536)
                if not chunk:
                    assert not self.buffer, f"partial line at EOF: {bytes(self.buffer)!r}"
                    return None
                self.buffer += chunk
        index = self.buffer.index(b"\n")
        line = bytes(self.buffer[:index])
        del self.buffer[: index + 1]
        return line


def server_environment(dirs: Dirs, **extra: str) -> dict[str, str]:
    """This process's environment pointed at ``dirs``, with no stray ``GNO_*`` setting.

    Dropping inherited ``GNO_*`` variables keeps a developer's own configuration
    from changing what a spawned server does under test.
    """
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GNO_")}
    return {
        **environ,
        "GNO_CONFIG_DIR": str(dirs.config),
        "GNO_DATA_DIR": str(dirs.data),
        "GNO_CACHE_DIR": str(dirs.cache),
        **extra,
    }


class StdioSession:
    """Newline-delimited JSON-RPC over one pair of byte streams.

    Request ids count up from 1; every answer read by :meth:`call` must carry
    the id of the request it answers, so a stray or reordered reply fails the
    test at once.
    """

    def __init__(
        self,
        send_stream: trio.abc.SendStream,
        receive_stream: trio.abc.ReceiveStream,
        *,
        timeout: float = ANSWER_TIMEOUT_S,
    ) -> None:
        self.send_stream = send_stream
        self.lines = LineBuffer(receive_stream)
        self.timeout = timeout
        self.next_id = 0

    async def send(self, message: Mapping[str, Any]) -> None:
        """Write one message as a single line."""
        await self.send_stream.send_all(frame(message))

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification: a message without an id, which gets no answer."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def receive(self) -> dict[str, Any]:
        """The next message from the server, failing the test if none comes in time."""
        line = await self.lines.next_line(self.timeout)
        assert line is not None, "server closed stdout"
        message: dict[str, Any] = json.loads(line)
        return message

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> int:
        """Send a request without waiting for its answer; the id it was sent with."""
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return self.next_id

    async def call(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return the whole answer envelope (``result`` or ``error``)."""
        sent = await self.request(method, params)
        answer = await self.receive()
        assert answer.get("id") == sent, answer
        return answer

    async def tool(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Call one tool and return its ``result``, whether or not it is an error result."""
        answer = await self.call("tools/call", {"name": name, "arguments": arguments})
        result: dict[str, Any] = answer["result"]
        return result

    async def initialize(self, client_name: str) -> dict[str, Any]:
        """Run the ``initialize`` handshake and confirm it; the server's answer."""
        hello = await self.call(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": client_name, "version": "1"},
            },
        )
        assert "result" in hello, hello
        await self.notify("notifications/initialized")
        return hello


class ProcessSession(StdioSession):
    """A session whose streams are a spawned server's stdin and stdout."""

    def __init__(self, process: trio.Process, *, timeout: float = ANSWER_TIMEOUT_S) -> None:
        assert process.stdin is not None and process.stdout is not None
        super().__init__(process.stdin, process.stdout, timeout=timeout)
        self.process = process


class RawWire:
    """One spawned server, driven with raw lines, and every stdout line it wrote.

    Unlike :class:`StdioSession` it lets a test send arbitrary bytes, pick its
    own request ids and read to EOF, so framing and exit behaviour are visible.
    """

    def __init__(self, process: trio.Process, stderr_path: Path, *, timeout: float) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stderr_path = stderr_path
        self.timeout = timeout
        self.lines = LineBuffer(process.stdout)
        self.raw_lines: list[bytes] = []

    async def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send_all(data)

    async def send(self, message: Mapping[str, Any]) -> None:
        await self.send_bytes(frame(message))

    async def request(self, request_id: int | str, method: str, params: Any = None) -> None:
        await self.send_bytes(request_line(request_id, method, params))

    async def notify(self, method: str, params: Any = None) -> None:
        await self.send_bytes(notification_line(method, params))

    async def read(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next stdout message, or None at EOF."""
        line = await self.lines.next_line(self.timeout if timeout is None else timeout)
        if line is None:
            return None
        self.raw_lines.append(line)
        message = json.loads(line)
        assert isinstance(message, dict) and message["jsonrpc"] == "2.0", line
        return message

    async def response(self, request_id: int | str | None) -> dict[str, Any]:
        """The next line, which must be the response to ``request_id``."""
        message = await self.read()
        assert message is not None, "server closed stdout"
        assert "method" not in message, f"unexpected notification {message}"
        assert message.get("id") == request_id, message
        return message

    async def call(self, request_id: int | str, method: str, params: Any = None) -> dict[str, Any]:
        await self.request(request_id, method, params)
        return await self.response(request_id)

    async def close_stdin(self) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.aclose()

    async def read_to_eof(self, timeout: float | None = None) -> list[dict[str, Any]]:
        messages = []
        while (message := await self.read(timeout)) is not None:
            messages.append(message)
        return messages

    async def exit_code(self, timeout: float | None = None) -> int:
        with trio.fail_after(self.timeout if timeout is None else timeout):
            return await self.process.wait()

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


@asynccontextmanager
async def open_stdio_process(
    command: list[str],
    *,
    env: Mapping[str, str] | None = None,
    stderr: int | IO[bytes] = subprocess.DEVNULL,
) -> AsyncIterator[trio.Process]:
    """Spawn ``command`` with piped stdin and stdout from the repository root; kill it on exit.

    The process is killed rather than asked to stop so that a test failing half
    way through a conversation never waits on it; its pipes are closed under a
    shielded scope so a cancelled test leaves no process or descriptor behind.
    """
    process = await trio.lowlevel.open_process(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        cwd=REPO_ROOT,
        env=None if env is None else dict(env),
    )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
        with trio.CancelScope(shield=True):
            await process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    await stream.aclose()


@asynccontextmanager
async def open_mcp_server(
    env: Mapping[str, str],
    *flags: str,
    client_name: str,
    stderr: int | IO[bytes] = subprocess.DEVNULL,
    timeout: float = ANSWER_TIMEOUT_S,
) -> AsyncIterator[ProcessSession]:
    """Spawn ``python -m gno_trio mcp *flags`` and hand back an initialized session to it."""
    command = [sys.executable, "-m", "gno_trio", "mcp", *flags]
    async with open_stdio_process(command, env=env, stderr=stderr) as process:
        session = ProcessSession(process, timeout=timeout)
        await session.initialize(client_name)
        yield session


def server_command(*args: str) -> list[str]:
    """The ``gno-trio mcp`` command line with ``args``, run by this interpreter."""
    return [sys.executable, "-m", "gno_trio", "mcp", *args]


def full_environment(server_env: Mapping[str, str]) -> dict[str, str]:
    """This process's environment with ``server_env`` on top and writes left to the flags."""
    environ = {k: v for k, v in os.environ.items() if k != "GNO_MCP_ENABLE_WRITE"}
    return {**environ, **server_env}


class Wire(RawWire):
    """One spawned ``gno-trio mcp`` and every stdout line it wrote."""

    def __init__(self, process: trio.Process, stderr_path: Path) -> None:
        super().__init__(process, stderr_path, timeout=10.0)

    async def handshake(self) -> None:
        answer = await self.call("init", "initialize", raw_initialize_params())
        assert answer["result"]["protocolVersion"] == PROTOCOL_VERSION
        await self.notify("notifications/initialized")


@asynccontextmanager
async def spawn(server_env: Mapping[str, str], tmp_path: Path, *args: str) -> AsyncIterator[Wire]:
    """Spawn ``gno-trio mcp *args`` over the index ``server_env`` names; stderr goes to a file."""
    stderr_path = tmp_path / f"stderr-{uuid.uuid4().hex}.log"
    with stderr_path.open("wb") as stderr:
        command = server_command(*args)
        environment = full_environment(server_env)
        async with open_stdio_process(command, env=environment, stderr=stderr) as process:
            yield Wire(process, stderr_path)


async def tool(wire: Wire, request_id: int, tool_name: str, **arguments: Any) -> dict[str, Any]:
    """Call ``tool_name`` as request ``request_id``; the result, which must not be an error."""
    answer = await wire.call(request_id, "tools/call", {"name": tool_name, "arguments": arguments})
    result: dict[str, Any] = answer["result"]
    assert not result.get("isError"), result
    return result


async def finished_job(wire: Wire, job_id: str) -> dict[str, Any]:
    """The job's status once it has left ``running`` (bounded)."""
    with trio.fail_after(JOB_WAIT_S):
        for request_id in range(1000, 10_000):
            status = (await tool(wire, request_id, "gno_job_status", jobId=job_id))[
                "structuredContent"
            ]
            if status["status"] != "running":
                return status
            await trio.sleep(0.05)
    raise AssertionError("unreachable")
