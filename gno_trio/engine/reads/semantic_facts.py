"""What status knows of the embedding side without running a model, and the commands it names.

Activation, onboarding, health and bootstrap all describe the same facts
(the embed model in force, whether it can run here, what still waits for
vectors) and point at the same commands; they read them from one value so
the sections of one answer never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

PRESET: Final = {"id": "lexical", "name": "Lexical search (BM25, no models)"}
ADD_COLLECTION: Final = "gno-trio collection add <path>"
SYNC: Final = "gno-trio update"
EMBED: Final = "gno-trio embed"

NO_MODELS: Final = "This server uses no models: search is lexical (BM25) only."


@dataclass(frozen=True, slots=True)
class SemanticFacts:
    """What status knows of the embedding side without running a model.

    ``kind`` is ``bundled`` (the model inside an installed package),
    ``endpoint`` (an OpenAI-compatible server from the configuration) or
    ``unsupported`` (a URI only GNO's native runtime can run); ``runnable``
    says whether this server can embed with it at all.
    """

    embed_uri: str
    kind: str
    runnable: bool
    preset_id: str | None = None
    version: str | None = None
    path: str | None = None
    size_bytes: int | None = None
    pending_documents: int = 0
    embeddings: Mapping[str, tuple[int, int]] | None = None  # collection: (embedded, waiting)

    @property
    def waiting(self) -> int:
        return sum(waiting for _, waiting in (self.embeddings or {}).values())

    def preset(self) -> dict[str, str]:
        """The active preset: the configured one, else the bundled model with BM25."""
        if self.preset_id:
            return {"id": self.preset_id, "name": f"{self.preset_id} (embed: {self.embed_uri})"}
        if self.kind == "bundled":
            return {"id": "bundled", "name": "BM25 + bundled multilingual embeddings"}
        return {"id": "custom", "name": f"BM25 + {self.embed_uri}"}

    def summary(self) -> str:
        if not self.runnable:
            return (
                f"Embedding model {self.embed_uri} cannot run here; search is lexical (BM25) "
                f"until it can (gno-trio models list)."
            )
        where = {
            "bundled": f"bundled in the installed package (version {self.version})",
            "endpoint": "served by the configured endpoint",
        }.get(self.kind, "configured")
        waiting = f"; {self.waiting} chunks wait for vectors ({EMBED})" if self.waiting else ""
        return f"Embedding model {self.embed_uri} is {where}; nothing is downloaded{waiting}."
