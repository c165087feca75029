"""Read one bench result file: a plain sa-bench JSON, or an inferbench result file.

An inferbench result file (sa-bench fields + an `"inferbench"` block) is read with the
load generator's own typed reader (`inferbench.bench.result.read_point_result`), so
the two stages share one definition of the format: failures by category, per-request
interactivity percentiles, completeness, client-side load and the point's window come
from there. A plain sa-bench file has none of that; it is read defensively (failures
recovered from the prompt count, interactivity from per-request ITLs or TPOT
percentiles). Either way a corrupt, truncated or foreign file is an InputError naming
the file and key, never a traceback.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from inferbench.bench import result as bench_result
from inferbench.bench.metrics import BenchStats
from inferbench.core.errors import InputError, Location
from inferbench.core.fsread import MAX_RESULT_BYTES, read_file
from inferbench.results.derived import (
    PowerSample,
    interactivity_from_tpot_stats,
    interactivity_from_tpots,
    request_tpots_ms,
)
from inferbench.results.record import Metrics, RecordInteractivity, RecordStats
from inferbench.results.samples import PointSamples

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
    interactivity: RecordInteractivity | None
    window: tuple[float, float] | None  # unix seconds the measured requests ran in
    power: tuple[PowerSample, ...]
    power_note: str | None = None  # why there are no samples (no tool on the node)
    point: bench_result.PointResult | None = None  # None for plain sa-bench
    started_at: datetime | None = None  # the point's wall-clock bounds (warm-ups included)
    finished_at: datetime | None = None
    samples: PointSamples | None = None  # per-request values, for the comparison's noise model

    @property
    def client_version(self) -> str | None:
        return self.point.inferbench.client_version if self.point is not None else None


# What a damaged result file asks of its owner (the ingest skips it and goes on).
REPLACE_HINT = "re-run the point or remove the file; the valid files are ingested"
_JSON_KIND = {
    list: "a list",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "true/false",
}
# Python's json module writes these for float nan/inf; they are not JSON (orjson refuses them).
_NON_JSON_NUMBER = re.compile(rb"[:,\[]\s*(NaN|-?Infinity)\b")


def load_json_object(path: Path) -> dict[str, Any]:
    """Read a JSON object or raise InputError (corrupt, truncated, not an object)."""
    data = read_file(path, MAX_RESULT_BYTES, what="result file")
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        found = _NON_JSON_NUMBER.search(data)
        if found:
            line = data.count(b"\n", 0, found.start(1)) + 1
            raise InputError(
                f"{found.group(1).decode()} is not a JSON number (a metric with no value?)",
                location=Location(path, line=line),
                hint="write null for a missing value, or " + REPLACE_HINT,
            ) from None
        raise InputError(
            f"not valid JSON (corrupt or truncated): {exc}",
            location=Location(file=path),
            hint=REPLACE_HINT,
        ) from None
    if not isinstance(obj, dict):
        got = "null" if obj is None else _JSON_KIND.get(type(obj), type(obj).__name__)
        raise InputError(
            f"expected a JSON object, got {got}",
            location=Location(file=path),
            hint="a result file holds one object of sa-bench fields; " + REPLACE_HINT,
        )
    return obj


def read_bench_file(path: Path, raw: Mapping[str, Any] | None = None) -> BenchFile:
    """Read one result file (`raw`: its JSON when the caller has already parsed it)."""
    raw = load_json_object(path) if raw is None else raw
    if BENCH_BLOCK in raw:
        return _read_point_result(path, raw)
    metrics = _metrics(path, raw)
    return BenchFile(
        path=path,
        raw=raw,
        metrics=metrics,
        interactivity=_interactivity(raw, metrics.tpot_ms),
        window=_window(raw),
        power=(),
        samples=PointSamples.of_sa_bench(raw),
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
                hint="ingest the JSON that sa-bench --save-result or inferbench bench wrote",
            )
        return None
    if isinstance(value, str) and value.strip().lower() in {"inf", "infinity"}:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(
            f"{key!r} must be a number, got {value!r:.60}",
            location=Location(path, key=key),
            hint=REPLACE_HINT,
        )
    return float(value)


_STAT_FIELDS = {
    metric: tuple((f"{src}_{metric}_ms", dst) for src, dst in _STAT_KEYS.items())
    for metric in ("ttft", "tpot", "itl", "e2el")
}


def _stats(path: Path, raw: Mapping[str, Any], metric: str) -> dict[str, float | None]:
    """One distribution's fields, for Metrics to validate with the rest (one pydantic call
    per file: an ingest reads 100,000s of these)."""
    values: dict[str, float | None] = {}
    for key, dst in _STAT_FIELDS[metric]:
        value = raw.get(key)
        values[dst] = (
            float(value)
            if type(value) is float or type(value) is int
            else _num(path, raw, key, required=False)
        )
    return values


def _failures(raw: Mapping[str, Any], completed: int) -> dict[str, int]:
    # Plain sa-bench drops failed requests; recover what we can from the prompt count.
    prompts = raw.get("num_prompts")
    if isinstance(prompts, int) and prompts > completed:
        return {"unknown": prompts - completed}
    return {}


def _metrics(path: Path, raw: Mapping[str, Any]) -> Metrics:
    completed = int(_num(path, raw, "completed") or 0)
    failures = _failures(raw, completed)
    rate = _num(path, raw, "request_rate", required=False)
    prompts, conc = raw.get("num_prompts"), raw.get("max_concurrency")
    try:
        return Metrics.model_validate(
            {
                "duration_s": _num(path, raw, "duration") or 0.0,
                "completed": completed,
                "failed": sum(failures.values()),
                "failures": failures,
                "num_prompts": prompts if isinstance(prompts, int) else None,
                "request_rate": None if rate is None or math.isinf(rate) else rate,
                "max_concurrency": conc if isinstance(conc, int) else None,
                "total_input_tokens": int(_num(path, raw, "total_input_tokens") or 0),
                "total_output_tokens": int(_num(path, raw, "total_output_tokens") or 0),
                "request_throughput": _num(path, raw, "request_throughput") or 0.0,
                "output_throughput": _num(path, raw, "output_throughput") or 0.0,
                "total_token_throughput": _num(path, raw, "total_token_throughput") or 0.0,
                "ttft_ms": _stats(path, raw, "ttft"),
                "tpot_ms": _stats(path, raw, "tpot"),
                "itl_ms": _stats(path, raw, "itl"),
                "e2el_ms": _stats(path, raw, "e2el"),
                "goodput": _num(path, raw, "request_goodput", required=False),
            }
        )
    except ValidationError as exc:
        raise _invalid_metric(path, exc) from None


def _invalid_metric(path: Path, exc: ValidationError) -> InputError:
    first = exc.errors()[0]
    key = ".".join(str(p) for p in first["loc"])
    return InputError(
        f"invalid metric: {first['msg']}", location=Location(path, key=key), hint=REPLACE_HINT
    )


def _interactivity(raw: Mapping[str, Any], tpot: RecordStats) -> RecordInteractivity | None:
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


def _window(raw: Mapping[str, Any]) -> tuple[float, float] | None:
    start, end = raw.get("benchmark_start_time_unix"), raw.get("benchmark_end_time_unix")
    if isinstance(start, int | float) and isinstance(end, int | float):
        return float(start), float(end)
    return None


# --- inferbench result files: the load generator's typed reader -------------------


def _read_point_result(path: Path, raw: Mapping[str, Any]) -> BenchFile:
    block = raw[BENCH_BLOCK]
    version = block.get("schema_version") if isinstance(block, Mapping) else None
    if isinstance(version, int) and version > bench_result.SCHEMA_VERSION:
        # refused before validation: a newer file's new fields would read as "extra"
        raise InputError(
            f"result file schema version {version} is newer than this inferbench "
            f"understands (up to {bench_result.SCHEMA_VERSION})",
            location=Location(path, key=f"{BENCH_BLOCK}.schema_version"),
            hint="upgrade inferbench to read it",
        )
    point = bench_result.read_point_result(path)
    sa, ib = point.sa, point.inferbench
    started = _iso(path, ib.started_at, "started_at")
    finished = _iso(path, ib.finished_at, "finished_at")
    try:
        metrics = Metrics(
            duration_s=sa.duration,
            completed=sa.completed,
            failed=ib.failed,
            failures={k: v for k, v in ib.failures.items() if v > 0},
            num_prompts=sa.num_prompts,
            request_rate=_rate(sa.request_rate),
            max_concurrency=sa.max_concurrency,
            total_input_tokens=sa.total_input_tokens,
            total_output_tokens=sa.total_output_tokens,
            request_throughput=sa.request_throughput,
            output_throughput=sa.output_throughput,
            total_token_throughput=sa.total_token_throughput,
            ttft_ms=_sa_stats(sa, "ttft"),
            tpot_ms=_sa_stats(sa, "tpot"),
            itl_ms=_sa_stats(sa, "itl"),
            e2el_ms=_sa_stats(sa, "e2el"),
            queue_ms=_stats_of(ib.queue_ms) if ib.queue_ms.count else None,
            goodput=ib.goodput,
            complete=ib.complete,
            incomplete_reason=ib.incomplete_reason,
            gate_failure=ib.gate_failure,
            achieved_request_rate=ib.achieved_request_rate,
            in_flight_max=ib.in_flight.max,
            in_flight_mean=ib.in_flight.time_weighted_mean,
        )
    except ValidationError as exc:
        raise _invalid_metric(path, exc) from None
    inter = ib.interactivity
    return BenchFile(
        path=path,
        raw=raw,
        metrics=metrics,
        # all zeros: no request had a TPOT (every one failed or gave one token)
        interactivity=RecordInteractivity(
            p1=inter.p1,
            p10=inter.p10,
            median=inter.median,
            p90=inter.p90,
            p99=inter.p99,
            mean=inter.mean,
            source="per_request",
        )
        if inter.median > 0
        else None,
        window=_window(raw) or _measured_window(started, finished, sa.duration),
        power=(),
        point=point,
        started_at=started,
        finished_at=finished,
        samples=PointSamples.of_block(ib.samples) if ib.samples is not None else None,
    )


def _iso(path: Path, text: str, key: str) -> datetime:
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(
            f"{key} is not an ISO 8601 time: {text!r}",
            location=Location(path, key=f"{BENCH_BLOCK}.{key}"),
        ) from None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def _measured_window(
    started: datetime, finished: datetime, duration_s: float
) -> tuple[float, float]:
    """The measured requests' window in unix time, for files older than the
    `benchmark_start_time_unix` / `benchmark_end_time_unix` keys.

    The file stamps the whole point (request building and warm-ups first), and the
    measured window of `duration` seconds ends with the last response, just before
    the point finishes: so it is taken as the `duration` that ends at `finished_at`.
    """
    end = finished.timestamp()
    start = max(started.timestamp(), (finished - timedelta(seconds=duration_s)).timestamp())
    return start, end


def _rate(value: float | str) -> float | None:
    """sa-bench writes "inf" for a closed loop: no rate."""
    try:
        rate = float(value)
    except ValueError:
        return None
    return None if math.isinf(rate) or math.isnan(rate) else rate


_SA_STAT_FIELDS = {
    metric: tuple((f"{src.replace('.', '_')}_{metric}_ms", dst) for src, dst in _STAT_KEYS.items())
    for metric in ("ttft", "tpot", "itl", "e2el")
}


def _sa_stats(sa: bench_result.SaBenchFields, metric: str) -> RecordStats:
    return RecordStats.model_validate(
        {dst: getattr(sa, name) for name, dst in _SA_STAT_FIELDS[metric]}
    )


def _stats_of(stats: BenchStats) -> RecordStats:
    return RecordStats(
        mean=stats.mean,
        median=stats.median,
        std=stats.std,
        p90=stats.p90,
        p99=stats.p99,
        p999=stats.p99_9,
    )
