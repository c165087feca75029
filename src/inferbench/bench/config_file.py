"""`inferbench bench --config FILE`: a benchmark definition as data.

The file is a YAML mapping of option names to values, spelled as on the command line
without the dashes (`isl: 1024`, `random-input-len: 1024`, `max_concurrency: 64`); lists
stand for comma-separated values (`concurrency: [4, 8, 16]`) or for repeated options
(`goodput: [ttft:2000, tpot:50]`), `true` for a flag. Flags given on the command line win
over the file. An unknown key is an error naming its line and the closest option.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from inferbench.core.errors import InputError, Location
from inferbench.core.fsread import read_file

MAX_BYTES = 1 << 20  # a benchmark definition is a few lines; refuse anything absurd


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def load_bench_config(
    path: Path, spellings: Mapping[str, str], multiple: Mapping[str, str]
) -> dict[str, Any]:
    """The file's values keyed by parameter name.

    `spellings` maps every accepted key (option names without dashes, `-` or `_`) to its
    parameter; parameters in `multiple` take lists (repeated options), and a mapping there
    reads as pairs joined by the separator given (`goodput: {ttft: 2000}` -> `ttft:2000`).
    """
    path = Path(path)
    # a FIFO or /dev/zero is refused unread; a regular file is read up to the cap only
    raw = read_file(path, MAX_BYTES, what="config file", option="--config")
    try:
        node = yaml.compose(raw.decode("utf-8"), Loader=yaml.SafeLoader)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError(
            f"config file is not valid YAML ({getattr(exc, 'problem', None) or exc})",
            location=Location(file=path, line=line),
        ) from None
    if node is None:
        return {}
    if not isinstance(node, yaml.MappingNode):
        raise InputError(
            "a bench config file is a mapping of option names to values",
            location=Location(file=path, line=node.start_mark.line + 1),
            hint="e.g. `isl: 1024` on its own line",
        )
    out: dict[str, Any] = {}
    for key_node, value_node in node.value:
        key = str(key_node.value)
        where = Location(file=path, line=key_node.start_mark.line + 1, key=key)
        name = spellings.get(key) or spellings.get(key.replace("_", "-"))
        if name is None:
            close = difflib.get_close_matches(key, list(spellings), n=1)
            raise InputError(
                f"unknown bench option {key!r}",
                location=where,
                hint=f"did you mean {close[0]!r}?" if close else "see `inferbench bench --help`",
            )
        if name in out:
            raise InputError(f"option {key!r} is given twice", location=where)
        value = yaml.safe_load(yaml.serialize(value_node)) if value_node.tag else None
        out[name] = _value(value, multiple.get(name), where)
    return out


def _value(value: Any, separator: str | None, where: Location) -> Any:
    if isinstance(value, list):
        if not all(_scalar(v) and not isinstance(v, bool) for v in value):
            raise InputError("a list holds plain values only", location=where)
        items = [str(v) for v in value]
        return items if separator is not None else ",".join(items)
    if isinstance(value, dict):
        if separator is not None and all(_scalar(v) for v in value.values()):
            return [f"{k}{separator}{v}" for k, v in value.items()]
        raise InputError("expected a value, not a mapping", location=where)
    if separator is not None:
        return [] if value is None else [str(value)]
    return value
