"""The data the dashboard embeds: columnar lists, repeated strings interned, values
rounded to four significant digits (what a chart or a table can show).

Only the latest record of each distinct point (`Store.latest_per_point`) is drawn on
the curves, and each series keeps at most `MAX_POINTS_PER_SERIES` points, every point
on any of its frontiers first. Frontiers are computed here, once, for every x/y pair of
the axis tables (`inferbench.report.metrics`), and sent as one bit mask per point.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from inferbench.core.status import PointStatus
from inferbench.report.metrics import X_AXES, Axis, y_axes
from inferbench.report.prices import PriceTable
from inferbench.results.equal import ratio_sentence, round_targets, values_at
from inferbench.results.pareto import SeriesKey, build_curves, pareto_frontier, series_key
from inferbench.results.queueing import queueing_reason
from inferbench.results.record import Record

MAX_POINTS_PER_SERIES = 400
MAX_TARGETS = 8


class Strings:
    """Interns repeated strings (images, topologies, runs) into one table."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, value: str | None) -> int:
        text = value or "-"
        if text not in self._index:
            self._index[text] = len(self.items)
            self.items.append(text)
        return self._index[text]


def sig(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else float(f"{value:.{digits}g}")


def when(stamp: datetime | None) -> str | None:
    return stamp.strftime("%Y-%m-%d %H:%M") if stamp else None


def point_status(r: Record) -> PointStatus:
    """A point's own verdict, as the load generator recorded it."""
    if r.metrics.complete is False:
        return PointStatus.INCOMPLETE
    if r.metrics.gate_failure:
        return PointStatus.FAILED
    return PointStatus.PASSED


@dataclass
class SeriesTable:
    """Series in first-seen order; a series' facet is its model and sequence lengths."""

    index: dict[SeriesKey, int]
    rows: list[dict[str, Any]]

    @classmethod
    def of(cls, records: Iterable[Record]) -> SeriesTable:
        table = cls({}, [])
        for key in sorted({series_key(r) for r in records}):
            table.index[key] = len(table.rows)
            table.rows.append(
                {
                    "label": key.label(),
                    "variant": key.variant(),
                    "facet": f"{key.model_prefix} {key.isl}/{key.osl}",
                    "model": key.model_prefix,
                    "seq": f"{key.isl}/{key.osl}",
                    "hw": key.hardware,
                    "fw": key.framework,
                    "prec": key.precision,
                    "disagg": key.disagg,
                    "spec": key.spec_decoding,
                }
            )
        return table


def page_y_axes(records: Sequence[Record], prices: PriceTable) -> tuple[Axis, ...]:
    """The y metrics the page offers: every one with a value somewhere. A store without
    power samples has no energy metric, a cost model without a price for any GPU shown
    has no cost metric: the page never draws an empty frame for them."""
    ys = y_axes(prices)
    return tuple(
        a
        for a in ys
        if a.group == "throughput" or any(a.value(r, prices) is not None for r in records)
    )


Masks = dict[int, list[int]]


def frontier_masks(records: Sequence[Record], prices: PriceTable, ys: Sequence[Axis]) -> Masks:
    """id(record) -> one int per x axis (X_AXES order) whose bit y_index is set when the
    record is on that (x, y) frontier (one int per x keeps each under 31 bits for JS).
    A point whose latency is dominated by queueing (`results.queueing`) is on none."""
    if len(ys) > 30:
        raise ValueError(f"{len(ys)} y metrics: the page's frontier bits hold 30")
    by_series: dict[SeriesKey, list[Record]] = {}
    for r in records:
        if queueing_reason(r) is None:
            by_series.setdefault(series_key(r), []).append(r)
    masks: Masks = {id(r): [0] * len(X_AXES) for r in records}
    for members in by_series.values():
        y_values = [[ya.value(r, prices) for r in members] for ya in ys]
        for xi, xa in enumerate(X_AXES):
            xs = [xa.value(r, prices) for r in members]
            for yi, ya in enumerate(ys):
                yv = y_values[yi]
                keep = [k for k in range(len(members)) if xs[k] is not None and yv[k] is not None]
                front = pareto_frontier(
                    [float(xs[k] or 0) for k in keep],
                    [float(yv[k] or 0) for k in keep],
                    higher_x=xa.higher_is_better,
                    higher_y=ya.higher_is_better,
                )
                for j in front:
                    masks[id(members[keep[j]])][xi] |= 1 << yi
    return masks


def thin(records: Sequence[Record], masks: Masks) -> list[Record]:
    """At most MAX_POINTS_PER_SERIES per series: frontier points first, then an even sample."""
    by_series: dict[SeriesKey, list[Record]] = {}
    for r in records:
        by_series.setdefault(series_key(r), []).append(r)
    kept: list[Record] = []
    for members in by_series.values():
        if len(members) <= MAX_POINTS_PER_SERIES:
            kept.extend(members)
            continue
        front = [r for r in members if any(masks[id(r)])][:MAX_POINTS_PER_SERIES]
        rest = [r for r in members if not any(masks[id(r)])]
        room = MAX_POINTS_PER_SERIES - len(front)
        step = max(1, len(rest) // max(1, room))
        kept.extend(front + rest[::step][:room])
    return kept


def _job_link(source: str | None, output_dir: Path | None) -> str | None:
    """The run's job directory (where its logs, plan and results are), as a link that
    still works when the report and the runs folder move together."""
    if not source:
        return None
    path = Path(source).absolute()
    job_dir = path.parent.parent if path.parent.name == "results" else path.parent
    if output_dir is None:
        return job_dir.as_uri()
    relative = Path(os.path.relpath(job_dir, output_dir.absolute())).as_posix()
    # percent-encoded and never starting with a name: a folder named `javascript:alert(1)`
    # would otherwise be a link of that scheme, run on a click
    link = quote(relative, safe="/") + "/"
    return link if link.startswith("../") else "./" + link


def points_payload(
    records: Sequence[Record],
    masks: Masks,
    series: SeriesTable,
    strings: Strings,
    prices: PriceTable,
    output_dir: Path | None,
    ys: Sequence[Axis],
) -> dict[str, Any]:
    cols: dict[str, list[Any]] = {
        k: [] for k in ("s", "c", "t", "img", "run", "tag", "date", "commit", "dir", "off", "fr")
    }
    cols["st"] = []
    cols["q"] = []  # why the point is queueing-dominated (kept off the frontiers), or "-"
    fm: dict[str, list[int]] = {a.key: [] for a in X_AXES}
    xs: dict[str, list[float | None]] = {a.key: [] for a in X_AXES}
    yv: dict[str, list[float | None]] = {a.key: [] for a in ys}
    for r in records:
        p = r.provenance
        cols["s"].append(series.index[series_key(r)])
        cols["c"].append(r.identity.concurrency)
        cols["t"].append(strings(r.identity.topology()))
        cols["img"].append(strings(r.identity.image))
        cols["run"].append(strings(p.run_id))
        cols["tag"].append(strings(p.tag))
        cols["date"].append(strings(when(p.started_at)))
        cols["commit"].append(strings(p.commit))
        cols["dir"].append(strings(_job_link(p.source, output_dir)))
        cols["off"].append(1 if p.official else 0)
        cols["fr"].append(round(r.derived.failure_rate, 4))
        cols["st"].append(strings(point_status(r).value))
        cols["q"].append(strings(queueing_reason(r)))
        for a, m in zip(X_AXES, masks[id(r)], strict=True):
            fm[a.key].append(m)
        for a in X_AXES:
            xs[a.key].append(sig(a.value(r, prices)))
        for a in ys:
            yv[a.key].append(sig(a.value(r, prices)))
    return {**cols, "fm": fm, "x": xs, "y": yv}


def _axis_rows(table: Sequence[Axis], prices: PriceTable) -> list[dict[str, Any]]:
    return [
        {
            "key": a.key,
            "label": a.label,
            "short": a.short,
            "higher": a.higher_is_better,
            "log": a.log,
            "note": a.note.format(prices=prices.file),
            "group": a.group,
        }
        for a in table
    ]


def axes_payload(prices: PriceTable, ys: Sequence[Axis]) -> dict[str, Any]:
    return {"x": _axis_rows(X_AXES, prices), "y": _axis_rows(ys, prices)}


def at_payload(
    records: Sequence[Record], series: SeriesTable, prices: PriceTable, ys: Sequence[Axis]
) -> dict[str, dict[str, Any]]:
    """Per facet and y metric: round interactivity targets, each with every series'
    interpolated value and the headline sentence (queueing-dominated points left out)."""
    facets: dict[str, list[Record]] = {}
    for r in records:
        if queueing_reason(r) is not None:
            continue
        facets.setdefault(series.rows[series.index[series_key(r)]]["facet"], []).append(r)
    out: dict[str, dict[str, Any]] = {}
    for facet, members in facets.items():
        per_y: dict[str, Any] = {}
        for ya in ys:

            def y_of(r: Record, ya: Axis = ya) -> float | None:
                return ya.value(r, prices)

            curves = build_curves(members, "interactivity", y=y_of, higher_y=ya.higher_is_better)
            if not curves:
                continue
            lo = min(min(c.x[k] for k in c.frontier) for c in curves)
            hi = max(max(c.x[k] for k in c.frontier) for c in curves)
            rows = []
            for target in round_targets(lo, hi)[:MAX_TARGETS]:
                found = values_at(curves, target)
                if found:
                    rows.append(
                        {
                            "at": target,
                            "values": [[series.index[f.key], sig(f.value)] for f in found],
                            "sentence": ratio_sentence(
                                found, target, unit=ya.short, higher_is_better=ya.higher_is_better
                            ),
                        }
                    )
            per_y[ya.key] = rows
        out[facet] = per_y
    return out
