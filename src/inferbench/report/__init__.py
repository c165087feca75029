"""inferbench.report: PNG plots, the static HTML dashboard, markdown comparisons."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inferbench.fsio import atomic_write_text
from inferbench.report.dashboard import render_dashboard
from inferbench.report.plots import write_plots
from inferbench.results.store import DEFAULT_DB_URL, open_store

__all__ = ["ReportPaths", "build_report"]


@dataclass(frozen=True)
class ReportPaths:
    """What `build_report` wrote."""

    output_dir: Path
    dashboard: Path
    plots: tuple[Path, ...]
    points: int  # points on the dashboard
    series: int
    stored: int  # records in the store


def build_report(
    db_url: str = DEFAULT_DB_URL, output_dir: Path | str = "runs/report", *, plots: bool = True
) -> ReportPaths:
    """Write `index.html` (the dashboard) and one PNG per model/lengths into output_dir."""
    out = Path(output_dir)
    with open_store(db_url) as store:
        latest = [s.record for s in store.latest_per_point()]
        outcomes = store.outcomes()
        stored = store.count()
    dash = render_dashboard(latest, outcomes, stored=stored)
    dashboard = out / "index.html"
    atomic_write_text(dashboard, dash.html)
    pngs = write_plots(latest, out) if plots else []
    return ReportPaths(
        output_dir=out,
        dashboard=dashboard,
        plots=tuple(pngs),
        points=dash.points,
        series=dash.series,
        stored=stored,
    )
