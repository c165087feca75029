"""Compare two sets of points (BASE vs HEAD): per-point deltas with a noise threshold.

Points are matched across runs by `Record.point_key()` (identity without image and
recipe, which are what a comparison usually changes). A relative change whose size is
under the threshold is noise; beyond it, it is a regression or an improvement in the
metric's own direction (throughput up is good, latency up is bad).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from inferbench.errors import InputError
from inferbench.results.equal import PairAt, compare_at
from inferbench.results.record import Record
from inferbench.results.store import RecordFilter, Store, StoredRecord

Verdict = Literal["regression", "improvement", "noise"]


@dataclass(frozen=True)
class MetricSpec:
    name: str
    label: str
    higher_is_better: bool


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("total_tput_per_gpu", "tok/s/GPU", True),
    MetricSpec("interactivity_median", "tok/s/user p50", True),
    MetricSpec("ttft_median", "TTFT p50 ms", False),
    MetricSpec("tpot_median", "TPOT p50 ms", False),
    MetricSpec("e2el_median", "E2EL p50 ms", False),
    MetricSpec("failure_rate", "failure rate", False),
)


def metric_value(r: Record, name: str) -> float | None:
    m, d = r.metrics, r.derived
    values = {
        "total_tput_per_gpu": d.total_tput_per_gpu,
        "interactivity_median": d.interactivity.median if d.interactivity else None,
        "ttft_median": m.ttft_ms.median,
        "tpot_median": m.tpot_ms.median,
        "e2el_median": m.e2el_ms.median,
        "failure_rate": d.failure_rate,
    }
    return values[name]


@dataclass(frozen=True)
class Delta:
    metric: MetricSpec
    base: float | None
    head: float | None
    change: float | None  # relative (head - base) / base; absolute for failure_rate
    verdict: Verdict


@dataclass(frozen=True)
class PointDelta:
    label: str
    base: Record
    head: Record
    deltas: tuple[Delta, ...]

    @property
    def verdict(self) -> Verdict:
        kinds = {d.verdict for d in self.deltas}
        if "regression" in kinds:
            return "regression"
        return "improvement" if "improvement" in kinds else "noise"

    def worst(self) -> float:
        """The most harmful change (for sorting regressions first)."""
        harms = [
            -(d.change or 0) if d.metric.higher_is_better else (d.change or 0) for d in self.deltas
        ]
        return max(harms, default=0.0)


@dataclass(frozen=True)
class Comparison:
    base_label: str
    head_label: str
    threshold: float
    points: tuple[PointDelta, ...]  # regressions first, worst first
    only_base: tuple[Record, ...]
    only_head: tuple[Record, ...]
    at: tuple[PairAt, ...] = ()  # per series, tok/s/GPU at equal interactivity

    def count(self, verdict: Verdict) -> int:
        return sum(1 for p in self.points if p.verdict == verdict)


def relative_change(base: float, head: float) -> float:
    return (head - base) / abs(base) if base else (0.0 if head == base else float("inf"))


def verdict_of(change: float, *, higher_is_better: bool, threshold: float) -> Verdict:
    """Noise inside ±threshold; beyond it, better or worse in the metric's own direction."""
    if abs(change) < threshold:
        return "noise"
    better = change > 0 if higher_is_better else change < 0
    return "improvement" if better else "regression"


def _delta(spec: MetricSpec, base: Record, head: Record, threshold: float) -> Delta:
    b, h = metric_value(base, spec.name), metric_value(head, spec.name)
    if b is None or h is None:
        return Delta(spec, b, h, None, "noise")
    # rates near zero: compare in absolute points
    change = h - b if spec.name == "failure_rate" else relative_change(b, h)
    verdict = verdict_of(change, higher_is_better=spec.higher_is_better, threshold=threshold)
    return Delta(spec, b, h, change, verdict)


def point_label(r: Record) -> str:
    i = r.identity
    return (
        f"{i.model_prefix} {i.isl}/{i.osl} {i.hardware()} {i.framework} {i.precision} "
        f"{i.topology()} conc {i.concurrency}"
    )


def compare_records(
    base: Sequence[Record],
    head: Sequence[Record],
    *,
    threshold: float = 0.05,
    base_label: str = "base",
    head_label: str = "head",
    at: float | None = None,
) -> Comparison:
    """Match by point key (the later record wins inside one side) and diff each pair;
    per series, both frontiers at interactivity `at` (a round middle value when None)."""
    b_map = {r.point_key(): r for r in base}
    h_map = {r.point_key(): r for r in head}
    points = []
    for key in b_map.keys() & h_map.keys():
        b, h = b_map[key], h_map[key]
        deltas = tuple(_delta(spec, b, h, threshold) for spec in METRICS)
        points.append(PointDelta(point_label(h), b, h, deltas))
    rank = {"regression": 0, "improvement": 1, "noise": 2}
    points.sort(key=lambda p: (rank[p.verdict], -p.worst(), p.label))
    return Comparison(
        base_label=base_label,
        head_label=head_label,
        threshold=threshold,
        points=tuple(points),
        only_base=tuple(b_map[k] for k in sorted(b_map.keys() - h_map.keys())),
        only_head=tuple(h_map[k] for k in sorted(h_map.keys() - b_map.keys())),
        at=tuple(compare_at(list(b_map.values()), list(h_map.values()), target=at)),
    )


_FILTER_KEYS = {
    "run": "run_id",
    "run-id": "run_id",
    "tag": "tag",
    "model-prefix": "model_prefix",
    "model": "model_prefix",
    "precision": "precision",
    "framework": "framework",
    "hardware": "hardware",
    "isl": "isl",
    "osl": "osl",
}


def parse_selector(text: str) -> RecordFilter:
    """`<run-id>`, `run:<id>`, `tag:<name>`, or `key=value,...` filters."""
    if "=" not in text:
        kind, sep, value = text.partition(":")
        if sep and kind in ("run", "tag"):
            return RecordFilter(run_id=value) if kind == "run" else RecordFilter(tag=value)
        return RecordFilter(run_id=text)
    values: dict[str, Any] = {}
    for part in filter(None, text.split(",")):
        key, _, value = part.partition("=")
        field = _FILTER_KEYS.get(key.strip())
        if field is None:
            raise InputError(
                f"unknown selector key {key!r}",
                hint="use one of: " + ", ".join(sorted(_FILTER_KEYS)),
            )
        values[field] = int(value) if field in ("isl", "osl") and value.isdigit() else value.strip()
    return RecordFilter(**values)


def select_records(store: Store, selector: str) -> list[StoredRecord]:
    found = store.query(parse_selector(selector))
    if not found:
        raise InputError(
            f"no stored results match {selector!r}",
            hint="see `inferbench results list` for run ids and tags",
        )
    return found


def check_threshold(threshold: float) -> float:
    """The noise band of a comparison: a finite relative change >= 0 (NaN compares false
    with everything, so it would silently make every change a regression or none)."""
    if not (threshold >= 0 and math.isfinite(threshold)):
        raise InputError(
            f"--threshold must be a number >= 0, got {threshold}",
            hint="e.g. --threshold 0.05 (5%)",
        )
    return threshold


def compare_selectors(
    store: Store, base: str, head: str, *, threshold: float = 0.05, at: float | None = None
) -> Comparison:
    check_threshold(threshold)
    if at is not None and not (at > 0 and math.isfinite(at)):
        raise InputError("--at must be a positive interactivity (tok/s/user)", hint="e.g. --at 50")
    b = [s.record for s in select_records(store, base)]
    h = [s.record for s in select_records(store, head)]
    return compare_records(b, h, threshold=threshold, base_label=base, head_label=head, at=at)
