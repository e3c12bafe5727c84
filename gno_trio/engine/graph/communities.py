"""Communities of the link graph, by deterministic label propagation.

Each document starts as its own community; in rounds, every document (in URI
order) joins the community most of its neighbours belong to, the smallest
label winning a tie, until a round changes nothing or :data:`MAX_ROUNDS`
have run. Link direction is ignored: a link either way ties two documents
together. The same graph always gives the same communities, numbered
``c1``, ``c2``, ... from the largest (then by first URI).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from gno_trio.engine.graph.links import DocSummary

ALGORITHM: Final = "deterministic-label-propagation"
MAX_ROUNDS: Final = 20
# Communities listed in ``top``, and their best-connected members shown.
TOP_COMMUNITIES: Final = 10
TOP_NODES: Final = 5


def _propagate(order: Sequence[int], adjacent: Mapping[int, set[int]]) -> dict[int, int]:
    label = {doc_id: position for position, doc_id in enumerate(order)}
    for _ in range(MAX_ROUNDS):
        changed = False
        for doc_id in order:
            around = [label[other] for other in adjacent.get(doc_id, ()) if other in label]
            if not around:
                continue
            counts = Counter(around)
            best = min(counts, key=lambda value: (-counts[value], value))
            if best != label[doc_id]:
                label[doc_id] = best
                changed = True
        if not changed:
            break
    return label


def communities(
    docs: Sequence[DocSummary],
    adjacent: Mapping[int, set[int]],
    degree: Mapping[int, int],
    node: Callable[[DocSummary], dict[str, Any]],
) -> tuple[dict[int, str], dict[str, Any]]:
    """Community id of each document in ``docs``, and GNO's ``report.communities``.

    Only ``docs`` and the links among them take part. A document with no link
    among them forms no community and gets no id.
    """
    order = [doc.id for doc in sorted(docs, key=lambda doc: doc.uri)]
    by_id = {doc.id: doc for doc in docs}
    inside = {doc_id: {o for o in adjacent.get(doc_id, ()) if o in by_id} for doc_id in order}
    linked = [doc_id for doc_id in order if inside[doc_id]]
    labels = _propagate(linked, inside)
    groups: dict[int, list[int]] = {}
    for doc_id in linked:
        groups.setdefault(labels[doc_id], []).append(doc_id)
    ranked = sorted(groups.values(), key=lambda members: (-len(members), by_id[members[0]].uri))
    assigned: dict[int, str] = {}
    top: list[dict[str, Any]] = []
    for number, members in enumerate(ranked, 1):
        community = f"c{number}"
        for doc_id in members:
            assigned[doc_id] = community
        member_set = set(members)
        edges = sum(len(inside[doc_id] & member_set) for doc_id in members) // 2
        pairs = len(members) * (len(members) - 1) // 2
        best = sorted(members, key=lambda d: (-degree.get(d, 0), by_id[d].uri))
        if len(top) < TOP_COMMUNITIES:
            leader = by_id[best[0]]
            top.append(
                {
                    "id": community,
                    "label": leader.title or leader.rel_path,
                    "size": len(members),
                    "edgeCount": edges,
                    "density": round(edges / pairs, 6) if pairs else 0.0,
                    "topNodes": [node(by_id[d]) for d in best[:TOP_NODES]],
                }
            )
    report = {
        "total": len(ranked),
        "algorithm": ALGORITHM,
        "skipped": False,
        "assignments": {by_id[doc_id].node: name for doc_id, name in assigned.items()},
        "top": top,
    }
    return assigned, report


__all__ = ["ALGORITHM", "communities"]
