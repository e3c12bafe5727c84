"""``vsearch``, ``similar``, ``embed``, ``index`` and ``models``: the semantic commands.

``embed`` is its own phase, as in GNO: it gives every chunk that has no
vector of the configured model one, batch by batch with a progress bar.
Each batch is committed on its own, under the write lease taken for that
write only, so Ctrl-C (or a kill) loses at most the batch in flight and the
next run picks up where this one stopped; ``update`` is never blocked for
longer than one batch's write. ``index`` is ``update``
followed by ``embed``.
"""

from __future__ import annotations

import argparse
from typing import Any

from gno_trio.cli import render
from gno_trio.cli.common import EXIT_OK, Subparsers, command_line, emit_json, open_engine
from gno_trio.cli.index import (
    GIT_PULL_HELP,
    UPDATE_WAIT_SECONDS,
    refuse_failed_steps,
    run_git_pulls,
    run_update_commands,
)
from gno_trio.cli.progress import ProgressBar
from gno_trio.cli.render.health import MODELS
from gno_trio.cli.render.hits import RESULTS, SIMILAR
from gno_trio.cli.render.sync import sync_lines
from gno_trio.cli.retrieval import add_search_options, present_hits, search_request
from gno_trio.cli.tracing import print_receipt
from gno_trio.engine import lease_wait_from_env
from gno_trio.engine.vocabulary import MODEL_ROLES as ROLES
from gno_trio.errors import GnoError

EXIT_CANCELLED = 1
EXIT_RUNTIME = 2


def cmd_vsearch(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        traced = engine.retrieval.run("vsearch", search_request(args))
        present_hits(engine, traced.result, args)
        render.emit(args, RESULTS, traced.result)
    print_receipt(traced.trace_id)
    return EXIT_OK


def cmd_similar(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.search.similar(
            args.doc,
            limit=args.limit,
            threshold=args.threshold,
            cross_collection=args.cross_collection,
        )
    render.emit(args, SIMILAR, result)
    return EXIT_OK


def _targets(args: argparse.Namespace) -> list[str] | None:
    names = [*(args.collections or ()), *([args.collection] if args.collection else [])]
    return names or None


def _embed(engine: Any, args: argparse.Namespace, names: list[str] | None) -> dict[str, Any]:
    """Run the embed phase with a progress bar; Ctrl-C stops between batches' writes."""
    bar = ProgressBar("Embedding", unit="chunks", force=getattr(args, "progress", False))
    try:
        run = engine.vectors.embed(
            names,
            batch_size=args.batch_size,
            force=args.force,
            model=getattr(args, "model", None),
            progress=bar.update,
            lease_wait_seconds=lease_wait_from_env(UPDATE_WAIT_SECONDS),
        )
    except KeyboardInterrupt:
        bar.close()
        raise GnoError(
            "CANCELLED",
            "Stopped; every finished batch is kept. Run the command again to resume.",
        ) from None
    finally:
        bar.close()
    result: dict[str, Any] = run.as_dict()
    return result


def _embed_summary(result: dict[str, Any]) -> None:
    print(
        f"Embedded {result['embedded']} chunks with {result['model']} in "
        f"{result['duration']:.1f} s ({result['errors']} errors)"
    )
    for skipped in result["skipped"]:
        print(f"  ! {skipped['collection']}: {skipped['code']}: {skipped['message']}")
    if result.get("lastError"):
        print(f"  ! {result['lastError']}")


def cmd_embed(args: argparse.Namespace) -> int:
    names = _targets(args)
    with open_engine(args) as engine:
        for name in names or ():
            engine.collection(name)  # NOT_FOUND before any work
        if args.dry_run:
            counts = engine.vectors.counts()
            waiting = {n: counts[n][1] for n in (names or counts)}
            if args.json:
                emit_json({"dryRun": True, "backlog": waiting, "total": sum(waiting.values())})
            else:
                for name, count in waiting.items():
                    print(f"{name}: {count} chunks to embed")
            return EXIT_OK
        model = engine.vectors.backend(names[0] if names else None, model=args.model).identity.uri
        if not args.json:
            print(f"Model: {model}")
        result = _embed(engine, args, names)
    if args.json:
        emit_json(result)
    else:
        _embed_summary(result)
    return EXIT_RUNTIME if result["errors"] or result["skipped"] else EXIT_OK


def cmd_index(args: argparse.Namespace) -> int:
    names = _targets(args)
    with open_engine(args) as engine:
        if not engine.config.collections:
            raise GnoError(
                "VALIDATION",
                "No collections to index. Add one with: gno-trio collection add <path>",
            )
        pulls = run_git_pulls(engine, names, wanted=args.git_pull)
        commands = run_update_commands(engine, names, verbose=args.verbose)
        bar = ProgressBar("Indexing", force=args.progress)
        try:
            reports = engine.sync(
                names, progress=bar.update, wait_seconds=lease_wait_from_env(UPDATE_WAIT_SECONDS)
            )
        finally:
            bar.close()
        synced: dict[str, Any] = {"collections": [r.as_dict() for r in reports]}
        if commands:
            synced["updateCommands"] = commands
        if args.git_pull:
            synced["gitPull"] = pulls
        embedded = None if args.no_embed else _embed(engine, args, names)
    if args.json:
        emit_json({"syncResult": synced, "embedSkipped": embedded is None, "embedResult": embedded})
        refuse_failed_steps(commands, pulls)
        return EXIT_OK if embedded is None or not embedded["errors"] else EXIT_RUNTIME
    print("\n".join(sync_lines(reports)))
    if embedded is not None:
        _embed_summary(embedded)
    refuse_failed_steps(commands, pulls)
    return EXIT_OK if embedded is None or not embedded["errors"] else EXIT_RUNTIME


def cmd_models_list(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.vectors.models()
    render.emit(args, MODELS, result)
    return EXIT_OK


def cmd_models_path(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        path = engine.vectors.models_path()
    if path is None:
        raise GnoError("MODEL_NOT_FOUND", "The bundled embedding model is not installed")
    if args.json:
        emit_json({"path": path})
    else:
        print(path)
    return EXIT_OK


def _roles(args: argparse.Namespace) -> tuple[str, ...]:
    """The roles ``--embed/--rerank/--gen`` pick (all of them by default or with ``--all``)."""
    chosen = tuple(role for role in ROLES if getattr(args, role))
    return ROLES if args.all or not chosen else chosen


def cmd_models_use(args: argparse.Namespace) -> int:
    with open_engine(args, new_config=True) as engine:
        result = engine.vectors.use_preset(args.preset)
    if args.json:
        emit_json(result)
        return EXIT_OK
    print(f"Active preset: {result['activePreset']} (was {result['previousPreset']})")
    embed = result["embed"]
    if result["embedChanged"]:
        print(f"Embedding model: {embed['before']} -> {embed['after']}")
        print(f"Run `{command_line(args, 'embed')}` to embed with it.")
    else:
        print(f"Embedding model unchanged: {embed['after']}")
    return EXIT_OK


def cmd_models_pull(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.vectors.pull_models(_roles(args), force=args.force)
    if args.json:
        emit_json(result)
        return EXIT_OK
    for item in result["models"]:
        print(f"{item['role'] + ':':<7} {item['uri'] or '-'}: {item['message']}")
    print("Nothing downloaded: gno-trio never downloads models.")
    return EXIT_OK


def cmd_models_clear(args: argparse.Namespace) -> int:
    with open_engine(args, create=False) as engine:
        result = engine.vectors.clear_models(_roles(args))
    if args.json:
        emit_json(result)
    else:
        print(result["message"])
    return EXIT_OK


def _role_flags(p: argparse.ArgumentParser, verb: str) -> None:
    p.add_argument("--all", action="store_true", help=f"{verb} every role's model (the default)")
    p.add_argument("--embed", action="store_true", help=f"{verb} the embedding model only")
    p.add_argument("--rerank", action="store_true", help=f"{verb} the reranker only")
    p.add_argument("--gen", action="store_true", help=f"{verb} the answer-generation model only")


def add_parsers(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("vsearch", parents=[common])
    add_search_options(p)
    p.set_defaults(handler=cmd_vsearch)

    p = sub.add_parser("similar", parents=[common])
    p.add_argument("doc", help="document reference: gno:// URI, collection/path or #docid")
    p.add_argument("-n", "--limit", type=int, default=5, help="most documents to list (5)")
    p.add_argument("--threshold", type=float, default=None, help="minimum score (default 0.7)")
    p.add_argument(
        "--cross-collection", action="store_true", help="look in every collection, not just its own"
    )
    render.add_format_flags(p, render.MD)
    p.set_defaults(handler=cmd_similar)

    def embed_options(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "collections", nargs="*", metavar="COLLECTION", help="collections to do (default: all)"
        )
        p.add_argument("--collection", help="same as naming one COLLECTION")
        p.add_argument("--force", action="store_true", help="re-embed even embedded chunks")
        p.add_argument("--batch-size", type=int, default=32, help="chunks per batch (32)")
        p.add_argument("--progress", action="store_true", help="draw the bar even off a tty")

    p = sub.add_parser("embed", parents=[common])
    embed_options(p)
    p.add_argument("--dry-run", action="store_true", help="count the backlog, embed nothing")
    p.add_argument("--model", help="embed with this model URI instead of the configured one")
    p.set_defaults(handler=cmd_embed)

    p = sub.add_parser("index", parents=[common])
    embed_options(p)
    p.add_argument("--no-embed", action="store_true", help="run the update only")
    p.add_argument("--git-pull", action="store_true", help=GIT_PULL_HELP)
    p.add_argument("--models-pull", action="store_true", help="nothing to pull: the model ships")
    p.set_defaults(handler=cmd_index)

    p = sub.add_parser("models", parents=[common])
    models = p.add_subparsers(dest="models_command", required=True, metavar="ACTION")
    q = models.add_parser("list", parents=[common], help="configured models and their state")
    render.add_format_flags(q, render.MD)
    q.set_defaults(handler=cmd_models_list)
    q = models.add_parser("path", parents=[common], help="where the bundled model lives")
    q.set_defaults(handler=cmd_models_path)
    q = models.add_parser(
        "use",
        parents=[common],
        help="switch the active model preset",
        description="Record the active preset (models.activePreset in index.yml) and say which "
        "embedding model it puts in force; GNO's own presets mean the bundled model here.",
    )
    q.add_argument(
        "preset",
        help="a preset id: slim-tuned, slim, balanced, quality, or one index.yml defines "
        "under models.presets",
    )
    q.set_defaults(handler=cmd_models_use)
    q = models.add_parser(
        "pull",
        parents=[common],
        help="check the models are present (never downloads)",
        description="Check each role's model in place. gno-trio never downloads models: the "
        "bundled one ships with the package, endpoints are called directly, and a model that "
        "would need a download is refused (exit 2).",
    )
    _role_flags(q, "check")
    q.add_argument(
        "--force", action="store_true", help="accepted for GNO's scripts: nothing is downloaded"
    )
    q.set_defaults(handler=cmd_models_pull)
    q = models.add_parser(
        "clear",
        parents=[common],
        help="empty the model cache (the bundled model's weight cache)",
        description="GNO deletes its downloaded models here; gno-trio downloads none, and "
        "deletes the bundled model's weight cache (--embed, --all), which the next load "
        "writes again.",
    )
    _role_flags(q, "clear")
    q.set_defaults(handler=cmd_models_clear)


__all__ = ["add_parsers"]
