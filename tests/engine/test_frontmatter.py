"""Frontmatter, titles, tags, headings and links extracted from a document."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gno_trio.engine.docmeta import Link
from gno_trio.engine.ingest import frontmatter_block
from gno_trio.engine.ingest.code_mask import mask_code
from gno_trio.engine.ingest.frontmatter import extract_meta
from gno_trio.engine.ingest.meta_fields import normalize_date, normalize_tag, snake_case
from tests.support.shared import MCP_DOCS, required

TAG_GRAMMAR = re.compile(r"^[^\W_](?:[\w.-]*[^\W_])?(?:/[^\W_](?:[\w.-]*[^\W_])?)*$")


# ---------------------------------------------------------------------------
# frontmatter block
# ---------------------------------------------------------------------------

FULL_NOTE = """---
title: Quarterly Planning
tags: [Planning, "Machine Learning", "#q3"]
author: Ada Lovelace
categories: [meetings, strategy]
type: meeting
date: 2024-03-05
relations:
  supersedes: [gno://notes/old-plan.md]
  relatedTo: roadmap.md
---
# Agenda

We discuss #budget/2024 and [[Roadmap]].
"""


def test_frontmatter_fields_are_parsed_and_body_starts_after_the_block() -> None:
    meta = extract_meta(FULL_NOTE, "notes/plan.md")
    assert meta.frontmatter_error is None
    assert meta.title == "Quarterly Planning"
    assert meta.author == "Ada Lovelace"
    assert meta.categories == ("meetings", "strategy")
    assert meta.content_type == "meeting"
    assert meta.date == "2024-03-05"
    assert meta.tags == ("budget/2024", "machine-learning", "planning", "q3")
    assert meta.relations == (
        ("supersedes", "gno://notes/old-plan.md"),
        ("related_to", "roadmap.md"),
    )
    assert meta.body_start_line == 12
    assert meta.body == "# Agenda\n\nWe discuss #budget/2024 and [[Roadmap]].\n"
    assert FULL_NOTE.split("\n")[meta.body_start_line - 1] == "# Agenda"
    assert meta.headings == ("Agenda",)


def test_frontmatter_mapping_is_read_only_and_json_ready() -> None:
    meta = extract_meta(FULL_NOTE, "notes/plan.md")
    assert meta.frontmatter["date"] == "2024-03-05"  # YAML date became ISO text
    assert meta.frontmatter["relations"]["relatedTo"] == "roadmap.md"
    json.dumps(dict(meta.frontmatter))
    with pytest.raises(TypeError):
        meta.frontmatter["title"] = "changed"  # type: ignore[index]


def test_crlf_and_bom_do_not_hide_frontmatter() -> None:
    text = "\ufeff---\r\ntitle: Windows Note\r\n---\r\n# Heading\r\n"
    meta = extract_meta(text, "win.md")
    assert meta.frontmatter_error is None
    assert meta.title == "Windows Note"
    assert meta.body_start_line == 4


def test_empty_frontmatter_is_fine() -> None:
    meta = extract_meta("---\n---\n# Title\n", "a.md")
    assert meta.frontmatter == {}
    assert meta.frontmatter_error is None
    assert meta.body_start_line == 3
    assert meta.title == "Title"


def test_document_that_is_only_frontmatter_has_an_empty_body() -> None:
    meta = extract_meta("---\ntitle: Only\n---", "a.md")
    assert meta.body == ""
    assert meta.title == "Only"


def test_unclosed_frontmatter_is_reported_and_nothing_is_lost() -> None:
    text = "---\ntitle: Draft\n\n# Real Title\n\nBody with #idea\n"
    meta = extract_meta(text, "drafts/x.md")
    assert meta.frontmatter == {}
    assert meta.frontmatter_error is not None and "never closed" in meta.frontmatter_error
    assert meta.body == text and meta.body_start_line == 1
    assert meta.title == "Real Title"
    assert meta.tags == ("idea",)


def test_leading_horizontal_rule_is_not_mistaken_for_broken_frontmatter() -> None:
    meta = extract_meta("---\n\nJust prose after a rule.\n", "rule.md")
    assert meta.frontmatter_error is None
    assert meta.title == "rule"


@pytest.mark.parametrize(
    ("block", "kind"),
    [("- a\n- b", "a list"), ("just a sentence", "a string"), ("42", "a number")],
)
def test_frontmatter_that_is_not_a_mapping_is_reported(block: str, kind: str) -> None:
    text = f"---\n{block}\n---\n# Heading\n"
    meta = extract_meta(text, "odd.md")
    assert meta.frontmatter == {}
    assert meta.frontmatter_error is not None
    assert "mapping" in meta.frontmatter_error and kind in meta.frontmatter_error
    assert meta.body == text, "the block's text stays searchable"
    assert meta.title == "Heading"


@pytest.mark.parametrize(
    ("block", "where", "problem"),
    [
        ("title: x\n\tindented: bad", "line 3, column 1", "cannot start any token"),
        ("title: a: b", "line 2, column 9", "mapping values are not allowed"),
        ("ok: 1\nlist: [unclosed\nnext: 2", "line 4", "expected ','"),
    ],
)
def test_malformed_yaml_is_reported_with_its_position(block: str, where: str, problem: str) -> None:
    meta = extract_meta(f"---\n{block}\n---\nBody\n", "bad.md")
    assert meta.frontmatter == {}
    assert meta.frontmatter_error is not None
    assert where in meta.frontmatter_error
    assert problem in meta.frontmatter_error


def test_impossible_yaml_timestamp_does_not_crash_indexing() -> None:
    meta = extract_meta("---\ndate: 2024-13-45\n---\n", "a.md")
    assert meta.frontmatter_error is not None and "month" in meta.frontmatter_error
    assert meta.date is None


def test_yaml_alias_bomb_is_refused_quickly() -> None:
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        name = chr(ord("a") + i)
        levels.append(f"{name}: &{name} [{', '.join(['*' + prev] * 10)}]")
    text = "---\n" + "\n".join(levels) + "\n---\nbody\n"
    meta = extract_meta(text, "bomb.md")
    assert meta.frontmatter == {}
    assert meta.frontmatter_error is not None and "too" in meta.frontmatter_error


def test_recursive_yaml_is_refused() -> None:
    meta = extract_meta("---\nloop: &x [*x]\n---\n", "a.md")
    assert meta.frontmatter_error is not None


def test_python_specific_yaml_tags_are_not_executed() -> None:
    text = "---\nx: !!python/object/apply:os.system ['echo pwned']\n---\n"
    meta = extract_meta(text, "evil.md")
    assert meta.frontmatter == {}
    assert meta.frontmatter_error is not None


def test_oversized_frontmatter_is_not_parsed() -> None:
    text = "---\n" + "k: v\n" * 60_000 + "---\nbody\n"
    meta = extract_meta(text, "huge.md")
    assert meta.frontmatter == {}
    assert meta.frontmatter_error is not None and "larger than" in meta.frontmatter_error


def test_keys_are_matched_case_insensitively() -> None:
    meta = extract_meta("---\nTitle: Capitalised\nAuthor: Grace\n---\n", "a.md")
    assert meta.title == "Capitalised"
    assert meta.author == "Grace"


# ---------------------------------------------------------------------------
# title and headings
# ---------------------------------------------------------------------------


def test_title_prefers_frontmatter_then_heading_then_file_stem() -> None:
    assert extract_meta("---\ntitle: From YAML\n---\n# From Heading\n", "f.md").title == (
        "From YAML"
    )
    assert extract_meta("Intro\n\n## Second Level\n# First\n", "f.md").title == "Second Level"
    assert extract_meta("no heading here\n", "dir/sub/my-file.md").title == "my-file"


def test_title_skips_generic_notes_heading_and_deep_headings() -> None:
    text = "# Notes\n\n### Detail\n\n## Real Topic\n"
    assert extract_meta(text, "a.md").title == "Real Topic"
    assert extract_meta("# notes\n", "daily/2024-01-01.md").title == "2024-01-01"


def test_headings_ignore_code_and_strip_closing_hashes() -> None:
    text = "# Intro ##\n```python\n# not a heading\n```\n#hashtag is not a heading\n## C#\n"
    meta = extract_meta(text, "a.md")
    assert meta.headings == ("Intro", "C#")


def test_blank_title_in_frontmatter_falls_back() -> None:
    assert extract_meta("---\ntitle: '   '\n---\n# H\n", "a.md").title == "H"


# ---------------------------------------------------------------------------
# tags
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Python", "python"),
        ("#Project/Alpha", "project/alpha"),
        ("Machine Learning", "machine-learning"),
        ("snake_case_tag", "snake-case-tag"),
        ("v1.2", "v1.2"),
        ("Ünïcödé", "ünïcödé"),
        ("日本語", "日本語"),
        ("  a//b/ ", "a/b"),
        ("-lead-and-trail.", "lead-and-trail"),
        ("c++", "c"),
        ("###", None),
        ("!!!", None),
        ("", None),
    ],
)
def test_normalize_tag(raw: str, expected: str | None) -> None:
    assert normalize_tag(raw) == expected


@given(st.text(max_size=40))
def test_normalized_tags_follow_the_grammar_and_are_stable(raw: str) -> None:
    tag = normalize_tag(raw)
    if tag is not None:
        assert TAG_GRAMMAR.match(tag), tag
        assert tag == tag.lower()
        assert normalize_tag(tag) == tag


@pytest.mark.parametrize(
    "tags_line",
    [
        "tags: [alpha, Beta]",
        "tags:\n  - alpha\n  - Beta",
        "tags: alpha, Beta",
        "tags: alpha Beta",
        "tag: [alpha, beta]",
    ],
)
def test_frontmatter_tags_in_every_form(tags_line: str) -> None:
    meta = extract_meta(f"---\n{tags_line}\n---\nbody\n", "a.md")
    assert meta.tags == ("alpha", "beta")


def test_logseq_tags_property() -> None:
    text = "tags:: research, [[Deep Learning]], #papers\n\n- first block\n"
    assert extract_meta(text, "pages/x.md").tags == ("deep-learning", "papers", "research")


def test_inline_hashtags_are_found_in_prose_only() -> None:
    text = "\n".join(
        [
            "# Heading is not a tag",
            "#start-of-line tag and a (#parenthesised) one, plus *#emphasis*",
            "Sentence ending with #done. And #Nested/Topic/Sub here.",
            "Not tags: `#inline-code`, issue #42, C# and F#, &#123; entity,",
            "https://example.com/page#fragment, [jump](#anchor), <a href='#x'>,",
            "[[Other Note#Section]] and word#inside.",
            "```sh",
            "# shell comment #fenced",
            "```",
            "~~~",
            "#tilde-fenced",
            "~~~",
        ]
    )
    meta = extract_meta(text, "a.md")
    assert meta.tags == (
        "done",
        "emphasis",
        "nested/topic/sub",
        "parenthesised",
        "start-of-line",
    )


def test_tags_from_all_sources_are_merged_sorted_and_unique() -> None:
    text = "---\ntags: [zeta, Alpha]\n---\ntags:: beta\nMore on #alpha and #gamma.\n"
    assert extract_meta(text, "a.md").tags == ("alpha", "beta", "gamma", "zeta")


def test_unclosed_fence_hides_the_rest_of_the_document() -> None:
    meta = extract_meta("#before\n```\n#inside [[Link]]\n", "a.md")
    assert meta.tags == ("before",)
    assert meta.links == ()


# ---------------------------------------------------------------------------
# links
# ---------------------------------------------------------------------------


def test_wiki_link_forms_and_positions() -> None:
    text = "---\ntitle: t\n---\nSee [[Plain]] and [[Target|shown text]].\n"
    text += "  Also [[Page#Some Heading]], [[work:Spec]] and [[Notes:Deep#h|alias]].\n"
    meta = extract_meta(text, "a.md")
    assert meta.links == (
        Link("wiki", "Plain", None, None, None, 4, 5),
        Link("wiki", "Target", None, None, "shown text", 4, 19),
        Link("wiki", "Page", None, "Some Heading", None, 5, 8),
        Link("wiki", "Spec", "work", None, None, 5, 31),
        Link("wiki", "Deep", "notes", "h", "alias", 5, 49),
    )
    lines = text.split("\n")
    for link in meta.links:
        assert lines[link.line - 1][link.col - 1 :].startswith("[[")


def test_wiki_links_that_are_not_document_references_are_skipped() -> None:
    text = "[[#Local Heading]] ![[diagram.png]] ![[Embedded Note]] [[Re: meeting]]"
    targets = [(link.target, link.collection) for link in extract_meta(text, "a.md").links]
    assert targets == [("Embedded Note", None), ("Re: meeting", None)]


def test_markdown_links_keep_local_targets_only() -> None:
    text = "\n".join(
        [
            "[Guide](docs/guide.md) and [Spaced](my%20note.md#Part%20Two 'title')",
            "[angle](<path with spaces.md>) [gno](gno://notes/a.md)",
            "[web](https://example.com) [mail](mailto:a@b.c) [top](#top) ![img](pic.png)",
            "[proto](//cdn.example.com/x.md) [paren](file_(1).md) \\[escaped](no.md)",
            "`[code](inline.md)`",
        ]
    )
    meta = extract_meta(text, "a.md")
    assert [(k.target, k.heading, k.display, k.line, k.col) for k in meta.links] == [
        ("docs/guide.md", None, "Guide", 1, 1),
        ("my note.md", "Part Two", "Spaced", 1, 28),
        ("path with spaces.md", None, "angle", 2, 1),
        ("gno://notes/a.md", None, "gno", 2, 32),
        ("file_(1).md", None, "paren", 4, 33),
    ]
    assert {link.kind for link in meta.links} == {"markdown"}


def test_links_inside_code_are_ignored() -> None:
    text = "```\n[[Fenced]] [x](fenced.md)\n```\n`[[Inline]]` and ``[y](double.md)``\n[[Real]]"
    assert [link.target for link in extract_meta(text, "a.md").links] == ["Real"]


# ---------------------------------------------------------------------------
# other fields
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-01-05", "2024-01-05"),
        ("2024-01-05T10:30:00", "2024-01-05T10:30:00"),
        ("2024-01-05T10:30:00+02:00", "2024-01-05T08:30:00Z"),
        ("2024-01-05T10:30:00Z", "2024-01-05T10:30:00Z"),
        ("2024/01/05", "2024-01-05"),
        ("January 5, 2024", "2024-01-05"),
        ("5 Jan 2024", "2024-01-05"),
        ("next tuesday", None),
        ("", None),
        (20240105, None),
        (True, None),
    ],
)
def test_normalize_date(value: object, expected: str | None) -> None:
    assert normalize_date(value) == expected


def test_yaml_dates_and_datetimes_are_normalised() -> None:
    text = "---\ndate: 2024-01-05 10:00:00+02:00\n---\n"
    assert extract_meta(text, "a.md").date == "2024-01-05T08:00:00Z"
    assert extract_meta("---\ndate: 2024-01-05\n---\n", "a.md").date == "2024-01-05"


def test_date_prefers_date_then_created_then_updated() -> None:
    text = "---\nupdated: 2024-03-01\ncreated: 2024-02-01\n---\n"
    assert extract_meta(text, "a.md").date == "2024-02-01"
    text = "---\ndate: someday\nupdated: 2024-03-01\n---\n"
    assert extract_meta(text, "a.md").date == "2024-03-01"


@pytest.mark.parametrize(
    ("block", "author", "categories", "content_type"),
    [
        ("author: [Ada, Grace]\ncategory: Ops", "Ada, Grace", ("Ops",), None),
        ("author: {name: Linus}\ncategories: a, b, a", "Linus", ("a", "b"), None),
        ("contentType: decision\ncategories: [x, 7]", None, ("x", "7"), "decision"),
        ("type: [not, scalar]\nauthor: true", None, (), None),
    ],
)
def test_author_categories_and_type(
    block: str, author: str | None, categories: tuple[str, ...], content_type: str | None
) -> None:
    meta = extract_meta(f"---\n{block}\n---\n", "a.md")
    assert meta.author == author
    assert meta.categories == categories
    assert meta.content_type == content_type


def test_relations_in_mapping_and_list_form() -> None:
    text = """---
relations:
  - type: dependsOn
    target: "[[Build System|build]]"
  - type: Related To
    target: [a.md, b.md, a.md]
  - not: a relation
---
"""
    assert extract_meta(text, "a.md").relations == (
        ("depends_on", "Build System"),
        ("related_to", "a.md"),
        ("related_to", "b.md"),
    )


def test_relations_of_the_wrong_shape_are_ignored() -> None:
    assert extract_meta("---\nrelations: just text\n---\n", "a.md").relations == ()


@pytest.mark.parametrize(
    ("name", "expected"),
    [("relatedTo", "related_to"), ("Related To", "related_to"), ("works-at", "works_at")],
)
def test_snake_case(name: str, expected: str) -> None:
    assert snake_case(name) == expected


# ---------------------------------------------------------------------------
# robustness and speed
# ---------------------------------------------------------------------------


@given(st.text(alphabet=st.sampled_from(list("`~\n a#[]x")), max_size=200))
def test_masking_keeps_length_and_line_structure(text: str) -> None:
    masked = mask_code(text)
    assert len(masked) == len(text)
    assert [i for i, c in enumerate(masked) if c == "\n"] == [
        i for i, c in enumerate(text) if c == "\n"
    ]


MARKUP = st.sampled_from(
    [
        "---\n",
        "title: x\n",
        "tags: [a, b]\n",
        "# H\n",
        "#tag ",
        "[[T|a]]",
        "[l](x.md)",
        "`",
        "```\n",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(MARKUP, st.text(max_size=8)), max_size=30).map("".join))
def test_extract_meta_never_raises_and_is_self_consistent(text: str) -> None:
    meta = extract_meta(text, "fuzz/note.md")
    assert meta.title
    plain = text.removeprefix("\ufeff")
    lines = plain.split("\n")
    if meta.frontmatter_error is None:
        assert meta.body == "\n".join(lines[meta.body_start_line - 1 :])
    else:
        assert meta.body == plain and meta.body_start_line == 1
    for tag in meta.tags:
        assert TAG_GRAMMAR.match(tag), tag
    assert list(meta.tags) == sorted(set(meta.tags))
    for link in meta.links:
        assert lines[link.line - 1][link.col - 1] == "["
    json.dumps(dict(meta.frontmatter))


def test_real_corpus_is_parsed() -> None:
    corpus = required(MCP_DOCS, "the shared mcp-docs fixture corpus")
    texts = [(str(p.relative_to(corpus)), p.read_text("utf-8")) for p in corpus.rglob("*.md")]
    assert len(texts) == 344
    metas = [extract_meta(text, rel) for rel, text in texts]
    assert all(meta.frontmatter_error is None for meta in metas)
    with_frontmatter = [meta for meta in metas if meta.frontmatter]
    assert len(with_frontmatter) >= 340
    assert all(meta.title == meta.frontmatter["title"] for meta in with_frontmatter)
    assert sum(len(meta.links) for meta in metas) > 1000


@pytest.mark.parametrize(
    "block",
    [
        "title: Plain\ntags: [a, b]\ndate: 2024-03-01",
        "date: 2024-03-01T10:00:00Z\nupdated: 2024-03-01 10:00:00",
        "tags:\n  - one\n  - two\nnested:\n  deep: {x: 1, y: [true, null, 1.5]}",
        "base: &b {k: v}\ncopy: *b\nyes: yes\noctal: 0o17\nlarge: 1e3",
        "title: 'quoted: colon'\nauthor: \"Ann \\u00e9\"\ncategories: x, y",
        "title: x\n\tindented: bad",
        "list: [unclosed\nnext: 2",
        "- just\n- a list",
    ],
)
def test_libyaml_and_pure_python_parsing_agree(block: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast loader is an optimisation: values and error messages stay the same."""
    text = f"---\n{block}\n---\nBody #tag\n"
    fast = extract_meta(text, "note.md")
    monkeypatch.setattr(frontmatter_block, "_FAST_LOADER", None)
    slow = extract_meta(text, "note.md")
    assert fast == slow
