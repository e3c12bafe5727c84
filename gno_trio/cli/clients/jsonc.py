"""Edit a JSON-with-comments file in place: one member set or removed, the rest kept.

MCP clients keep their servers in JSON files that people edit by hand;
Zed's and VS Code's carry ``//`` and ``/* */`` comments and trailing commas.
Loading such a file and dumping it again would drop the comments and
reorder the layout, so this module edits the text itself: it scans the
document once into the spans of its objects and members, then replaces or
inserts exactly one member (or cuts one out) and leaves every other byte
alone. :func:`loads` reads the same dialect into Python values.

The scanner accepts what those clients accept (JSON, comments, trailing
commas) and raises :class:`JsoncError` with a line number for anything else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

_WHITESPACE = " \t\r\n"
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
MAX_DEPTH = 256


class JsoncError(ValueError):
    """The text is not JSON with comments; the message names the line."""


@dataclass
class Node:
    """A value's span; objects also know their members and braces."""

    kind: str  # "object", "array" or "scalar"
    start: int
    end: int
    members: list[Member] = field(default_factory=list)


@dataclass
class Member:
    key: str
    key_start: int
    value: Node
    comma: int | None = None  # offset of the comma after the value, if any


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> JsoncError:
        line = self.text.count("\n", 0, self.pos) + 1
        return JsoncError(f"{what} at line {line}")

    def skip(self) -> None:
        """Whitespace and comments."""
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in _WHITESPACE:
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.pos = end + 2
            else:
                return

    def value(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise self.fail("nesting too deep")
        self.skip()
        start = self.pos
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of text")
        char = self.text[self.pos]
        if char == "{":
            return self._object(depth)
        if char == "[":
            return self._array(depth)
        match = (_STRING if char == '"' else _SCALAR).match(self.text, self.pos)
        if match is None:
            raise self.fail("unexpected character")
        self.pos = match.end()
        return Node("scalar", start, self.pos)

    def _object(self, depth: int) -> Node:
        node = Node("object", self.pos, -1)
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("}", self.pos):
                self.pos += 1
                node.end = self.pos
                return node
            if node.members and node.members[-1].comma is None:
                raise self.fail("expected ',' or '}'")
            match = _STRING.match(self.text, self.pos)
            if match is None:
                raise self.fail("expected a quoted key")
            key = json.loads(match.group(0))
            key_start = self.pos
            self.pos = match.end()
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail("expected ':'")
            self.pos += 1
            member = Member(str(key), key_start, self.value(depth + 1))
            node.members.append(member)
            self.skip()
            if self.text.startswith(",", self.pos):
                member.comma = self.pos
                self.pos += 1

    def _array(self, depth: int) -> Node:
        node = Node("array", self.pos, -1)
        self.pos += 1
        expecting = True
        while True:
            self.skip()
            if self.text.startswith("]", self.pos):
                self.pos += 1
                node.end = self.pos
                return node
            if not expecting:
                raise self.fail("expected ',' or ']'")
            self.value(depth + 1)
            self.skip()
            expecting = self.text.startswith(",", self.pos)
            if expecting:
                self.pos += 1


def parse(text: str) -> Node:
    """The span tree of a document whose top level is an object (blank text is ``{}``)."""
    scanner = _Scanner(text)
    scanner.skip()
    if scanner.pos >= len(text):
        return Node("object", -1, -1)
    root = scanner.value(0)
    scanner.skip()
    if scanner.pos != len(text):
        raise scanner.fail("unexpected text after the end")
    if root.kind != "object":
        raise JsoncError("the top level is not an object")
    return root


def loads(text: str) -> Any:
    """Python values of a JSON-with-comments document (comments and trailing commas dropped)."""
    root = parse(text)
    if root.start < 0:
        return {}
    return json.loads(_plain(text, root))


def _plain(text: str, node: Node) -> str:
    if node.kind == "scalar":
        return text[node.start : node.end]
    if node.kind == "object":
        inner = ", ".join(
            f"{json.dumps(member.key)}: {_plain(text, member.value)}" for member in node.members
        )
        return "{" + inner + "}"
    # Arrays are re-read through a one-off scan of their own items.
    items = []
    scanner = _Scanner(text)
    scanner.pos = node.start + 1
    while True:
        scanner.skip()
        if text.startswith("]", scanner.pos):
            break
        items.append(_plain(text, scanner.value(1)))
        scanner.skip()
        if text.startswith(",", scanner.pos):
            scanner.pos += 1
    return "[" + ", ".join(items) + "]"


def _find(node: Node, key: str) -> Member | None:
    found = [member for member in node.members if member.key == key]
    return found[-1] if found else None  # JSON readers let the last duplicate win


def _line_indent(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    prefix = text[start:offset]
    return prefix if not prefix.strip() else re.match(r"[ \t]*", prefix).group(0)  # type: ignore[union-attr]


def _unit(text: str) -> str:
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else "  "


def _dump(value: Any, indent: str, unit: str) -> str:
    body = json.dumps(value, indent=len(unit.expandtabs(4)) or 2, ensure_ascii=False)
    if "\t" in unit:
        body = re.sub(r"(?m)^( {4})+", lambda m: "\t" * (len(m.group(0)) // 4), body)
    return body.replace("\n", "\n" + indent)


def set_member(text: str, keys: Sequence[str], value: Any) -> str:
    """``text`` with the member at ``keys`` set to ``value`` (objects made as needed)."""
    if not keys:
        raise ValueError("keys must not be empty")
    root = parse(text)
    unit = _unit(text)
    if root.start < 0:
        nested: Any = value
        for key in reversed(keys):
            nested = {key: nested}
        return _dump(nested, "", unit) + "\n" + text
    node = root
    for depth, key in enumerate(keys):
        member = _find(node, key)
        rest = keys[depth + 1 :]
        if member is None:
            nested = value
            for inner in reversed(rest):
                nested = {inner: nested}
            return _insert(text, node, key, nested, unit)
        if not rest:
            indent = _line_indent(text, member.key_start)
            start, end = member.value.start, member.value.end
            return text[:start] + _dump(value, indent, unit) + text[end:]
        if member.value.kind != "object":
            raise JsoncError(f"{'.'.join(keys[: depth + 1])} is not an object")
        node = member.value
    raise AssertionError("unreachable")


def _insert(text: str, node: Node, key: str, value: Any, unit: str) -> str:
    outer = _line_indent(text, node.start)
    if node.members:
        last = node.members[-1]
        indent = _line_indent(text, last.key_start)
        entry = f"\n{indent}{json.dumps(key)}: {_dump(value, indent, unit)}"
        if last.comma is not None:  # trailing-comma style: the new member gets one too
            at = last.comma + 1
            return text[:at] + entry + "," + text[at:]
        at = last.value.end
        return text[:at] + "," + entry + text[at:]
    indent = outer + unit
    entry = f"\n{indent}{json.dumps(key)}: {_dump(value, indent, unit)}\n{outer}"
    at = node.start + 1
    inside = text[at : node.end - 1]
    tail = inside if inside.strip() else ""  # keep comments inside an empty object
    return text[:at] + (tail.rstrip() + entry if tail else entry) + text[node.end - 1 :]


def remove_member(text: str, keys: Sequence[str]) -> str | None:
    """``text`` without the member at ``keys``; None when there is no such member."""
    root = parse(text)
    if root.start < 0:
        return None
    node = root
    for key in keys[:-1]:
        member = _find(node, key)
        if member is None or member.value.kind != "object":
            return None
        node = member.value
    member = _find(node, keys[-1])
    if member is None:
        return None
    index = node.members.index(member)
    line_start = text.rfind("\n", 0, member.key_start) + 1
    own_line = not text[line_start : member.key_start].strip()
    start = line_start if own_line else member.key_start
    if member.comma is None and index > 0:
        # The last member leaves with the comma before it; what follows stays.
        previous = node.members[index - 1].comma
        assert previous is not None
        return text[:previous] + text[member.value.end :]
    end = member.comma + 1 if member.comma is not None else member.value.end
    if own_line:
        newline = text.find("\n", end)
        if newline >= 0 and not text[end:newline].strip():
            end = newline + 1
    return text[:start] + text[end:]


__all__ = ["JsoncError", "loads", "parse", "remove_member", "set_member"]
