"""`inferbench bench`: measure an OpenAI-compatible server (parse, call the library, render)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from inferbench.bench.api import BenchRun, PointMeasurement, run_bench
from inferbench.bench.config_file import load_bench_config
from inferbench.bench.dialect import assign_extra_pairs
from inferbench.bench.invocation import BenchArgs, BenchInvocation, resolve
from inferbench.bench.naming import repeat_path
from inferbench.bench.points_json import PointDocument, points_document
from inferbench.bench.result import write_detail_jsonl, write_point_result
from inferbench.bench.schedule import LoadPoint
from inferbench.cli.fit import Col, print_table
from inferbench.cli.options import with_options
from inferbench.cli.progress import counted
from inferbench.cli.vocabulary import vocabulary
from inferbench.core.errors import InputError, Location

# At 80 columns: the point, its counts, throughput and latency medians; the in-flight
# counts, the ITL tail and the request rate go first. No number is broken across lines.
_SUMMARY_COLUMNS = (
    Col("point"),
    Col("ok", justify="right"),
    Col("failed", wrap=True),
    Col("req/s", 3, justify="right"),
    Col("out tok/s", justify="right"),
    Col("TTFT p50/p99 ms", justify="right"),
    Col("TPOT p50 ms", justify="right"),
    Col("ITL p99 ms", 2, justify="right"),
    Col("in flight max/mean", 1, justify="right"),
)


def _summary(console: Console, run: BenchRun) -> None:
    rows = []
    for p in run.points:
        sa, ib = p.result.sa, p.result.inferbench
        failed = ", ".join(f"{k} {v}" for k, v in ib.failures.items() if v) or "0"
        rows.append(
            [
                ib.load.label + ("" if ib.complete else " (incomplete)"),
                str(sa.completed),
                failed,
                f"{sa.request_throughput:.2f}",
                f"{sa.output_throughput:.1f}",
                f"{sa.median_ttft_ms:.1f}/{sa.p99_ttft_ms:.1f}",
                f"{sa.median_tpot_ms:.2f}",
                f"{sa.p99_itl_ms:.2f}",
                f"{ib.in_flight.max}/{ib.in_flight.time_weighted_mean:.1f}",
            ]
        )
    print_table(console, _SUMMARY_COLUMNS, rows, title="inferbench bench", wider="--output-dir")
    for p in run.points:
        for example in p.result.inferbench.failure_examples:
            console.print(f"  [yellow]{p.result.inferbench.load.label}[/] {escape(str(example))}")


# Options that take several values after one flag in sa-bench / vLLM (argparse nargs),
# with the separator of each pair.
_MULTI = {"goodput": ":", "metadata": "="}


def register(app: typer.Typer) -> None:
    app.command(
        "bench",
        context_settings={"allow_extra_args": True, "allow_interspersed_args": True},
    )(bench)


def _spellings(ctx: typer.Context) -> dict[str, str]:
    """Every option name of the command, without dashes, -> its parameter."""
    out: dict[str, str] = {}
    for param in ctx.command.params:
        # typer may bring its own copy of click: tell options by their kind, not their class
        if param.param_type_name != "option" or param.name in (None, "config"):
            continue
        for opt in (*param.opts, *param.secondary_opts):
            out[opt.lstrip("-")] = param.name
        out[param.name] = param.name
    # a config file written before a rename keeps working (result-file: is output:)
    for old in vocabulary().deprecated_in("bench").values():
        new = out.get(old.becomes[0].lstrip("-"))
        if new is not None and len(old.becomes) == 1:
            out.setdefault(old.spelling.lstrip("-"), new)
    return out


def _load_config(
    ctx: typer.Context, _param: typer.CallbackParam, value: Path | None
) -> Path | None:
    # Eager, so the file's values become the defaults before any other option is read.
    if value is not None:
        ctx.default_map = {
            **(ctx.default_map or {}),
            **load_bench_config(value, _spellings(ctx), _MULTI),
        }
    return value


@with_options
def bench(
    ctx: typer.Context,
    config: Path | None = typer.Option(
        None,
        "--config",
        callback=_load_config,
        is_eager=True,
        help="YAML file of options (flags on the command line win)",
    ),
    *,
    args: BenchArgs,
    disable_tqdm: bool = typer.Option(
        False, "--disable-tqdm", help="no progress bar (a log still gets timestamped lines)"
    ),
    fmt: str = typer.Option(
        "table",
        "--format",
        help="table (on stderr), or json: one document on stdout with each point's result"
        " (docs/cli.md)",
    ),
) -> None:
    """Stream requests at an OpenAI-compatible server and write one result file per point.

    Takes inferbench's flags and, unchanged, the command lines of InferenceX's sa-bench and
    `vllm bench serve` (docs/bench.md lists how each maps, and what is refused).
    """
    goodput, metadata = assign_extra_pairs(list(ctx.args), list(args.goodput), list(args.metadata))
    args = args.model_copy(update={"goodput": goodput, "metadata": metadata})
    as_json = _as_json(fmt, args.result_file)
    inv = resolve(args)
    console = Console(stderr=True)
    writer = _Writer(inv, console, as_json)
    with counted(console, disable=disable_tqdm) as update:

        def on_progress(point: LoadPoint, done: int, total: int) -> None:
            update(point.label, done, total)

        run = run_bench(
            inv.endpoint,
            inv.workload,
            inv.schedule,
            inv.options,
            on_progress=on_progress,
            on_point=writer.save,
        )
    _summary(console, run)
    if as_json:  # before the exit code: a failed point's figures are the evidence
        sys.stdout.buffer.write(points_document("bench", writer.documents))
        sys.stdout.flush()
    _exit(console, run)


def _exit(console: Console, run: BenchRun) -> None:
    """Exit 130 for Ctrl-C, 1 for a failed point (each named), else return."""
    if run.interrupted:
        console.print(
            "[red]interrupted[/]: finished requests were kept, the point is marked incomplete"
        )
        raise typer.Exit(130)
    if run.failures:
        for line in run.failures:
            console.print(f"[red]failed[/] {escape(str(line))}")
        raise typer.Exit(1)


def _as_json(fmt: str, result_file: Path | None) -> bool:
    if fmt not in ("table", "json"):
        raise InputError(f"unknown --format {fmt!r}", hint="use table or json")
    if fmt == "json" and result_file is not None and str(result_file) in ("-", "/dev/stdout"):
        raise InputError(
            "--format json and --output - both write to stdout",
            location=Location(key="--output"),
            hint="name a file for --output, or leave it out (the JSON holds each result)",
        )
    return fmt == "json"


@dataclass
class _Writer:
    """Writes each measured point's files as it finishes (a repeat gets `_r2`, ...)."""

    inv: BenchInvocation
    console: Console
    as_json: bool
    done: dict[str, int] = field(default_factory=dict)  # repeats measured per point
    documents: list[PointDocument] = field(default_factory=list)

    def save(self, outcome: PointMeasurement) -> None:
        point = outcome.result.inferbench.load
        repeat = self.done[point.label] = self.done.get(point.label, 0) + 1
        path = self.inv.result_path(point)
        if path is not None:
            path = repeat_path(path, repeat)
            write_point_result(path, outcome.result)
            self.console.print(f"wrote {path}", markup=False)
        detail_path = self.inv.detail_path(point)
        if detail_path is not None:
            write_detail_jsonl(repeat_path(detail_path, repeat), outcome.run.records)
        if self.as_json:
            payload = outcome.result.to_json_bytes()
            self.documents.append(PointDocument(point.label, payload, file=path, repeat=repeat))
