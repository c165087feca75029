"""`inferbench run`, `inferbench plan` and `inferbench demo`: parse, call launch, render."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from inferbench.cli.adaptive import AdaptiveFlags
from inferbench.cli.filters import FilterOptions, eval_mode
from inferbench.cli.fit import Col, print_table
from inferbench.cli.options import with_options
from inferbench.cli.outputs import output_folder
from inferbench.cli.progress import LineProgress, log_mode
from inferbench.cli.srt_option import SRT_SLURM
from inferbench.core.errors import InputError, Location
from inferbench.core.outcome import Outcome, PointOutcome
from inferbench.core.status import JobStatus
from inferbench.launch.deployment import Deployment
from inferbench.launch.invocation import LaunchArgs, RunArgs, launch_options, run_options
from inferbench.launch.plan import Backend, Plan
from inferbench.launch.runner import RunEvents, RunRequest, RunSummary, execute_run
from inferbench.launch.stop import StopRequest, graceful_sigint

if TYPE_CHECKING:
    from inferbench.config.project import Project
    from inferbench.launch.session import RunOptions

_console = Console(highlight=False, soft_wrap=True)
_STATUS_STYLE = {JobStatus.COMPLETED: "green", JobStatus.POINTS_FAILED: "yellow"}


class _Progress(RunEvents):
    """Rich progress (a terminal): one bar over the jobs; each finished point printed above
    it."""

    def __init__(self, progress: Progress, total: int, round_no: int | None = None) -> None:
        self.progress = progress
        self.task = progress.add_task("jobs", total=total)
        self.round_no = round_no

    def planned(self, dep: Deployment, plan: Plan) -> None:
        for warning in plan.warnings:
            self.progress.console.print(
                f"  {escape(_label(dep))}: [yellow]warning[/] {escape(warning)}"
            )

    def job_started(self, dep: Deployment, attempt: int, todo: int) -> None:
        extra = _pass_name(attempt, self.round_no)
        self.progress.update(self.task, description=f"{_label(dep)}{extra}: {todo} points")

    def point_done(self, dep: Deployment, point: PointOutcome) -> None:
        mark = "[green]ok[/]" if point.ok else f"[red]failed[/] {escape(point.reason[:100])}"
        self.progress.console.print(f"  {escape(_label(dep))} conc {point.concurrency}: {mark}")

    def job_finished(self, dep: Deployment, outcome: Outcome, points_ok: int) -> None:
        self.progress.advance(self.task)


class _Lines(RunEvents):
    """Progress lines (a log): each job start, point and job end, timestamped, and the job
    running now repeated at least every 10 s."""

    def __init__(self, lines: LineProgress, total: int, round_no: int | None = None) -> None:
        self.lines = lines
        self.total = total
        self.round_no = round_no
        self.started = 0
        self.head = ""
        self.todo = 0

    def _state(self) -> None:
        self.lines.state(f"{self.head}: running, {self.todo} points to do")

    def planned(self, dep: Deployment, plan: Plan) -> None:
        for warning in plan.warnings:
            self.lines.say(f"{_label(dep)}: warning: {warning}")

    def job_started(self, dep: Deployment, attempt: int, todo: int) -> None:
        self.started += attempt == 1 or self.round_no is not None
        extra = _pass_name(attempt, self.round_no)
        self.head, self.todo = f"job {self.started}/{self.total} {_label(dep)}{extra}", todo
        self._state()
        self.lines.say(f"{self.head}: started, {todo} points")

    def point_done(self, dep: Deployment, point: PointOutcome) -> None:
        mark = "ok" if point.ok else f"failed {point.reason[:100]}"
        self.lines.say(f"{_label(dep)} conc {point.concurrency}: {mark}")
        self.todo = max(0, self.todo - 1)
        self._state()

    def job_finished(self, dep: Deployment, outcome: Outcome, points_ok: int) -> None:
        total = len(dep.concurrencies)
        costing = f", {_costing(outcome)}" if outcome.costed_as else ""
        if self.round_no is None:
            self.lines.say(f"{_label(dep)}: {outcome.status} ({points_ok}/{total} ok){costing}")
        else:  # a round runs the points it chose; the job's others ran in earlier rounds
            self.lines.say(
                f"{_label(dep)}: round {self.round_no} {outcome.status}, "
                f"{points_ok} of its {total} points measured so far{costing}"
            )
        self.lines.state(f"{self.started}/{self.total} jobs started")


def _pass_name(attempt: int, round_no: int | None) -> str:
    """ " (round 3)" in an adaptive run (each round reopens the job for the points it
    chose: not a retry), " (attempt 2)" for a retry, else nothing."""
    if round_no is not None:
        return f" (round {round_no})"
    return f" (attempt {attempt})" if attempt > 1 else ""


def _label(dep: Deployment) -> str:
    return dep.config_key or dep.fingerprint[:12]


_SUMMARY_COLUMNS = (
    Col("job"),
    Col("fingerprint", priority=2),
    Col("status"),
    Col("points ok"),
    Col("evals", priority=1),
    Col("attempt", priority=3),
    Col("reason", wrap=True),
)


def _evals_cell(evals: list[str]) -> Text:
    """One line per eval, red unless it ran (or was simulated)."""
    lines = [Text(e) if e.split()[1] in ("ok", "simulated") else Text(e, "red") for e in evals]
    return Text("\n").join(lines)


def _costing(outcome: Outcome) -> str:
    """What the simulator costed the job as, where that is not the job's own engine."""
    if outcome.costed_as is None:
        return ""
    return f"costed as {outcome.costed_as} (its engine has no simulator profile)"


def _reason(outcome: Outcome) -> str:
    return "; ".join(x for x in (_costing(outcome), outcome.reason) if x)


def render_summary(summary: RunSummary, console: Console = _console) -> None:
    from inferbench.launch.evalstep import eval_statuses

    rows: list[tuple[str | Text, ...]] = []
    for dep, outcome in summary.outcomes:
        style = _STATUS_STYLE.get(outcome.status, "red")
        evals = eval_statuses(summary.run.job(dep.fingerprint).results)
        rows.append((
            _label(dep),
            dep.fingerprint[:12],
            Text(str(outcome.status), style=style),
            f"{summary.points_ok.get(dep.fingerprint, 0)}/{len(dep.concurrencies)}",
            _evals_cell(evals),
            str(outcome.attempt),
            _reason(outcome)[:120],
        ))  # fmt: skip
    for dep in summary.skipped:
        rows.append((_label(dep), dep.fingerprint[:12], "done earlier", "", "", "", ""))
    print_table(
        console, _SUMMARY_COLUMNS, rows, title=f"run {summary.run.run_id}",
        wider="the run directory has each job's outcome",
    )  # fmt: skip
    if summary.stopped_early:
        console.print("[yellow]stopped after the first failed job (--fail-fast)[/]")
    console.print(f"run directory: {summary.run.path}", markup=False)


def run_with_progress(request: RunRequest, round_no: int | None = None) -> RunSummary:
    """Run with a progress bar (lines in a log); the first Ctrl-C asks the run to stop after
    its current point, the second stops it at once. `round_no`: an adaptive run's round."""
    total = min(len(request.deployments), request.max_jobs or len(request.deployments))
    if log_mode():
        with LineProgress(_console.file) as lines:

            def said() -> None:
                lines.say("stopping after the current point (Ctrl-C again to stop at once)")

            with graceful_sigint(request.stop, said):
                return execute_run(request, _Lines(lines, total, round_no))
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeElapsedColumn(), console=_console) as progress:

        def on_first() -> None:
            progress.console.print(
                "[yellow]stopping after the current point[/] (Ctrl-C again to stop at once)"
            )

        with graceful_sigint(request.stop, on_first):
            return execute_run(request, _Progress(progress, total, round_no))


def exit_if_interrupted(summary: RunSummary, runs_dir: Path) -> None:
    """After a Ctrl-C: say how to resume, and exit 130 (what a shell reports for SIGINT)."""
    if not summary.interrupted:
        return
    command = f"inferbench run --resume {summary.run.run_id}"
    if runs_dir != Path("runs"):
        command += f" --runs-dir {shlex.quote(str(runs_dir))}"
    _console.print(
        f"[yellow]interrupted[/]: run {summary.run.run_id} stopped with "
        f"{summary.points_left} points to do (none marked failed by the stop)"
    )
    _console.print(f"resume it with: {command}", markup=False)
    raise typer.Exit(130)


def _given(ctx: typer.Context) -> set[str]:
    """The run settings typed on the command line (or set in the environment), by their
    names in `launch.resume.SETTINGS`: any filter typed is "filters"."""
    from inferbench.launch.resume import SETTINGS

    # by name: typer's context may come from its own copy of click, with its own enum
    typed = {"COMMANDLINE", "ENVIRONMENT"}
    names = {
        name
        for name in ctx.params
        if getattr(ctx.get_parameter_source(name), "name", None) in typed
    }
    filters = {"filters"} if names & _FILTER_PARAMS else set()
    return (names & SETTINGS.keys()) | filters


_FILTER_PARAMS = {f.name for f in dataclasses.fields(FilterOptions)} | {
    "no_evals",
    "evals_only",
    "all_evals",
}
_ROOT = typer.Option(Path("."), "--root", help="Benchmark tree (InferenceX layout).")


def register(app: typer.Typer) -> None:
    app.command("run")(run_cmd)
    app.command("plan")(plan_cmd)
    app.command("demo")(demo_cmd)


@with_options
def run_cmd(
    ctx: typer.Context,
    root: Path = _ROOT,
    *,
    filters: FilterOptions,
    adaptive_flags: AdaptiveFlags,
    launch: LaunchArgs,
    srt_slurm: list[str] | None = SRT_SLURM,
    args: RunArgs,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plans; run nothing."),
    no_evals: bool = typer.Option(False, "--no-evals", help="Run no evals."),
    evals_only: bool = typer.Option(False, "--evals-only", help="Only the eval jobs."),
    all_evals: bool = typer.Option(False, "--all-evals", help="Every eligible job evals."),
) -> None:
    """Run the sweep: plan each job, start its servers, drive its points, keep results.

    Jobs served by the simulator (--engine sim) run on its virtual clock: each point is
    its estimate, written as a measured point's result file, with no server to wait on.
    Ctrl-C stops after the current point (twice: at once); `--resume RUN-ID` continues
    the run with the settings it was started with. `--adaptive` measures only the
    points that can move the throughput-interactivity frontier (docs/adaptive.md)."""
    from inferbench.launch.session import build_request
    from inferbench.sim.points import open_job

    sweep_filters = filters.sweep_filters(evals=eval_mode(no_evals, evals_only, all_evals))
    adaptive = adaptive_flags.options().as_dict() if adaptive_flags.adaptive else None
    sources = tuple(srt_slurm or ())
    options = run_options(root, launch, args, sweep_filters, sources, adaptive)
    if args.resume:
        options, project, deployments = _resumed(ctx, args, options, adaptive_flags.adaptive)
    else:
        from inferbench.launch.sweep import load_deployments

        project, deployments = load_deployments(root, sweep_filters)
    request = build_request(
        options, project, deployments, preview=dry_run, stop=StopRequest(), simulator=open_job
    )
    _warn_eval_gap(request, options)
    if options.adaptive is not None:
        _run_adaptive(request, options.adaptive, args.runs_dir, adaptive_flags.all_points, dry_run)
        return
    if dry_run:
        if _print_plans(request):
            raise typer.Exit(1)
        return
    summary = run_with_progress(request)
    render_summary(summary)
    exit_if_interrupted(summary, args.runs_dir)
    if not summary.ok:
        raise typer.Exit(1)


def _resumed(
    ctx: typer.Context, args: RunArgs, asked: RunOptions, adaptive: bool
) -> tuple[RunOptions, Project, list[Deployment]]:
    """`--resume`: the run's own options (a flag typed beside it that disagrees is refused),
    its tree and the deployments it was started with."""
    from inferbench.config.project import load_project
    from inferbench.launch.resume import load_saved_run, resume_options

    assert args.resume is not None
    saved = load_saved_run(args.runs_dir, args.resume)
    options = resume_options(saved, asked, _given(ctx))
    _refuse_adaptive_flag(adaptive, options.adaptive, args.resume)
    return options, load_project(options.root), saved.deployments


def _warn_eval_gap(request: RunRequest, options: RunOptions) -> None:
    if options.backend is not Backend.SRTCTL:
        return
    from inferbench.launch.srtplan import eval_gap

    gap = eval_gap(request.deployments, options.plan, Path(options.root))
    if gap:
        Console(stderr=True, highlight=False, soft_wrap=True).print(f"[yellow]warning:[/] {gap}")


@with_options
def plan_cmd(
    ctx: typer.Context,
    selector: str | None = typer.Argument(
        None,
        metavar="SELECTOR",
        help="Config-key glob or fingerprint prefix (optional with --adaptive).",
    ),
    root: Path = _ROOT,
    *,
    filters: FilterOptions,
    adaptive_flags: AdaptiveFlags,
    launch: LaunchArgs,
    srt_slurm: list[str] | None = SRT_SLURM,
    fmt: str = typer.Option("text", "--format", help="text, or json: the plans as one JSON list."),
) -> None:
    """Print the deployment plans of the selected jobs (nothing runs); exit 1 when one
    of them cannot be planned. `--adaptive`: what an adaptive run would measure first,
    every point's prediction with its interval, and the projected sweep."""
    from inferbench.launch.session import build_request
    from inferbench.launch.sweep import load_deployments, select

    _check_plan_args(ctx, fmt, selector, adaptive_flags.adaptive)
    sweep_filters = filters.sweep_filters()
    project, deployments = load_deployments(root, sweep_filters, selector)
    if adaptive_flags.adaptive:
        chosen = select(deployments, selector) if selector else deployments
        _plan_adaptive(chosen, adaptive_flags)
        return
    assert selector is not None  # checked before the tree was read
    chosen = select(deployments, selector)
    options = launch_options(root, launch, sweep_filters, tuple(srt_slurm or ()))
    request = build_request(options, project, chosen, preview=True)
    if _print_plans(request, as_json=fmt == "json"):
        raise typer.Exit(1)


def demo_cmd(
    runs_dir: Path = typer.Option(
        Path("runs"),
        "--runs-dir",
        parser=output_folder("--runs-dir"),
        help="Where runs are kept.",
    ),
    root: Path = typer.Option(None, "--root", help="Tree to demo (default: examples/)."),
) -> None:
    """The main job: check examples/, run a small sweep on the simulator, store, report."""
    _demo(root, runs_dir)


def _demo(root: Path | None, runs_dir: Path) -> None:
    from inferbench.cli import demo
    from inferbench.config.project import load_project
    from inferbench.launch.session import build_request

    tree = demo.find_examples(root)
    _console.print(f"[bold]1. check[/] {escape(str(tree))}")
    line, code = demo.check_tree(tree)
    _console.print(f"   {line}" + ("" if code == 0 else " (the demo runs anyway)"), markup=False)
    project = load_project(tree)
    filters = demo.demo_filters(project)
    deployments = demo.demo_deployments(project)
    points = sum(len(d.concurrencies) for d in deployments)
    _console.print(
        f"[bold]2. run[/] {len(deployments)} deployments, {points} points on the simulator"
    )
    options = demo.demo_options(tree, runs_dir, filters)
    from inferbench.sim.points import open_job

    summary = run_with_progress(build_request(options, project, deployments, simulator=open_job))
    render_summary(summary)
    exit_if_interrupted(summary, runs_dir)
    _console.print("[bold]3. store and report[/]")
    _console.print(f"results: {summary.run.path}", markup=False)
    if not any(p.ok for _, o in summary.outcomes for p in o.points):
        _console.print("[red]no point finished: nothing to store[/]")
        raise typer.Exit(1)
    stored = demo.store_and_report(summary.run.path, runs_dir)
    _console.print(f"store:   {stored.db_url} ({stored.inserted} new records)", markup=False)
    if stored.dashboard is not None:
        _console.print(f"dashboard: {stored.dashboard.resolve()}", markup=False)
    if not summary.ok:
        raise typer.Exit(1)


def _check_plan_args(ctx: typer.Context, fmt: str, selector: str | None, adaptive: bool) -> None:
    if fmt not in ("text", "json"):
        raise InputError(f"unknown --format {fmt!r}", hint="use text or json")
    if selector is None and not adaptive:
        _missing_argument(ctx, "selector")


def _missing_argument(ctx: typer.Context, name: str) -> None:
    """Click's own usage error for an argument optional only with another option (the
    exceptions module of whichever click the context comes from: typer vendors one)."""
    import importlib

    core = next(c for c in type(ctx).__mro__ if c.__module__.endswith(".core"))
    exceptions = importlib.import_module(core.__module__.rsplit(".", 1)[0] + ".exceptions")
    param = next(p for p in ctx.command.params if p.name == name)
    raise exceptions.MissingParameter(ctx=ctx, param=param)


def _refuse_adaptive_flag(asked: bool, saved: object, resume: str) -> None:
    if asked and saved is None:
        raise InputError(
            f"run {resume} is not an adaptive run",
            location=Location(key="--adaptive"),
            hint=f"drop --adaptive: `inferbench run --resume {resume}`",
        )


def _plan_adaptive(deployments: list[Deployment], flags: AdaptiveFlags) -> None:
    from inferbench.adaptive.planner import project
    from inferbench.adaptive.session import planner_for
    from inferbench.cli.adaptive import render_assessment

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    planner, excluded = planner_for(deployments, flags.options(), lambda m: err.print(m))
    first = planner.assess({})
    render_assessment(
        _console,
        first,
        excluded,
        title="adaptive plan: round 1",
        all_points=flags.all_points,
        wider="a wider terminal (COLUMNS=200) shows them",
    )
    final, rounds = project(planner)
    measured = final.count("measured")
    _console.print(
        f"projection (every measurement on its prediction, spreads as now): {len(rounds)} "
        f"rounds, {measured} of {len(final.points)} points measured, GPU-hours "
        f"{final.gpu_hours_measured:,.2f} of {final.gpu_hours_full:,.2f} "
        f"(saves {final.gpu_hours_saved:,.2f})",
        markup=False,
    )


def _run_adaptive(
    request: RunRequest,
    settings: dict[str, object],
    runs_dir: Path,
    all_points: bool,
    dry_run: bool,
) -> None:
    if dry_run:
        raise InputError(
            "--dry-run does not combine with --adaptive",
            location=Location(key="--dry-run"),
            hint="`inferbench plan --adaptive` shows what an adaptive run would measure",
        )
    from inferbench.adaptive.planner import Assessment
    from inferbench.adaptive.session import AdaptiveOptions, execute_adaptive
    from inferbench.cli.adaptive import render_assessment

    err = Console(stderr=True, highlight=False, soft_wrap=True)

    current = [0]  # the round being measured, for the progress lines

    def on_round(n: int, a: Assessment) -> None:
        current[0] = n
        chosen = a.chosen
        if chosen:
            names = ", ".join(f"{c.label} conc {c.concurrency}" for c in chosen)
            _console.print(f"round {n}: measuring {len(chosen)}: {names}", markup=False)

    outcome = execute_adaptive(
        request, AdaptiveOptions.from_dict(settings),
        lambda req: run_with_progress(req, current[0]), on_round,
        lambda m: err.print(m, markup=False),
    )  # fmt: skip
    render_assessment(
        _console, outcome.assessment, outcome.excluded,
        title=f"adaptive run {outcome.run.run_id}", all_points=all_points,
    )  # fmt: skip
    _console.print(f"run directory: {outcome.run.path}", markup=False)
    if outcome.interrupted:
        command = f"inferbench run --resume {outcome.run.run_id}"
        if runs_dir != Path("runs"):
            command += f" --runs-dir {shlex.quote(str(runs_dir))}"
        _console.print(
            f"[yellow]interrupted[/]: adaptive run {outcome.run.run_id} stopped "
            f"({outcome.points_left} points of its round to do)"
        )
        _console.print(f"resume it with: {command}", markup=False)
        raise typer.Exit(130)


def _print_plans(request: RunRequest, as_json: bool = False) -> int:
    """Print each job's plan (text, or one JSON list on stdout); a job that cannot be
    planned is reported on stderr. Returns how many could not be planned."""
    import json

    from inferbench.core.errors import InferbenchError
    from inferbench.launch.rundir import RunDir

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    preview = RunDir(request.runs_dir / "<run-id>")
    plans: list[object] = []
    failed = 0
    deployments = request.deployments[: request.max_jobs]
    for dep in deployments:
        try:
            plan = request.planner(dep, preview.job(dep.fingerprint))
        except InferbenchError as exc:
            failed += 1
            err.print(
                f"{_label(dep)} {dep.fingerprint[:12]}: cannot plan: {exc.render()}", markup=False
            )
            continue
        for warning in plan.warnings:
            err.print(f"{_label(dep)} {dep.fingerprint[:12]}: warning: {warning}", markup=False)
        if as_json:
            plans.append(plan.model_dump(mode="json"))
        else:
            _console.print(plan.render_text(), markup=False)
    if as_json:
        print(json.dumps(plans, indent=2, sort_keys=True))
    if failed:
        err.print(f"{failed} of {len(deployments)} jobs cannot be planned")
    return failed
