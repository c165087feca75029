"""srtctl's recipe schema as data: which keys a recipe may have and what each holds.

`srtctl_schema.yaml` is the key tree of srt-slurm's `SrtConfig` (marshmallow) schema and
of its backend protocols. `schema_problems` walks a recipe (one variant, already merged)
with srtctl's rules: unknown keys are rejected at every level except inside free mappings,
required keys must be present, null only where srtctl allows it, and scalars are coerced
as marshmallow coerces them (`"4"` is an integer, `"yes"` a boolean, `1` is not a string).
Messages are srtctl's own (`Unknown field.`), prefixed with the key path.

What this cannot see: the cross-field checks srtctl runs after loading (`__post_init__`:
het jobs, trtllm_serve and vllm frontends, profiling). `inferbench check --srtctl` asks
the real srtctl for those.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any

from inferbench.config.yamlio import KeyPath, load_plain

# marshmallow.fields.Boolean's truthy and falsy sets (1 and 0 also stand for 1.0 and 0.0)
_TRUTHY = {"t", "T", "true", "True", "TRUE", "on", "On", "ON", "y", "Y", "yes", "Yes", "YES"}
_FALSY = {"f", "F", "false", "False", "FALSE", "off", "Off", "OFF", "n", "N", "no", "No", "NO"}
_BOOL_STRINGS = _TRUTHY | _FALSY | {"1", "0"}


@dataclass(frozen=True)
class SchemaProblem:
    """One reason srtctl rejects a recipe: the key path and srtctl's message."""

    path: KeyPath
    message: str
    allowed: tuple[str, ...] = ()  # the keys srtctl knows there, for an unknown one

    def render(self) -> str:
        where = ".".join(str(p) for p in self.path)
        return f"{where}: {self.message}" if where else self.message


@dataclass(frozen=True, eq=False)
class SrtctlSchema:
    version: str
    recipe: dict[str, Any]
    backends: dict[str, dict[str, Any]]
    # where it comes from: "bundled" (the table shipped with inferbench) or the srt-slurm
    # ref / checkout whose source it was derived from
    origin: str = "bundled"


def schema_from_tree(data: dict[str, Any], origin: str = "bundled") -> SrtctlSchema:
    """A schema from a key tree (`srtctl_schema.yaml`'s shape)."""
    return SrtctlSchema(str(data["srtctl"]), data["recipe"], data["backends"], origin)


@functools.cache
def srtctl_schema() -> SrtctlSchema:
    """The key tree shipped with inferbench (for the srtctl release it names)."""
    text = resources.files("inferbench.config").joinpath("srtctl_schema.yaml").read_text()
    return schema_from_tree(load_plain(text))


def same_as_bundled(schema: SrtctlSchema) -> bool:
    """Whether `schema` holds the bundled key tree (a checkout of the same srt-slurm): its
    verdicts are the ones recipes got when they were loaded."""
    bundled = srtctl_schema()
    if schema is bundled:
        return True
    known = _SAME.get(id(schema))
    if known is None or known[0] is not schema:
        equal = schema.recipe == bundled.recipe and schema.backends == bundled.backends
        known = _SAME[id(schema)] = (schema, equal)
    return known[1]


_SAME: dict[int, tuple[SrtctlSchema, bool]] = {}


def schema_problems(recipe: Any, schema: SrtctlSchema | None = None) -> list[SchemaProblem]:
    """Every reason srtctl's schema (`schema`, default the bundled one) rejects `recipe`
    (empty: it accepts it)."""
    schema = schema or srtctl_schema()
    out: list[SchemaProblem] = []
    if not isinstance(recipe, dict):
        return [SchemaProblem((), "Invalid input type.")]
    _object(recipe, schema.recipe, (), out, schema)
    return out


def _object(
    value: dict[Any, Any],
    fields: dict[str, Any],
    path: KeyPath,
    out: list[SchemaProblem],
    schema: SrtctlSchema,
) -> None:
    for key, child in value.items():
        spec = fields.get(key) if isinstance(key, str) else None
        if spec is None:
            out.append(SchemaProblem((*path, str(key)), "Unknown field.", tuple(fields)))
        else:
            _field(child, spec, (*path, key), out, schema)
    known = _REQUIRED.get(id(fields))
    if known is None or known[0] is not fields:
        known = _REQUIRED[id(fields)] = (
            fields,
            [k for k, f in fields.items() if f.get("required")],
        )
    for key in known[1]:
        if key not in value:
            out.append(SchemaProblem((*path, key), "Missing data for required field."))


# id of a fields table -> (the table, its required keys): the walk visits a few dozen tables
# thousands of times
_REQUIRED: dict[int, tuple[dict[str, Any], list[str]]] = {}


def _field(
    value: Any, spec: dict[str, Any], path: KeyPath, out: list[SchemaProblem], schema: SrtctlSchema
) -> None:
    kind = spec["kind"]
    if value is None:
        if not spec.get("nullable") and kind != "backend":
            out.append(SchemaProblem(path, "Field may not be null."))
    elif kind == "object":
        if isinstance(value, dict):
            _object(value, spec["fields"], path, out, schema)
        else:
            out.append(SchemaProblem(path, "Invalid input type."))
    elif kind == "backend":
        _backend(value, path, out, schema)
    elif kind == "mapping":
        _mapping(value, spec.get("values", "any"), path, out)
    elif kind == "list":
        _list(value, spec.get("items", "any"), path, out)
    elif kind == "union":
        _union(value, spec["of"], path, out, schema)
    elif (message := _scalar(value, kind)) is not None:
        out.append(SchemaProblem(path, message))


def _union(
    value: Any,
    alternatives: list[dict[str, Any]],
    path: KeyPath,
    out: list[SchemaProblem],
    schema: SrtctlSchema,
) -> None:
    """marshmallow_dataclass's Union: the value loads if one alternative loads it
    (`concurrencies: yes` is neither a list of integers nor a string)."""
    reasons: list[str] = []
    for alternative in alternatives:
        tried: list[SchemaProblem] = []
        _field(value, alternative, path, tried, schema)
        if not tried:
            return
        reasons.extend(SchemaProblem(p.path[len(path) :], p.message).render() for p in tried)
    out.append(SchemaProblem(path, " Or: ".join(dict.fromkeys(reasons))))


def _mapping(value: Any, values: str, path: KeyPath, out: list[SchemaProblem]) -> None:
    if not isinstance(value, dict):
        out.append(SchemaProblem(path, "Not a valid mapping type."))
        return
    if values == "any":  # (engine flag maps: any value goes, even null)
        for key in value:
            if not isinstance(key, str):
                out.append(SchemaProblem((*path, str(key)), "Key: Not a valid string."))
        return
    for key, item in value.items():
        if not isinstance(key, str):
            out.append(SchemaProblem((*path, str(key)), "Key: Not a valid string."))
        if item is None:
            if values != "any":
                out.append(SchemaProblem((*path, str(key)), "Field may not be null."))
        elif (message := _scalar(item, values)) is not None:
            out.append(SchemaProblem((*path, str(key)), message))


def _list(value: Any, items: str, path: KeyPath, out: list[SchemaProblem]) -> None:
    if not isinstance(value, list | tuple):
        out.append(SchemaProblem(path, "Not a valid list."))
        return
    if items == "any":
        return
    for index, item in enumerate(value):
        if (message := _scalar(item, items)) is not None:
            out.append(SchemaProblem((*path, index), message))


def _backend(value: Any, path: KeyPath, out: list[SchemaProblem], schema: SrtctlSchema) -> None:
    if not isinstance(value, dict):
        out.append(
            SchemaProblem(path, f"Expected dict for backend config, got {type(value).__name__}")
        )
        return
    backend_type = value.get("type", "sglang")
    fields = schema.backends.get(backend_type) if isinstance(backend_type, str) else None
    if fields is None:
        supported = ", ".join(t for t in ("sglang", "trtllm", "vllm", "mocker"))
        out.append(
            SchemaProblem(
                path, f"Unknown backend type: {backend_type!r}. Supported types: {supported}"
            )
        )
        return
    _object(value, fields, path, out, schema)


def _scalar(value: Any, kind: str) -> str | None:
    """marshmallow's message when `value` does not load as `kind`, else None."""
    if kind == "string":
        return None if isinstance(value, str) else "Not a valid string."
    if kind == "integer":
        return None if _number(value, int) else "Not a valid integer."
    if kind == "float":
        return None if _number(value, float) else "Not a valid number."
    if kind == "boolean":
        if isinstance(value, bool) or (isinstance(value, int | float) and value in (0, 1)):
            return None
        return None if isinstance(value, str) and value in _BOOL_STRINGS else "Not a valid boolean."
    if kind == "mapping":
        return None if isinstance(value, dict) else "Not a valid mapping type."
    if kind == "list":
        return None if isinstance(value, list | tuple) else "Not a valid list."
    return None


def _number(value: Any, cast: type) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    if isinstance(value, str):
        try:
            cast(value)
        except ValueError:
            return False
        return True
    return False
