"""The flat front matter reader means exactly what YAML means, or steps aside.

``plain_yaml.load`` spares most notes a YAML parse. Whatever block it reads,
it must read as YAML's safe loader does (same keys, order, values and types);
a block it is not sure of must go to YAML (``None``). Hypothesis writes
blocks from pieces chosen to sit on the edges: words YAML turns into
booleans or null, numbers, dates real and impossible, quotes, colons,
comments, indentation, lists in both styles.
"""

from __future__ import annotations

import datetime as dt

import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gno_trio.engine.ingest import plain_yaml
from gno_trio.engine.ingest.frontmatter import extract_meta

_WORDS = [
    "alpha",
    "Beta",
    "note",
    "yes",
    "No",
    "on",
    "OFF",
    "null",
    "Null",
    "true",
    "y",
    "n",
    "~",
    "12",
    "1.5",
    "0x1F",
    ".inf",
    "1e3",
    "2024-01-31",
    "2024-02-30",
    "2024-1-5",
    "2024-01-31T10:00:00",
    "it's",
    "a,b",
    "a: b",
    "a #c",
    "#c",
    "x  y",
    "&anchor",
    "*alias",
    "!tag",
    "%p",
    "@at",
    "café",
    "日本語",
    "a\u00a0b",
    "(draft)",
    "v1.2",
    "what?",
    "-dash",
    "a-b",
    "'single'",
    '"double"',
    '"esc\\n"',
    "'it''s'",
    '""',
    "[x]",
    "{a: 1}",
    "<<",
    "|",
    ">",
]
_KEYS = ["title", "tags", "date", "author", "yes", "on", "created-at", "_hidden", "a b", "Null"]
_SPACES = st.sampled_from(["", " ", "  ", "\t"])


@st.composite
def _line(draw: st.DrawFn) -> str:
    key = draw(st.sampled_from(_KEYS))
    kind = draw(st.sampled_from(["scalar", "sentence", "flow", "block", "empty", "comment", "raw"]))
    words = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3)
    if kind == "scalar":
        return f"{key}:{draw(_SPACES)} {draw(st.sampled_from(_WORDS))}{draw(_SPACES)}"
    if kind == "sentence":
        return f"{key}: {' '.join(draw(words))}"
    if kind == "flow":
        separator = draw(st.sampled_from([", ", ",", " , "]))
        return f"{key}: [{separator.join(draw(words))}]"
    if kind == "block":
        indent = draw(st.sampled_from(["", "  ", "    "]))
        items = "\n".join(f"{indent}- {word}" for word in draw(words))
        if draw(st.booleans()):
            items += f"\n{draw(st.sampled_from(['', ' ', '   ']))}- {draw(st.sampled_from(_WORDS))}"
        return f"{key}:\n{items}"
    if kind == "empty":
        return f"{key}:"
    if kind == "comment":
        return f"{draw(st.sampled_from(['', '  ']))}# {draw(st.sampled_from(_WORDS))}"
    return draw(st.sampled_from(["  nested: value", "- top", "key:value", "---", "  more text"]))


def _yaml(text: str) -> object:
    try:
        return yaml.safe_load(text)
    except (yaml.YAMLError, ValueError):
        return "<error>"


@settings(max_examples=500, deadline=None)
@given(st.lists(_line(), min_size=1, max_size=5).map("\n".join))
@example("title: [what?]")  # YAML refuses a "?" in a flow list; the fast path must not read it
def test_a_block_read_without_yaml_reads_as_yaml_reads_it(block: str) -> None:
    flat = plain_yaml.load(block)
    if flat is None:
        return
    expected = _yaml(block)
    assert isinstance(expected, dict)
    assert list(flat.items()) == list(expected.items())
    for key, value in flat.items():
        assert type(value) is type(expected[key])


def test_the_usual_blocks_are_read_without_yaml() -> None:
    usual = [
        "title: Servers can provide structured data 0\ntags: [meeting, ops]\ndate: 2024-01-01",
        "title: 'Quoted: with a colon'\nauthor: Ada Lovelace\ntags:\n  - one\n  - two",
        'title: "Café notes, draft"\ncategories:\n- research\n# a comment line\nstatus: draft',
    ]
    for block in usual:
        flat = plain_yaml.load(block)
        assert flat is not None, block
        assert flat == yaml.safe_load(block)
    assert plain_yaml.load("date: 2024-01-01")["date"] == dt.date(2024, 1, 1)  # type: ignore[index]


def test_what_it_declines_still_parses_as_yaml() -> None:
    note = "---\ntitle: Plan\npublished: yes\ncount: 12\ntags: [a, b]\n---\nBody text.\n"
    assert plain_yaml.load("title: Plan\npublished: yes\ncount: 12\ntags: [a, b]") is None
    meta = extract_meta(note, "plan.md")
    assert meta.title == "Plan"
    assert meta.tags == ("a", "b")
    assert meta.frontmatter_error is None
