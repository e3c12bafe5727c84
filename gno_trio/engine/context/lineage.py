"""Egress lineage and the scope and config fingerprints that Capsules, traces and audits share.

A Capsule, a retrieval trace and an audit snapshot each record where their
content may go (the strictest egress policy of the collections involved)
and which configuration and index state produced them; computing those
in one place means the three can be compared, and a verifier can tell
drift from tampering.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from gno_trio.config import Config, dump_config
from gno_trio.engine.canonical import hash_canonical
from gno_trio.engine.context.snapshot import index_fingerprint
from gno_trio.engine.egress.policy import strictest
from gno_trio.engine.store.database import Connection

# (policy, source) per collection name, from the configuration.
Policies = Mapping[str, tuple[str, str]]


def policies_of(config: Config) -> dict[str, tuple[str, str]]:
    """Effective egress policy and its source for every configured collection."""
    return {c.name: (c.effective_egress_policy, c.egress_policy_source) for c in config.collections}


def egress_lineage(collections: Sequence[str], policies: Policies) -> dict[str, Any]:
    """Where content from these collections may go: the strictest policy wins."""
    sources = [
        {"collection": name, "policy": policies[name][0], "source": policies[name][1]}
        for name in sorted(set(collections))
        if name in policies
    ]
    effective = strictest(source["policy"] for source in sources)
    return {
        "effectivePolicy": effective,
        "digest": hash_canonical(sources),
        "sources": sources,
    }


def scope_fingerprint(
    conn: Connection, config: Config, index_name: str, scope: Sequence[str]
) -> str:
    """The index fingerprint of a Capsule scope as the configuration stands now."""
    return index_fingerprint(
        conn,
        index_name=index_name,
        tokenizer=config.fts_tokenizer,
        collections=scope,
        lineage=egress_lineage(scope, policies_of(config)),
    )


def config_fingerprint(config: Config) -> str:
    """Hash of the whole ``index.yml`` as plain data: any setting change shows as drift."""
    plain = json.loads(json.dumps(dump_config(config), default=str))
    return hash_canonical(plain)
