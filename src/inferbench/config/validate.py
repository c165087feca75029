"""Validate plain YAML data into a config model; errors point at file:line:col + key path."""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar, Union

from pydantic import BaseModel, Tag, ValidationError

from inferbench.config.base import RuleViolation
from inferbench.config.yamlio import KeyPath, PositionedDoc, format_path
from inferbench.core.errors import ConfigError, Location
from inferbench.core.hints import type_hint

Locator = Callable[[KeyPath], Location]

M = TypeVar("M", bound=BaseModel)

_NOT_FOUND = object()


def validate_doc(
    doc: PositionedDoc,
    model: type[M],
    *,
    path: KeyPath = (),
    data: Any = _NOT_FOUND,
    context: dict[str, Any] | None = None,
) -> M:
    """Validate the value at `path` of `doc` (or `data`, located at `path`) into `model`.

    The first validation error becomes a ConfigError at the offending key's position.
    """
    if data is _NOT_FOUND:
        data = value_at(doc.data, path)
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise config_error_from(exc, doc, model, path=path, data=data) from None


def value_at(data: Any, path: KeyPath) -> Any:
    for part in path:
        data = data[part]
    return data


def config_error_from(
    exc: ValidationError,
    doc: PositionedDoc,
    model: type[BaseModel],
    *,
    path: KeyPath = (),
    data: Any = None,
    locator: Locator | None = None,
) -> ConfigError:
    """Map the first error of `exc` to a ConfigError located in `doc` (or by `locator`,
    for data that was assembled from several places, like a recipe variant)."""
    errors = exc.errors(include_url=False)
    # a misspelt key shows up as "unknown" plus "missing": the unknown one explains both
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    rel = _data_path(data, err["loc"], keep_last=err["type"] in ("missing", "extra_forbidden"))
    message, hint, rel = _describe(err, model, rel, tuple(err["loc"]))
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''})"
    full = path + rel
    location = locator(full) if locator is not None else doc.locate(full)
    return ConfigError(message, location=location, hint=hint)


def _describe(
    err: Any, model: type[BaseModel], rel: KeyPath, loc: KeyPath
) -> tuple[str, str | None, KeyPath]:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    cause = ctx.get("error")
    if isinstance(cause, RuleViolation):
        return cause.message, cause.hint, rel + cause.at
    if kind == "extra_forbidden" and rel:
        key = str(rel[-1])
        allowed = [k for k in allowed_keys(model, loc[:-1]) if k != key]
        return f"unknown key {key!r}", unknown_key_hint(key, allowed), rel
    if kind == "missing" and rel:
        return f"missing required key {rel[-1]!r}", f"add `{rel[-1]}:`", rel
    message = str(err["msg"])
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    if kind != "value_error" and "input" in err and not isinstance(err["input"], dict | list):
        message += f" (got {err['input']!r})"
    return message, type_hint(kind, ctx), rel


def unknown_key_hint(key: str, allowed: list[str]) -> str | None:
    """`did you mean 'conc-list'?` when a close match exists, else the allowed keys."""
    if not allowed:
        return None
    normal = {a.replace("_", "-").lower(): a for a in allowed}
    close = difflib.get_close_matches(key.replace("_", "-").lower(), list(normal), n=1, cutoff=0.6)
    if close:
        return f"did you mean {normal[close[0]]!r}?"
    return "allowed keys: " + ", ".join(sorted(allowed))


def _data_path(data: Any, loc: tuple[int | str, ...], *, keep_last: bool) -> KeyPath:
    """The part of a pydantic `loc` that names real keys/indexes (union tags dropped)."""
    out: list[str | int] = []
    current = data
    last = len(loc) - 1
    for i, part in enumerate(loc):
        if part == "[key]":
            break
        if isinstance(current, dict):
            if part in current:
                out.append(part)
                current = current[part]
            elif i == last and keep_last:
                out.append(part)  # a missing key, or an unknown one
            continue  # otherwise a union member's tag
        if isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            out.append(part)
            current = current[part]
            continue
        break
    return tuple(out)


def allowed_keys(model: type[BaseModel], loc: KeyPath) -> list[str]:
    """The keys accepted by the model reached at `loc` (a pydantic error location, union
    tags included, or a plain key path) from `model`, by alias."""
    candidates: list[Any] = [model]
    for part in loc:
        stepped: list[Any] = []
        for candidate in candidates:
            tagged = _tagged(candidate, part) if isinstance(part, str) else None
            stepped.extend([tagged] if tagged is not None else _step(candidate, part))
        candidates = stepped
    keys: list[str] = []
    for candidate in _expand(candidates):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            for name, info in candidate.model_fields.items():
                key = info.alias or name
                if key not in keys:
                    keys.append(key)
    return keys


def _tagged(tp: Any, tag: str) -> Any | None:
    """The member of a tagged union `tp` whose Tag is `tag`."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        base, *meta = typing.get_args(tp)
        if any(isinstance(m, Tag) and m.tag == tag for m in meta):
            return base
        return _tagged(base, tag)
    if origin is Union or origin is types.UnionType:
        for member in typing.get_args(tp):
            found = _tagged(member, tag)
            if found is not None:
                return found
    return None


def _expand(types_: list[Any]) -> list[Any]:
    out: list[Any] = []
    for tp in types_:
        origin = typing.get_origin(tp)
        if origin is Union or origin is types.UnionType:
            out.extend(_expand(list(typing.get_args(tp))))
        elif origin is typing.Annotated:
            out.extend(_expand([typing.get_args(tp)[0]]))
        else:
            out.append(tp)
    return out


def _step(tp: Any, part: str | int) -> list[Any]:
    out: list[Any] = []
    for candidate in _expand([tp]):
        origin = typing.get_origin(candidate)
        args = typing.get_args(candidate)
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            for name, info in candidate.model_fields.items():
                if part in (info.alias, name):
                    out.append(info.annotation)
        elif origin in (list, tuple) and isinstance(part, int) and args:
            out.append(args[0])
        elif origin is dict and len(args) == 2:
            out.append(args[1])
    return out


__all__ = ["allowed_keys", "config_error_from", "format_path", "unknown_key_hint", "validate_doc"]
