"""``collection policy get|set|check`` and ``egress-audit``: egress boundaries from the shell.

Thin over the engine's egress face, so each answers what the matching tool
answers (``gno_egress_policy_get``/``_set``, ``gno_egress_check``,
``gno_egress_audit_*``), with the same text. Relaxing a policy needs
``--confirm-relaxation REVISION``, the revision ``policy get`` printed:
the engine refuses a stale one and changes nothing. ``egress-audit purge``
needs the global ``--yes``.
"""

from __future__ import annotations

import argparse
from typing import Any

from gno_trio.cli.common import (
    Subparsers,
    action_command,
    command_line,
    open_engine,
    print_result,
)
from gno_trio.engine import Confirmation
from gno_trio.engine.egress_rules import (
    EGRESS_ACTIONS,
    EGRESS_CONTENT_CLASSES,
    EGRESS_ZONES,
    POLICY_ORDER,
)
from gno_trio.errors import GnoError
from gno_trio.views.management import (
    egress_audit_list_text,
    egress_audit_removal_text,
    egress_audit_show_text,
    egress_audit_status_text,
    egress_check_text,
    egress_policy_set_text,
    egress_policy_text,
)


def cmd_policy(args: argparse.Namespace) -> int:
    action = args.policy_command
    with open_engine(args, create=False) as engine:
        result: Any
        if action == "get":
            result, text = engine.egress.policy(args.name), egress_policy_text
        elif action == "set":
            confirmation = None
            current = engine.egress.policy(args.name)
            looser = POLICY_ORDER.index(args.policy) > POLICY_ORDER.index(
                current["effectivePolicy"]
            )
            if looser and args.confirm_relaxation is None:
                raise GnoError(
                    "INVALID_INPUT",
                    f"Relaxing collection {current['collection']} from "
                    f"{current['effectivePolicy']} to {args.policy} needs confirmation: add "
                    f"--confirm-relaxation {current['revision']} (the current revision)",
                )
            if args.confirm_relaxation is not None:
                confirmation = Confirmation(
                    current_policy=current["effectivePolicy"],
                    current_revision=args.confirm_relaxation,
                    acknowledged=True,
                    collection=current["collection"],
                    target_policy=args.policy,
                )
            result = engine.egress.set_policy(args.name, args.policy, confirmation)
            text = egress_policy_set_text
        else:
            result = engine.egress.check(
                requested=args.collection or None,
                zone=args.destination,
                authenticated=args.authenticated,
                operation_authorized=args.authorized,
                content_class=args.content_class,
                action=args.action,
                partial_results="explicit" if args.partial else "deny",
            )
            text = egress_check_text
    return print_result(args, result, text)


def cmd_egress_audit(args: argparse.Namespace) -> int:
    action = args.egress_audit_command
    if action == "purge" and not args.yes:
        raise GnoError(
            "VALIDATION",
            "purge deletes every egress decision receipt; run it as "
            f"`{command_line(args, '--yes', 'egress-audit', 'purge')}`",
        )
    with open_engine(args, create=False) as engine:
        result: Any
        if action == "list":
            result, text = (
                engine.egress.audit_list(limit=args.limit, cursor=args.cursor),
                egress_audit_list_text,
            )
        elif action == "show":
            result, text = engine.egress.audit_show(args.audit_id), egress_audit_show_text
        elif action == "status":
            result, text = engine.egress.audit_status(), egress_audit_status_text
        elif action == "delete":
            result, text = engine.egress.audit_delete(args.audit_id), egress_audit_removal_text
        else:
            result, text = engine.egress.audit_purge(), egress_audit_removal_text
    return print_result(args, result, text)


def add_policy_parser(collections: Any, common: argparse.ArgumentParser) -> None:
    """``collection policy ...`` (beside add, list, remove, rename ...)."""
    actions = action_command(
        collections,
        "policy",
        common,
        handler=cmd_policy,
        dest="policy_command",
        help="a collection's egress policy: get, set, or check a would-be egress",
    )
    q = actions.add_parser("get", parents=[common], help="configured and effective policy")
    q.add_argument("name", help="the collection")
    q = actions.add_parser("set", parents=[common], help="tighten, or (confirmed) relax it")
    q.add_argument("name", help="the collection")
    q.add_argument("policy", choices=POLICY_ORDER, help="local_only, lan or remote")
    q.add_argument(
        "--confirm-relaxation",
        type=int,
        metavar="REVISION",
        help="needed to relax: the current revision, as `collection policy get` printed it",
    )
    q = actions.add_parser("check", parents=[common], help="would this egress be allowed? (dry)")
    q.add_argument("--action", required=True, choices=EGRESS_ACTIONS, help="what would be done")
    q.add_argument(
        "--destination", required=True, choices=EGRESS_ZONES, help="where the content would go"
    )
    q.add_argument(
        "--content-class", required=True, choices=EGRESS_CONTENT_CLASSES, help="what would go"
    )
    q.add_argument(
        "-c", "--collection", action="append", help="collections involved (default: all)"
    )
    q.add_argument("--authenticated", action="store_true", help="the caller is authenticated")
    q.add_argument("--authorized", action="store_true", help="the caller may perform the operation")
    q.add_argument(
        "--partial",
        action="store_true",
        help="serve the allowed collections and name the omitted ones, instead of refusing",
    )
    q.add_argument("--explain-egress", action="store_true", help="accepted: check always explains")


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    actions = action_command(
        sub,
        "egress-audit",
        common,
        handler=cmd_egress_audit,
        dest="egress_audit_command",
    )
    q = actions.add_parser("list", parents=[common], help="receipts, newest first")
    q.add_argument("--limit", type=int, default=50, help="receipts per page (default 50)")
    q.add_argument("--cursor", help="the cursor a previous page printed")
    q = actions.add_parser("show", parents=[common], help="one receipt")
    q.add_argument("audit_id", metavar="AUDIT_ID", help="the receipt's id")
    actions.add_parser("status", parents=[common], help="how many receipts, how much space")
    q = actions.add_parser("delete", parents=[common], help="delete one receipt")
    q.add_argument("audit_id", metavar="AUDIT_ID", help="the receipt's id")
    actions.add_parser("purge", parents=[common], help="delete every receipt (needs --yes)")


__all__ = ["add_parsers", "add_policy_parser"]
