"""`inferbench report`: PNG plots and the static HTML dashboard from the store."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from inferbench.cli.outputs import output_folder
from inferbench.results.dburl import store_url
from inferbench.results.store import DEFAULT_DB_URL


def report(
    db: str = typer.Option(
        DEFAULT_DB_URL,
        "--db",
        envvar="INFERBENCH_DB",
        callback=store_url,
        help="Database URL, or a SQLite file's path.",
    ),
    output: Path = typer.Option(
        Path("runs/report"),
        "--output-dir",
        parser=output_folder("--output-dir"),
        help="Folder to write into.",
    ),
    plots: bool | None = typer.Option(
        None,
        "--plots/--no-plots",
        help="Also write PNG plots (default: where matplotlib, the `plots` extra, is installed).",
    ),
    prices: Path | None = typer.Option(
        None, "--prices", help="$/GPU-hour YAML for the cost metrics (default: the cited list)."
    ),
    base: str | None = typer.Option(
        None, "--base", help="compare page BASE (run id, tag:<name>, ...; default: previous run)"
    ),
    head: str | None = typer.Option(
        None, "--head", help="compare page HEAD (same forms; default: the latest run)"
    ),
    threshold: float = typer.Option(0.05, "--threshold", help="relative change treated as noise"),
) -> None:
    """Write the dashboard (index.html, opens offline) and PNG Pareto plots."""
    from inferbench.core.errors import InputError
    from inferbench.report import build_report

    if (base is None) != (head is None):
        raise InputError("--base and --head go together", hint="give both, or neither")
    with Console(stderr=True).status("building report..."):
        paths = build_report(
            db, output, plots=plots, prices=prices, base=base, head=head, threshold=threshold
        )
    typer.echo(
        f"dashboard: {paths.dashboard} ({paths.points} points in {paths.series} series, "
        f"{paths.stored} stored); plots: {len(paths.plots)} PNG in {paths.output_dir}"
    )
    if plots is None and not paths.plots and paths.points:
        from inferbench.report.plots import PLOTS_EXTRA_HINT

        typer.echo(f"(no PNG plots: matplotlib is not installed; {PLOTS_EXTRA_HINT})", err=True)


def register(app: typer.Typer) -> None:
    """Add `inferbench report` to the root app."""
    app.command("report")(report)
