"""History: one configuration's points across runs, and the comparison page's data.

A configuration is a point key (the identity without image and recipe): the same
series, topology and concurrency measured again in later runs. Each record is marked
where a y metric moved the wrong way beyond the noise threshold against the record
before it (the same verdict rule as `results compare`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inferbench.report.markdown import comparison_markdown
from inferbench.report.metrics import X_AXES, Axis, axis
from inferbench.report.payload import SeriesTable, Strings, sig, when
from inferbench.report.prices import PriceTable
from inferbench.results.compare import VERDICTS, Comparison, relative_change, verdict_of
from inferbench.results.pareto import series_key
from inferbench.results.record import Record

HISTORY_PER_POINT = 24  # the most recent records of each configuration


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
) -> dict[str, Any]:
    groups: dict[str, list[Record]] = {}
    for point, r in records:  # the point key as stored: same series, topology, concurrency
        groups.setdefault(point, []).append(r)
    groups = {k: rs for k, rs in groups.items() if series_key(rs[0]) in series.index}
    configs: list[dict[str, Any]] = []
    cols: dict[str, list[Any]] = {
        k: [] for k in ("cfg", "run", "date", "img", "commit", "tag", "reg")
    }
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
        for r in sorted(members, key=_order):
            p = r.provenance
            values = [a.value(r, prices) for a in ys]
            cols["cfg"].append(cfg)
            cols["run"].append(strings(p.run_id))
            cols["date"].append(strings(when(p.started_at)))
            cols["img"].append(strings(r.identity.image))
            cols["commit"].append(strings(p.commit))
            cols["tag"].append(strings(p.tag))
            cols["reg"].append(_regressions(ys, previous, values, threshold))
            xs.append(sig(inter.value(r, prices)))
            for a, v in zip(ys, values, strict=True):
                yv[a.key].append(sig(v))
            previous = values
    return {"configs": configs, **cols, "y": yv, "x": xs, "threshold": threshold}


def _regressions(
    ys: Sequence[Axis], before: list[float | None] | None, now: list[float | None], threshold: float
) -> int:
    """Bit i set when ys[i] regressed from `before` to `now` (values in ys order)."""
    if before is None:
        return 0
    mask = 0
    for i, (a, b, h) in enumerate(zip(ys, before, now, strict=True)):
        if b is None or h is None:
            continue
        change = relative_change(b, h)
        if verdict_of(change, higher_is_better=a.higher_is_better, threshold=threshold) == (
            "regression"
        ):
            mask |= 1 << i
    return mask


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
        "at": [
            {
                "series": a.key.label(),
                "at": a.target,
                "base": a.base,
                "head": a.head,
                "ratio": a.ratio,
            }
            for a in cmp.at
        ],
        "markdown": comparison_markdown(cmp),
    }


def _short(r: Record) -> str:
    i = r.identity
    return f"{i.model_prefix} {i.isl}/{i.osl} {i.hardware()} {i.topology()} conc {i.concurrency}"
