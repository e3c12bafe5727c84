"""Answering one admitted JSON-RPC request: the one rule stdio and HTTP share.

The app works the answer out within the request's deadline; the outcome is
always one encoded line. A protocol error is answered as that error; any
other failure is logged and answered ``-32603`` (the message never ends the
connection); a request still running when its deadline passes is answered
with the deadline error. The transport then only sends the line: stdio as
is, HTTP at the status :func:`~gno_trio.protocol.routing.http_status` gives
``error_code`` in the request's era.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from gno_trio.protocol.errors import ProtocolError, deadline_passed, internal_error
from gno_trio.protocol.jsonrpc import Request, encode_answer, encode_error
from gno_trio.server.context import RequestContext
from gno_trio.server.dispatch import McpApp
from gno_trio.transports.deadlines import AnswerDeadline

logger = logging.getLogger("gno_trio.transports")


class Answer(NamedTuple):
    """The encoded response line, and its JSON-RPC error code when it is an error."""

    line: bytes
    error_code: int | None


async def answer(
    app: McpApp, request: Request, context: RequestContext, deadline: AnswerDeadline
) -> Answer:
    """Run ``request`` through ``app`` under ``deadline.answering``; never raises but Cancelled."""
    try:
        with deadline.answering:
            result = await app.handle_request(request.method, request.params, context)
        if deadline.passed:
            raise deadline_passed(deadline.seconds)
        return Answer(encode_answer(request.id, result), None)
    except ProtocolError as exc:
        return Answer(encode_error(request.id, exc.to_error_object()), exc.code)
    except Exception:
        logger.exception("request %s failed", request.method)
        error = internal_error()
        return Answer(encode_error(request.id, error.to_error_object()), error.code)


__all__ = ["Answer", "answer"]
