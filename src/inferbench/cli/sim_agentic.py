"""`sim estimate` on an agentic job: trace lanes on the virtual clock, one point per concurrency."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from inferbench.bench.agentic.api import build_replay_result
from inferbench.bench.agentic.options import ReplayOptions
from inferbench.bench.naming import point_stem
from inferbench.bench.points_json import PointDocument
from inferbench.bench.result import EndpointInfo, write_point_result
from inferbench.bench.settings import ApiKind, ClientOptions, RequestOptions
from inferbench.bench.traces.source import open_traces
from inferbench.cli.fit import Col, print_table
from inferbench.cli.progress import working
from inferbench.sim.agentic import estimate_agentic
from inferbench.sim.deployment import SimDeployment

DEFAULT_DURATION_S = 600.0  # virtual seconds when neither --duration nor --sessions is given

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


def estimate_agentic_points(
    dep: SimDeployment,
    *,
    console: Console,
    trace: Path | None,
    synth: str | None,
    duration_s: float | None,
    sessions: int | None,
    result_path: object,
    as_json: bool = False,
) -> list[PointDocument]:
    """Estimate each concurrency, print the table (unless `as_json`), write result files;
    the points as documents for `--format json` (the table's figures under `estimate`)."""
    traces = open_traces(
        trace=trace,
        synth=None if trace is not None else (synth or ""),
        max_model_len=dep.max_model_len,
    )
    cache = dep.cache
    tier = (
        "no prefix cache"
        if cache is None
        else (
            f"prefix cache + {cache.cpu_offload_gb:g} GB DRAM ({cache.backend})"
            if cache.cpu_offload_gb
            else "prefix cache, GPU only"
        )
    )
    console.print(
        f"[bold]{dep.name}[/]: {dep.model.name} on {dep.total_gpus}x {dep.gpu.key}, "
        f"{dep.describe()}, {dep.engine}, agentic: {len(traces.traces)} traces, {tier}"
    )
    for note in traces.notes:
        console.print(f"[yellow]{escape(str(note))}[/]")
    rows: list[tuple[str, ...]] = []
    documents: list[PointDocument] = []
    concs = dep.workload.concurrencies
    err = Console(stderr=True, highlight=False)
    for i, conc in enumerate(concs, 1):
        end = duration_s if duration_s or sessions else DEFAULT_DURATION_S
        options = ReplayOptions(lanes=conc, duration_s=end, sessions=sessions)
        started = datetime.now(UTC)
        with working(err, f"simulating {conc} lanes ({i}/{len(concs)})"):
            est = estimate_agentic(dep, traces, options)
        result = build_replay_result(
            est.run,
            est.server,
            traces,
            options,
            endpoint=EndpointInfo(
                base_url="sim://estimate", model=dep.served_model, api=ApiKind.COMPLETIONS
            ),
            request=RequestOptions(),
            client=ClientOptions(),
            started=started,
            finished=datetime.now(UTC),
            max_model_len=dep.max_model_len,
            backend="inferbench-sim",
        )
        block = result.inferbench.agentic
        assert block is not None
        srv = est.server
        rows.append((
            str(conc),
            f"{block.sessions.completed}/{block.sessions.started}",
            str(block.requests),
            f"{block.window_s:.0f}",
            f"{block.output_throughput / est.gpus:,.1f}",
            f"{result.sa.median_ttft_ms:,.0f}",
            f"{result.sa.median_tpot_ms:.1f}",
            "-" if srv.gpu_hit_rate is None else f"{srv.gpu_hit_rate:.0%}",
            "-" if srv.external_hit_rate is None else f"{srv.external_hit_rate:.0%}",
            f"{block.client_reuse_share:.0%}",
            f"{est.wall_s:.1f}",
        ))  # fmt: skip
        target = result_path(conc, len(concs) > 1)  # type: ignore[operator]
        if target is not None:
            write_point_result(target, result)
        if as_json:
            figures = {
                "lanes": conc,
                "sessions_completed": block.sessions.completed,
                "sessions_started": block.sessions.started,
                "requests": block.requests,
                "window_s": block.window_s,
                "output_tok_s_per_gpu": block.output_throughput / est.gpus,
                "ttft_p50_ms": result.sa.median_ttft_ms,
                "tpot_p50_ms": result.sa.median_tpot_ms,
                "gpu_hit_rate": srv.gpu_hit_rate,
                "external_hit_rate": srv.external_hit_rate,
                "client_reuse_share": block.client_reuse_share,
                "wall_s": est.wall_s,
            }
            payload = result.to_json_bytes()
            doc = PointDocument(point_stem(conc), payload, file=target, estimate=figures)
            documents.append(doc)
    if not as_json:
        print_table(console, _COLUMNS, rows, note=err, wider="the result files have every field")
    return documents
