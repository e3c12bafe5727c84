"""Egress is judged on where the bytes go: no environment proxy, no redirect followed.

A collection under ``local_only`` may send its text to a loopback model
server, and the egress check judges that server's URL. The bytes must then
go to that server and nowhere else: not to a proxy named by ``http_proxy``
(never judged), not to the host a ``302`` points at (never judged). Each test
runs real loopback HTTP servers in-process: the model server and a "sink"
standing for the unjudged host, which answers like a model would, so a leak
is seen as the sink's request log, not hidden by an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from gno_trio.engine import AskRequest, Engine, SearchRequest
from gno_trio.errors import GnoError
from tests.conftest import write_corpus
from tests.support.corpora import TEA_NOTES as NOTES
from tests.support.corpora import TEA_QUESTION as QUESTION
from tests.support.loopback_json import ModelServer


@pytest.fixture
def servers() -> Iterator[tuple[ModelServer, ModelServer]]:
    model, sink = ModelServer(), ModelServer()
    try:
        yield model, sink
    finally:
        model.close()
        sink.close()


@pytest.fixture
def vault(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Engine:
    for name in ("no_proxy", "NO_PROXY", "http_proxy", "HTTP_PROXY", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    engine.collections.add(str(write_corpus(tmp_path / "notes", NOTES)), name="notes")
    engine.sync()

    def local_only(config: Any) -> Any:
        collections = tuple(attrs.evolve(c, egress_policy="local_only") for c in config.collections)
        return attrs.evolve(config, collections=collections)

    engine.update_config(local_only)
    assert [c.effective_egress_policy for c in engine.config.collections] == ["local_only"]
    return engine


def use_models(engine: Engine, *, gen: str | None = None, embed: str | None = None) -> None:
    preset: dict[str, str] = {"id": "local"}
    if gen is not None:
        preset["gen"] = gen
    if embed is not None:
        preset["embed"] = embed
    models = {"activePreset": "local", "presets": [preset]}
    engine.update_config(lambda current: attrs.evolve(current, models=models))


def ask(engine: Engine) -> Any:
    return engine.answers.ask(AskRequest(SearchRequest(query=QUESTION)))


def proxied_through(server: ModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment names ``server`` as the HTTP proxy (both spellings urllib reads)."""
    for name in ("http_proxy", "HTTP_PROXY"):
        monkeypatch.setenv(name, server.url(""))


def test_ask_sends_evidence_to_no_proxy_from_the_environment(
    vault: Engine, servers: tuple[ModelServer, ModelServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    model, proxy = servers
    proxied_through(proxy, monkeypatch)
    use_models(vault, gen=model.url("/v1/chat/completions#tiny-chat"))
    outcome = ask(vault)
    assert proxy.requests == []  # the proxy was never judged: nothing went there
    assert model.calls() == [("POST", "/v1/chat/completions")]
    assert outcome.result["meta"]["answerGenerated"] is True


def test_ask_follows_no_redirect_to_an_unjudged_host(
    vault: Engine, servers: tuple[ModelServer, ModelServer]
) -> None:
    model, elsewhere = servers
    model.redirect_to = elsewhere.url("/v1/chat/completions")
    use_models(vault, gen=model.url("/v1/chat/completions#tiny-chat"))
    outcome = ask(vault)
    assert elsewhere.requests == []
    assert model.calls() == [("POST", "/v1/chat/completions")]
    assert outcome.result["meta"]["answerGenerated"] is False  # the evidence answers instead
    assert "redirect" in outcome.note and elsewhere.url("/") in outcome.note


def test_embedding_uses_no_proxy_from_the_environment(
    vault: Engine, servers: tuple[ModelServer, ModelServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    model, proxy = servers
    proxied_through(proxy, monkeypatch)
    use_models(vault, embed=model.url("/v1/embeddings#toy"))
    run = vault.vectors.embed()
    assert proxy.requests == []
    assert model.calls() and all(r == ("POST", "/v1/embeddings") for r in model.calls())
    assert run.embedded == 2


def test_embedding_follows_no_redirect_to_an_unjudged_host(
    vault: Engine, servers: tuple[ModelServer, ModelServer]
) -> None:
    model, elsewhere = servers
    model.redirect_to = elsewhere.url("/v1/embeddings")
    use_models(vault, embed=model.url("/v1/embeddings#toy"))
    with pytest.raises(GnoError) as failed:
        vault.vectors.embed()
    assert elsewhere.requests == []
    assert failed.value.code == "EMBED_ENDPOINT_FAILED"
    assert "redirect" in str(failed.value) and elsewhere.url("/") in str(failed.value)
