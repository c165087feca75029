"""History: one configuration's points across runs, and the comparison page's data.

A configuration is a point key (the identity without image and recipe): the same
series, topology and concurrency measured again in later runs. Each record is marked
where a y metric regressed against the record before it, by the rule of `results
compare`: throughput and cost axes (which move with the token rate) are judged by the
bootstrap interval of tok/s/GPU from the two records' per-request samples, and are
"not judged" when either lacks samples; the energy axes, which have no per-request
samples, keep the plain tolerance on the change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inferbench.report.markdown import comparison_markdown
from inferbench.report.metrics import X_AXES, Axis, axis
from inferbench.report.payload import SeriesTable, Strings, sig, when
from inferbench.report.prices import PriceTable
from inferbench.results.compare import (
    VERDICTS,
    Comparison,
    Verdict,
    judge_metric,
    relative_change,
    verdict_of,
)
from inferbench.results.noise import NoiseModel
from inferbench.results.pareto import series_key
from inferbench.results.record import Record
from inferbench.results.samples import PointSamples

HISTORY_PER_POINT = 24  # the most recent records of each configuration
# axes whose relative change is the token rate's (per GPU, per user-dollar...): judged by
# the interval of tok/s/GPU; the rest by the tolerance alone
_RATE_GROUPS = ("throughput", "cost")


def _order(r: Record) -> tuple[str, str]:
    started = r.provenance.started_at
    return (started.isoformat() if started else "", r.provenance.run_id)


def history_payload(
    records: Sequence[tuple[str, Record]],
    series: SeriesTable,
    strings: Strings,
    prices: PriceTable,
    *,
    threshold: float,
    ys: Sequence[Axis],
    samples: Mapping[str, PointSamples] | None = None,
    noise: NoiseModel | None = None,
) -> dict[str, Any]:
    groups: dict[str, list[Record]] = {}
    for point, r in records:  # the point key as stored: same series, topology, concurrency
        groups.setdefault(point, []).append(r)
    groups = {k: rs for k, rs in groups.items() if series_key(rs[0]) in series.index}
    configs: list[dict[str, Any]] = []
    cols: dict[str, list[Any]] = {
        k: [] for k in ("cfg", "run", "date", "img", "commit", "tag", "reg", "unj")
    }
    rated = [_is_rate(a) for a in ys]
    yv: dict[str, list[float | None]] = {a.key: [] for a in ys}
    inter = axis("interactivity", X_AXES)
    xs: list[float | None] = []
    ordered = sorted(
        groups.values(),
        key=lambda rs: (
            series.index[series_key(rs[0])],
            rs[0].identity.topology(),
            rs[0].identity.concurrency,
        ),
    )
    for members in ordered:
        first = members[0]
        cfg = len(configs)
        configs.append(
            {
                "s": series.index[series_key(first)],
                "t": first.identity.topology(),
                "c": first.identity.concurrency,
            }
        )
        previous: list[float | None] | None = None
        before: Record | None = None
        for r in sorted(members, key=_order):
            p = r.provenance
            values = [a.value(r, prices) for a in ys]
            cols["cfg"].append(cfg)
            cols["run"].append(strings(p.run_id))
            cols["date"].append(strings(when(p.started_at)))
            cols["img"].append(strings(r.identity.image))
            cols["commit"].append(strings(p.commit))
            cols["tag"].append(strings(p.tag))
            rate = _rate_verdict(before, r, samples or {}, threshold, noise)
            reg, unj = _regressions(ys, rated, previous, values, threshold, rate)
            cols["reg"].append(reg)
            cols["unj"].append(unj)
            xs.append(sig(inter.value(r, prices)))
            for a, v in zip(ys, values, strict=True):
                yv[a.key].append(sig(v))
            previous, before = values, r
    return {"configs": configs, **cols, "y": yv, "x": xs, "threshold": threshold}


def _is_rate(a: Axis) -> bool:
    return a.higher_is_better and (a.group or "").split(":")[0] in _RATE_GROUPS


def _rate_verdict(
    before: Record | None,
    now: Record,
    samples: Mapping[str, PointSamples],
    threshold: float,
    noise: NoiseModel | None,
) -> Verdict | None:
    """tok/s/GPU from `before` to `now`, judged on the samples (None for the first)."""
    if before is None:
        return None
    delta = judge_metric(
        "total_tput_per_gpu", [before], [now], samples, threshold=threshold, noise=noise
    )
    return delta.verdict


def _regressions(
    ys: Sequence[Axis],
    rated: Sequence[bool],
    before: list[float | None] | None,
    now: list[float | None],
    threshold: float,
    rate: Verdict | None,
) -> tuple[int, int]:
    """Bit i set when ys[i] regressed from `before` to `now` (values in ys order), and bit i
    of the second mask when it could not be judged (no samples on a side)."""
    if before is None:
        return 0, 0
    mask = unjudged = 0
    for i, (a, b, h) in enumerate(zip(ys, before, now, strict=True)):
        if b is None or h is None:
            continue
        if rated[i]:
            verdict = rate
        else:
            change = relative_change(b, h)
            verdict = verdict_of(change, higher_is_better=a.higher_is_better, threshold=threshold)
        if verdict == "regression":
            mask |= 1 << i
        elif verdict == "unjudged":
            unjudged |= 1 << i
    return mask, unjudged


def compare_payload(cmp: Comparison | None, series: SeriesTable) -> dict[str, Any] | None:
    """The comparison page: the same content as `results compare --format markdown`."""
    if cmp is None:
        return None
    rows = []
    for p in cmp.points:
        key = series_key(p.head)
        rows.append(
            {
                "label": p.label,
                "verdict": p.verdict,
                "s": series.index.get(key),
                "cells": [
                    [
                        d.base,
                        d.head,
                        d.change,
                        d.verdict,
                        d.interval.low if d.interval else None,
                        d.interval.high if d.interval else None,
                    ]
                    for d in p.deltas
                ],
            }
        )
    return {
        "base": cmp.base_label,
        "head": cmp.head_label,
        "threshold": cmp.threshold,
        "confidence": cmp.noise.confidence,
        "metrics": [
            {"name": m.metric.name, "label": m.metric.label}
            for m in (cmp.points[0].deltas if cmp.points else ())
        ],
        "rows": rows,
        "counts": {v: cmp.count(v) for v in VERDICTS},
        "only_base": [_short(r) for r in cmp.only_base],
        "only_head": [_short(r) for r in cmp.only_head],
        "at": [a.as_dict() for a in cmp.at],
        "markdown": comparison_markdown(cmp),
    }


def _short(r: Record) -> str:
    i = r.identity
    return f"{i.model_prefix} {i.isl}/{i.osl} {i.hardware()} {i.topology()} conc {i.concurrency}"
