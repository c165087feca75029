"""Compare two sets of points (BASE vs HEAD): per-point changes judged against their noise.

Points are matched across runs by `Record.point_key()` (identity without image and
recipe, which are what a comparison usually changes); a point measured several times in
one run (`--repeats`) is pooled. Each metric's relative change gets a bootstrap
confidence interval from the points' per-request samples (`inferbench.results.noise`),
and is a regression or an improvement, in the metric's own direction (throughput up is
good, latency up is bad), only when its whole interval lies beyond the tolerance
(`threshold`): the change is then larger than the tolerance whatever the noise. Inside
the tolerance, or straddling it, it is noise. A metric with fewer than the minimum
samples on a side (or points stored without samples) is not judged: `unjudged`.
The failure rate is compared in absolute points, with Newcombe's interval.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from inferbench.core.errors import InputError
from inferbench.results.equal import PairAt, compare_at
from inferbench.results.noise import (
    Interval,
    NoiseModel,
    Statistic,
    change_interval,
    failure_interval,
    inverse_quantile,
    quantile,
    token_rate,
)
from inferbench.results.record import Record
from inferbench.results.samples import PointSamples
from inferbench.results.store import RecordFilter, Store, StoredRecord
from inferbench.results.validity import validity_of

Verdict = Literal["regression", "improvement", "noise", "unjudged"]
Side = Literal["base", "head"]
VERDICTS: tuple[Verdict, ...] = ("regression", "improvement", "noise", "unjudged")

_REQUEST_FIELDS = ("ttft_ms", "e2el_ms", "tokens")


@dataclass(frozen=True)
class MetricSpec:
    name: str
    label: str
    higher_is_better: bool
    # how the per-request samples estimate it (None: the failure rate, from counts)
    statistic: Statistic | None = None
    fields: tuple[str, ...] = _REQUEST_FIELDS  # resampled together (same requests)


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("total_tput_per_gpu", "tok/s/GPU", True, token_rate),
    MetricSpec(
        "interactivity_median",
        "tok/s/user p50",
        True,
        inverse_quantile("tpot_ms", 0.5),
        ("tpot_ms",),
    ),
    MetricSpec("ttft_median", "TTFT p50 ms", False, quantile("ttft_ms", 0.5)),
    MetricSpec("ttft_p90", "TTFT p90 ms", False, quantile("ttft_ms", 0.9)),
    MetricSpec("tpot_median", "TPOT p50 ms", False, quantile("tpot_ms", 0.5), ("tpot_ms",)),
    MetricSpec("tpot_p90", "TPOT p90 ms", False, quantile("tpot_ms", 0.9), ("tpot_ms",)),
    MetricSpec("e2el_median", "E2EL p50 ms", False, quantile("e2el_ms", 0.5)),
    MetricSpec("failure_rate", "failure rate", False),
)


def metric_value(r: Record, name: str) -> float | None:
    m, d = r.metrics, r.derived
    values = {
        "total_tput_per_gpu": d.total_tput_per_gpu,
        "interactivity_median": d.interactivity.median if d.interactivity else None,
        "ttft_median": m.ttft_ms.median,
        "ttft_p90": m.ttft_ms.p90,
        "tpot_median": m.tpot_ms.median,
        "tpot_p90": m.tpot_ms.p90,
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
    interval: Interval | None = None  # of `change`, at the comparison's confidence
    samples: tuple[int, int] = (0, 0)  # requests behind the interval, base and head

    def margin(self, threshold: float) -> float | None:
        """How far the interval's harmful end stays inside the tolerance (in the change's
        units; below 0: a regression); None when the change was not judged."""
        if self.interval is None:
            return None
        worse_low, _ = harm_bounds(
            self.interval.low, self.interval.high, higher_is_better=self.metric.higher_is_better
        )
        return threshold - worse_low

    def interval_text(self) -> str:
        """`[-1.2%, +3.4%]`, or why there is none (`n=12/40`)."""
        if self.interval is not None:
            return f"[{self.interval.low:+.1%}, {self.interval.high:+.1%}]"
        if self.change is None:
            return ""
        return f"(n={self.samples[0]}/{self.samples[1]})"


@dataclass(frozen=True)
class PointDelta:
    label: str
    base: Record
    head: Record
    deltas: tuple[Delta, ...]
    repeats: tuple[int, int] = (1, 1)  # measurements pooled on each side

    @property
    def verdict(self) -> Verdict:
        kinds = {d.verdict for d in self.deltas}
        for kind in ("regression", "improvement", "unjudged"):
            if kind in kinds:
                return kind
        return "noise"

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
    threshold: float  # the tolerance: a change's interval must lie beyond it
    points: tuple[PointDelta, ...]  # regressions first, worst first
    only_base: tuple[Record, ...]
    only_head: tuple[Record, ...]
    at: tuple[PairAt, ...] = ()  # per series, tok/s/GPU at equal interactivity
    noise: NoiseModel = NoiseModel()
    # points left out because they are invalid (`results.validity`), each with its side
    invalid: tuple[tuple[Side, Record], ...] = ()

    def count(self, verdict: Verdict) -> int:
        return sum(1 for p in self.points if p.verdict == verdict)


def relative_change(base: float, head: float) -> float:
    return (head - base) / abs(base) if base else (0.0 if head == base else float("inf"))


def verdict_of(change: float, *, higher_is_better: bool, threshold: float) -> Verdict:
    """Without an interval: noise inside ±threshold, else better or worse."""
    return verdict_between(change, change, higher_is_better=higher_is_better, threshold=threshold)


def harm_bounds(low: float, high: float, *, higher_is_better: bool) -> tuple[float, float]:
    """An interval of a change as harm (positive: worse), its ends in order."""
    return (-high, -low) if higher_is_better else (low, high)


def verdict_between(
    low: float, high: float, *, higher_is_better: bool, threshold: float
) -> Verdict:
    """A change whose interval is [low, high]: a regression or an improvement only when the
    whole interval lies beyond the tolerance in that direction."""
    worse_low, worse_high = harm_bounds(low, high, higher_is_better=higher_is_better)
    if worse_low > threshold:
        return "regression"
    if worse_high < -threshold:
        return "improvement"
    return "noise"


def _mean(values: Sequence[float | None]) -> float | None:
    found = [v for v in values if v is not None]
    return sum(found) / len(found) if found else None


def judge_metric(
    name: str,
    base: Sequence[Record],
    head: Sequence[Record],
    samples: Mapping[str, PointSamples],
    *,
    threshold: float,
    noise: NoiseModel | None = None,
) -> Delta:
    """One metric of one point, BASE measurements vs HEAD, judged as `results compare`
    judges it (the history view asks this of each step)."""
    spec = next(m for m in METRICS if m.name == name)
    key = head[-1].point_key() if head else ""
    return _delta(spec, base, head, samples, threshold, noise or NoiseModel(), key)


def _delta(
    spec: MetricSpec,
    base: Sequence[Record],
    head: Sequence[Record],
    samples: Mapping[str, PointSamples],
    threshold: float,
    noise: NoiseModel,
    key: str,
) -> Delta:
    b = _mean([metric_value(r, spec.name) for r in base])
    h = _mean([metric_value(r, spec.name) for r in head])
    if b is None or h is None:
        return Delta(spec, b, h, None, "noise")
    if spec.statistic is None:  # the failure rate: absolute points, from counts
        change = h - b
        interval = failure_interval(_failures(base), _failures(head), confidence=noise.confidence)
        n = (_attempted(base), _attempted(head))
        if interval is None or min(n) < noise.min_samples:
            return Delta(spec, b, h, change, "unjudged", None, n)
        verdict = verdict_between(
            interval.low, interval.high, higher_is_better=False, threshold=threshold
        )
        return Delta(spec, b, h, change, verdict, interval, n)
    change = relative_change(b, h)
    b_samples = [samples[r.natural_key()] for r in base if r.natural_key() in samples]
    h_samples = [samples[r.natural_key()] for r in head if r.natural_key() in samples]
    if len(b_samples) < len(base) or len(h_samples) < len(head) or not math.isfinite(change):
        return Delta(spec, b, h, change, "unjudged")  # a repeat without samples: no model
    interval, nb, nh = change_interval(
        b_samples,
        h_samples,
        fields=spec.fields,
        stat=spec.statistic,
        change=change,
        model=noise,
        key=f"{key}/{spec.name}",
        block=head[-1].identity.concurrency,
    )
    if interval is None:
        return Delta(spec, b, h, change, "unjudged", None, (nb, nh))
    verdict = verdict_between(
        interval.low, interval.high, higher_is_better=spec.higher_is_better, threshold=threshold
    )
    return Delta(spec, b, h, change, verdict, interval, (nb, nh))


def _attempted(records: Sequence[Record]) -> int:
    return sum(r.metrics.completed + r.metrics.failed for r in records)


def _failures(records: Sequence[Record]) -> tuple[int, int]:
    return sum(r.metrics.failed for r in records), _attempted(records)


def point_label(r: Record) -> str:
    i = r.identity
    return (
        f"{i.model_prefix} {i.isl}/{i.osl} {i.hardware()} {i.framework} {i.precision} "
        f"{i.topology()} conc {i.concurrency}"
    )


def _by_point(records: Sequence[Record]) -> dict[str, list[Record]]:
    """Each point's measurements: those of the latest run that has it (its repeats pooled),
    the later record winning among runs."""
    last_run: dict[str, str] = {}
    for r in records:
        last_run[r.point_key()] = r.provenance.run_id
    out: dict[str, list[Record]] = {}
    for r in records:
        key = r.point_key()
        if r.provenance.run_id == last_run[key]:
            repeats = out.setdefault(key, [])
            # one measurement per repeat (a point reached by two paths counts once)
            repeats[:] = [x for x in repeats if x.provenance.repeat != r.provenance.repeat]
            repeats.append(r)
    return out


def _invalid(side: Side, records: Sequence[Record]) -> list[tuple[Side, Record]]:
    return [(side, r) for r in records if not validity_of(r).valid]


def compare_records(
    base: Sequence[Record],
    head: Sequence[Record],
    *,
    threshold: float = 0.05,
    base_label: str = "base",
    head_label: str = "head",
    at: float | None = None,
    samples: Mapping[str, PointSamples] | None = None,
    noise: NoiseModel | None = None,
) -> Comparison:
    """Match by point key and judge each pair's changes against their noise (`samples`:
    per-request samples by record natural key); per series, both frontiers at
    interactivity `at` (a round middle value when None)."""
    noise = noise or NoiseModel()
    samples = samples or {}
    invalid = (*_invalid("base", base), *_invalid("head", head))
    left_out = {id(r) for _, r in invalid}
    base = [r for r in base if id(r) not in left_out]
    head = [r for r in head if id(r) not in left_out]
    b_map, h_map = _by_point(base), _by_point(head)
    points = []
    for key in sorted(b_map.keys() & h_map.keys()):
        b, h = b_map[key], h_map[key]
        deltas = tuple(_delta(spec, b, h, samples, threshold, noise, key) for spec in METRICS)
        points.append(PointDelta(point_label(h[-1]), b[-1], h[-1], deltas, (len(b), len(h))))
    rank = {"regression": 0, "improvement": 1, "unjudged": 2, "noise": 3}
    points.sort(key=lambda p: (rank[p.verdict], -p.worst(), p.label))
    b_last = {k: v[-1] for k, v in b_map.items()}
    h_last = {k: v[-1] for k, v in h_map.items()}
    return Comparison(
        base_label=base_label,
        head_label=head_label,
        threshold=threshold,
        points=tuple(points),
        only_base=tuple(b_last[k] for k in sorted(b_last.keys() - h_last.keys())),
        only_head=tuple(h_last[k] for k in sorted(h_last.keys() - b_last.keys())),
        at=tuple(compare_at(list(b_last.values()), list(h_last.values()), target=at)),
        noise=noise,
        invalid=invalid,
    )


def compare_stored(
    store: Store,
    base: Sequence[Record],
    head: Sequence[Record],
    **options: Any,
) -> Comparison:
    """`compare_records` with the points' samples read from the store."""
    keys = [r.natural_key() for r in (*base, *head)]
    return compare_records(base, head, samples=store.samples(keys), **options)


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


_LATEST = re.compile(r"^(?:run:)?latest(?:~(\d+))?$")


def resolve_selector(store: Store, selector: str) -> str:
    """`latest` names the most recently ingested run (`latest~1` the one before it), as
    `run:<id>`; any other selector, and a run really called `latest`, is itself."""
    alias = _LATEST.match(selector)
    if alias is None:
        return selector
    runs = store.run_ids()
    if selector.removeprefix("run:") in runs:
        return selector
    back = int(alias.group(1) or 0)
    if back >= len(runs):
        raise InputError(
            f"{selector!r}: the store holds {len(runs)} run(s)",
            hint="`latest` is the newest run, `latest~1` the one before it",
        )
    return f"run:{runs[-1 - back]}"


def select_records(store: Store, selector: str) -> list[StoredRecord]:
    found = store.query(parse_selector(resolve_selector(store, selector)))
    if not found:
        raise InputError(
            f"no stored results match {selector!r}",
            hint="see `inferbench results list` for run ids and tags",
        )
    return found


def check_threshold(threshold: float) -> float:
    """The tolerance of a comparison: a finite relative change >= 0 (NaN compares false
    with everything, so it would silently make every change a regression or none)."""
    if not (threshold >= 0 and math.isfinite(threshold)):
        raise InputError(
            f"--threshold must be a number >= 0, got {threshold}",
            hint="e.g. --threshold 0.05 (5%)",
        )
    return threshold


def check_noise(noise: NoiseModel) -> NoiseModel:
    """The noise model's settings, named when out of range."""
    if not 0.5 <= noise.confidence < 1:
        raise InputError(
            f"--confidence must be at least 0.5 and below 1, got {noise.confidence}",
            hint="e.g. --confidence 0.95",
        )
    if noise.min_samples < 2:
        raise InputError(f"--min-samples must be 2 or more, got {noise.min_samples}")
    if not 100 <= noise.resamples <= 100_000:
        raise InputError(f"--resamples must be 100 to 100,000, got {noise.resamples}")
    return noise


def compare_selectors(
    store: Store,
    base: str,
    head: str,
    *,
    threshold: float = 0.05,
    at: float | None = None,
    noise: NoiseModel | None = None,
) -> Comparison:
    check_threshold(threshold)
    noise = check_noise(noise or NoiseModel())
    if at is not None and not (at > 0 and math.isfinite(at)):
        raise InputError("--at must be a positive interactivity (tok/s/user)", hint="e.g. --at 50")
    b = [s.record for s in select_records(store, base)]
    h = [s.record for s in select_records(store, head)]
    base_label, head_label = (_label(store, s) for s in (base, head))
    return compare_stored(
        store,
        b,
        h,
        threshold=threshold,
        base_label=base_label,
        head_label=head_label,
        at=at,
        noise=noise,
    )


def _label(store: Store, selector: str) -> str:
    """`nightly-2 (latest)` for an alias, the selector itself otherwise."""
    resolved = resolve_selector(store, selector)
    return selector if resolved == selector else f"{resolved.removeprefix('run:')} ({selector})"
