"""Read one bench result file (sa-bench fields, optionally an `inferbench` block).

sa-bench files have no failure count; inferbench result files add an `"inferbench"`
block (schema_version, failures by category, per-request TPOTs, queue times, window,
power samples). Parsing is defensive: a corrupt file, a truncated one, or one with a
non-numeric metric is an InputError naming the file and key, never a traceback.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from inferbench.errors import InputError, Location
from inferbench.results.derived import (
    PowerSample,
    interactivity_from_tpot_stats,
    interactivity_from_tpots,
    request_tpots_ms,
)
from inferbench.results.record import Interactivity, Metrics, Stats, check_schema_version

_STAT_KEYS = {
    "mean": "mean",
    "median": "median",
    "std": "std",
    "p90": "p90",
    "p99": "p99",
    "p99.9": "p999",
}
BENCH_BLOCK = "inferbench"


@dataclass(frozen=True)
class BenchFile:
    """What one result file says about its point."""

    path: Path
    raw: Mapping[str, Any]
    metrics: Metrics
    interactivity: Interactivity | None
    window: tuple[float, float] | None
    power: tuple[PowerSample, ...]
    block: Mapping[str, Any]  # the inferbench block ({} for plain sa-bench)

    @property
    def has_block(self) -> bool:
        return bool(self.block)


def load_json_object(path: Path) -> dict[str, Any]:
    """Read a JSON object or raise InputError (corrupt, truncated, not an object)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", location=Location(file=path)) from None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON (corrupt or truncated): {exc}", location=Location(file=path)
        ) from None
    if not isinstance(obj, dict):
        raise InputError("expected a JSON object", location=Location(file=path))
    return obj


def read_bench_file(path: Path, raw: Mapping[str, Any] | None = None) -> BenchFile:
    raw = load_json_object(path) if raw is None else raw
    block = raw.get(BENCH_BLOCK) or {}
    if not isinstance(block, Mapping):
        raise InputError("'inferbench' must be an object", location=Location(path, key=BENCH_BLOCK))
    if block:
        check_schema_version(
            block.get("schema_version"), location=Location(path, key="inferbench.schema_version")
        )
    metrics = _metrics(path, raw, block)
    return BenchFile(
        path=path,
        raw=raw,
        metrics=metrics,
        interactivity=_interactivity(raw, block, metrics.tpot_ms),
        window=_window(raw, block),
        power=_power(path, block),
        block=block,
    )


def _num(path: Path, raw: Mapping[str, Any], key: str, *, required: bool = True) -> float | None:
    value = raw.get(key)
    if type(value) is float or type(value) is int:  # the common case, checked cheaply
        return float(value)
    if value is None:
        if required:
            raise InputError(
                f"result file lacks {key!r} (not a sa-bench result?)",
                location=Location(path, key=key),
            )
        return None
    if isinstance(value, str) and value.strip().lower() in {"inf", "infinity"}:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(
            f"{key!r} must be a number, got {value!r}", location=Location(path, key=key)
        )
    return float(value)


_STAT_FIELDS = {
    metric: tuple((f"{src}_{metric}_ms", dst) for src, dst in _STAT_KEYS.items())
    for metric in ("ttft", "tpot", "itl", "e2el")
}


def _stats(path: Path, raw: Mapping[str, Any], metric: str) -> Stats:
    values = {dst: _num(path, raw, key, required=False) for key, dst in _STAT_FIELDS[metric]}
    # every value was checked by _num (a finite or infinite float, or None)
    return Stats.model_construct(None, **values)


def _failures(raw: Mapping[str, Any], block: Mapping[str, Any], completed: int) -> dict[str, int]:
    failures = block.get("failures")
    if isinstance(failures, Mapping):
        return {str(k): int(v) for k, v in failures.items() if int(v) > 0}
    # Plain sa-bench drops failed requests; recover what we can from the prompt count.
    prompts = raw.get("num_prompts")
    if isinstance(prompts, int) and prompts > completed:
        return {"unknown": prompts - completed}
    return {}


def _metrics(path: Path, raw: Mapping[str, Any], block: Mapping[str, Any]) -> Metrics:
    completed = int(_num(path, raw, "completed") or 0)
    failures = _failures(raw, block, completed)
    rate = _num(path, raw, "request_rate", required=False)
    queue = block.get("queue_ms") or block.get("queue_time_ms")
    try:
        return Metrics(
            duration_s=_num(path, raw, "duration") or 0.0,
            completed=completed,
            failed=sum(failures.values()),
            failures=failures,
            num_prompts=raw.get("num_prompts") if isinstance(raw.get("num_prompts"), int) else None,
            request_rate=None if rate is None or math.isinf(rate) else rate,
            max_concurrency=raw.get("max_concurrency")
            if isinstance(raw.get("max_concurrency"), int)
            else None,
            total_input_tokens=int(_num(path, raw, "total_input_tokens") or 0),
            total_output_tokens=int(_num(path, raw, "total_output_tokens") or 0),
            request_throughput=_num(path, raw, "request_throughput") or 0.0,
            output_throughput=_num(path, raw, "output_throughput") or 0.0,
            total_token_throughput=_num(path, raw, "total_token_throughput") or 0.0,
            ttft_ms=_stats(path, raw, "ttft"),
            tpot_ms=_stats(path, raw, "tpot"),
            itl_ms=_stats(path, raw, "itl"),
            e2el_ms=_stats(path, raw, "e2el"),
            queue_ms=Stats(**{k: queue.get(k) for k in Stats.model_fields if k in queue})
            if isinstance(queue, Mapping)
            else None,
            goodput=_num(path, raw, "request_goodput", required=False),
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        raise InputError(f"invalid metric {key}: {first['msg']}", location=Location(path)) from None


def _interactivity(
    raw: Mapping[str, Any], block: Mapping[str, Any], tpot: Stats
) -> Interactivity | None:
    tpots = block.get("tpots_ms")
    if isinstance(tpots, list) and tpots:
        return interactivity_from_tpots([float(t) for t in tpots if isinstance(t, int | float)])
    itls, outs = raw.get("itls"), raw.get("output_lens")
    if isinstance(itls, list) and isinstance(outs, list) and itls and len(itls) == len(outs):
        # sa-bench stores ITLs in seconds per request.
        per_req = request_tpots_ms(
            [[g * 1000.0 for g in gaps] for gaps in itls if isinstance(gaps, list)], outs
        )
        found = interactivity_from_tpots(per_req)
        if found is not None:
            return found
    return interactivity_from_tpot_stats(tpot)


def _window(raw: Mapping[str, Any], block: Mapping[str, Any]) -> tuple[float, float] | None:
    win = block.get("window")
    if isinstance(win, Mapping) and "start_unix" in win and "end_unix" in win:
        return float(win["start_unix"]), float(win["end_unix"])
    start, end = raw.get("benchmark_start_time_unix"), raw.get("benchmark_end_time_unix")
    if isinstance(start, int | float) and isinstance(end, int | float):
        return float(start), float(end)
    return None


def _power(path: Path, block: Mapping[str, Any]) -> tuple[PowerSample, ...]:
    samples = block.get("gpu_power")
    if not isinstance(samples, list):
        return ()
    out = []
    for i, s in enumerate(samples):
        try:
            out.append(PowerSample(t=float(s["t"]), gpu=str(s["gpu"]), watts=float(s["watts"])))
        except (KeyError, TypeError, ValueError):
            raise InputError(
                "power sample needs t, gpu, watts", location=Location(path, key=f"gpu_power[{i}]")
            ) from None
    return tuple(out)
