"""What to paste into each client to reach a running gateway (``serve``/``daemon`` print it).

One snippet per client, in the file shape that client reads (the table in
:mod:`.targets`). A bearer token is never printed: the header names the
token file to copy it from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gno_trio.cli.clients.targets import SERVER_NAME, TARGETS, http_entry


def http_snippets(url: str, token_file: Path | None) -> dict[str, dict[str, Any]]:
    """``{target: {"key", "entry", "text"}}``: each client's entry for the gateway at ``url``."""
    import tomlkit  # only needed once a gateway is up

    headers = {"Authorization": f"Bearer <contents of {token_file}>"} if token_file else {}
    snippets: dict[str, dict[str, Any]] = {}
    for name in sorted(TARGETS):
        target = TARGETS[name]
        entry = http_entry(target, url, headers)
        if target.toml:
            document = tomlkit.document()
            document.add(target.key, tomlkit.table(is_super_table=True))
            document[target.key][SERVER_NAME] = entry  # type: ignore[index]
            text = tomlkit.dumps(document).strip()
        else:
            text = json.dumps({target.key: {SERVER_NAME: entry}})
        snippets[name] = {"key": target.key, "entry": entry, "text": text}
    return snippets


__all__ = ["http_snippets"]
