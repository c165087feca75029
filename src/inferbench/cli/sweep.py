"""`inferbench sweep`: expand a benchmark tree into the jobs CI runs (table, JSON or GitHub)."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Literal

import typer
from rich.console import Console

from inferbench.cli.filters import FilterOptions, eval_mode
from inferbench.cli.fit import Col, print_table
from inferbench.cli.options import with_options
from inferbench.cli.outputs import output_file
from inferbench.core.errors import ConfigError, InputError
from inferbench.core.fsio import write_output
from inferbench.core.job import Job

Format = Literal["table", "json", "github"]
_FORMATS = ("table", "json", "github")


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
    else:
        write_output(output, (text if text.endswith("\n") else text + "\n").encode(), "--output")


@with_options
def sweep(
    tree: Path = typer.Argument(None, help="Benchmark tree (default: --root or .)."),
    root: Path = typer.Option(None, "--root", help="Benchmark tree root."),
    *,
    filters: FilterOptions,
    no_evals: bool = typer.Option(False, "--no-evals", help="Mark no evals."),
    evals_only: bool = typer.Option(False, "--evals-only", help="Only the eval jobs."),
    all_evals: bool = typer.Option(False, "--all-evals", help="Every eligible job is an eval."),
    changed_since: str = typer.Option(
        None,
        "--changed-since",
        help="Only the jobs the changelog lines added since REV ask for (as InferenceX's CI).",
    ),
    fmt: str = typer.Option("table", "--format", help="table, json or github."),
    output: Path = typer.Option(
        None, "--output", "-o", parser=output_file("--output"), help="Write to FILE (- is stdout)."
    ),
) -> None:
    """Expand the benchmark tree into sweep jobs."""
    if fmt not in _FORMATS:
        raise InputError(
            f"--format {fmt!r} is not one of {', '.join(_FORMATS)}",
            hint=f"use one of {', '.join(_FORMATS)}",
        )
    sweep_filters = filters.sweep_filters(evals=eval_mode(no_evals, evals_only, all_evals))
    # Imported here so `inferbench --help` stays fast.
    from inferbench.matrix.api import sweep_tree
    from inferbench.matrix.changed import ChangelogRun

    run = ChangelogRun(evals_only=evals_only, all_evals=all_evals, no_evals=no_evals)
    errors: list[ConfigError] = []
    warnings: list[ConfigError] = []
    jobs = sweep_tree(
        tree or root or Path("."),
        sweep_filters,
        changed_since=changed_since,
        changelog_run=run,
        errors=errors,
        warnings=warnings,
    )
    err = Console(stderr=True, highlight=False)
    _write_jobs(jobs, fmt, output, err, changelog=changed_since is not None)
    _summarize(jobs, warnings, errors, err)
    if errors:
        # one bad entry does not hide the others' jobs, but it is still bad input (exit 2),
        # as InferenceX's generator refuses such a tree
        raise typer.Exit(2)


def _write_jobs(
    jobs: list[Job], fmt: str, output: Path | None, err: Console, *, changelog: bool
) -> None:
    from inferbench.matrix.output import github_to_json, jobs_to_json

    if fmt == "json":
        _emit(jobs_to_json(jobs, changelog=changelog), output)
    elif fmt == "github":
        _emit(github_to_json(jobs, changelog=changelog), output)
    elif output is not None:
        console = Console(record=True, width=200, file=io.StringIO())
        _print_jobs(console, jobs, err)
        _emit(console.export_text(), output)
    else:
        _print_jobs(Console(highlight=False), jobs, err)


def _summarize(
    jobs: list[Job], warnings: list[ConfigError], errors: list[ConfigError], err: Console
) -> None:
    multinode = sum(job.is_multinode for job in jobs)
    err.print(f"{len(jobs)} jobs ({len(jobs) - multinode} single-node, {multinode} multinode)")
    for warning in warnings:
        err.print(f"warning: {warning.render()} (swept as InferenceX does; run refuses it)",
                  markup=False)  # fmt: skip
    for error in errors:
        err.print(f"error: {error.render()} (entry not swept)", markup=False)


# Left out first when narrow: the fingerprint, spec decoding, topology, runner, eval mark;
# a job is still named by its config key, sequence lengths and concurrencies.
_COLUMNS = {
    "config-key": Col("config-key"),
    "runner": Col("runner", priority=3),
    "seq": Col("seq"),
    "topology": Col("topology", priority=4),
    "spec": Col("spec", priority=5),
    "conc": Col("conc", wrap=True),
    "eval": Col("eval", priority=2),
    "fp": Col("fp", priority=6),
}


def _print_jobs(console: Console, jobs: list[Job], err: Console) -> None:
    from inferbench.matrix.output import JOB_COLUMNS, job_row

    cols = [_COLUMNS[name] for name in JOB_COLUMNS]
    rows = [job_row(job) for job in jobs]
    print_table(
        console, cols, rows, title=f"{len(jobs)} jobs", note=err,
        wider="--format json has every field",
    )  # fmt: skip


def register(app: typer.Typer) -> None:
    """Add `sweep` to the root app."""
    app.command("sweep")(sweep)
