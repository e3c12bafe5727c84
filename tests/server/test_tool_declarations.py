"""A tool is declared whole in its module: the catalogue refuses half a declaration.

Its output schema file and its egress content class travel with it; the
egress rules and the output schema list name no tool, so a new tool is its
module, one line of the catalogue order and its schema file.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import msgspec
import pytest

from gno_trio.engine.egress_rules import EGRESS_CONTENT_CLASSES
from gno_trio.server.registry import Catalogue, ToolDefinition, read_tool
from gno_trio.server.schemas import OUTPUT_SCHEMA_NAMES, output_schema
from gno_trio.server.tooltypes import ToolResult
from gno_trio.tools import CATALOGUE

PACKAGE = Path(__file__).resolve().parents[2] / "gno_trio"


class NoteInput(msgspec.Struct, forbid_unknown_fields=True):
    ref: str


def _handler(_runtime: Any) -> Any:
    async def handle(args: NoteInput, ctx: Any) -> ToolResult:
        return ToolResult(text=args.ref, structured={})

    return handle


def _tool(*, output: str = "get", content_class: str = "source") -> ToolDefinition:
    return read_tool(
        "gno_note_peek",
        NoteInput,
        output,
        _handler,
        content_class=content_class,
        full="When a note's first lines are enough: returns them, up to 40 lines.",
    )


def test_a_complete_declaration_is_catalogued_with_its_class_and_schema() -> None:
    catalogue = Catalogue(
        order=("gno_note_peek",), tools=(_tool(),), content_classes=EGRESS_CONTENT_CLASSES
    )
    assert catalogue.content_classes == {"gno_note_peek": "source"}
    [bound] = catalogue.bind(runtime=None, profile="full", write_enabled=False)  # type: ignore[arg-type]
    assert bound.spec.output_schema == output_schema("get")


@pytest.mark.parametrize(
    ("declaration", "named"),
    [
        ({"content_class": "everything"}, "unknown egress content class 'everything'"),
        ({"content_class": ""}, "unknown egress content class ''"),
        ({"output": "note-peek"}, "no output schema 'note-peek'"),
    ],
)
def test_the_catalogue_refuses_a_tool_declared_by_half(
    declaration: dict[str, str], named: str
) -> None:
    with pytest.raises(ValueError, match=named):
        Catalogue(
            order=("gno_note_peek",),
            tools=(_tool(**declaration),),
            content_classes=EGRESS_CONTENT_CLASSES,
        )


def test_a_tool_cannot_be_declared_without_a_content_class() -> None:
    with pytest.raises(TypeError, match="content_class"):
        read_tool("gno_note_peek", NoteInput, "get", _handler, full="x" * 30)  # type: ignore[call-arg]


def test_every_served_tool_declares_a_known_class_and_an_existing_schema() -> None:
    assert list(CATALOGUE.content_classes) == list(CATALOGUE.order)
    assert set(CATALOGUE.content_classes.values()) <= set(EGRESS_CONTENT_CLASSES)
    assert {d.output for d in CATALOGUE.definitions.values()} <= set(OUTPUT_SCHEMA_NAMES)


def test_the_output_schema_list_is_the_schema_files() -> None:
    folder = PACKAGE / "server" / "output_schemas"
    files = {path.name.removesuffix(".schema.json") for path in folder.glob("*.schema.json")}
    assert set(OUTPUT_SCHEMA_NAMES) == files


def test_the_egress_rules_and_schema_list_name_no_tool() -> None:
    """Tool names live in the tool modules; the engine's egress rules and the schema list judge
    classes and files only."""
    names = set(CATALOGUE.order)
    for path in [*(PACKAGE / "engine" / "egress").glob("*.py"), PACKAGE / "server" / "schemas.py"]:
        strings = {
            node.value
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
        assert not names & strings, path.name
