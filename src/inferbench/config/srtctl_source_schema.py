"""srtctl's recipe schema derived from srt-slurm's source, without importing it.

Every srt-slurm ref InferenceX's launchers clone has its own `SrtConfig` (a ref adds
`telemetry.provider`, another `benchmark.tokenizer_mode`), and all of them call themselves
srtctl 0.3.0. This reads a ref's `src/srtctl/core/schema.py` and the backend modules it
imports with `ast` and builds the key tree `srtctl_schema.yaml` holds for the bundled
release, following marshmallow_dataclass's rules: a dataclass field is a key (its
`data_key` if a `marshmallow_field` names one), required when it has no default and its
type is not optional, nullable when its type is optional or its default is None; `str`,
`int`, `float`, `bool`, `dict[...]`, `list[...]` and unions map to marshmallow's fields,
a nested dataclass to an object, everything else (enums, literals, custom fields) to
`any`. tests/upstream compares the result with the tree the real srtctl's schema gives,
on every ref of the srt-slurm refs bundle.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# `srtctl/core/schema.py` (a path below `src/`) -> its text, None when absent
SourceReader = Callable[[str], str | None]

SCHEMA_MODULE = "srtctl.core.schema"
_SCALARS = {
    "str": "string",
    "bytes": "string",
    "int": "integer",
    "float": "float",
    "bool": "boolean",
}
# marshmallow field classes by the kind srtctl_schema_tree.py gives them (others: any)
_FIELD_KINDS = {
    "String": "string",
    "Integer": "integer",
    "Boolean": "boolean",
    "Float": "float",
    "Dict": "mapping",
    "Mapping": "mapping",
    "List": "list",
}
_LISTS = {"list", "List"}
_MAPPINGS = {"dict", "Dict", "Mapping"}
_MISSING = object()


class SchemaSourceError(Exception):
    """The source does not hold an `SrtConfig` this reader can follow."""


@dataclass
class _Module:
    name: str
    tree: ast.Module
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    aliases: dict[str, ast.expr] = field(default_factory=dict)  # module-level `X = <type>`
    imports: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (module, name)


@dataclass(frozen=True)
class _Class:
    module: _Module
    node: ast.ClassDef


@dataclass
class _Field:
    """What marshmallow_dataclass makes of one annotation: kind, required, nullable."""

    entry: dict[str, Any]
    required: bool = False
    nullable: bool = False


class SchemaReader:
    """Reads srtctl's modules from one source tree (`read` gives a module's text)."""

    def __init__(self, read: SourceReader) -> None:
        self._read = read
        self._modules: dict[str, _Module | None] = {}
        self._walking: set[tuple[str, str]] = set()

    # -- modules and names ------------------------------------------------------------

    def module(self, name: str) -> _Module | None:
        if name in self._modules:
            return self._modules[name]
        base = name.replace(".", "/")
        text = self._read(base + ".py")
        package = False
        if text is None:
            text, package = self._read(base + "/__init__.py"), True
        parsed = None
        if text is not None:
            try:
                parsed = _index(name, ast.parse(text), package)
            except SyntaxError:
                parsed = None
        self._modules[name] = parsed
        return parsed

    def resolve(self, module: _Module, name: str, depth: int = 0) -> Any:
        """A name as `module` sees it: a `_Class`, an alias expression with its module,
        or the bare name (builtins, typing, marshmallow)."""
        if depth > 20:
            return name
        if name in module.classes:
            return _Class(module, module.classes[name])
        if name in module.aliases:
            return (module, module.aliases[name])
        if name in module.imports:
            source, original = module.imports[name]
            if source.startswith("srtctl"):
                other = self.module(source)
                if other is not None:
                    return self.resolve(other, original, depth + 1)
            return original
        return name

    # -- the tree ---------------------------------------------------------------------

    def tree(self, version: str) -> dict[str, Any]:
        schema = self.module(SCHEMA_MODULE)
        if schema is None:
            raise SchemaSourceError("no src/srtctl/core/schema.py")
        config = self.resolve(schema, "SrtConfig")
        if not isinstance(config, _Class):
            raise SchemaSourceError("schema.py defines no SrtConfig class")
        backends = {name: self.walk(protocol) for name, protocol in self._backend_protocols(schema)}
        if not backends:
            raise SchemaSourceError("no backend protocols found (BackendConfigField)")
        return {"srtctl": version, "recipe": self.walk(config), "backends": backends}

    def _backend_protocols(self, schema: _Module) -> list[tuple[str, _Class]]:
        """`if backend_type == "sglang": schema = SGLangProtocol.Schema()` in
        BackendConfigField: backend type -> protocol class."""
        field_class = schema.classes.get("BackendConfigField")
        if field_class is None:
            return []
        out: list[tuple[str, _Class]] = []
        for node in ast.walk(field_class):
            if not isinstance(node, ast.If):
                continue
            test = node.test
            if not (
                isinstance(test, ast.Compare)
                and isinstance(test.left, ast.Name)
                and test.left.id == "backend_type"
                and len(test.comparators) == 1
                and isinstance(test.comparators[0], ast.Constant)
                and isinstance(test.comparators[0].value, str)
            ):
                continue
            for inner in ast.walk(ast.Module(body=node.body, type_ignores=[])):
                if (
                    isinstance(inner, ast.Attribute)
                    and inner.attr == "Schema"
                    and isinstance(inner.value, ast.Name)
                ):
                    found = self.resolve(schema, inner.value.id)
                    if isinstance(found, _Class):
                        out.append((test.comparators[0].value, found))
                    break
        return list(dict(out).items())

    def walk(self, cls: _Class) -> dict[str, Any]:
        """The keys of one dataclass (its bases' first), as srtctl_schema_tree.walk gives."""
        key = (cls.module.name, cls.node.name)
        if key in self._walking:  # a recursive type: srtctl has none; do not loop
            return {}
        self._walking.add(key)
        try:
            out: dict[str, Any] = {}
            for base in self._bases(cls):
                out.update(self.walk(base))
            for name, made in self._own_fields(cls):
                entry = dict(made.entry)
                if made.required:
                    entry["required"] = True
                if made.nullable:
                    entry["nullable"] = True
                out.pop(name, None)
                out[name] = entry
            return out
        finally:
            self._walking.discard(key)

    def _bases(self, cls: _Class) -> list[_Class]:
        out = []
        for base in cls.node.bases:
            if isinstance(base, ast.Name):
                found = self.resolve(cls.module, base.id)
                if isinstance(found, _Class) and _is_dataclass(found.node):
                    out.append(found)
        return out

    def _own_fields(self, cls: _Class) -> list[tuple[str, _Field]]:
        out: list[tuple[str, _Field]] = []
        for stmt in cls.node.body:
            if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
                continue
            annotation = _unstring(stmt.annotation)
            if _head(annotation) in ("ClassVar", "InitVar"):
                continue
            default, metadata, init = _default_of(stmt.value)
            if not init:
                continue
            name = stmt.target.id
            predefined = metadata.get("marshmallow_field")
            if isinstance(predefined, ast.Call):
                made = self._field_instance(cls.module, predefined)
                data_key = _keyword(predefined, "data_key")
                if isinstance(data_key, ast.Constant) and isinstance(data_key.value, str):
                    name = data_key.value
                out.append((name, made))
                continue
            plain = {k: v for k, v in metadata.items() if isinstance(v, bool | type(None))}
            out.append((name, self._field(cls.module, annotation, default, plain)))
        return out

    # -- marshmallow_dataclass.field_for_schema -----------------------------------------

    def _field(
        self, module: _Module, typ: ast.expr, default: Any, metadata: dict[str, Any]
    ) -> _Field:
        metadata = dict(metadata)
        if default is not _MISSING:
            if not metadata.get("required"):
                metadata.setdefault("load_default", default)
        else:
            metadata.setdefault("required", not self._optional(module, typ))
        return self._typed(module, typ, metadata)

    def _typed(self, module: _Module, typ: ast.expr, metadata: dict[str, Any]) -> _Field:
        typ = _unstring(typ)
        head = _head(typ)
        resolved: Any = None
        if isinstance(typ, ast.Name | ast.Attribute):
            resolved = self.resolve(module, head) if isinstance(typ, ast.Name) else head
            if isinstance(resolved, tuple):  # a module-level alias: its expression
                alias_module, expression = resolved
                return self._typed(alias_module, expression, metadata)
            if isinstance(resolved, str):
                head = resolved
        if isinstance(typ, ast.Constant) and typ.value is None:
            return _made({"kind": "any"}, metadata)
        if isinstance(typ, ast.BinOp) and isinstance(typ.op, ast.BitOr):
            return self._union(module, _union_members(typ), metadata)
        if isinstance(typ, ast.Subscript):
            return self._subscripted(module, typ, head, metadata)
        if head in _LISTS:  # bare `list`: List[Any]
            return _made({"kind": "list", "items": "any"}, metadata)
        if head in _MAPPINGS:
            return _made({"kind": "mapping", "values": "any"}, metadata)
        if head in _SCALARS:
            return _made({"kind": _SCALARS[head]}, metadata)
        if head == "Any":
            metadata.setdefault("allow_none", True)
            return _made({"kind": "any"}, metadata)
        if isinstance(resolved, _Class):
            if _is_enum(resolved.node) or not _is_dataclass(resolved.node):
                return _made({"kind": "any"}, metadata)
            return _made({"kind": "object", "fields": self.walk(resolved)}, metadata)
        return _made({"kind": "any"}, metadata)

    def _subscripted(
        self, module: _Module, typ: ast.Subscript, head: str, metadata: dict[str, Any]
    ) -> _Field:
        """`X[...]`: unions, Annotated, Literal and the generic collections."""
        args = _args(typ)
        if head in ("Optional", "Union"):
            members = args if head == "Union" else [*args, ast.Constant(None)]
            return self._union(module, members, metadata)
        if head == "Annotated":
            for extra in reversed(args[1:]):
                made = self._annotation_field(module, extra, metadata)
                if made is not None:
                    return made
            return self._typed(module, args[0], metadata)
        if head == "Final" and args:
            return self._typed(module, args[0], metadata)
        if head in _LISTS:
            inner = self._typed(module, args[0], {"required": True}) if args else None
            items = _simple(inner.entry) if inner else "any"
            return _made({"kind": "list", "items": items}, metadata)
        if head in _MAPPINGS:
            value = self._typed(module, args[1], {"required": True}) if len(args) > 1 else None
            values = _simple(value.entry) if value else "any"
            return _made({"kind": "mapping", "values": values}, metadata)
        return _made({"kind": "any"}, metadata)  # Literal, tuple, Sequence, set: not List

    def _union(self, module: _Module, members: list[ast.expr], metadata: dict[str, Any]) -> _Field:
        subtypes = [m for m in members if not _is_none(m)]
        if len(subtypes) < len(members):  # Optional: marshmallow_dataclass's defaults
            metadata.setdefault("allow_none", True)
            if not metadata.get("required"):
                metadata.setdefault("load_default", None)
            metadata.setdefault("required", False)
        if len(subtypes) == 1:
            return self._typed(module, subtypes[0], metadata)
        alternatives = [self._typed(module, s, {"required": True}).entry for s in subtypes]
        return _made({"kind": "union", "of": alternatives}, metadata)

    def _annotation_field(
        self, module: _Module, extra: ast.expr, metadata: dict[str, Any]
    ) -> _Field | None:
        """`Annotated[T, SomeField(...)]`: an instance is used as it is, a class is called
        with the field's metadata. None when `extra` is not a marshmallow field."""
        if isinstance(extra, ast.Call):
            if not self._is_field_class(module, extra.func):
                return None
            return self._field_instance(module, extra)
        if self._is_field_class(module, extra):
            return _made({"kind": self._field_kind(module, extra)}, metadata)
        return None

    def _field_instance(self, module: _Module, call: ast.Call) -> _Field:
        kwargs = {k.arg: k.value for k in call.keywords if k.arg}
        metadata: dict[str, Any] = {}
        for name in ("required", "allow_none"):
            value = kwargs.get(name)
            if isinstance(value, ast.Constant) and isinstance(value.value, bool):
                metadata[name] = value.value
        if "load_default" in kwargs:
            value = kwargs["load_default"]
            metadata["load_default"] = None if _is_none(value) else value
        return _made({"kind": self._field_kind(module, call.func)}, metadata)

    def _field_kind(self, module: _Module, func: ast.expr) -> str:
        name = _head(func)
        if name == "BackendConfigField":
            return "backend"
        if isinstance(func, ast.Attribute) and _head(func.value) == "fields":
            return _FIELD_KINDS.get(func.attr, "any")
        resolved = self.resolve(module, name) if isinstance(func, ast.Name) else name
        if isinstance(resolved, str) and isinstance(func, ast.Name) and name in module.imports:
            source, _ = module.imports[name]
            if source == "marshmallow.fields":
                return _FIELD_KINDS.get(resolved, "any")
        return "any"

    def _is_field_class(self, module: _Module, func: ast.expr) -> bool:
        if isinstance(func, ast.Attribute):
            return _head(func.value) == "fields"
        if not isinstance(func, ast.Name):
            return False
        resolved = self.resolve(module, func.id)
        if isinstance(resolved, _Class):
            return any(_head(b) in ("Field", "fields.Field") or _head(b).endswith("Field")
                       for b in resolved.node.bases)  # fmt: skip
        if func.id in module.imports:
            return module.imports[func.id][0] == "marshmallow.fields"
        return False

    def _optional(self, module: _Module, typ: ast.expr) -> bool:
        """typing_inspect.is_optional_type: a union with None (or None itself)."""
        typ = _unstring(typ)
        if _is_none(typ):
            return True
        if isinstance(typ, ast.BinOp) and isinstance(typ.op, ast.BitOr):
            return any(_is_none(m) for m in _union_members(typ))
        if isinstance(typ, ast.Subscript):
            head = _head(typ)
            if head == "Optional":
                return True
            if head == "Union":
                return any(_is_none(a) for a in _args(typ))
        if isinstance(typ, ast.Name):
            found = self.resolve(module, typ.id)
            if isinstance(found, tuple):
                return self._optional(found[0], found[1])
        return False


def _made(entry: dict[str, Any], metadata: dict[str, Any]) -> _Field:
    """marshmallow's Field(**metadata): required as given; allow_none as given, else
    whether load_default is None."""
    allow_none = metadata.get("allow_none")
    if allow_none is None:
        allow_none = "load_default" in metadata and metadata["load_default"] is None
    return _Field(entry, bool(metadata.get("required", False)), bool(allow_none))


def _simple(entry: dict[str, Any]) -> str:
    """srtctl_schema_tree.simple_kind: a list's items and a mapping's values are named by
    their field class only (a nested or generic one is `list`/`mapping`/`any`)."""
    kind = entry["kind"]
    return kind if kind in ("string", "integer", "float", "boolean", "mapping", "list") else "any"


def _index(name: str, tree: ast.Module, package: bool) -> _Module:
    module = _Module(name, tree)
    parts = name.split(".")
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            module.classes[stmt.name] = stmt
        elif isinstance(stmt, ast.ImportFrom):
            source = stmt.module or ""
            if stmt.level:
                anchor = parts if package else parts[:-1]
                anchor = anchor[: len(anchor) - (stmt.level - 1)]
                source = ".".join([*anchor, *([source] if source else [])])
            for alias in stmt.names:
                module.imports[alias.asname or alias.name] = (source, alias.name)
        elif (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and _looks_like_type(stmt.value)
        ):
            module.aliases[stmt.targets[0].id] = stmt.value
        elif (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and _head(stmt.annotation) == "TypeAlias"
            and stmt.value is not None
        ):
            module.aliases[stmt.target.id] = stmt.value
    return module


def _looks_like_type(value: ast.expr) -> bool:
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr):
        return all(_looks_like_type(m) for m in _union_members(value))
    if isinstance(value, ast.Subscript):
        return _head(value) in ("Union", "Optional", "Annotated", "Literal")
    return False


def _head(node: ast.expr) -> str:
    if isinstance(node, ast.Subscript):
        return _head(node.value)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return (
            node.attr
            if _head(node.value) in ("typing", "typing_extensions", "t")
            else (f"{_head(node.value)}.{node.attr}")
        )
    return ""


def _args(node: ast.Subscript) -> list[ast.expr]:
    inner = node.slice
    return list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]


def _union_members(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return [*_union_members(node.left), *_union_members(node.right)]
    return [node]


def _unstring(node: ast.expr) -> ast.expr:
    """A string annotation (a forward reference) as the expression it holds."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return node
    return node


def _is_none(node: ast.expr) -> bool:
    return (isinstance(node, ast.Constant) and node.value is None) or (
        isinstance(node, ast.Name) and node.id == "NoneType"
    )


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _default_of(value: ast.expr | None) -> tuple[Any, dict[str, Any], bool]:
    """(the default: _MISSING, None or a marker; the metadata; init) of a field's value."""
    if value is None:
        return _MISSING, {}, True
    if isinstance(value, ast.Call) and _head(value.func) in ("field", "dataclasses.field"):
        init = _keyword(value, "init")
        if isinstance(init, ast.Constant) and init.value is False:
            return _MISSING, {}, False
        metadata: dict[str, Any] = {}
        given = _keyword(value, "metadata")
        if isinstance(given, ast.Dict):
            for k, v in zip(given.keys, given.values, strict=True):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    metadata[k.value] = v.value if isinstance(v, ast.Constant) else v
        default = _keyword(value, "default")
        if default is not None:
            return (None if _is_none(default) else "value"), metadata, True
        if _keyword(value, "default_factory") is not None:
            return "factory", metadata, True
        return _MISSING, metadata, True
    return (None if _is_none(value) else "value"), {}, True


def _is_dataclass(node: ast.ClassDef) -> bool:
    names = ("dataclass", "dataclasses.dataclass")
    return any(
        _head(d.func if isinstance(d, ast.Call) else d) in names for d in node.decorator_list
    )


def _is_enum(node: ast.ClassDef) -> bool:
    return any(_head(b) in ("Enum", "enum.Enum", "IntEnum", "StrEnum") for b in node.bases)


def derive_tree(read: SourceReader, version: str) -> dict[str, Any]:
    """The key tree (`srtctl_schema.yaml`'s shape) of the srtctl whose sources `read`
    gives; SchemaSourceError when they hold no schema this reader can follow."""
    return SchemaReader(read).tree(version)
