"""The `--format json` document of `bench` and `sim estimate`: one JSON object on stdout.

    {"schema": "inferbench.points/1", "command": "bench",
     "points": [{"point": "conc4", "repeat": 1, "file": "out_conc4.json",
                 "result": {...}, "estimate": {...}}]}

`result` is the point's result file as `bench` writes it (sa-bench's fields under their
names, inferbench's under `inferbench`), whether or not a file was written (`file` is then
null); `estimate` (sim estimate only) holds the figures of its table. Keys are only added
within a schema version; a renamed or removed key gets a new `schema`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

SCHEMA = "inferbench.points/1"


@dataclass(frozen=True)
class PointDocument:
    point: str  # the load's label: conc4, rate50, rate50_conc8
    result_json: bytes  # the result file's bytes
    file: Path | None = None
    repeat: int = 1
    estimate: Mapping[str, Any] | None = field(default=None)


def points_document(command: str, points: Sequence[PointDocument]) -> bytes:
    """The document, indented, with a final newline."""
    out = []
    for p in points:
        entry: dict[str, Any] = {
            "point": p.point,
            "repeat": p.repeat,
            "file": str(p.file) if p.file is not None else None,
            "result": orjson.loads(p.result_json),
        }
        if p.estimate is not None:
            entry["estimate"] = dict(p.estimate)
        out.append(entry)
    doc = {"schema": SCHEMA, "command": command, "points": out}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
