"""Find and read a trace source: a file, a folder, or a local Hugging Face dataset cache.

Formats are told apart by the first record: a Weka trace has `requests` and `block_size`,
an inferbench turn line has `session`, a Mooncake request `input_length` and
`output_length`; a `.csv` file is a BurstGPT log (its header says so). Nothing is ever
downloaded: a Hugging Face cache is read where `hf download --repo-type dataset` left it
(`datasets--ORG--NAME/snapshots/REV/`, the revision `refs/main` names, else the newest
snapshot).
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from inferbench.bench.traces.burstgpt import looks_like_burstgpt, read_burstgpt
from inferbench.bench.traces.context import ContextRule, apply_context_rule
from inferbench.bench.traces.errors import trace_error
from inferbench.bench.traces.jsonl import read_turn_lines
from inferbench.bench.traces.model import Trace, TraceSet
from inferbench.bench.traces.mooncake import looks_like_mooncake, read_mooncake_lines
from inferbench.bench.traces.weka import looks_like_weka, parse_trace, read_weka_lines
from inferbench.core.errors import InputError, Location
from inferbench.core.fsread import MAX_DATA_BYTES, check_regular
from inferbench.core.fsread import read_file as read_bytes


def _snapshot(path: Path) -> Path:
    """The snapshot folder of a hub cache entry (or `path` itself)."""
    snapshots = path / "snapshots"
    if not snapshots.is_dir():
        return path
    ref = path / "refs" / "main"
    if ref.is_file():
        rev = ref.read_text("utf-8").strip()
        if rev and Path(rev).name == rev and (snapshots / rev).is_dir():
            return snapshots / rev
    revs = sorted((p for p in snapshots.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
    if not revs:
        raise InputError("the dataset cache has no snapshot", location=Location(file=path))
    return revs[-1]


def resolve_hub_dataset(cache_root: Path, dataset: str) -> Path:
    """`ORG/NAME` inside a hub cache root (HF_HUB_CACHE) -> its cache entry folder."""
    entry = cache_root / ("datasets--" + dataset.replace("/", "--"))
    if not entry.is_dir():
        raise InputError(
            f"dataset {dataset} is not in the local cache {cache_root}",
            location=Location(key="--dataset"),
            hint=f"fetch it once with `hf download --repo-type dataset {dataset}`",
        )
    return entry


def trace_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        if os.path.lexists(path):  # a FIFO or device: say what it is, not "not found"
            check_regular(path)
        raise InputError(
            "trace source not found",
            location=Location(file=path),
            hint="give a trace file (.jsonl, .json) or a folder of them",
        )
    root = _snapshot(path)
    files = sorted(p for p in root.rglob("*.jsonl") if p.is_file())
    for suffix in ("*.json", "*.csv"):
        if not files:
            files = sorted(p for p in root.rglob(suffix) if p.is_file())
    if not files:
        raise InputError(
            "no .jsonl, .json or .csv trace files in this folder", location=Location(file=path)
        )
    return files


def _lines(path: Path) -> list[tuple[int, bytes]]:
    raw = read_bytes(path, MAX_DATA_BYTES, what="trace file")
    out = []
    for number, line in enumerate(raw.splitlines(), start=1):
        text = line.strip()
        if text and not text.startswith(b"#"):
            out.append((number, text))
    return out


def read_file(path: Path) -> tuple[str, list[Trace]]:
    lines = _lines(path)
    if not lines:
        raise trace_error(path, None, None, "the trace file has no records")
    if path.suffix == ".csv":
        if not looks_like_burstgpt(lines[0][1].decode("utf-8", "replace")):
            raise trace_error(
                path, lines[0][0], None, "unknown CSV trace format",
                hint="a BurstGPT log starts Timestamp,Model,Request tokens,Response tokens",
            )  # fmt: skip
        text = read_bytes(path, MAX_DATA_BYTES, what="trace file").decode("utf-8", "replace")
        return "burstgpt", read_burstgpt(path, text)
    if path.suffix == ".json":  # one pretty-printed Weka trace per file
        try:
            data = orjson.loads(read_bytes(path, MAX_DATA_BYTES, what="trace file"))
        except orjson.JSONDecodeError as exc:
            raise trace_error(path, None, None, f"not valid JSON ({exc})") from None
        return "weka", [parse_trace(data, path, 1)]
    try:
        first = orjson.loads(lines[0][1])
    except orjson.JSONDecodeError as exc:
        raise trace_error(path, lines[0][0], None, f"not valid JSON ({exc})") from None
    if looks_like_weka(first):
        return "weka", read_weka_lines(path, lines)
    if isinstance(first, dict) and "session" in first:
        return "jsonl", read_turn_lines(path, lines)
    if looks_like_mooncake(first):
        return "mooncake", read_mooncake_lines(path, lines)
    raise trace_error(
        path,
        lines[0][0],
        None,
        "unknown trace format",
        hint="a Weka trace has `requests` and `block_size`; an inferbench turn line "
        "`session`; a Mooncake request `input_length` and `output_length`",
    )


def load_traces(
    source: Path,
    *,
    max_model_len: int | None = None,
    rule: ContextRule = ContextRule.TRIM,
    limit: int | None = None,
) -> TraceSet:
    """Every trace under `source`, the context rule applied; `limit` keeps the first N."""
    traces: list[Trace] = []
    formats: set[str] = set()
    for file in trace_files(Path(source)):
        fmt, found = read_file(file)
        formats.add(fmt)
        traces += found
        if limit is not None and len(traces) >= limit:
            traces = traces[:limit]
            break
    if not traces:
        raise InputError("no traces found", location=Location(file=Path(source)))
    fmt = formats.pop() if len(formats) == 1 else "mixed"
    return apply_context_rule(TraceSet(tuple(traces), fmt, str(source)), max_model_len, rule)
