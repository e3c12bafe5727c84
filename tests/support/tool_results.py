"""Reading a failed ``tools/call`` answer the way a client does: from its text.

An error result is ``isError`` plus the text ``Error: CODE: message`` and
nothing structured (a structured body would not match the tool's
``outputSchema``); these helpers hold that shape in one place for the tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def tool_error_parts(result: Mapping[str, Any]) -> tuple[str, str]:
    """``(code, message)`` of an error result, after checking it is text only."""
    assert result.get("isError") is True, result
    assert "structuredContent" not in result, result
    text = result["content"][0]["text"]
    prefix, code, message = text.split(": ", 2)
    assert prefix == "Error" and code and message, text
    return code, message


def tool_error_code(result: Mapping[str, Any]) -> str:
    """The stable code an error result's text leads with."""
    return tool_error_parts(result)[0]


def tool_error_message(result: Mapping[str, Any]) -> str:
    """The human message after the code."""
    return tool_error_parts(result)[1]


def handler_error_code(text: str) -> str:
    """The code of a handler's ``ToolResult`` text (``Error: CODE: message``)."""
    prefix, code, _ = text.split(": ", 2)
    assert prefix == "Error", text
    return code


def sdk_error_code(result: Any) -> str:
    """The code of an error result as the official Python client hands it back."""
    assert result.is_error and result.structured_content is None, result
    return handler_error_code(result.content[0].text)
