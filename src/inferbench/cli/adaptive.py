"""`--adaptive` for `inferbench plan` and `inferbench run`: its options and its output."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from inferbench.cli.fit import Col, print_table

if TYPE_CHECKING:
    from inferbench.adaptive.candidates import Excluded
    from inferbench.adaptive.planner import Assessment
    from inferbench.adaptive.session import AdaptiveOptions


@dataclass(frozen=True)
class AdaptiveFlags:
    adaptive: Annotated[
        bool,
        typer.Option(
            "--adaptive",
            help="Measure only the points that can move the throughput-interactivity "
            "frontier: predict all with the calibrated simulator, measure the likeliest "
            "frontier points first, refit, stop when the rest are settled (docs/adaptive.md).",
        ),
    ] = False
    confidence: Annotated[
        float,
        typer.Option(
            "--confidence", min=0.5, max=0.999, help="--adaptive: confidence a skipped point "
            "lies below the measured frontier x (1 + tolerance).",
        ),
    ] = 0.95  # fmt: skip
    tolerance: Annotated[
        float,
        typer.Option(
            "--tolerance", min=0.0, max=1.0, help="--adaptive: how far above the measured "
            "frontier a skipped point may be (0.03: 3%).",
        ),
    ] = 0.03  # fmt: skip
    per_round: Annotated[
        int, typer.Option("--per-round", min=1, help="--adaptive: points per frontier per round.")
    ] = 1
    max_points: Annotated[
        int | None,
        typer.Option("--max-points", min=1, help="--adaptive: measure at most N points."),
    ] = None
    run_noise: Annotated[
        float | None,
        typer.Option(
            "--run-noise", min=0.001, max=1.0, help="--adaptive: run-to-run noise of one "
            "measurement (log sd, 0.05: 5%) the planner assumes at least (default 0.02; "
            "measure it with repeats of one point).",
        ),
    ] = None  # fmt: skip
    local_correction: Annotated[
        bool,
        typer.Option(
            "--local-correction", help="--adaptive: shift each prediction by the residuals "
            "of measured points the simulator predicts alike (kriged; docs/adaptive.md).",
        ),
    ] = False  # fmt: skip
    both_axes: Annotated[
        bool,
        typer.Option(
            "--both-axes", help="--adaptive: the tolerance band scales the frontier's "
            "interactivity too, not only its throughput (near-duplicate settings settle).",
        ),
    ] = False  # fmt: skip
    calibration: Annotated[
        str | None,
        typer.Option(
            "--calibration",
            help="--adaptive: base calibration file (default: the packaged one; none: physics).",
        ),
    ] = None

    all_points: Annotated[
        bool, typer.Option("--all-points", help="--adaptive: list dominated points too.")
    ] = False

    def options(self) -> AdaptiveOptions:
        from inferbench.adaptive.session import AdaptiveOptions

        return AdaptiveOptions(
            confidence=self.confidence,
            tolerance=self.tolerance,
            per_round=self.per_round,
            max_points=self.max_points,
            calibration=self.calibration,
            run_noise=self.run_noise,
            local_correction=self.local_correction,
            both_axes=self.both_axes,
        )


_POINT_COLUMNS = (
    Col("job"),
    Col("conc", justify="right"),
    Col("frontier", priority=2),
    Col("tok/s/GPU", justify="right"),
    Col("tok/s/user", justify="right"),
    Col("status"),
    Col("why", wrap=True, priority=1),
)


def _fmt(value: float, low: float, high: float, measured: bool) -> str:
    if measured:
        return f"{value:,.1f}"
    return f"{value:,.1f} [{low:,.0f}-{high:,.0f}]"


def render_assessment(
    console: Console,
    a: Assessment,
    excluded: list[Excluded],
    *,
    title: str,
    all_points: bool,
    wider: str = "adaptive.json has every point",
) -> None:
    """The points (measured, to measure, and skipped with why), then the totals."""
    s = a.settings
    z = s.z
    rows = []
    for p in sorted(a.points, key=lambda p: (p.candidate.frontier, p.status != "measured",
                                             -p.predicted.interactivity)):  # fmt: skip
        if not all_points and p.status in ("dominated",):
            continue
        m = p.measured
        t_lo, t_hi = p.interval(z, "tok_s_gpu")
        i_lo, i_hi = p.interval(z, "interactivity")
        rows.append((
            p.candidate.label,
            str(p.candidate.concurrency),
            p.candidate.frontier_label(),
            _fmt(m.tok_s_gpu if m else p.predicted.tok_s_gpu, t_lo, t_hi, m is not None),
            _fmt(m.interactivity if m else p.predicted.interactivity, i_lo, i_hi, m is not None),
            str(p.status),
            p.reason(s),
        ))  # fmt: skip
    print_table(console, _POINT_COLUMNS, rows, title=title, wider=wider)
    hidden = a.count("dominated") if not all_points else 0
    if hidden:
        console.print(f"({hidden} dominated points not listed; --all-points lists them)")
    for e in excluded:
        console.print(f"not planned: {e.label} {e.fingerprint[:12]}: {e.reason}", markup=False)
    total = len(a.points)
    counts = {st: a.count(st) for st in
              ("measured", "next", "open", "dominated", "near", "budget", "failed")}  # fmt: skip
    parts = ", ".join(f"{n} {st}" for st, n in counts.items() if n)
    console.print(f"{total} points: {parts}", markup=False)
    full = a.gpu_hours_full
    if full > 0:
        console.print(
            f"GPU-hours (at measured or predicted throughput): full sweep {full:,.2f}, "
            f"measured {a.gpu_hours_measured:,.2f}, saved {a.gpu_hours_saved:,.2f} "
            f"({a.gpu_hours_saved / full:.0%})",
            markup=False,
        )
    band = f"{1 + s.tolerance:g}" + (" on both axes" if s.both_axes else "")
    spread = "held-out error" + (", kriged residuals" if s.local else "")
    console.print(
        f"skipped = P(above the measured frontier x {band}) < {1 - s.confidence:.2g}; "
        f"intervals are {s.confidence:.0%} (spread: {spread}; run noise at least {s.noise:g})",
        markup=False,
    )
