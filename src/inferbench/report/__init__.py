"""inferbench.report: PNG plots, the static HTML dashboard, markdown comparisons."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inferbench.core.errors import InputError
from inferbench.core.fsio import atomic_write_text
from inferbench.report.dashboard import DashboardInputs, render_dashboard
from inferbench.report.history import HISTORY_PER_POINT
from inferbench.report.plots import PLOTS_EXTRA_HINT, plots_available, write_plots
from inferbench.report.prices import load_prices
from inferbench.results.compare import (
    Comparison,
    check_threshold,
    compare_selectors,
    compare_stored,
)
from inferbench.results.store import DEFAULT_DB_URL, RecordFilter, Store, open_store
from inferbench.results.validity import split_valid, validity_of

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


def _comparison(
    store: Store, base: str | None, head: str | None, threshold: float
) -> Comparison | None:
    """BASE vs HEAD as asked, else the two most recently ingested runs (None with one)."""
    if base and head:
        return compare_selectors(store, base, head, threshold=threshold)
    runs = store.run_ids()
    if len(runs) < 2:
        return None
    b, h = runs[-2], runs[-1]
    return compare_stored(
        store,
        [s.record for s in store.query(RecordFilter(run_id=b))],
        [s.record for s in store.query(RecordFilter(run_id=h))],
        threshold=threshold,
        base_label=b,
        head_label=h,
    )


def build_report(
    db_url: str = DEFAULT_DB_URL,
    output_dir: Path | str = "runs/report",
    *,
    plots: bool | None = None,
    prices: Path | str | None = None,
    base: str | None = None,
    head: str | None = None,
    threshold: float = 0.05,
) -> ReportPaths:
    """Write `index.html` (the dashboard) and one PNG per model/lengths into output_dir.
    `plots`: None writes the PNGs where matplotlib is installed; True requires it."""
    check_threshold(threshold)  # before anything is read
    if plots and not plots_available():
        raise InputError("PNG plots need matplotlib, which is not installed", hint=PLOTS_EXTRA_HINT)
    if plots is None:
        plots = plots_available()
    out = Path(output_dir)
    table = load_prices(prices)
    with open_store(db_url, create=False) as store:
        latest, invalid = split_valid(s.record for s in store.latest_per_point())
        history = [
            (key, s.record)
            for key, s in store.history(HISTORY_PER_POINT)
            if validity_of(s.record).valid
        ]
        inputs = DashboardInputs(
            latest=latest,
            outcomes=store.outcomes(),
            history=history,
            history_samples=store.samples([r.natural_key() for _, r in history]),
            comparison=_comparison(store, base, head, threshold),
            prices=table,
            stored=store.count(),
            output_dir=out,
            threshold=threshold,
            evals=store.evals(),
            predicted=store.predicted(),
            invalid=invalid,
        )
    dash = render_dashboard(inputs)
    dashboard = out / "index.html"
    atomic_write_text(dashboard, dash.html)
    pngs = write_plots(latest, out) if plots else []
    return ReportPaths(
        output_dir=out,
        dashboard=dashboard,
        plots=tuple(pngs),
        points=dash.points,
        series=dash.series,
        stored=inputs.stored,
    )
