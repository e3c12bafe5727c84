"""Strict cattrs structuring of ``index.yml`` data, and the one ``CONFIG_INVALID`` error it reports.

YAML turns ``yes`` into a boolean and ``1`` into an integer; cattrs left to
itself would coerce them. These hooks accept exactly the types GNO's schema
names, map camelCase keys to the attrs fields, and gather every failure of
one file into a single error whose message names each bad key path.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeAlias, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import (
    AttributeValidationNote,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from gno_trio.config.rules import ConfigValueError, camel_key
from gno_trio.errors import GnoError


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _structure_str(value: object, _: type) -> str:
    if not isinstance(value, str):
        raise ConfigValueError((), f"must be a string (got {_describe(value)})")
    return value


def _structure_int(value: object, _: type) -> int:
    # bool is an int subclass; YAML "yes" must not become 1.
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigValueError((), f"must be an integer (got {_describe(value)})")
    return value


def _structure_bool(value: object, _: type) -> bool:
    if not isinstance(value, bool):
        raise ConfigValueError((), f"must be true or false (got {_describe(value)})")
    return value


def _structure_path(value: object, _: type) -> Path:
    text = _structure_str(value, str)
    if not text.strip():
        raise ConfigValueError((), "must not be empty")
    if "\x00" in text:
        raise ConfigValueError((), "must not contain a NUL character")
    return Path(os.path.expanduser(text))


def _is_literal(tp: Any) -> bool:
    return get_origin(tp) is Literal


def _structure_literal(value: object, tp: Any) -> object:
    choices = get_args(tp)
    if isinstance(value, str) and value in choices:
        return value
    listed = ", ".join(f'"{c}"' for c in choices)
    raise ConfigValueError((), f"must be one of {listed} (got {_describe(value)})")


def _is_tuple_of(tp: Any) -> bool:
    args = get_args(tp)
    return get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis


def _tuple_hook(tp: Any, converter: cattrs.Converter) -> Callable[[object, Any], tuple[Any, ...]]:
    element_type = get_args(tp)[0]
    structure_element = converter.get_structure_hook(element_type)

    def structure(value: object, _: Any) -> tuple[Any, ...]:
        # A string or mapping is iterable too; only a YAML sequence is a list here.
        if not isinstance(value, list | tuple):
            raise ConfigValueError((), f"must be a list (got {_describe(value)})")
        items: list[Any] = []
        errors: list[Exception] = []
        for index, item in enumerate(value):
            try:
                items.append(structure_element(item, element_type))
            except Exception as exc:  # collected and reported with its index
                exc.add_note(IterableValidationNote(f"item {index}", index, element_type))
                errors.append(exc)
        if errors:
            raise IterableValidationError(f"While structuring {tp!r}", errors, tp)
        return tuple(items)

    return structure


def _attrs_hook(cls: type, converter: cattrs.Converter) -> Callable[[object, Any], Any]:
    # Typed loosely: cattrs types its ``**kwargs`` overrides like its flags.
    renames: dict[str, Any] = {
        a.name: override(rename=camel_key(a.name)) for a in attrs.fields(cls)
    }
    generated: Callable[[Any, Any], Any] = make_dict_structure_fn(cls, converter, **renames)

    def structure(value: object, tp: Any) -> Any:
        if not isinstance(value, dict):
            raise ConfigValueError((), f"must be a mapping (got {_describe(value)})")
        return generated(value, tp)

    return structure


def _attrs_unstructure_hook(
    cls: type, converter: cattrs.Converter, always_written: Mapping[type, frozenset[str]]
) -> Callable[[Any], dict[str, Any]]:
    always = always_written.get(cls, frozenset())
    renames: dict[str, Any] = {
        a.name: override(rename=camel_key(a.name), omit_if_default=a.name not in always)
        for a in attrs.fields(cls)
    }
    generated: Callable[[Any], dict[str, Any]] = make_dict_unstructure_fn(
        cls, converter, _cattrs_omit_if_default=True, **renames
    )
    key_order = [camel_key(a.name) for a in attrs.fields(cls)]

    def unstructure(value: Any) -> dict[str, Any]:
        # cattrs emits always-written keys first; restore declaration order,
        # which is also the order GNO's own files use.
        data = generated(value)
        return {key: data[key] for key in key_order if key in data}

    return unstructure


def build_converter(always_written: Mapping[type, frozenset[str]]) -> cattrs.Converter:
    """The converter for the config classes; ``always_written`` keys are kept at their default."""
    converter = cattrs.Converter(
        forbid_extra_keys=True,
        detailed_validation=True,
        unstruct_collection_overrides={Sequence: list},
    )
    converter.register_structure_hook(str, _structure_str)
    converter.register_structure_hook(int, _structure_int)
    converter.register_structure_hook(bool, _structure_bool)
    converter.register_structure_hook(Path, _structure_path)
    converter.register_structure_hook_func(_is_literal, _structure_literal)
    converter.register_structure_hook_factory(_is_tuple_of, lambda tp: _tuple_hook(tp, converter))
    converter.register_structure_hook_factory(attrs.has, lambda cls: _attrs_hook(cls, converter))
    converter.register_unstructure_hook(Path, str)
    converter.register_unstructure_hook_factory(
        attrs.has, lambda cls: _attrs_unstructure_hook(cls, converter, always_written)
    )
    return converter


_Path: TypeAlias = tuple[str | int, ...]


def _note_step(exc: BaseException) -> _Path:
    """The key or index cattrs recorded for a sub-error (camelCase on disk)."""
    for note in getattr(exc, "__notes__", ()):
        if isinstance(note, AttributeValidationNote):
            return (camel_key(note.name),)
        if isinstance(note, IterableValidationNote):
            return (note.index,)
    return ()


def _collect_errors(exc: BaseException, path: _Path, out: list[tuple[_Path, str]]) -> None:
    if isinstance(exc, ForbiddenExtraKeysError):
        for key in sorted(exc.extra_fields, key=repr):
            # A YAML key can be a number or a boolean; quote those so they
            # do not read like list indexes.
            out.append(((*path, key if isinstance(key, str) else repr(key)), "unknown key"))
    elif isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            _collect_errors(sub, (*path, *_note_step(sub)), out)
    elif isinstance(exc, ConfigValueError):
        out.append(((*path, *exc.path), exc.message))
    elif isinstance(exc, KeyError):
        out.append((path, "is required"))
    else:
        out.append((path, str(exc) or type(exc).__name__))


def _render_path(path: _Path) -> str:
    text = ""
    for step in path:
        if isinstance(step, int):
            text += f"[{step}]"
        else:
            text += f".{step}" if text else str(step)
    return text


def config_error(source: str, exc: BaseException) -> GnoError:
    found: list[tuple[_Path, str]] = []
    _collect_errors(exc, (), found)
    rendered = [(_render_path(path), message) for path, message in found]
    parts = [f"{where}: {message}" if where else message for where, message in rendered]
    return GnoError(
        "CONFIG_INVALID",
        f"{source}: " + "; ".join(parts),
        details={"errors": [{"path": where, "message": message} for where, message in rendered]},
    )
