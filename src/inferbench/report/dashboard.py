"""The self-contained HTML dashboard: one file with plotly.js, the page script and the
data inline, so it opens from the file system with no network at all.

Views: curves (a chart per model and sequence lengths, one trace pair per series:
frontier and dominated points), equal-interactivity comparison, the points table,
history of a configuration across runs, and a BASE vs HEAD comparison. The page keeps
its view, filters, metric and axes in the URL fragment, so a link reopens the same view.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from inferbench.core.outcome import StoredOutcome
from inferbench.report.agentic import agentic_payload
from inferbench.report.evals import evals_html, evals_payload
from inferbench.report.history import compare_payload, history_payload
from inferbench.report.outcomes import MAX_LISTED, outcomes_payload
from inferbench.report.payload import (
    SeriesTable,
    Strings,
    at_payload,
    axes_payload,
    frontier_masks,
    page_y_axes,
    points_payload,
    thin,
)
from inferbench.report.prices import PriceTable
from inferbench.results.compare import Comparison, point_label
from inferbench.results.evalrecord import EvalRecord
from inferbench.results.predicted import PredictedPoint
from inferbench.results.record import Record
from inferbench.results.samples import PointSamples
from inferbench.results.validity import validity_of


@dataclass(frozen=True)
class DashboardInputs:
    latest: Sequence[Record]  # one record per point (`Store.latest_per_point`)
    outcomes: Sequence[StoredOutcome]
    history: Sequence[tuple[str, Record]]  # (point key, record), `Store.history`
    comparison: Comparison | None
    prices: PriceTable
    stored: int
    output_dir: Path | None = None  # links to run directories are made relative to it
    threshold: float = 0.05
    evals: Sequence[EvalRecord] = ()  # accuracy evals, shown as a table under the points
    # per-request samples of the history's records, by natural key (`Store.samples`)
    history_samples: Mapping[str, PointSamples] = field(default_factory=dict)
    predicted: Sequence[PredictedPoint] = ()  # adaptive runs' skipped points (not measured)
    invalid: Sequence[Record] = ()  # latest points that failed a validity gate: listed, not drawn


@dataclass(frozen=True)
class DashboardHtml:
    html: str
    points: int
    series: int


def dashboard_data(inputs: DashboardInputs) -> dict[str, Any]:
    ys = page_y_axes(inputs.latest, inputs.prices)
    masks = frontier_masks(inputs.latest, inputs.prices, ys)
    records = thin(inputs.latest, masks)
    series = SeriesTable.of(inputs.latest)
    strings = Strings()
    points = points_payload(records, masks, series, strings, inputs.prices, inputs.output_dir, ys)
    history = history_payload(
        inputs.history,
        series,
        strings,
        inputs.prices,
        threshold=inputs.threshold,
        ys=ys,
        samples=inputs.history_samples,
    )
    return {
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "stored": inputs.stored,
        "distinct": len(inputs.latest),
        "axes": axes_payload(inputs.prices, ys),
        "prices": prices_payload(inputs.prices),
        "series": series.rows,
        "points": points,
        "at": at_payload(records, series, inputs.prices, ys),
        "history": history,
        "compare": compare_payload(inputs.comparison, series),
        "outcomes": outcomes_payload(inputs.outcomes),
        "evals": evals_payload(inputs.evals),
        "agentic": agentic_payload(inputs.latest, series),
        "predicted": predicted_payload(inputs.predicted),
        "invalid": invalid_payload(inputs.invalid),
        "strings": strings.items,
    }


def invalid_payload(records: Sequence[Record]) -> list[str]:
    """One line per invalid point (`results.validity`): which point, which run, and why."""
    return [
        f"{r.provenance.run_id} {point_label(r)}: {'; '.join(validity_of(r).reasons)}"
        for r in records[:MAX_LISTED]
    ]


def predicted_payload(points: Sequence[PredictedPoint]) -> list[dict[str, Any]]:
    """Adaptive runs' predicted points, drawn on the curves of total tok/s/GPU against
    interactivity (the axes they were predicted on) as marked, with their intervals."""
    return [
        {
            "facet": p.facet,
            "label": p.label,
            "hw": p.hardware,
            "c": p.concurrency,
            "run": p.run_id,
            "x": p.interactivity,
            "xl": p.interactivity_low,
            "xh": p.interactivity_high,
            "y": p.tok_s_gpu,
            "yl": p.tok_s_gpu_low,
            "yh": p.tok_s_gpu_high,
            "status": p.status,
            "why": p.reason,
            "conf": p.confidence,
        }
        for p in points
    ]


def prices_payload(prices: PriceTable) -> dict[str, Any]:
    """The cost models as the page lists them under the cost charts: every figure with
    its source, so a reader sees what a cost number assumed."""
    return {
        "file": prices.file,
        "currency": prices.currency,
        "models": [
            {
                "key": m.key,
                "label": m.label,
                "note": m.note,
                "per_gpu_hour": m.prices,
                "sources": m.sources,
            }
            for m in prices.models
        ],
    }


@cache
def plotly_js() -> str:
    """plotly.js as the installed plotly package ships it (embedded, never fetched)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def render_dashboard(inputs: DashboardInputs) -> DashboardHtml:
    data = dashboard_data(inputs)
    payload = orjson.dumps(data).decode().replace("</", "<\\/")
    pkg = resources.files("inferbench.report")
    template = (pkg / "dashboard.html").read_text(encoding="utf-8")
    script = (pkg / "dashboard.js").read_text(encoding="utf-8")
    parts = {
        "PLOTLY": plotly_js(),
        "SCRIPT": script,
        "DATA": payload,
        "EVALS": evals_html(inputs.evals),
    }
    # one pass over the template: inserted text is never searched for placeholders
    html = re.sub(r"__(PLOTLY|SCRIPT|DATA|EVALS)__", lambda m: parts[m.group(1)], template)
    return DashboardHtml(html=html, points=len(data["points"]["s"]), series=len(data["series"]))
