"""How to fix a value a pydantic model refused: one hint per error type, for every stage."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from inferbench.core.errors import InputError, Location

M = TypeVar("M", bound=BaseModel)

_TYPE_HINTS = {
    "int_parsing": "write a whole number, e.g. 8",
    "int_from_float": "write a whole number, e.g. 8",
    "int_type": "write a whole number, e.g. 8",
    "float_parsing": "write a number, e.g. 0.9",
    "float_type": "write a number, e.g. 0.9",
    "bool_parsing": "write true or false",
    "bool_type": "write true or false",
    "string_type": "write text (quote it if it looks like a number or a boolean)",
    "tuple_type": "write a list, e.g. [a, b]",
    "list_type": "write a list, e.g. [a, b]",
    "dict_type": "write a mapping of key: value lines",
    "model_type": "write a mapping of key: value lines",
    "model_attributes_type": "write a mapping of key: value lines",
    "string_too_short": "write a non-empty value",
    "too_short": "give at least one item",
}


def type_hint(kind: str, ctx: dict[str, Any]) -> str | None:
    """How to fix a pydantic error of type `kind` (its `ctx` holds the bounds)."""
    bounds = {
        "greater_than_equal": ("ge", ">="),
        "greater_than": ("gt", ">"),
        "less_than_equal": ("le", "<="),
        "less_than": ("lt", "<"),
    }
    if kind in bounds:
        key, sign = bounds[kind]
        return f"use a value {sign} {ctx.get(key)}"
    if kind in ("literal_error", "enum"):
        expected = ctx.get("expected")
        return f"use one of {expected}" if expected else None
    return _TYPE_HINTS.get(kind)


def validated(cls: type[M], key: str | Mapping[str, str], **fields: Any) -> M:
    """`cls(**fields)`, or an InputError naming the option: `key`, or per field
    (`{field: option}`, with `""` for errors of the whole model)."""
    try:
        return cls(**fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        option = key if isinstance(key, str) else _option(key, err["loc"])
        message = str(err["msg"]).removeprefix("Value error, ")
        hint = type_hint(err["type"], err.get("ctx") or {})
        if hint is None and option:
            hint = f"see the command's --help for {option}"
        raise InputError(f"{field}: {message}", location=Location(key=option), hint=hint) from None


def _option(options: Mapping[str, str], loc: tuple[int | str, ...]) -> str | None:
    return options.get(str(loc[0]) if loc else "") or options.get("")
