"""YAML loading that keeps positions.

A file is composed into a node tree by libyaml (PyYAML's C composer; its pure
Python one where the C extension is missing), then converted in one pass into
plain Python data (dict / list / str / int / float / bool / None). The node tree
is kept on the side so that any key path can be located (file, line, column) on
demand: nothing is paid per node for positions unless an error or a finding asks.

Why PyYAML's composer and not ruamel.yaml's: measured on a 550-file, 33k-line
recipe tree on one core, ruamel's C loader composes in 0.95 s (every node makes a
Python `Tag` object and goes through its resolver), PyYAML's in 0.52 s with the
quoted-scalar shortcut below. Scalars resolve as PyYAML's `safe_load` does (YAML
1.1: `yes`/`on` are booleans), which is how InferenceX itself reads these files.

Key paths are tuples of str (mapping keys) and int (sequence indexes) and print
as `scenarios.fixed-seq-len[0].search-space[1].tp`.

Limits, so that a hostile or broken file fails fast instead of exhausting the machine: a file
larger than MAX_YAML_BYTES is refused before it is read; aliases may expand a document to at
most MAX_EXPANDED_NODES nodes (a 410-byte "billion laughs" document expands to ~10^9), counted
on the composed node graph before anything is built, and an anchor may not contain itself;
nesting is at most MAX_DEPTH deep; an integer may have at most MAX_INT_DIGITS digits (Python
refuses to convert more than 4,300).
Text may not hold control characters (a double-quoted escape such as `"\x1b"` is the only way
to write one; YAML refuses them raw): no benchmark value needs one, and they would reach
terminals, logs and generated shell scripts. Tab, newline and carriage return are text.
The largest real benchmark-tree files are well below all three (InferenceX's 320 KB
nvidia-master.yaml expands to about 21,000 nodes).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import marshal
import os
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.error import MarkedYAMLError, YAMLError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from inferbench.config import parse_cache
from inferbench.core.cpus import usable_cores
from inferbench.core.errors import ConfigError, Location
from inferbench.core.fsread import check_regular, read_file
from inferbench.core.lifetime import pool_worker_setup

try:  # libyaml: several times faster than the pure-Python parser
    _BaseLoader: Any = yaml.CSafeLoader
    C_PARSER = True
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _BaseLoader = yaml.SafeLoader
    C_PARSER = False


def load_plain(text: str) -> Any:
    """`yaml.safe_load` through libyaml: for inferbench's own data files, whose positions
    nobody asks for (the pure-Python loader takes ~10x as long on the engine flag tables)."""
    return yaml.load(text, Loader=_BaseLoader)


class _Loader(_BaseLoader):
    """Scalar resolution is most of the composing time: quoted scalars are strings, and a
    plain scalar's tag is cached by its text (keys like `tp` repeat thousands of times)."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode:
            if not implicit[0]:
                return _STR
            tag = _PLAIN_TAGS.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(value) <= 64 and len(_PLAIN_TAGS) < 65536:
                    _PLAIN_TAGS[value] = tag
            return tag
        if kind is MappingNode:
            return _MAP
        if kind is SequenceNode:
            return _SEQ
        return super().resolve(kind, value, implicit)

    # The composer calls these two around every node, for path resolvers, of which this
    # loader has none: C callables that do nothing instead of two Python calls per node
    # (a tenth of the parse of a recipe tree).
    descend_resolver = slice  # (parent, index) -> ignored
    ascend_resolver = tuple  # () -> ignored


_PLAIN_TAGS: dict[str, str] = {}
_CONSTRUCTOR = SafeConstructor()

KeyPath = tuple[str | int, ...]

_TAG = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = (_TAG + t for t in ("str", "int", "float", "bool", "null"))
_MAP, _SEQ, _MERGE = _TAG + "map", _TAG + "seq", _TAG + "merge"
_TRUE = frozenset({"true", "yes", "on"})
# The tags `yaml.safe_load` constructs (what the resolver gives plain scalars among them).
_SAFE_TAGS = frozenset(
    {"str", "int", "float", "bool", "null", "timestamp", "binary", "merge", "value"}
)
_COLLECTION_TAGS = frozenset({_TAG + "map", _TAG + "seq"})
_PLAIN_INT = re.compile(r"[-+]?[0-9]+\Z")
_PATH_TOKEN = re.compile(r"\[(-?\d+)\]|([^.\[\]]+)")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

MAX_YAML_BYTES = 16 * 1024 * 1024
MAX_EXPANDED_NODES = 500_000
MAX_INT_DIGITS = 100
MAX_DEPTH = 100


def format_path(path: KeyPath) -> str:
    """`('a', 0, 'b')` -> `a[0].b`."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        else:
            out.append(("." if out else "") + str(part))
    return "".join(out)


def parse_path(text: str) -> KeyPath:
    """`a[0].b` -> `('a', 0, 'b')` (the inverse of `format_path` for dot-free keys)."""
    parts: list[str | int] = []
    for index, name in _PATH_TOKEN.findall(text):
        parts.append(int(index) if index else name)
    return tuple(parts)


def _as_path(path: KeyPath | str) -> KeyPath:
    return parse_path(path) if isinstance(path, str) else path


_KEY = "\x1f"  # path encoding: a mapping key follows this, a sequence index follows _INDEX
_INDEX = "\x1e"
_BITS = 20
_MAX = (1 << _BITS) - 1


def _pack(key: Any, value: Any) -> int:
    """Two marks (0-based) as one int: key line/column, value line/column (1-based)."""
    numbers = (key.line + 1, key.column + 1, value.line + 1, value.column + 1)
    kl, kc, vl, vc = numbers
    if (kl | kc | vl | vc) > _MAX:  # a number past 20 bits: each clamped
        kl, kc, vl, vc = (min(n, _MAX) for n in numbers)
    return (kl << 3 * _BITS) | (kc << 2 * _BITS) | (vl << _BITS) | vc


def _unpack(packed: int, *, value: bool) -> tuple[int, int]:
    if value:
        return ((packed >> _BITS) & _MAX, packed & _MAX)
    return ((packed >> 3 * _BITS) & _MAX, (packed >> 2 * _BITS) & _MAX)


def _encode(part: str | int) -> tuple[str, ...]:
    if isinstance(part, int):
        return (_INDEX + str(part), _KEY + str(part))
    return (_KEY + part,)


def _cut(encoded: str, parts: int) -> int:
    """The length of the first `parts` parts of an encoded key path."""
    marks = [i for i, c in enumerate(encoded) if c in (_KEY, _INDEX)]
    return marks[parts] if parts < len(marks) else len(encoded)


def _decode(prefix: str) -> KeyPath:
    """The key path of an encoded position prefix."""
    parts: list[str | int] = []
    for token in re.split(f"([{_KEY}{_INDEX}])", prefix)[1:]:
        if token in (_KEY, _INDEX):
            parts.append(token)
        elif parts:
            marker = parts.pop()
            parts.append(int(token) if marker == _INDEX else token)
    return tuple(parts)


@dataclass(frozen=True)
class DuplicateKey:
    """A mapping key written twice; the later value is the one kept (as `yaml.safe_load`)."""

    location: Location  # the second definition
    first_line: int


@dataclass(frozen=True)
class PositionedDoc:
    """A loaded YAML document: plain `data` and the position of every key and item.

    Positions live in one flat map, encoded key path -> packed ints: it holds only str
    and int, so the cyclic GC never scans it. (Keeping the node tree instead made load
    time grow with the square of the tree size: millions of nodes and marks rescanned
    on every full collection.)
    """

    file: Path
    data: Any
    positions: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)
    # keys written twice in one mapping, when parsed with duplicates="last"
    duplicates: tuple[DuplicateKey, ...] = field(default=(), compare=False)

    def locate(self, path: KeyPath | str = ()) -> Location:
        """The position of the key (or sequence item) at `path`, or of its nearest existing
        ancestor when the path goes further than the document (e.g. a missing key)."""
        path = _as_path(path)
        line, column = self._walk(path, value=False)
        return Location(self.file, line, column, format_path(path) or None)

    def locate_value(self, path: KeyPath | str) -> Location:
        """Like `locate`, but the position of the value rather than of its key."""
        path = _as_path(path)
        line, column = self._walk(path, value=True)
        return Location(self.file, line, column, format_path(path) or None)

    def has(self, path: KeyPath | str) -> bool:
        """Whether `path` was written in the document."""
        encoded = ""
        for part in _as_path(path):
            encoded = next(
                (encoded + c for c in _encode(part) if encoded + c in self.positions), ""
            )
            if not encoded:
                return False
        return True

    def _encoded(self, path: KeyPath) -> str | None:
        encoded = ""
        for part in path:
            step = next((c for c in _encode(part) if encoded + c in self.positions), None)
            if step is None:
                return None
            encoded += step
        return encoded

    def moved(self, data: Any, source: KeyPath, target: KeyPath) -> PositionedDoc:
        """This document holding `data`, where the value written at `source` now sits at
        `target` (an older format read as the current one): a key path under `target` is
        located where the file wrote it under `source`."""
        old = self._encoded(source)
        if old is None:
            return dataclasses.replace(self, data=data)
        new = "".join(_KEY + p if isinstance(p, str) else _INDEX + str(p) for p in target)
        positions = dict(self.positions)
        for key, packed in self.positions.items():
            if key.startswith(old):
                positions.setdefault(new + key[len(old) :], packed)
        # the levels `target` adds (e.g. `scenarios:`) are located at the old key
        for depth in range(1, len(target)):
            positions.setdefault(new[: _cut(new, depth)], self.positions[old])
        return dataclasses.replace(self, data=data, positions=positions)

    def _walk(self, path: KeyPath, *, value: bool) -> tuple[int | None, int | None]:
        positions = self.positions
        best = positions.get("")
        if best is None:
            return (None, None)
        encoded = ""
        for part in path:
            for candidate in _encode(part):
                found = positions.get(encoded + candidate)
                if found is not None:
                    encoded += candidate
                    best = found
                    break
            else:
                break
        return _unpack(best, value=value)


class _Builder:
    """Turns a node tree into plain data and a position map, rejecting duplicate keys."""

    def __init__(self, file: Path, duplicates: str = "error") -> None:
        self.file = file
        self.positions: dict[str, int] = {}
        self.keep_last = duplicates == "last"
        self.duplicates: list[DuplicateKey] = []
        self._memo: dict[int, tuple[Any, str]] = {}
        self._keys: list[str] = []  # position keys in insertion order
        self._spans: dict[int, tuple[int, int]] = {}  # node id -> its slice of _keys

    def build(self, node: Node, prefix: str = "") -> Any:
        if isinstance(node, ScalarNode):
            return self._scalar(node, prefix)
        if node.tag not in _COLLECTION_TAGS:
            raise self._tag_error(node, prefix)
        memo = self._memo.get(id(node))
        if memo is not None:  # an alias: the same node composed twice
            self._copy_positions(memo[1], prefix, node)
            return memo[0]
        first_key = len(self._keys)
        if isinstance(node, SequenceNode):
            items: list[Any] = []
            self._memo[id(node)] = (items, prefix)
            for index, child in enumerate(node.value):
                here = f"{prefix}{_INDEX}{index}"
                self._set(here, _pack(child.start_mark, child.start_mark))
                items.append(self.build(child, here))
            result: Any = items
        elif isinstance(node, MappingNode):
            result = self._mapping(node, prefix)
        else:
            raise self._error("unsupported YAML node", node)
        self._spans[id(node)] = (first_key, len(self._keys))
        return result

    def _set(self, key: str, packed: int) -> None:
        if key not in self.positions:
            self._keys.append(key)
        self.positions[key] = packed

    def _copy_positions(self, source: str, target: str, node: Node) -> None:
        """Locate an alias's keys where it is used too: the positions of the aliased node's
        subtree (its own slice of the insertion order, so the cost is that of the subtree)."""
        if source == target:
            return
        start, end = self._spans.get(id(node), (0, len(self._keys)))
        positions, cut = self.positions, len(source)
        copied = [
            (target + k[cut:], positions[k])
            for k in self._keys[start:end]
            if k.startswith(source) and k != source  # a node still being built: all keys
        ]
        for key, value in copied:
            if key not in positions:
                positions[key] = value
                self._keys.append(key)

    def _mapping(self, node: MappingNode, prefix: str) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        self._memo[id(node)] = (result, prefix)
        seen: dict[Any, Node] = {}
        merged: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                merged.update(self._merge_source(value_node, prefix))
                continue
            key = self.build(key_node, prefix)
            if isinstance(key, list | dict):
                raise self._error("a mapping key must be a scalar", key_node)
            if key in seen and self.keep_last:
                first_line = seen[key].start_mark.line + 1
                where = self._loc(key_node, format_path((*_decode(prefix), str(key))))
                self.duplicates.append(DuplicateKey(where, first_line))
            elif key in seen:
                first = seen[key].start_mark
                raise ConfigError(
                    f"duplicate key {key!r} (first defined at line {first.line + 1})",
                    location=self._loc(key_node, str(key)),
                    hint="remove one of the two definitions",
                )
            seen[key] = key_node
            here = f"{prefix}{_KEY}{key}"
            self._set(here, _pack(key_node.start_mark, value_node.start_mark))
            result[key] = self.build(value_node, here)
        for key, value in merged.items():
            result.setdefault(key, value)
        return result

    def _merge_source(self, node: Node, prefix: str) -> dict[Any, Any]:
        """`<<: *anchor` (or a list of them): their keys, located where they were written."""
        sources = node.value if isinstance(node, SequenceNode) else [node]
        merged: dict[Any, Any] = {}
        for source in reversed(sources):  # earlier sources win
            value = self.build(source, f"{prefix}{_KEY}<<")
            if not isinstance(value, dict):
                raise self._error("a '<<' merge key needs a mapping", source)
            written = self._memo[id(source)][1]
            self._copy_positions(written, prefix, source)
            merged.update(value)
        return merged

    def _scalar(self, node: ScalarNode, prefix: str) -> Any:
        tag, text = node.tag, node.value
        if tag == _STR:
            if node.style == '"' and _CONTROL.search(text):  # only escapes can write one
                raise self._control_error(node, text, prefix)
            return text
        if tag == _INT and len(text) > MAX_INT_DIGITS:
            raise ConfigError(
                f"integer with {len(text):,} characters is out of range",
                location=self._loc(node),
                hint=f"write a number of at most {MAX_INT_DIGITS} digits, or quote it as text",
            )
        if tag == _INT and _PLAIN_INT.match(text):
            return int(text)
        if tag == _BOOL:
            return text.lower() in _TRUE
        if tag == _NULL:
            return None
        if tag == _INT:  # 0x10, 1_000, 0o17, 1:30 (YAML 1.1, as safe_load reads them)
            return _CONSTRUCTOR.construct_yaml_int(node)
        if tag == _FLOAT:
            return _CONSTRUCTOR.construct_yaml_float(node)
        if tag.startswith(_TAG) and tag[len(_TAG) :] in _SAFE_TAGS:
            return text  # a timestamp or binary keeps its text; the schema decides
        raise self._tag_error(node, prefix)

    def _tag_error(self, node: Node, prefix: str) -> ConfigError:
        """A tag `yaml.safe_load` has no constructor for (`!env X`, `!!python/...`):
        InferenceX's loader refuses the file, and keeping the text would make `!env X` the
        literal value `X`."""
        return ConfigError(
            f"YAML tag {node.tag!r} is not supported (InferenceX's loader refuses it)",
            location=self._loc(node, format_path(_decode(prefix)) or None),
            hint="write the value itself, without the tag; environment variables are not"
            " expanded in these files",
        )

    def _control_error(self, node: ScalarNode, text: str, prefix: str) -> ConfigError:
        char = _CONTROL.search(text)
        shown = text if len(text) <= 40 else text[:37] + "..."
        return ConfigError(
            f"control character {char.group() if char else ''!r} in {shown!r}",
            location=self._loc(node, format_path(_decode(prefix)) or None),
            hint="remove it (escapes such as \\x1b or \\a); text here needs none, and it "
            "would reach terminals, logs and shell scripts",
        )

    def _loc(self, node: Node, key: str | None = None) -> Location:
        mark = node.start_mark
        return Location(self.file, mark.line + 1, mark.column + 1, key)

    def _error(self, message: str, node: Node) -> ConfigError:
        return ConfigError(message, location=self._loc(node))


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Composing allocates ~100 acyclic objects per line; the cyclic collector would scan
    them again and again for nothing (measured: a third of the load time)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_yaml(text: str, file: Path, *, duplicates: str = "error") -> PositionedDoc:
    """Parse one YAML document from `text` (named `file` in errors). A key written twice in
    one mapping is an error, or with `duplicates="last"` kept as `yaml.safe_load` keeps it
    (the later value) and listed in the document's `duplicates`."""
    if len(text) > MAX_YAML_BYTES:
        raise ConfigError(
            f"document of {len(text):,} characters is larger than the "
            f"{MAX_YAML_BYTES // 2**20} MiB a YAML file here may have",
            location=Location(file),
            hint="split it, or check that this is the file you meant",
        )
    with _gc_paused():
        return _parse(text, file, duplicates)


def _parse(text: str, file: Path, duplicates: str) -> PositionedDoc:
    root = _compose(text, file)
    if root is None:
        return PositionedDoc(file=file, data=None)
    builder: _Builder | None = None
    if _plain_tree(text):
        builder = _TreeBuilder(file, duplicates, root)
        builder.positions[""] = _pack(root.start_mark, root.start_mark)
        try:
            data = builder.build(root)
        except _NotATree:  # a merge key (`<<: {...}`): the full builder merges it
            builder = None
    if builder is None:
        check_expansion(root, file)
        builder = _Builder(file, duplicates)
        builder.positions[""] = _pack(root.start_mark, root.start_mark)
        data = builder.build(root)
    return PositionedDoc(
        file=file, data=data, positions=builder.positions, duplicates=tuple(builder.duplicates)
    )


# Where an anchor could start: `&` after a line start, a space or a flow indicator, and
# then a character libyaml accepts in an anchor name. It also matches `TP &EP` in a comment
# or a string; that only sends a file down the general path.
_ANCHOR = re.compile(r"(?:^|[\s\[{,:])&[0-9A-Za-z_-]", re.MULTILINE)


def _plain_tree(text: str) -> bool:
    """Whether the document is certainly a tree: no anchor (so no alias: an alias needs one)
    and too short to hold MAX_EXPANDED_NODES nodes (a node takes at least one character).
    Most benchmark files are; they are built without the alias bookkeeping."""
    return len(text) < MAX_EXPANDED_NODES and _ANCHOR.search(text) is None


class _NotATree(Exception):
    """A merge key in a document `_plain_tree` took for a tree."""


class _TreeBuilder(_Builder):
    """`_Builder` for a document without aliases or merge keys (`_plain_tree`): every node is
    built once, so nothing is memoised or copied; only the depth limit is checked as it
    goes (past it, `check_expansion` raises the error it always raised)."""

    def __init__(self, file: Path, duplicates: str, root: Node) -> None:
        super().__init__(file, duplicates)
        self._root = root
        self._depth = 0

    def build(self, node: Node, prefix: str = "") -> Any:
        kind = type(node)
        if kind is ScalarNode:
            return self._scalar(node, prefix)
        if node.tag not in _COLLECTION_TAGS:
            raise self._tag_error(node, prefix)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            check_expansion(self._root, self.file)  # raises the depth error
            raise self._error("the document nests too deep", node)  # (not reached)
        positions = self.positions
        if kind is SequenceNode:
            items: list[Any] = []
            for index, child in enumerate(node.value):
                here = f"{prefix}{_INDEX}{index}"
                mark = child.start_mark
                positions[here] = _pack(mark, mark)
                items.append(self.build(child, here))
            result: Any = items
        elif kind is MappingNode:
            result = self._tree_mapping(node, prefix)
        else:
            raise self._error("unsupported YAML node", node)
        self._depth -= 1
        return result

    def _tree_mapping(self, node: MappingNode, prefix: str) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        seen: dict[Any, Node] = {}
        positions = self.positions
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                raise _NotATree
            key = self.build(key_node, prefix)
            if isinstance(key, list | dict):
                raise self._error("a mapping key must be a scalar", key_node)
            if key in seen:
                if not self.keep_last:
                    first = seen[key].start_mark
                    raise ConfigError(
                        f"duplicate key {key!r} (first defined at line {first.line + 1})",
                        location=self._loc(key_node, str(key)),
                        hint="remove one of the two definitions",
                    )
                first_line = seen[key].start_mark.line + 1
                where = self._loc(key_node, format_path((*_decode(prefix), str(key))))
                self.duplicates.append(DuplicateKey(where, first_line))
            seen[key] = key_node
            here = f"{prefix}{_KEY}{key}"
            km, vm = key_node.start_mark, value_node.start_mark
            kl, kc, vl, vc = km.line + 1, km.column + 1, vm.line + 1, vm.column + 1
            if (kl | kc | vl | vc) > _MAX:
                positions[here] = _pack(km, vm)
            else:  # _pack inlined: once per key of every file
                positions[here] = (kl << 3 * _BITS) | (kc << 2 * _BITS) | (vl << _BITS) | vc
            result[key] = self.build(value_node, here)
        return result


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def check_expansion(root: Node, file: Path) -> int:
    """The number of nodes `root` stands for with every alias expanded, counted on the node
    graph (each distinct node once, without expanding anything); raises ConfigError past
    MAX_EXPANDED_NODES, past MAX_DEPTH levels, or for an anchor that contains itself."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool, int]] = [(root, False, 1)]
    while stack:
        node, done, depth = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            total = 1 + sum(sizes.get(id(c), 1) for c in _children(node))
            if total > MAX_EXPANDED_NODES:
                raise _limit_error(
                    f"aliases expand this document past {MAX_EXPANDED_NODES:,} nodes (an alias "
                    "bomb, or anchors nested far deeper than a benchmark file needs)",
                    node,
                    file,
                    "write the repeated blocks out, or nest fewer aliases (*name) in each other",
                )
            sizes[key] = total
            continue
        if isinstance(node, ScalarNode) or key in sizes:
            continue
        if key in on_path:
            raise _limit_error(
                "an anchor contains an alias to itself (a recursive document)",
                node,
                file,
                "refer to the anchor (*name) only outside the block that defines it (&name)",
            )
        if depth > MAX_DEPTH:
            raise _limit_error(
                f"the document nests deeper than {MAX_DEPTH} levels",
                node,
                file,
                "flatten the structure; benchmark files need a dozen levels at most",
            )
        on_path.add(key)
        stack.append((node, True, depth))
        stack.extend((child, False, depth + 1) for child in _children(node))
    return sizes.get(id(root), 1)


def _limit_error(message: str, node: Node, file: Path, hint: str) -> ConfigError:
    mark = node.start_mark
    return ConfigError(message, location=Location(file, mark.line + 1, mark.column + 1), hint=hint)


def _compose(text: str, file: Path) -> Node | None:
    loader = _Loader(text)
    try:
        root: Node | None = loader.get_single_node()
    except MarkedYAMLError as exc:
        raise _syntax_error(exc, file, text) from None
    except YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", location=Location(file)) from None
    finally:
        loader.dispose()
    return root


class _LazyPositions(Mapping[str, int]):
    """A cached position map, unpacked on first use: most documents of a clean tree are
    never asked where a key is."""

    def __init__(self, packed: bytes) -> None:
        self._packed: bytes | None = packed
        self._map: dict[str, int] = {}

    def _loaded(self) -> dict[str, int]:
        if self._packed is not None:
            self._map = marshal.loads(self._packed)
            self._packed = None
        return self._map

    def __getitem__(self, key: str) -> int:
        return self._loaded()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._loaded()

    def get(self, key: str, default: Any = None) -> Any:
        return self._loaded().get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


def load_yaml(path: Path, *, duplicates: str = "error") -> PositionedDoc:
    """Read and parse `path`; unreadable or malformed files raise ConfigError. A parse of the
    same bytes made before is taken from the parse cache (`parse_cache`)."""
    path = Path(path)
    try:
        # a FIFO or device is refused unread (its st_size says nothing: /dev/zero's is 0)
        stat = check_regular(path, ConfigError)
        size = stat.st_size
        seen = _DIGESTS.pop((str(path), duplicates), None)
        if seen is not None and seen[:2] == (stat.st_mtime_ns, size):
            # preload hashed these very bytes a moment ago: no second read and hash
            cached = parse_cache.load(seen[2])
            if cached is not None:
                return _from_cache(path, cached)
        if size > MAX_YAML_BYTES:
            raise ConfigError(
                f"file of {size:,} bytes is larger than the {MAX_YAML_BYTES // 2**20} MiB a "
                "YAML file here may have",
                location=Location(path),
                hint="split it, or check that this is the file you meant",
            )
        raw = read_file(path, MAX_YAML_BYTES, error=ConfigError, what="YAML file")
    except FileNotFoundError:
        raise ConfigError("file not found", location=Location(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read file: {exc}", location=Location(path)) from None
    digest = parse_cache.key(raw, duplicates)
    cached = parse_cache.load(digest)
    if cached is not None:
        return _from_cache(path, cached)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"cannot read file: not UTF-8 text ({exc.reason} at byte {exc.start})",
            location=Location(path),
            hint="save the file as UTF-8 text; is it a YAML file at all?",
        ) from None
    doc = parse_yaml(text, path, duplicates=duplicates)
    dups = [
        (d.location.line, d.location.column, d.location.key, d.first_line) for d in doc.duplicates
    ]
    parse_cache.store(digest, (doc.data, marshal.dumps(dict(doc.positions)), dups))
    return doc


def _from_cache(path: Path, cached: Any) -> PositionedDoc:
    data, packed, dups = cached
    found = tuple(
        DuplicateKey(Location(path, line, column, key), first) for line, column, key, first in dups
    )
    return PositionedDoc(file=path, data=data, positions=_LazyPositions(packed), duplicates=found)


def _syntax_error(exc: MarkedYAMLError, file: Path, text: str) -> ConfigError:
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or "invalid YAML"
    if exc.context:
        problem = f"{problem} ({exc.context})"
    location = Location(file, mark.line + 1, mark.column + 1) if mark else Location(file)
    lines = text.splitlines()
    line = lines[mark.line] if mark is not None and mark.line < len(lines) else ""
    return ConfigError(
        f"invalid YAML: {problem}", location=location, hint=_syntax_hint(problem, line)
    )


def _syntax_hint(problem: str, line: str) -> str | None:
    if "tab" in problem or "\t" in line[: len(line) - len(line.lstrip())]:
        return "indent with spaces, not tabs"
    if "mapping values are not allowed" in problem:
        return "quote values that contain ': ' or fix the indentation"
    if "could not find expected ':'" in problem or "expected <block end>" in problem:
        return "check the indentation of this line and the one above"
    return "fix the YAML syntax at this line: close brackets and quotes, align indentation"


# Fewer files than this are parsed where they are needed: a second process costs more.
PRELOAD_MIN_FILES = 32


def preload(paths: list[Path], *, duplicates: str = "error") -> None:
    """Parse the files of `paths` the parse cache lacks on two cores, into the cache.

    A cold `check` of a real tree spends most of its time parsing its few hundred recipes
    one after another. With the cache on, a second core free and no other thread in this
    process, a forked child parses the second half of the missing files while this process
    parses the first half; both store their parses, and the `load_yaml` calls that follow
    unpack them. Results are the same as without it: the cache is keyed by file content,
    and a file that does not parse is left for `load_yaml` to report.
    """
    if parse_cache.cache_dir() is None or threading.active_count() > 1:
        return
    if usable_cores() < 2 or not hasattr(os, "fork"):
        return
    missing = [path for path in paths if not _cached(path, duplicates)]
    if len(missing) < PRELOAD_MIN_FILES:
        return
    half = len(missing) // 2
    parent = os.getpid()
    try:
        child = os.fork()
    except OSError:
        return
    if child == 0:  # pragma: no cover - runs in the child, which never returns
        code = 0
        try:
            pool_worker_setup(parent)
            _parse_into_cache(missing[half:], duplicates)
        except BaseException:
            code = 1
        os._exit(code)
    try:
        _parse_into_cache(missing[:half], duplicates)
    finally:
        os.waitpid(child, 0)


# (path, duplicates mode) -> (mtime_ns, size, parse-cache key) of the bytes preload read, so
# that the load_yaml call that follows need not read and hash the file again (popped there)
_DIGESTS: dict[tuple[str, str], tuple[int, int, str]] = {}


def _cached(path: Path, duplicates: str) -> bool:
    try:
        stat = path.stat()
        if stat.st_size > MAX_YAML_BYTES:
            return True  # load_yaml refuses it
        raw = read_file(path, MAX_YAML_BYTES, error=ConfigError)
    except (OSError, ConfigError):
        return True  # load_yaml reports it
    digest = parse_cache.key(raw, duplicates)
    if len(raw) == stat.st_size:  # not rewritten while read
        _DIGESTS[(str(path), duplicates)] = (stat.st_mtime_ns, stat.st_size, digest)
    return parse_cache.has(digest)


def _parse_into_cache(paths: list[Path], duplicates: str) -> None:
    for path in paths:
        with contextlib.suppress(ConfigError):
            load_yaml(path, duplicates=duplicates)
