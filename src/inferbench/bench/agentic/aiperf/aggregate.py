"""`profile_export_aiperf.json`: the run's aggregate, in aiperf's keys.

What InferenceX reads of it: `request_count` / `error_request_count` (`avg`: the measured
requests that succeeded / failed; the validation's failed-request gate),
`start_time` / `end_time` (the measured window, ISO 8601 with its UTC offset, so the power
adapter needs no captured time zone), `theoretical_prefix_cache_hit` (the workload's
prefix-reuse ceiling: `sum` / `count` = inferbench's `client_reuse_share`, counted in tokens
where aiperf counts blocks) and `metadata.dataset` (the trace set's provenance). The metric
distributions (`avg`, `min`, `max`, `std`, `p1`..`p99`, numpy's linear percentiles) are there
for readers of aiperf's own summary.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np

from inferbench import __version__
from inferbench.bench.agentic.aiperf.records import error_details
from inferbench.bench.agentic.replay import ReplayRun
from inferbench.bench.result import PointResult

_PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)


def _distribution(values: list[float], unit: str) -> dict[str, Any] | None:
    if not values:
        return None
    arr = np.asarray(values, dtype=float)
    out: dict[str, Any] = {"unit": unit, "avg": float(arr.mean())}
    for p, v in zip(_PERCENTILES, np.percentile(arr, _PERCENTILES), strict=True):
        out[f"p{p}"] = float(v)
    out.update(min=float(arr.min()), max=float(arr.max()), std=float(arr.std()))
    return out


def _scalar(value: float | int, unit: str) -> dict[str, Any]:
    return {"unit": unit, "avg": value}


def _iso(unix: float | None) -> str | None:
    return None if unix is None else datetime.fromtimestamp(unix, UTC).isoformat()


def _error_summary(run: ReplayRun) -> list[dict[str, Any]]:
    counts: dict[tuple[int | None, str], tuple[dict[str, Any], int]] = {}
    for t in run.turns:
        if t.record.ok:
            continue
        details = error_details(t)
        key = (details["code"], details["type"])
        first, n = counts.get(key, (details, 0))
        counts[key] = (first, n + 1)
    return [{"error_details": d, "count": n} for d, n in counts.values()]


def _dataset(result: PointResult) -> dict[str, Any]:
    block = result.inferbench.agentic
    workload = result.inferbench.workload
    source = block.trace_source if block else getattr(workload, "source", "")
    fmt = block.trace_format if block else getattr(workload, "format", "")
    out: dict[str, Any] = {
        "source_type": "synthetic" if fmt == "synth" else "file",
        "loader": f"inferbench:{fmt}",
        "path": source,
        "num_dataset_entries": block.traces if block else 0,
    }
    return out


def aggregate_export(result: PointResult, run: ReplayRun) -> dict[str, Any]:
    sa, ib = result.sa, result.inferbench
    ok = [t.record for t in run.turns if t.record.ok]
    ttft = [r.ttft * 1e3 for r in ok if r.ttft is not None]
    e2el = [r.e2el * 1e3 for r in ok if r.e2el is not None]
    itl = [tpot * 1e3 for r in ok if (tpot := r.tpot) is not None]
    isl = [float(r.input_tokens or r.intended_input_tokens) for r in ok]
    osl = [float(r.output_tokens) for r in ok]
    block = ib.agentic
    out: dict[str, Any] = {
        "request_throughput": _scalar(sa.request_throughput, "requests/sec"),
        "request_latency": _distribution(e2el, "ms"),
        "time_to_first_token": _distribution(ttft, "ms"),
        "inter_token_latency": _distribution(itl, "ms"),
        "input_sequence_length": _distribution(isl, "tokens"),
        "output_sequence_length": _distribution(osl, "tokens"),
        "output_token_throughput": _scalar(sa.output_throughput, "tokens/sec"),
        "total_token_throughput": _scalar(sa.total_token_throughput, "tokens/sec"),
        "benchmark_duration": _scalar(sa.duration, "sec"),
        "request_count": _scalar(sa.completed, "requests"),
        "error_request_count": _scalar(sa.failed, "requests"),
        "total_isl": _scalar(sa.total_input_tokens, "tokens"),
        "total_osl": _scalar(sa.total_output_tokens, "tokens"),
        "was_cancelled": run.interrupted,
        "start_time": _iso(sa.benchmark_start_time_unix),
        "end_time": _iso(sa.benchmark_end_time_unix),
        "error_summary": _error_summary(run),
        "metadata": {"dataset": _dataset(result)},
        "input_config": {
            "endpoint": {
                "model_names": [ib.endpoint.model],
                "type": ib.endpoint.api.value,
                "streaming": True,
                "url": ib.endpoint.base_url,
            },
            "loadgen": {"concurrency": ib.load.concurrency, "benchmark_duration": sa.duration},
            "cli_command": f"inferbench {__version__} replay",
        },
    }
    if block is not None and block.prompt_tokens > 0:
        out["theoretical_prefix_cache_hit"] = {
            "unit": "%",
            "avg": block.client_reuse_share * 100,
            "sum": block.reused_prompt_tokens,
            "count": block.prompt_tokens,
        }
    return {k: v for k, v in out.items() if v is not None}
