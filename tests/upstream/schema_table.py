"""What a pydantic model accepts, field by field: one flat table for InferenceX's validator
and inferbench's master models alike.

Imported by the conformance tests and run as a script by InferenceX's oracle interpreter
(it needs only pydantic), so that both sides are read by the same code:

    python schema_table.py TREE > tables.json

prints `{"single-node": table, "multinode": table}` for InferenceX's
`SingleNodeMasterConfigEntry` and `MultiNodeMasterConfigEntry` (TREE/utils/matrix_logic/
validation.py). A table maps a field path (aliases, `[]` for a list item, e.g.
`scenarios.fixed-seq-len[].search-space[].kv-p2p-transfer`) to what the field accepts:
`kind` (str, int, float, bool, model, list), `enum` (the values of a Literal, else None),
`nullable` (an explicit null is accepted), `required`, the bounds `ge` / `gt` / `le` / `lt`
and `min_length`. The members of a union are merged, so a path can hold several descriptions.
"""

from __future__ import annotations

import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel

Table = dict[str, list[dict[str, Any]]]
_SCALARS = {str: "str", int: "int", float: "float", bool: "bool"}


def _constraints(metadata: list[Any], into: dict[str, Any]) -> None:
    for item in metadata:
        if isinstance(getattr(item, "metadata", None), list):  # Annotated[int, Field(ge=1)]
            _constraints(item.metadata, into)
        for name in ("ge", "gt", "le", "lt", "min_length"):
            value = getattr(item, name, None)
            if value is None:
                continue
            into[name] = value


def _walk(tp: Any, path: str, base: dict[str, Any], table: Table, seen: set[type]) -> None:
    metadata: list[Any] = []
    while typing.get_origin(tp) is typing.Annotated:
        tp, *extra = typing.get_args(tp)
        metadata += extra
    described = dict(base)
    _constraints(metadata, described)
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        members = typing.get_args(tp)
        if type(None) in members:
            described["nullable"] = True
        for member in members:
            if member is not type(None):
                _walk(member, path, described, table, seen)
        return
    if origin is typing.Literal:
        values = typing.get_args(tp)
        kind = _SCALARS.get(type(values[0]), "str")
        _add(table, path, described | {"kind": kind, "enum": sorted(values, key=str)})
        return
    if origin in (list, tuple, set, frozenset):
        _add(table, path, described | {"kind": "list"})
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        for arg in args[:1]:
            _walk(arg, f"{path}[]", {"nullable": False, "required": True}, table, seen)
        return
    if origin is dict:
        _add(table, path, described | {"kind": "map"})
        return
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        _add(table, path, described | {"kind": "model"})
        if tp not in seen:
            _fields(tp, path, table, seen | {tp})
        return
    _add(table, path, described | {"kind": _SCALARS.get(tp, getattr(tp, "__name__", str(tp)))})


def _add(table: Table, path: str, described: dict[str, Any]) -> None:
    full = {"kind": "", "enum": None, "nullable": False, "required": True,
            "ge": None, "gt": None, "le": None, "lt": None,
            "min_length": None} | described  # fmt: skip
    if full not in table.setdefault(path, []):
        table[path].append(full)


def _fields(model: type[BaseModel], prefix: str, table: Table, seen: set[type]) -> None:
    # inferbench's master models read `key: null` as the key's default (a before-validator)
    null_means_default = hasattr(model, "_null_means_default")
    for name, info in model.model_fields.items():
        if info.exclude or (info.alias is None and name.startswith("_")):
            continue
        key = info.alias or name
        path = f"{prefix}.{key}" if prefix else key
        required = info.is_required()
        nullable = not required and null_means_default
        base: dict[str, Any] = {"nullable": nullable, "required": required}
        _constraints(list(info.metadata), base)
        annotation = info.annotation
        if info.metadata:
            annotation = typing.Annotated[annotation, *info.metadata]
        _walk(annotation, path, base, table, seen)


def field_table(model: type[BaseModel]) -> Table:
    """Every field path of `model` (and its nested models) with what it accepts."""
    table: Table = {}
    _fields(model, "", table, {model})
    return table


def main() -> None:
    tree = Path(sys.argv[1]).resolve()
    sys.path[:0] = [str(tree / "utils" / "matrix_logic"), str(tree / "utils")]
    import validation

    json.dump(
        {
            "single-node": field_table(validation.SingleNodeMasterConfigEntry),
            "multinode": field_table(validation.MultiNodeMasterConfigEntry),
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
