"""The self-contained HTML dashboard: one file, inline CSS/JS/data, no network.

The data is thinned before it is embedded so the page opens instantly even over a
large store: only the latest record of each distinct point (same identity across
runs, chosen in SQL by `Store.latest_per_point`) is shown, and each series keeps at
most `MAX_POINTS_PER_SERIES` points (all of its Pareto frontier first). Values are
rounded to what a chart can show.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import orjson

from inferbench.results.pareto import build_curves, series_key
from inferbench.results.record import Record
from inferbench.results.sources import JobOutcome

MAX_POINTS_PER_SERIES = 400


class _Strings:
    """Interns repeated strings (images, commands, topologies) into one table."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, value: str | None) -> int:
        text = value or "-"
        if text not in self._index:
            self._index[text] = len(self.items)
            self.items.append(text)
        return self._index[text]


def _thin(records: list[Record]) -> list[Record]:
    by_series: dict[Any, list[Record]] = {}
    for r in records:
        by_series.setdefault(series_key(r), []).append(r)
    kept: list[Record] = []
    for curve in build_curves(records):
        members = by_series.pop(curve.key)
        if len(members) <= MAX_POINTS_PER_SERIES:
            kept.extend(members)
            continue
        front = [curve.records[k] for k in curve.frontier]
        rest = [r for r in curve.records if r not in front]
        step = max(1, len(rest) // max(1, MAX_POINTS_PER_SERIES - len(front)))
        kept.extend(front + rest[::step][: MAX_POINTS_PER_SERIES - len(front)])
    for members in by_series.values():  # points without interactivity
        kept.extend(members[:MAX_POINTS_PER_SERIES])
    return kept


def _frontier_ids(records: list[Record], axis: str) -> set[int]:
    ids: set[int] = set()
    for curve in build_curves(records, axis):  # type: ignore[arg-type]
        ids.update(id(curve.records[k]) for k in curve.frontier)
    return ids


def dashboard_data(
    latest: Sequence[Record], outcomes: Sequence[JobOutcome], *, stored: int | None = None
) -> dict[str, Any]:
    """The embedded data: `latest` holds one record per point (`Store.latest_per_point`)."""
    records = _thin(list(latest))
    front_i, front_e = _frontier_ids(records, "interactivity"), _frontier_ids(records, "e2el")
    strings = _Strings()
    series: dict[Any, int] = {}
    series_rows: list[dict[str, str]] = []
    points = []
    for r in records:
        key = series_key(r)
        if key not in series:
            series[key] = len(series_rows)
            series_rows.append(
                {
                    "label": key.label(),
                    "model": key.model_prefix,
                    "seq": f"{key.isl}/{key.osl}",
                    "prec": key.precision,
                    "hw": key.hardware,
                    "fw": key.framework,
                }
            )
        inter = r.derived.interactivity
        e2el = r.metrics.e2el_ms.median
        points.append(
            {
                "s": series[key],
                "x": round(inter.median, 2) if inter and inter.median else None,
                "e": round(e2el, 1) if e2el is not None else None,
                "y": round(r.derived.total_tput_per_gpu, 2),
                "c": r.identity.concurrency,
                "t": strings(r.identity.topology()),
                "img": strings(r.identity.image),
                "cmd": strings(r.provenance.command),
                "run": strings(r.provenance.run_id),
                "fr": round(r.derived.failure_rate, 4),
                "off": 1 if r.provenance.official else 0,
                "f": 1 if id(r) in front_i else 0,
                "fe": 1 if id(r) in front_e else 0,
            }
        )
    failed = [o for o in outcomes if o.status not in ("succeeded", "success", "ok", "done")]
    return {
        "stored": len(latest) if stored is None else stored,
        "series": series_rows,
        "points": points,
        "strings": strings.items,
        "outcomes": {
            "total": len(outcomes),
            "failed": len(failed),
            "failures": [
                f"{o.run_id} {o.label}: {o.status}" + (f" ({o.reason})" if o.reason else "")
                for o in failed[:50]
            ],
        },
    }


@dataclass(frozen=True)
class DashboardHtml:
    html: str
    points: int
    series: int


def render_dashboard(
    latest: Sequence[Record], outcomes: Sequence[JobOutcome], *, stored: int | None = None
) -> DashboardHtml:
    data = dashboard_data(latest, outcomes, stored=stored)
    payload = orjson.dumps(data).decode().replace("</", "<\\/")
    pkg = resources.files("inferbench.report")
    template = (pkg / "dashboard.html").read_text(encoding="utf-8")
    script = (pkg / "dashboard.js").read_text(encoding="utf-8")
    html = (
        template.replace("__GENERATED__", datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))
        .replace("__SCRIPT__", script)
        .replace("__DATA__", payload)
    )
    return DashboardHtml(html=html, points=len(data["points"]), series=len(data["series"]))
