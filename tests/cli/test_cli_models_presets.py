"""``models use|pull|clear``: presets recorded as GNO does; nothing is ever downloaded."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import write_corpus
from tests.support.cli_support import Cli, make_cli


@pytest.fixture
def notes(tmp_path: Path) -> Cli:
    cli = make_cli(tmp_path)
    cli.run("init", str(write_corpus(cli.home / "notes", {"a.md": "# A\n\nalpha\n"})))
    return cli


def _models(cli: Cli) -> object:
    return yaml.safe_load(cli.config_file.read_text()).get("models")


def test_use_records_the_preset_and_says_whether_to_embed_again(notes: Cli) -> None:
    done = notes.run("models", "use", "quality")
    assert done.stdout == (
        "Active preset: quality (was slim-tuned)\n"
        "Embedding model unchanged: builtin:use-multilingual-v3\n"
    )
    assert _models(notes) == {"activePreset": "quality"}

    config = notes.config_file.read_text().replace(
        "models:\n  activePreset: quality\n",
        "models:\n  activePreset: quality\n  presets:\n"
        "  - {id: remote, name: Remote, embed: 'http://127.0.0.1:9/v1#m'}\n",
    )
    notes.config_file.write_text(config)
    switched = notes.json("models", "use", "remote")
    assert switched["embed"] == {
        "before": "builtin:use-multilingual-v3",
        "after": "http://127.0.0.1:9/v1#m",
    }
    assert switched["embedChanged"] is True
    assert [p["id"] for p in switched["presets"] if p["active"]] == ["remote"]
    assert "Run `gno-trio embed`" in notes.run("models", "use", "slim").stdout

    before = notes.state()
    refused = notes.json("models", "use", "huge", code=1)
    assert refused["error"] == "VALIDATION"
    assert "choose one of: remote, slim-tuned, slim, balanced, quality" in refused["message"]
    assert notes.state() == before


def test_pull_checks_each_role_and_refuses_what_needs_a_download(notes: Cli) -> None:
    pulled = notes.json("models", "pull")
    assert pulled["downloaded"] == []
    assert [(m["role"], m["status"]) for m in pulled["models"]] == [
        ("embed", "present"),
        ("rerank", "none"),
        ("gen", "none"),
    ]
    assert Path(pulled["models"][0]["path"]).is_dir()
    assert [m["role"] for m in notes.json("models", "pull", "--embed", "--force")["models"]] == [
        "embed"
    ]
    text = notes.run("models", "pull").stdout
    assert "already present" in text and "Nothing downloaded" in text

    notes.config_file.write_text(
        notes.config_file.read_text() + "models:\n  activePreset: gguf\n  presets:\n"
        "  - {id: gguf, name: GGUF, embed: 'hf:org/model/model-Q8_0.gguf'}\n"
    )
    refused = notes.json("models", "pull", code=2)
    assert refused["error"] == "MODEL_NOT_FOUND"
    assert "never downloads models" in refused["message"]


def test_pull_with_no_network_at_all(notes: Cli, tmp_path: Path) -> None:
    """A sitecustomize that makes every connection fail: pull still answers."""
    hook = tmp_path / "nonet"
    hook.mkdir()
    marker = tmp_path / "hook-loaded"
    (hook / "sitecustomize.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n"
        "import socket\n"
        "def _refuse(*a, **k):\n    raise OSError('network disabled by the test')\n"
        "socket.socket.connect = _refuse\nsocket.create_connection = _refuse\n"
        "socket.getaddrinfo = _refuse\n"
    )
    env = {"PYTHONPATH": f"{hook}:{notes.env['PYTHONPATH']}"}
    done = notes.run("models", "pull", "--json", env=env)
    assert '"status": "present"' in done.stdout
    assert marker.exists()  # the child really ran without a network


def test_clear_deletes_the_weight_cache_and_nothing_else(notes: Cli) -> None:
    models = Path(notes.env["GNO_CACHE_DIR"]) / "models"
    before = notes.state()
    cleared = notes.json("models", "clear", "--all")
    assert cleared["cleared"] == [] and "no model cache" in cleared["message"]
    assert cleared["cacheDir"] == str(models)
    assert notes.state() == before
    notes.run("update")
    notes.run("embed")  # the model's first load writes its weight cache
    (cache,) = models.iterdir()
    assert notes.json("models", "clear", "--rerank")["cleared"] == []
    assert cache.exists()
    cleared = notes.json("models", "clear", "--embed")
    assert cleared["cleared"] == [cache.name] and "weight cache" in cleared["message"]
    assert not cache.exists()
    assert notes.json("vsearch", "alpha")["results"]  # loaded from the package again
    assert cache.exists()
    assert "never downloads" in notes.run("models", "pull", "--help").stdout
