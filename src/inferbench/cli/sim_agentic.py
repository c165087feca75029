"""`sim estimate` on an agentic job: one point per concurrency (lanes), as a table or JSON."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from inferbench.bench.naming import point_stem
from inferbench.bench.points_json import PointDocument
from inferbench.bench.result import write_point_result
from inferbench.cli.fit import Col, print_table
from inferbench.cli.progress import working
from inferbench.sim.agentic_point import (
    AgenticFigures,
    cache_tier,
    estimate_agentic_point,
    open_agentic_traces,
    window,
)
from inferbench.sim.deployment import SimDeployment

_COLUMNS = (
    Col("lanes", justify="right"),
    Col("sessions", priority=4, justify="right"),
    Col("requests", priority=5, justify="right"),
    Col("sim s", priority=6, justify="right"),
    Col("out tok/s/GPU", justify="right"),
    Col("TTFT p50 ms", justify="right"),
    Col("TPOT p50 ms", justify="right"),
    Col("hit GPU", justify="right"),
    Col("hit DRAM", priority=2, justify="right"),
    Col("client reuse", priority=3, justify="right"),
    Col("wall s", priority=7, justify="right"),
)


def _row(f: AgenticFigures) -> tuple[str, ...]:
    return (
        str(f.lanes),
        f"{f.sessions_completed}/{f.sessions_started}",
        str(f.requests),
        f"{f.window_s:.0f}",
        f"{f.output_tok_s_per_gpu:,.1f}",
        f"{f.ttft_p50_ms:,.0f}",
        f"{f.tpot_p50_ms:.1f}",
        "-" if f.gpu_hit_rate is None else f"{f.gpu_hit_rate:.0%}",
        "-" if f.external_hit_rate is None else f"{f.external_hit_rate:.0%}",
        f"{f.client_reuse_share:.0%}",
        f"{f.wall_s:.1f}",
    )


def estimate_agentic_points(
    dep: SimDeployment,
    *,
    console: Console,
    trace: Path | None,
    synth: str | None,
    duration_s: float | None,
    sessions: int | None,
    result_path: Callable[[int, bool], Path | None],
    as_json: bool = False,
) -> list[PointDocument]:
    """Estimate each concurrency, print the table (unless `as_json`), write result files;
    the points as documents for `--format json` (the table's figures under `estimate`)."""
    traces = open_agentic_traces(trace, synth, dep.max_model_len)
    console.print(
        f"[bold]{dep.name}[/]: {dep.model.name} on {dep.total_gpus}x {dep.gpu.key}, "
        f"{dep.describe()}, {dep.engine}, agentic: {len(traces.traces)} traces, "
        f"{cache_tier(dep)}"
    )
    for note in traces.notes:
        console.print(f"[yellow]{escape(str(note))}[/]")
    rows: list[tuple[str, ...]] = []
    documents: list[PointDocument] = []
    concs = dep.workload.concurrencies
    err = Console(stderr=True, highlight=False)
    for i, conc in enumerate(concs, 1):
        options = window(conc, duration_s, sessions)
        with working(err, f"simulating {conc} lanes ({i}/{len(concs)})"):
            point = estimate_agentic_point(
                dep, traces, options, base_url="sim://estimate", max_model_len=dep.max_model_len
            )
        figures = point.figures()
        rows.append(_row(figures))
        target = result_path(conc, len(concs) > 1)
        if target is not None:
            write_point_result(target, point.result)
        if as_json:
            payload = point.result.to_json_bytes()
            estimate = dataclasses.asdict(figures)
            documents.append(
                PointDocument(point_stem(conc), payload, file=target, estimate=estimate)
            )
    if not as_json:
        print_table(console, _COLUMNS, rows, note=err, wider="the result files have every field")
    return documents
