"""Every error code the product raises is in the one table (``gno_trio.errors``).

The source is read (``ast``), not imported: each ``GnoError(...)`` and
``tool_error(...)``, each argument or parameter default named ``code`` or
``*_code``, each call of a helper whose first parameter is ``code``, and each
module-level constant named ``*_CODE``. A code given as a name is followed to
the module-level string constant of that name. A code missing from the table
would answer as an unexplained runtime failure on every surface (exit 2, an
internal JSON-RPC error), so the test fails and names where it is raised.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from gno_trio.errors import CODE_KINDS

ROOT = Path(__file__).resolve().parents[2] / "gno_trio"

RAISERS = frozenset({"GnoError", "tool_error"})
"""Callables whose first argument is an error code."""


def _trees() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(), str(path)) for path in sorted(ROOT.rglob("*.py"))}


def _string_constants(trees: dict[Path, ast.Module]) -> dict[str, set[str]]:
    """Every module-level ``NAME = "text"`` (annotated or not), by name, across the package."""
    found: dict[str, set[str]] = defaultdict(set)
    for tree in trees.values():
        for node in tree.body:
            target = value = None
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign):
                target, value = node.target, node.value
            if (
                isinstance(target, ast.Name)
                and isinstance(value, ast.Constant)
                and isinstance(value.value, str)
            ):
                found[target.id].add(value.value)
    return found


def _helpers(trees: dict[Path, ast.Module]) -> set[str]:
    """Functions whose first parameter (after ``self``/``cls``) is a ``code: str``.

    A conversion warning's ``code`` is typed with its own closed set of
    warning codes; those are no error codes.
    """
    names = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                params = [a for a in node.args.posonlyargs + node.args.args]
                params = [a for a in params if a.arg not in ("self", "cls")]
                if params and params[0].arg == "code":
                    hint = params[0].annotation
                    if hint is None or (isinstance(hint, ast.Name) and hint.id == "str"):
                        names.add(node.name)
    return names


def _is_code_name(name: str | None) -> bool:
    return name is not None and (name == "code" or name.endswith("_code"))


def _callee(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _code_expressions(tree: ast.Module, helpers: set[str]) -> Iterator[ast.expr]:
    """The expressions in ``tree`` that give an error code."""
    for statement in tree.body:  # module-level FOO_CODE = "..."
        if isinstance(statement, ast.Assign | ast.AnnAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id.endswith("_CODE") and statement.value:
                    yield statement.value
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callee = _callee(node)
            helper = isinstance(node.func, ast.Name) and callee in helpers
            if (callee in RAISERS or helper) and node.args:
                yield node.args[0]
            for keyword in node.keywords:
                if _is_code_name(keyword.arg):
                    yield keyword.value
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            positional = node.args.posonlyargs + node.args.args
            defaults = list(
                zip(
                    positional[len(positional) - len(node.args.defaults) :],
                    node.args.defaults,
                    strict=True,
                )
            )
            defaults += [
                (arg, default)
                for arg, default in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True)
                if default is not None
            ]
            for arg, default in defaults:
                if _is_code_name(arg.arg):
                    yield default


def _values(expr: ast.expr, constants: dict[str, set[str]]) -> set[str] | None:
    """The code(s) ``expr`` stands for; ``None`` for a value passed on at run time."""
    if isinstance(expr, ast.Constant):
        return {expr.value} if isinstance(expr.value, str) else set()
    name = (
        expr.id
        if isinstance(expr, ast.Name)
        else expr.attr
        if isinstance(expr, ast.Attribute)
        else None
    )
    if name is not None and name.isupper():
        return constants.get(name, {f"<unresolved constant {name}>"})
    return None  # a variable: an existing error's code handed on


def raised_codes() -> dict[str, list[str]]:
    """Each code the source gives, with the places that give it."""
    trees = _trees()
    constants, helpers = _string_constants(trees), _helpers(trees)
    codes: dict[str, list[str]] = defaultdict(list)
    for path, tree in trees.items():
        for expr in _code_expressions(tree, helpers):
            for value in _values(expr, constants) or ():
                codes[value].append(f"{path.relative_to(ROOT.parent)}:{expr.lineno}")
    return codes


def test_the_walk_sees_the_codes_it_should() -> None:
    """Guards the walk itself: literal, named and helper-passed codes are all found."""
    codes = raised_codes()
    assert {"INVALID_INPUT", "NOT_FOUND", "CANCELLED", "GATEWAY_BIND_REFUSED"} <= set(codes)
    assert {"EMBED_ENDPOINT_FAILED", "invalid_uri", "MEMORY_WRITE_LEASE_BUSY"} <= set(codes)
    assert len(codes) > 60


def test_every_code_raised_is_in_the_table() -> None:
    missing = {code: sites[:3] for code, sites in raised_codes().items() if code not in CODE_KINDS}
    assert missing == {}, "add these codes to gno_trio/errors.py with their kind"


def test_every_code_in_the_table_is_raised_somewhere() -> None:
    """A code nothing raises any more leaves the table too (no stale entries)."""
    assert set(CODE_KINDS) - set(raised_codes()) == set()
