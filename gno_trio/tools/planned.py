"""Catalogued tools this server does not implement yet: their names and descriptions.

They are part of the target surface (the catalogue order in
:mod:`gno_trio.tools.catalogue` lists them), so their read/write class is
known to the write gate before they exist. Implementing one means moving its
row into the family module that declares it whole.
"""

from __future__ import annotations

from typing import Final

from gno_trio.server.registry import ToolText

PLANNED: Final[tuple[ToolText, ...]] = (
    ToolText(
        "gno_context_verify",
        write=False,
        full=(
            "Check a saved Context Capsule against the current index and report, span by span, "
            "whether the evidence is unchanged, stale, missing or reranked, plus any fingerprint "
            "drift. The Capsule itself stays as it was."
        ),
    ),
    ToolText(
        "gno_ask",
        write=False,
        full=(
            "Answer one question from a Context Capsule with a generation model, check every "
            "substantive claim against the retained spans, and abstain when support is "
            "incomplete. Returns the Capsule, a freshness receipt, per-claim verdicts, gaps and "
            "evidence IDs."
        ),
    ),
    ToolText(
        "gno_section",
        write=False,
        full=(
            "Create or resolve a durable section target (SectionTargetV1) in one indexed "
            "document: action=create takes ref plus an anchor or a line, action=resolve takes ref "
            "plus a target. Exact and recovered resolutions carry a citation (uri, anchor, title, "
            "line range, fingerprint); ambiguous, stale and missing ones carry none and are unsafe "
            "to cite. Read-only; follow a citation with gno_get on its lines."
        ),
    ),
    ToolText(
        "gno_audit",
        write=False,
        full=(
            "Run offline, read-only integrity checks over the workspace: links, declared "
            "provenance and source/index freshness. Returns stable, bounded findings with explicit "
            "partial or unavailable states; repairs are left to you."
        ),
    ),
    ToolText(
        "gno_egress_audit_list",
        write=False,
        full=(
            "List content-free egress decision receipts, newest first, one cursor page at a time."
        ),
    ),
    ToolText(
        "gno_egress_audit_show",
        write=False,
        full=("Show one content-free egress decision receipt by its audit ID."),
    ),
    ToolText(
        "gno_egress_audit_status",
        write=False,
        full=("Report the retention settings and storage use of the egress audit log."),
    ),
    ToolText(
        "gno_trace_list",
        write=False,
        full=(
            "List summaries of private local retrieval traces, one cursor page at a time; the "
            "summaries leave out replay query text."
        ),
    ),
    ToolText(
        "gno_trace_show",
        write=False,
        full=(
            "Show one local retrieval trace in bounded detail, including replay content for that "
            "trace only."
        ),
    ),
    ToolText(
        "gno_egress_audit_delete",
        write=True,
        full=("Delete one egress audit receipt and report whether its storage was cleaned up."),
    ),
    ToolText(
        "gno_egress_audit_purge",
        write=True,
        full=("Delete every egress audit receipt. Requires confirm=true."),
    ),
    ToolText(
        "gno_trace_label",
        write=True,
        full=(
            "Record a relevant, irrelevant or missing_expected judgment on a local retrieval trace."
        ),
    ),
    ToolText(
        "gno_trace_export",
        write=True,
        full=("Export one or more finished retrieval traces as one deterministic agentic receipt."),
    ),
    ToolText(
        "gno_trace_delete",
        write=True,
        full=("Delete one local retrieval trace and the records it owns."),
    ),
    ToolText(
        "gno_trace_purge",
        write=True,
        full=("Delete every local retrieval trace. Requires confirm=true."),
    ),
    ToolText(
        "gno_rename_note",
        write=True,
        full=(
            "Rename an editable note and rewrite the references to it, in two calls: "
            "action=preview returns a plan, and action=apply carries out that plan when given its "
            'planDigest, confirmation="apply", confirm=true and schemaVersion="1.0".'
        ),
    ),
    ToolText(
        "gno_move_note",
        write=True,
        full=(
            "Move an editable note to another folder of the same collection and rewrite the "
            "references to it, with the same preview-then-apply steps as gno_rename_note."
        ),
    ),
)
