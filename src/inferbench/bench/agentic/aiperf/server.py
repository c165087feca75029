"""`server_metrics_export.json`: the server's Prometheus metrics over the window, in aiperf's
shape (`{"metrics": {name: {"type", "series": [{"endpoint_url", "labels", "stats"}]}}}`).

inferbench reads `/metrics` twice, when the window starts and when it ends (aiperf polls it
all along). So a counter's `stats` are `total` (its increase over the window) and `rate` (per
second), a histogram's `count`, `sum` and `avg` of the observations in the window, and a
gauge's `avg` / `min` / `max` are its value at the window's end: the figures inferbench's
own `inferbench.agentic.server` is computed from, so both read the same hit rates.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from inferbench.bench.result import PointResult

_Labels = tuple[tuple[str, str], ...]


def _families(text: str) -> dict[str, tuple[str, dict[str, dict[_Labels, float]]]]:
    """name -> (type, sample name -> labels -> value), `_created` samples left out. Counters
    are named without `_total`, as aiperf names them; a `_total` series whose `# TYPE` line
    names the family without the suffix (OpenMetrics style) is read as that counter."""
    out: dict[str, tuple[str, dict[str, dict[_Labels, float]]]] = {}
    for family in text_string_to_metric_families(text):
        name, kind = family.name, family.type
        if kind in ("unknown", "untyped") and name.endswith("_total"):
            name, kind = name[: -len("_total")], "counter"
        samples: dict[str, dict[_Labels, float]] = {}
        for s in family.samples:
            if s.name.endswith("_created"):
                continue
            labels = tuple(sorted((k, v) for k, v in s.labels.items()))
            samples.setdefault(s.name, {})[labels] = float(s.value)
        if samples:
            out[name] = (kind, samples)
    return out


def _increase(end: float, start: float | None) -> float:
    # as inferbench's own figures (`server_metrics._delta`): never below zero
    return max(0.0, end - (start or 0.0))


_Samples = dict[str, dict[_Labels, float]]


def _counter(
    name: str, end: _Samples, start: _Samples, url: str, seconds: float
) -> list[dict[str, Any]]:
    series = []
    sample = name + "_total" if name + "_total" in end else name
    for labels, value in end.get(sample, {}).items():
        total = _increase(value, start.get(sample, {}).get(labels))
        stats = {"total": total, "rate": total / seconds if seconds > 0 else 0.0}
        series.append({"endpoint_url": url, "labels": dict(labels), "stats": stats})
    return series


def _histogram(name: str, end: _Samples, start: _Samples, url: str) -> list[dict[str, Any]]:
    series = []
    for labels, count in end.get(name + "_count", {}).items():
        n = _increase(count, start.get(name + "_count", {}).get(labels))
        total = _increase(
            end.get(name + "_sum", {}).get(labels, 0.0),
            start.get(name + "_sum", {}).get(labels),
        )
        stats = {"count": n, "sum": total, "avg": total / n if n > 0 else 0.0}
        series.append({"endpoint_url": url, "labels": dict(labels), "stats": stats})
    return series


def _gauge(name: str, end: _Samples, url: str) -> list[dict[str, Any]]:
    return [
        {"endpoint_url": url, "labels": dict(labels), "stats": {"avg": v, "min": v, "max": v}}
        for labels, v in end.get(name, {}).items()
    ]


def server_metrics_export(
    start_text: str, end_text: str, base_url: str, result: PointResult
) -> dict[str, Any]:
    root = base_url[:-3] if base_url.endswith("/v1") else base_url
    url = root + "/metrics"
    before, after = _families(start_text), _families(end_text)
    seconds = result.sa.duration
    metrics: dict[str, Any] = {}
    for name, (kind, end) in after.items():
        start = before.get(name, ("", {}))[1]
        if kind == "counter":
            series = _counter(name, end, start, url, seconds)
        elif kind == "histogram":
            series = _histogram(name, end, start, url)
        elif kind in ("gauge", "unknown", "untyped"):
            series = _gauge(name, end, url)
        else:  # summaries, info, state sets: nothing InferenceX reads
            continue
        if series:
            shown = kind if kind in ("counter", "histogram") else "gauge"
            metrics[name] = {"type": shown, "series": series}
    window = {
        "start_time": result.sa.benchmark_start_time_unix,
        "end_time": result.sa.benchmark_end_time_unix,
    }
    summary = {"endpoints_configured": [url], "endpoints_successful": [url], **window}
    return {
        "schema_version": "1.0",
        "metrics_phase": "profiling",
        "summary": summary,
        "metrics": metrics,
    }


def server_metrics_csv(export: dict[str, Any]) -> str:
    """The same figures as a flat table, one row per metric series and statistic, for the
    runs that look for aiperf's `server_metrics_export.csv` beside the JSON (benchmark_lib.sh
    requires both; its processing reads the JSON)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["metric", "type", "endpoint_url", "labels", "stat", "value"])
    for name, metric in export["metrics"].items():
        for series in metric["series"]:
            labels = ";".join(f"{k}={v}" for k, v in sorted(series.get("labels", {}).items()))
            for stat, value in series["stats"].items():
                writer.writerow([name, metric["type"], series["endpoint_url"], labels, stat, value])
    return buffer.getvalue()
