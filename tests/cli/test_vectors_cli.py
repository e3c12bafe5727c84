"""The semantic commands of ``gno-trio``, run for real: vsearch, similar, embed, index, models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import gno_schema_errors, write_corpus
from tests.support.cli_support import Cli, make_cli
from tests.support.corpora import CHORE_NOTES as NOTES


def _cli(tmp_path: Path) -> Cli:
    cli = make_cli(tmp_path)
    notes = write_corpus(tmp_path / "notes", NOTES)
    cli.run("init", str(notes), "--name", "notes")
    cli.run("update")
    return cli


def test_embed_then_vsearch_similar_and_status(tmp_path: Path) -> None:
    cli = _cli(tmp_path)
    assert cli.json("status")["embeddingBacklog"] == 3
    dry = cli.json("embed", "--dry-run")
    assert dry == {"dryRun": True, "backlog": {"notes": 3}, "total": 3}
    assert cli.json("vsearch", "fix a flat tyre", code=2)["error"] == "VECTORS_UNAVAILABLE"
    done = cli.json("embed")
    assert (done["embedded"], done["errors"], done["model"]) == (
        3,
        0,
        "builtin:use-multilingual-v3",
    )
    assert cli.json("status")["embeddingBacklog"] == 0
    found = cli.json("vsearch", "réparer un pneu crevé", "-n", "1")  # French, no shared word
    assert [h["uri"] for h in found["results"]] == ["gno://notes/bike.md"]
    text = cli.run("vsearch", "baking").stdout
    assert "gno://notes/bread.md" in text and "vector search" in text
    similar = cli.json("similar", "notes/bread.md", "--threshold", "0")
    assert "gno://notes/bread.md" not in [s["uri"] for s in similar["similar"]]
    assert cli.json("similar", "notes/nope.md", code=1)["error"] == "NOT_FOUND"
    assert cli.json("embed", "nope", code=1)["error"] == "NOT_FOUND"


def test_index_updates_then_embeds_and_models_say_what_runs(tmp_path: Path) -> None:
    cli = _cli(tmp_path)
    (tmp_path / "notes" / "kayak.md").write_text("# Kayak\n\nPaddle along the coast.\n")
    result = cli.json("index")
    assert result["embedSkipped"] is False
    assert result["syncResult"]["collections"][0]["added"] == 1
    assert result["embedResult"]["embedded"] == 4
    again = cli.json("index", "--no-embed")
    assert again["embedSkipped"] is True and again["embedResult"] is None
    models = cli.json("models", "list")
    assert models["embed"]["uri"] == "builtin:use-multilingual-v3"
    assert models["embed"]["cached"] is True and models["embed"]["dimension"] == 512
    path = Path(cli.run("models", "path").stdout.strip())
    assert (path / "weights.npz").is_file()


def test_a_gguf_model_in_the_config_is_a_clear_error_and_query_stays_lexical(
    tmp_path: Path,
) -> None:
    cli = _cli(tmp_path)
    config = cli.config_file.read_text()
    cli.config_file.write_text(
        config
        + "models:\n  activePreset: mine\n  presets:\n"
        + "    - {id: mine, name: Mine, embed: 'hf:org/model-GGUF/model.gguf'}\n"
    )
    assert cli.json("embed", code=2)["error"] == "MODEL_NOT_FOUND"
    assert cli.json("vsearch", "bread", code=2)["error"] == "MODEL_NOT_FOUND"
    assert cli.json("models", "list")["embed"]["cached"] is False


def _semantic_status(status: dict[str, Any]) -> tuple[Any, ...]:
    assert gno_schema_errors("status", status) == []
    (collection,) = status["activation"]["collections"]
    return (
        collection["stages"]["semantic"]["status"],
        collection["semanticAvailability"]["code"],
        status["background"]["embedding"]["pendingDocCount"],
        status["bootstrap"]["models"],
    )


def test_status_tells_the_embedding_side_as_it_is(tmp_path: Path) -> None:
    cli = _cli(tmp_path)
    stage, code, pending, models = _semantic_status(cli.json("status"))
    assert (stage, code, pending) == ("pending", "embeddings_pending", 3)
    (entry,) = models["entries"]
    assert entry["role"] == "embed" and entry["uri"] == "builtin:use-multilingual-v3"
    assert entry["cached"] is True and entry["sizeBytes"] > 10_000_000
    assert Path(entry["path"], "weights.npz").is_file()
    assert (models["cachedCount"], models["totalCount"], models["downloading"]) == (1, 1, False)
    assert "3 chunks wait for vectors" in models["summary"]
    cli.run("embed")
    status = cli.json("status")
    stage, code, pending, models = _semantic_status(status)
    assert (stage, code, pending) == ("passed", "semantic_not_checked", 0)
    assert status["background"]["embedding"]["available"] is True
    assert status["activePreset"]["id"] == "bundled" and "wait" not in models["summary"]


def test_status_says_when_the_configured_model_cannot_run(tmp_path: Path) -> None:
    cli = _cli(tmp_path)
    cli.config_file.write_text(
        cli.config_file.read_text()
        + "models:\n  activePreset: mine\n  presets:\n"
        + "    - {id: mine, name: Mine, embed: 'hf:org/model-GGUF/model.gguf'}\n"
    )
    status = cli.json("status")
    stage, code, _, models = _semantic_status(status)
    assert (stage, code) == ("skipped", "models_missing")
    assert status["background"]["embedding"]["available"] is False
    assert status["activePreset"]["id"] == "mine"
    assert models["cachedCount"] == 0 and models["entries"][0]["cached"] is False
    assert "cannot run here" in models["summary"]


LINKED = {
    "bread.md": "# Bread\n\nKnead the dough and bake the loaf. See [[oven]].\n",
    "oven.md": "# Oven\n\nPreheat to two hundred degrees before the loaf goes in.\n",
    "bike.md": "# Bicycle\n\nPatch the inner tube and pump the tyre back up.\n",
}


def test_no_graph_turns_the_graph_step_off_in_query_and_ask(tmp_path: Path) -> None:
    """``--no-graph`` reaches the hybrid pipeline (it used to be dropped on the way)."""
    cli = make_cli(tmp_path)
    cli.run("init", str(write_corpus(tmp_path / "notes", LINKED)), "--name", "notes")
    cli.run("index")
    on = cli.json("query", "bake a loaf of bread")
    assert on["meta"]["mode"] == "hybrid" and on["meta"]["graphExpansion"]["seedCount"] >= 1
    assert "graph_disabled" not in on["meta"]["graphExpansion"]["fallbackReasons"]
    off = cli.json("query", "bake a loaf of bread", "--no-graph")
    assert off["meta"]["graphExpansion"]["enabled"] is False
    assert off["meta"]["graphExpansion"]["fallbackReasons"] == ["graph_disabled"]
    asked = cli.json("ask", "bake a loaf of bread", "--no-answer", "--no-graph", "--explain")
    lines = {line["stage"]: line["message"] for line in asked["meta"]["explain"]["lines"]}
    assert "graph_disabled" in lines["graph"], lines
    asked_on = cli.json("ask", "bake a loaf of bread", "--no-answer", "--explain")
    lines_on = {line["stage"]: line["message"] for line in asked_on["meta"]["explain"]["lines"]}
    assert "graph_disabled" not in lines_on["graph"], lines_on
