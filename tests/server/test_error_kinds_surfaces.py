"""Codes that were missing from the error table answer with their kind on each surface.

Before they were listed, ``EGRESS_DENIED``, ``SYMLINK`` and ``SPECIAL_FILE``
were unknown codes and so runtime failures: exit 2 on the command line and an
internal error (-32603) from ``resources/read``. Each is a refusal the caller
cannot get past by retrying (``forbidden``): exit 1, and ``invalid params``
carrying the engine's message.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from gno_trio.cli.main import report_error
from gno_trio.errors import GnoError
from gno_trio.protocol.errors import INVALID_PARAMS, ProtocolError
from gno_trio.protocol.versions import Era
from gno_trio.server.context import RequestContext
from gno_trio.server.dispatch import McpApp
from tests.support.mcp_echo_app import EchoResources

FORMERLY_UNLISTED = ["EGRESS_DENIED", "SYMLINK", "SPECIAL_FILE"]


@pytest.mark.parametrize("code", FORMERLY_UNLISTED)
def test_cli_exits_1_for_a_refusal_and_prints_its_code(
    code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = report_error(GnoError(code, "not allowed here"), as_json=True)
    printed = capsys.readouterr()
    assert status == 1
    assert json.loads(printed.out) == {"error": code, "message": "not allowed here"}
    assert printed.err == f"Error: {code}: not allowed here\n"


@pytest.mark.parametrize("code", FORMERLY_UNLISTED)
@pytest.mark.parametrize("era", [Era.LEGACY, Era.MODERN])
async def test_resources_read_answers_invalid_params_not_an_internal_error(
    code: str, era: Era
) -> None:
    class Refusing(EchoResources):
        async def read(self, uri: str, ctx: RequestContext) -> list[dict[str, Any]]:
            raise GnoError(code, f"{uri}: not allowed here")

    app = McpApp(name="gno", version="1", resources=Refusing())
    version = "2025-11-25" if era is Era.LEGACY else "2026-07-28"
    ctx = RequestContext(era=era, protocol_version=version, session_id="sess-1")
    with pytest.raises(ProtocolError) as raised:
        await app.handle_request("resources/read", {"uri": "echo://greeting"}, ctx)
    assert raised.value.code == INVALID_PARAMS
    assert raised.value.message == "echo://greeting: not allowed here"
    assert raised.value.data == {"uri": "echo://greeting"}
