"""`inferbench sim` command group: `serve` (real-time HTTP) and `estimate` (offline)."""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import sys
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from inferbench.bench.naming import check_point_output, point_stem, result_path
from inferbench.bench.points_json import PointDocument, points_document
from inferbench.cli.fit import KEEP, Col, print_table
from inferbench.cli.options import with_options
from inferbench.cli.outputs import output_file, output_folder
from inferbench.cli.progress import counted, working
from inferbench.core.errors import InputError
from inferbench.core.fsio import atomic_write_bytes
from inferbench.core.limits import MAX_SEED, MAX_SESSIONS
from inferbench.results.dburl import store_url
from inferbench.sim.request import DeploymentRequest, build_deployment, sweep_budget
from inferbench.sim.serve_options import ServeOptions

if TYPE_CHECKING:
    from inferbench.sim.calibrate import FitReport, MeasuredPoint
    from inferbench.sim.deployment import SimDeployment
    from inferbench.sim.holdout import GroupBy, HeldOutError
    from inferbench.sim.summary import EstimatePoint
    from inferbench.sim.topologies import TopologyPoint

sim_app = typer.Typer(help="Embedded simulator: serve an OpenAI-compatible engine, or estimate.")


@dataclass(frozen=True)
class PointFiles:
    """Where `sim estimate` writes each point's result file, if anywhere."""

    result_file: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            parser=output_file("--output"),
            help="Result file; with several concurrencies out.json -> out_conc4.json, ...",
        ),
    ] = None
    result_dir: Annotated[
        Path | None,
        typer.Option(
            "--output-dir",
            parser=output_folder("--output-dir"),
            help="Folder of result files, one per point: conc4.json, ...",
        ),
    ] = None

    def path(self, concurrency: int, many: bool) -> Path | None:
        return result_path(self.result_file, self.result_dir, point_stem(concurrency), many)


@dataclass(frozen=True)
class AgenticFlags:
    """The window of an agentic job's estimate, and its sessions."""

    trace: Annotated[
        Path | None, typer.Option("--trace", help="agentic jobs: trace file/folder")
    ] = None
    synth: Annotated[str | None, typer.Option("--synth", help="agentic jobs: synth k=v,...")] = None
    duration: Annotated[
        float | None,
        typer.Option("--duration", help="agentic jobs: virtual seconds per point (default 600)"),
    ] = None
    sessions: Annotated[
        int | None, typer.Option("--sessions", max=MAX_SESSIONS, help="agentic jobs: sessions")
    ] = None


@sim_app.command("estimate")
@with_options
def estimate_cmd(
    deployment: DeploymentRequest,
    files: PointFiles,
    sweep_topologies: bool = typer.Option(
        False,
        "--sweep-topologies",
        help="Enumerate xPyD and TP/EP/DP layouts (no --tp/--dp/... needed) at --concurrency "
        "(default 8x32x128x512); print them and their Pareto frontier.",
    ),
    gpu_budget: int | None = typer.Option(
        None,
        "--gpu-budget",
        help="GPUs for --sweep-topologies (default: the deployment's, at least one node).",
    ),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED, help="Seed of the sampled lengths."),
    fmt: str = typer.Option(
        "table",
        "--format",
        help="table, or json: one document on stdout with each point's result and figures;"
        " with --sweep-topologies every layout tried and the frontier (docs/cli.md).",
    ),
    *,
    agentic: AgenticFlags,
) -> None:
    """Estimate a deployment offline (virtual clock): throughput per GPU, TTFT, TPOT."""
    if gpu_budget is not None and gpu_budget < 1:
        raise InputError(f"--gpu-budget must be at least 1, got {gpu_budget}")
    if fmt not in ("table", "json"):
        raise InputError(f"unknown --format {fmt!r}", hint="use table or json")
    as_json = fmt == "json"
    dep = build_deployment(deployment, sweeping=sweep_topologies)
    check_point_output(files.result_file, "--output", len(dep.workload.concurrencies))
    console = Console(highlight=False, stderr=as_json)  # stdout holds only the JSON
    _print_warnings(dep, console)
    if sweep_topologies:
        from inferbench.sim.topologies import DEFAULT_CONCURRENCIES

        concs = dep.workload.concurrencies if deployment.concurrency else DEFAULT_CONCURRENCIES
        budget = sweep_budget(deployment, dep, gpu_budget)
        _sweep(dep, budget, concs, console, as_json=as_json)
        return
    if dep.cache is not None:  # an agentic job: trace lanes, prefix cache, DRAM tier
        from inferbench.cli.sim_agentic import estimate_agentic_points

        documents = estimate_agentic_points(
            dep, console=console, trace=agentic.trace, synth=agentic.synth,
            duration_s=agentic.duration, sessions=agentic.sessions, result_path=files.path,
            as_json=as_json,
        )  # fmt: skip
    else:
        documents = _estimate_points(dep, seed, files, console, as_json=as_json)
    if as_json:
        sys.stdout.buffer.write(points_document("sim estimate", documents))
        sys.stdout.flush()


def _estimate_points(
    dep: SimDeployment, seed: int, files: PointFiles, console: Console, *, as_json: bool
) -> list[PointDocument]:
    """Estimate each concurrency, write its result file, print the table (unless `as_json`);
    the points as documents for `--format json` (the table's figures under `estimate`)."""
    from inferbench.sim.estimate import estimate
    from inferbench.sim.summary import point, result_bytes

    console.print(
        f"[bold]{dep.name}[/]: {dep.model.name} on {dep.total_gpus}x {dep.gpu.key}, "
        f"{dep.describe()}, {dep.engine}, isl {dep.workload.isl} osl {dep.workload.osl}"
    )
    concs = dep.workload.concurrencies
    err = Console(stderr=True, highlight=False)
    rows: list[tuple[str, ...]] = []
    documents: list[PointDocument] = []
    for i, conc in enumerate(concs, 1):
        with working(err, f"simulating concurrency {conc} ({i}/{len(concs)})"):
            run = estimate(dep, conc, num_prompts=dep.workload.num_prompts, seed=seed)
        p = point(run)
        rows.append(_estimate_row(p))
        target = files.path(conc, len(concs) > 1)
        payload = result_bytes(run, dep)
        if target is not None:
            atomic_write_bytes(target, payload)
        if as_json:
            documents.append(
                PointDocument(point_stem(conc), payload, file=target, estimate=p.figures())
            )
    if not as_json:
        print_table(
            console, _ESTIMATE_COLUMNS, rows, note=err, wider="--output-dir has every field"
        )
    return documents


def _estimate_row(p: EstimatePoint) -> tuple[str, ...]:
    return (
        str(p.concurrency),
        str(p.requests),
        f"{p.duration_s:.1f}",
        f"{p.total_tok_s_per_gpu:,.0f}",
        f"{p.output_tok_s_per_gpu:,.0f}",
        f"{p.interactivity_median:.1f}",
        f"{p.ttft_p50_ms:,.0f}",
        f"{p.ttft_p99_ms:,.0f}",
        f"{p.tpot_p50_ms:.1f}",
        f"{p.tpot_p99_ms:.1f}",
        str(p.preemptions),
        f"{p.wall_s:.2f}",
        f"{p.sim_tokens_per_wall_s:,.0f}",
    )


def _num(header: str, priority: int = KEEP) -> Col:
    return Col(header, priority=priority, justify="right")


# At 80 columns: concurrency, throughput per GPU, interactivity, TTFT and TPOT medians; the
# tails, counts and the simulator's own speed go first.
_ESTIMATE_COLUMNS = (
    _num("conc"),
    _num("requests", 7),
    _num("sim s", 9),
    _num("tok/s/GPU"),
    _num("out tok/s/GPU", 5),
    _num("tok/s/user p50"),
    _num("TTFT p50 ms"),
    _num("TTFT p99 ms", 4),
    _num("TPOT p50 ms", 3),
    _num("TPOT p99 ms", 6),
    _num("preempt", 8),
    _num("wall s", 10),
    _num("sim tok/wall s", 11),
)


def _print_warnings(dep: SimDeployment, console: Console) -> None:
    for warning in dep.warnings:
        console.print(f"[bold yellow]warning:[/] {escape(str(warning))}")


def _sweep(
    dep: SimDeployment,
    budget: int,
    concurrencies: tuple[int, ...],
    console: Console,
    *,
    as_json: bool = False,
) -> None:
    from inferbench.sim.topologies import pareto, sweep_topologies, topologies_document

    console.print(
        f"[bold]{dep.name}[/]: {dep.model.name} on {budget}x {dep.gpu.key}, {dep.engine}, "
        f"isl {dep.workload.isl} osl {dep.workload.osl}, concurrency "
        + "x".join(str(c) for c in concurrencies)
    )
    with counted(Console(stderr=True, highlight=False)) as update:

        def step(done: int, total: int, topology: str) -> None:
            update(f"layouts for {budget} GPUs", done, total)

        points = sweep_topologies(dep, budget, concurrencies, progress=step)
    if as_json:
        sys.stdout.buffer.write(topologies_document(dep, budget, concurrencies, points))
        sys.stdout.flush()
        return
    front = pareto(points)
    on_front = {id(p) for p in front}
    rows = [
        [*_sweep_row(p), "*" if id(p) in on_front else ""]
        for p in sorted(points, key=lambda q: -q.total_tok_s_gpu)
    ]
    wider = "--json has every field"
    print_table(console, [*_SWEEP_COLUMNS, Col("pareto")], rows, wider=wider)
    layouts = len({p.topology for p in points})
    title = (
        f"Pareto frontier: {len(front)} of {len(points)} points, {layouts} layouts tried "
        "(total tok/s/GPU against tok/s/user)"
    )
    print_table(console, _SWEEP_COLUMNS, [_sweep_row(p) for p in front], title=title, wider=wider)


# the columns of plain `estimate` (tok/s/GPU is total, input + output), each cell on one
# line: a topology label or a number is never broken; output tok/s/GPU and TTFT go first
_SWEEP_COLUMNS = (
    Col("topology"),
    _num("GPUs"),
    _num("conc"),
    _num("tok/s/GPU"),
    _num("out tok/s/GPU", 2),
    _num("tok/s/user"),
    _num("TTFT p50 ms", 1),
)


def _sweep_row(p: TopologyPoint) -> tuple[str, ...]:
    return (
        p.topology,
        str(p.gpus),
        str(p.concurrency),
        f"{p.total_tok_s_gpu:,.0f}",
        f"{p.output_tok_s_gpu:,.0f}",
        f"{p.tok_s_user:.1f}",
        f"{p.ttft_p50_ms:,.0f}",
    )


@dataclass(frozen=True)
class StoreFilter:
    """Which of the store's points `sim calibrate --db` fits."""

    model_prefix: Annotated[
        str | None,
        typer.Option(
            "--model-prefix", help="Store filter: model prefix (InferenceX's, e.g. dsr1)."
        ),
    ] = None
    hardware: Annotated[str | None, typer.Option("--hardware", help="Store filter.")] = None
    framework: Annotated[str | None, typer.Option("--framework", help="Store filter.")] = None
    precision: Annotated[str | None, typer.Option("--precision", help="Store filter.")] = None


@sim_app.command("calibrate")
@with_options
def calibrate_cmd(
    points: Path | None = typer.Argument(
        None, help="Points file: deployments (sweep jobs) with measured figures or result files."
    ),
    output: Path = typer.Option(
        ..., "--output", "-o", parser=output_file("--output"), help="Calibration file to write."
    ),
    store: str | None = typer.Option(
        None,
        "--db",
        callback=lambda v: None if v is None else store_url(v),
        help="Read measured points from this results database (URL or SQLite path) instead.",
    ),
    *,
    where: StoreFilter,
    loo: bool = typer.Option(True, "--loo/--no-loo", help="Also report leave-one-out error."),
    holdout_by: list[str] = typer.Option(
        [],
        "--holdout",
        help="Also report leave-one-group-out error, holding out every point of a gpu, an "
        "engine or a gpu-engine pair at once (repeatable).",
    ),
) -> None:
    """Fit efficiency parameters per (GPU, engine) from measured points; write a calibration
    file for `sim estimate --calibration` and `sim serve --calibration`."""
    from inferbench.core.fsio import write_output
    from inferbench.results.calibration_points import points_from_store
    from inferbench.sim.calibrate import dump_calibration, evaluate, load_points
    from inferbench.sim.holdout import group_by, holdout, prepare

    bys = [group_by(by) for by in holdout_by]
    if (points is None) == (store is None):
        raise InputError("give a points file or --db URL (one of them)")
    if points is not None:
        measured = load_points(points)
    else:
        assert store is not None
        measured = points_from_store(store, **dataclasses.asdict(where))
    console = Console(highlight=False, stderr=True)
    progress = console.print if sys.stderr.isatty() else None
    prep = prepare(measured, progress)
    report = evaluate(measured, loo=loo, progress=progress, deps=prep.deps, surfaces=prep.surfaces)
    groups = {
        by: {e.name: e for e in holdout(measured, by, prepared=prep, progress=progress).errors}
        for by in bys
    }
    Console(highlight=False).print(_fit_table(measured, report, groups))
    cal = report.calibration
    write_output(output, dump_calibration(cal).encode(), "--output")
    Console(highlight=False).print(f"wrote {output} ({len(cal.entries)} entries)", markup=False)


def _fit_table(
    measured: Sequence[MeasuredPoint],
    report: FitReport,
    groups: Mapping[GroupBy, Mapping[str, HeldOutError]],
) -> Table:
    """Each point's metrics: measured, fitted, left out (LOO) and held out by group."""
    from inferbench.sim.calibrate import METRICS

    fitted, held_out = report.predictions, report.loo
    table = Table(
        "point", "metric", "measured", "fit", "fit err", "LOO", "LOO err",
        *(f"out by {by} err" for by in groups),
    )  # fmt: skip
    for pt in measured:
        for metric in METRICS:
            want = getattr(pt.measured, metric)
            if want is None:
                continue
            got = fitted[pt.name].value(metric)
            row = [pt.name, metric, f"{want:,.1f}", f"{got:,.1f}", f"{got / want - 1:+.0%}"]
            if pt.name in held_out:
                other = held_out[pt.name].value(metric)
                row += [f"{other:,.1f}", f"{other / want - 1:+.0%}"]
            else:
                row += ["", ""]
            for errors in groups.values():
                err = errors[pt.name].error(metric) if metric != "ttft_ms" else None
                row.append("" if err is None else f"{err:+.0%}")
            table.add_row(*row)
    return table


@sim_app.command("serve")
@with_options
def serve_cmd(deployment: DeploymentRequest, options: ServeOptions) -> None:
    """Serve the simulated engine over HTTP (OpenAI completions/chat, /health, /metrics)."""
    from inferbench.sim.server import serve_until_stopped

    dep = build_deployment(deployment, serving=True)
    for warning in dep.warnings:
        sys.stderr.write(f"inferbench sim: warning: {warning}\n")
    _raise_fd_limit()

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)

        def ready(url: str) -> None:
            sys.stdout.write(f"inferbench sim: listening on {url}\n")
            sys.stdout.flush()

        server = await serve_until_stopped(dep, options, stop, ready)
        sys.stderr.write(f"inferbench sim: {server.summary()}\n")

    _run(main())


def _run(coro: Coroutine[Any, Any, None]) -> None:
    try:
        import uvloop

        uvloop.run(coro)
    except ImportError:  # pragma: no cover - uvloop is absent on Windows
        asyncio.run(coro)


def _raise_fd_limit() -> None:
    """Thousands of concurrent streams need more than the default 1024 descriptors."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ImportError, ValueError, OSError):
        pass


def register(app: typer.Typer) -> None:
    """Add `inferbench sim` to the root app."""
    app.add_typer(sim_app, name="sim")
