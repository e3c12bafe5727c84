"""``tags``, ``links``, ``backlinks`` and ``graph`` from the command line.

Tag edits are checked on the files themselves: a Markdown note's
frontmatter changes in its ``tags`` entry only (every other byte stays),
a file without frontmatter gets one, plain text keeps its bytes and carries
the tag in the index, and nothing is written when the note changed on disk,
when its frontmatter does not parse, or when the write lease is held.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gno_trio.engine.ingest.tagging import edit_tags
from tests.conftest import bump_mtime, write_corpus
from tests.support.cli_support import Cli, make_cli
from tests.support.lease_holder import lease_held_elsewhere

SchemaCheck = Callable[[str, Any], None]

NOTES = {
    "alpha.md": (
        "---\n"
        "title: Alpha   # the first note\n"
        "tags: [project, Planning]\n"
        "owner: jane\n"
        "---\n"
        "# Alpha\n\nSee [[Beta]] and [the beta](beta.md). Inline #roadmap tag.\n"
    ),
    "beta.md": "# Beta\n\nNo frontmatter here; links back to [[Alpha]].\n",
    "plain.txt": "plain text about zebras\n",
    "broken.md": "---\ntitle: [oops\n---\nbroken frontmatter\n",
    "crlf.md": "---\r\ntitle: Windows\r\ntags:\r\n  - one\r\n---\r\nbody\r\n",
}


@pytest.fixture
def vault(tmp_path: Path) -> tuple[Cli, Path]:
    cli = make_cli(tmp_path)
    notes = write_corpus(cli.home / "notes", NOTES)
    cli.run("init", str(notes), "--name", "notes")
    cli.run("update")
    return cli, notes


def test_tags_list_counts_and_filters(vault: tuple[Cli, Path], schema_check: SchemaCheck) -> None:
    cli, _ = vault
    listed = cli.json("tags")
    schema_check("tags-list", listed)
    assert {t["tag"]: t["count"] for t in listed["tags"]} == {
        "project": 1,
        "planning": 1,
        "roadmap": 1,
        "one": 1,
    }
    assert cli.json("tags", "list", "--prefix", "pro")["tags"] == [{"tag": "project", "count": 1}]
    assert cli.json("tags", "--prefix", "pro", "-c", "notes")["meta"]["collection"] == "notes"
    assert "| project | 1 |" in cli.run("tags", "list", "--md").stdout
    assert cli.run("tags", "-c", "nope", code=1).stderr.count("Collection not found") == 1


def test_tags_add_edits_only_the_tags_entry(vault: tuple[Cli, Path]) -> None:
    cli, notes = vault
    done = cli.json("tags", "add", "notes/alpha.md", "Release/2024")
    assert done["tag"] == "release/2024" and done["wroteToFile"] is True
    text = (notes / "alpha.md").read_text()
    assert text == NOTES["alpha.md"].replace(
        "tags: [project, Planning]\n", "tags:\n  - project\n  - Planning\n  - release/2024\n"
    )
    assert {t["tag"] for t in cli.json("tags")["tags"]} >= {"release/2024", "planning"}
    assert cli.json("get", "notes/alpha.md")["docid"] == done["docid"]
    again = cli.json("tags", "add", "notes/alpha.md", "release/2024")
    assert again["wroteToFile"] is False and (notes / "alpha.md").read_text() == text
    removed = cli.json("tags", "rm", "notes/alpha.md", "planning")
    assert removed["removedFromFile"] is True
    assert "Planning" not in (notes / "alpha.md").read_text()
    assert "planning" not in {t["tag"] for t in cli.json("tags")["tags"]}


def test_tags_add_to_a_note_without_frontmatter_and_back(vault: tuple[Cli, Path]) -> None:
    cli, notes = vault
    cli.run("tags", "add", "notes/beta.md", "draft")
    assert (notes / "beta.md").read_text() == "---\ntags:\n  - draft\n---\n" + NOTES["beta.md"]
    hit = cli.json("search", "back", "-c", "notes")["results"][0]
    assert hit["uri"] == "gno://notes/beta.md" and hit["line"] == 7
    cli.run("tags", "rm", "notes/beta.md", "draft")
    assert (notes / "beta.md").read_text() == NOTES["beta.md"]


def test_crlf_notes_keep_their_line_endings(vault: tuple[Cli, Path]) -> None:
    cli, notes = vault
    cli.run("tags", "add", "notes/crlf.md", "two")
    raw = (notes / "crlf.md").read_bytes()
    assert raw == b"---\r\ntitle: Windows\r\ntags:\r\n  - one\r\n  - two\r\n---\r\nbody\r\n"


def test_plain_text_is_tagged_in_the_index_and_keeps_its_bytes(vault: tuple[Cli, Path]) -> None:
    cli, notes = vault
    done = cli.json("tags", "add", "notes/plain.txt", "animals")
    assert done["wroteToFile"] is False
    assert (notes / "plain.txt").read_text() == NOTES["plain.txt"]
    assert [h["uri"] for h in cli.json("search", "zebras", "--tags-any", "animals")["results"]] == [
        "gno://notes/plain.txt"
    ]
    (notes / "plain.txt").write_text("plain text about zebras and lions\n")
    bump_mtime(notes / "plain.txt")
    cli.run("update")
    assert "animals" in {t["tag"] for t in cli.json("tags")["tags"]}, "user tags survive a sync"
    cli.run("tags", "rm", "notes/plain.txt", "animals")
    assert "animals" not in {t["tag"] for t in cli.json("tags")["tags"]}


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (("add", "notes/alpha.md", "bad tag!"), 1, "Invalid tag"),
        (("add", "notes/alpha.md", "-"), 1, "Invalid tag"),
        (("add", "notes/missing.md", "x"), 1, "Document not found"),
        (("rm", "notes/alpha.md", "absent"), 1, "Tag absent is not on gno://notes/alpha.md"),
        (("rm", "notes/alpha.md", "roadmap"), 1, "inline #roadmap"),
    ],
)
def test_bad_tag_edits_are_refused_and_change_nothing(
    vault: tuple[Cli, Path], args: tuple[str, ...], code: int, needle: str
) -> None:
    cli, notes = vault
    before = cli.state(), {p.name: p.read_bytes() for p in notes.iterdir()}
    done = cli.run("tags", *args, code=code)
    assert needle in done.stderr
    assert (cli.state(), {p.name: p.read_bytes() for p in notes.iterdir()}) == before


def test_a_note_changed_on_disk_or_with_broken_frontmatter_is_not_rewritten(
    vault: tuple[Cli, Path],
) -> None:
    cli, notes = vault
    (notes / "alpha.md").write_text(NOTES["alpha.md"] + "edited outside\n")
    done = cli.run("tags", "add", "notes/alpha.md", "x", code=2)
    assert "changed on disk since it was indexed" in done.stderr
    assert (notes / "alpha.md").read_text().endswith("edited outside\n")
    broken = cli.json("tags", "add", "notes/broken.md", "fixme")
    assert broken["wroteToFile"] is False
    assert (notes / "broken.md").read_text() == NOTES["broken.md"]
    assert "fixme" in {t["tag"] for t in cli.json("tags")["tags"]}


def test_tag_edits_wait_for_the_write_lease(vault: tuple[Cli, Path]) -> None:
    cli, notes = vault
    with lease_held_elsewhere(cli.data_dir / ".mcp-write.lock"):
        done = cli.run("tags", "add", "notes/alpha.md", "locked", code=4)
    assert "LOCKED" in done.stderr
    assert (notes / "alpha.md").read_text() == NOTES["alpha.md"]


def test_edit_tags_keeps_yaml_meaningful() -> None:
    edited = edit_tags("---\ntags: a, b\n---\nx\n", add="true")
    assert edited == '---\ntags:\n  - a\n  - b\n  - "true"\n---\nx\n'
    assert edit_tags("---\ntag: solo\nother: 1\n---\n", remove="solo") == "---\nother: 1\n---\n"
    assert edit_tags("\ufeff# Title\n", add="x") == "\ufeff---\ntags:\n  - x\n---\n# Title\n"
    assert edit_tags("---\ntitle: [oops\n---\n", add="x") is None


# ---------------------------------------------------------------------------
# links, backlinks, graph
# ---------------------------------------------------------------------------


def test_links_and_backlinks(vault: tuple[Cli, Path], schema_check: SchemaCheck) -> None:
    cli, _ = vault
    links = cli.json("links", "notes/alpha.md")
    schema_check("links-list", links)
    assert [(link["linkType"], link.get("resolvedUri")) for link in links["links"]] == [
        ("wiki", "gno://notes/beta.md"),
        ("markdown", "gno://notes/beta.md"),
    ]
    assert cli.json("links", "list", "notes/alpha.md", "--type", "wiki")["meta"]["totalLinks"] == 1
    human = cli.run("links", "notes/alpha.md").stdout
    assert human.startswith("2 links from gno://notes/alpha.md (2 resolved)")
    assert "| wiki | Beta |" in cli.run("links", "notes/alpha.md", "--md").stdout
    back = cli.json("backlinks", "notes/alpha.md")
    schema_check("backlinks", back)
    assert [b["sourceUri"] for b in back["backlinks"]] == ["gno://notes/beta.md"]
    assert cli.run("backlinks", "notes/alpha.md").stdout.startswith("1 backlink to ")
    assert "links [list] DOC" in cli.run("links", "a", "b", code=1).stderr
    assert "Document not found" in cli.run("links", "notes/nope.md", code=1).stderr


def test_graph_and_graph_query(vault: tuple[Cli, Path], schema_check: SchemaCheck) -> None:
    cli, _ = vault
    graph = cli.json("graph")
    assert {n["uri"] for n in graph["nodes"]} == {"gno://notes/alpha.md", "gno://notes/beta.md"}
    everything = cli.json("graph", "--include-isolated", "--limit", "50")
    assert len(everything["nodes"]) == 5 and everything["meta"]["nodeLimit"] == 50
    assert cli.run("graph").stdout.startswith("2 documents, 3 links")
    similar = cli.json("graph", "--include-similar", "--similar-top-k", "3")["meta"]
    assert similar["similarTopK"] == 3 and similar["includedSimilar"] is False
    assert similar["warnings"] and "includeSimilar" not in similar["warnings"][0]
    walked = cli.json("graph", "query", "notes/alpha.md", "--direction", "out", "--max-depth", "1")
    schema_check("graph-query", walked)
    assert walked["root"]["uri"] == "gno://notes/alpha.md"
    assert walked["meta"]["maxDepth"] == 1 and walked["meta"]["direction"] == "out"
    assert cli.run("graph", "query", "notes/alpha.md", "--direction", "up", code=1)


@pytest.mark.parametrize(
    ("command", "needle"),
    [
        (
            ("graph", "query", "notes/alpha.md", "--max-depth", "0"),
            "max depth must be between 1 and 6",
        ),
        (
            ("impact", "notes/alpha.md", "--max-nodes", "5000"),
            "max nodes must be between 1 and 1000",
        ),
        (("impact", "notes/alpha.md", "--max-edges", "-1"), "max edges must be between 1 and 5000"),
        (("graph", "--limit", "0"), "limit must be between 1 and 5000"),
        (("graph", "--similar-top-k", "21"), "similar top-k must be between 1 and 20"),
    ],
)
def test_out_of_range_graph_caps_are_refused(
    vault: tuple[Cli, Path], command: tuple[str, ...], needle: str
) -> None:
    cli, _ = vault
    done = cli.run(*command, code=1)
    assert needle in done.stderr and done.stdout == ""


def test_impact_lists_the_dependents_with_their_evidence(
    vault: tuple[Cli, Path], schema_check: SchemaCheck
) -> None:
    cli, notes = vault
    (notes / "gamma.md").write_text(
        "---\nrelations:\n  - {type: depends_on, target: alpha.md}\n---\n"
        "# Gamma\n\nbuilt on alpha\n"
    )
    cli.run("update")
    impact = cli.json("impact", "notes/beta.md")
    schema_check("impact", impact)
    assert [(e["document"]["uri"], e["depth"]) for e in impact["impacted"]] == [
        ("gno://notes/alpha.md", 1),
        ("gno://notes/gamma.md", 2),
    ]
    human = cli.run("impact", "notes/beta.md").stdout.splitlines()
    assert human[0] == "2 documents depend on gno://notes/beta.md"
    assert human[2].split() == [
        "depth",
        "2",
        "gno://notes/gamma.md",
        "(Gamma)",
        "-depends_on->",
        "gno://notes/alpha.md",
        "-links_to->",
        "gno://notes/beta.md",
    ]
    shallow = cli.json("impact", "notes/beta.md", "--max-depth", "1")
    assert [e["document"]["uri"] for e in shallow["impacted"]] == ["gno://notes/alpha.md"]
    assert "Nothing links to or depends on" in cli.run("impact", "notes/gamma.md").stdout
    assert "Document not found" in cli.run("impact", "notes/nope.md", code=1).stderr


def test_links_and_backlinks_of_one_edge_type(
    vault: tuple[Cli, Path], schema_check: SchemaCheck
) -> None:
    cli, notes = vault
    (notes / "gamma.md").write_text(
        "---\nrelations:\n  - {type: depends_on, target: alpha.md}\n"
        "  - {type: mentions, target: beta.md}\n---\n# Gamma\n"
    )
    cli.run("update")
    out = cli.json("links", "notes/gamma.md", "--edge-type", "depends_on")
    schema_check("links-list", out)
    assert [(e["targetUri"], e["edgeSource"]) for e in out["links"]] == [
        ("gno://notes/alpha.md", "frontmatter-relation")
    ]
    assert out["meta"]["semantic"] is True and out["meta"]["edgeTypeFilter"] == "depends_on"
    assert cli.run("links", "notes/gamma.md", "--relation", "mentions").stdout.splitlines() == [
        "1 mentions edge from gno://notes/gamma.md",
        "  mentions  gno://notes/beta.md  (Beta)  [frontmatter-relation, parsed]",
    ]
    back = cli.json("backlinks", "notes/beta.md", "--edge-type", "links_to")
    schema_check("backlinks", back)
    assert [(b["sourceUri"], b["edgeSource"]) for b in back["backlinks"]] == [
        ("gno://notes/alpha.md", "markdown-link"),
        ("gno://notes/alpha.md", "wikilink"),
    ]
    assert cli.json("backlinks", "notes/alpha.md", "--relation", "depends_on", "-c", "notes")[
        "meta"
    ] == {
        "docid": back["backlinks"][0]["sourceDocid"],
        "uri": "gno://notes/alpha.md",
        "title": "Alpha",
        "totalBacklinks": 1,
        "semantic": True,
        "relationFilter": "depends_on",
        "collection": "notes",
    }
    assert (
        "| depends_on |"
        in cli.run("links", "notes/gamma.md", "--edge-type", "depends_on", "--md").stdout
    )
    for bad, needle in (
        (("links", "notes/gamma.md", "--edge-type", "a", "--relation", "b"), "disagree"),
        (("links", "notes/gamma.md", "--edge-type", "a", "--type", "wiki"), "cannot be combined"),
        (("backlinks", "notes/beta.md", "--edge-type", "a", "-c", "nope"), "Collection not found"),
    ):
        assert needle in cli.run(*bad, code=1).stderr


def test_diff_shows_what_changed_in_a_documents_structure(
    vault: tuple[Cli, Path], schema_check: SchemaCheck
) -> None:
    cli, notes = vault
    beta = notes / "beta.md"
    beta.write_text("# Beta\n\n## Plans\n\nNow links to [[plain]] only.\n")
    bump_mtime(beta)
    cli.run("update")
    latest = cli.json("diff", "notes/beta.md")
    schema_check("document-diff", latest)
    assert latest["change"]["kind"] == "update"
    delta = latest["change"]["structureDelta"]
    assert delta["headings"]["added"] == ["Plans"] and delta["links"]["removed"] == ["Alpha"]
    human = cli.run("diff", "notes/beta.md").stdout
    assert "+ heading: Plans" in human and "- link: Alpha" in human
    assert "gno-trio get gno://notes/beta.md" in human
    listed = cli.run("changes").stdout
    created = next(line for line in listed.splitlines() if "create" in line and "beta.md" in line)
    first = cli.json("diff", "notes/beta.md", "--change", created.split()[-1])
    assert first["change"]["kind"] == "create"
    assert cli.run("diff", "notes/nope.md", code=1)


def test_graph_on_an_empty_index_is_not_an_error(tmp_path: Path) -> None:
    cli = make_cli(tmp_path)
    cli.run("init")
    assert cli.json("graph")["nodes"] == []


def test_every_doc_ref_form_works(vault: tuple[Cli, Path]) -> None:
    cli, _ = vault
    docid = cli.json("get", "notes/beta.md")["docid"]
    for ref in (docid, "gno://notes/beta.md", "notes/beta.md"):
        assert cli.json("backlinks", ref)["meta"]["uri"] == "gno://notes/beta.md"


def test_byte_identical_documents_are_two_graph_nodes(
    tmp_path: Path, schema_check: SchemaCheck
) -> None:
    """Copies share a docid (a hash of their bytes); the graph still shows each one."""
    cli = make_cli(tmp_path)
    copy = "# Template\n\nfill me in, see [[hub]]\n"
    root = write_corpus(
        cli.home / "notes",
        {"a-copy.md": copy, "b-copy.md": copy, "hub.md": "# Hub\n\n[[a-copy]] and [[b-copy]]\n"},
    )
    cli.run("init", str(root), "--name", "notes")
    cli.run("update")
    graph = cli.json("graph")
    schema_check("graph", graph)
    nodes = {n["uri"]: n for n in graph["nodes"]}
    first, second = nodes["gno://notes/a-copy.md"], nodes["gno://notes/b-copy.md"]
    docid = cli.json("get", "notes/a-copy.md")["docid"]
    assert cli.json("get", "notes/b-copy.md")["docid"] == docid
    assert first["id"] == docid and "docid" not in first
    assert second["id"] != docid and second["docid"] == docid
    assert len({n["id"] for n in graph["nodes"]}) == 3
    hub = nodes["gno://notes/hub.md"]["id"]
    assert {(e["source"], e["target"]) for e in graph["links"]} == {
        (hub, first["id"]),
        (hub, second["id"]),
        (first["id"], hub),
        (second["id"], hub),
    }
    assert all(n["degree"] == 1 for n in (first, second))
    assert cli.json("graph")["nodes"] == graph["nodes"]  # the same ids every time
