"""`inferbench results` command group: ingest, list, show, export, compare."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from inferbench.cli.fit import KEEP, Col, print_table
from inferbench.cli.options import with_options
from inferbench.cli.outputs import output_file
from inferbench.core.errors import InputError, Location
from inferbench.results.dburl import store_url
from inferbench.results.store import (
    DEFAULT_DB_URL,
    MAX_ROW_ID,
    RecordFilter,
    Store,
    open_store,
)

if TYPE_CHECKING:
    from inferbench.results.compare import Comparison
    from inferbench.results.evalcompare import EvalComparison
    from inferbench.results.noise import NoiseModel

results_app = typer.Typer(
    help="Store, list, export and compare benchmark results.", no_args_is_help=True
)

DB_OPTION = typer.Option(
    DEFAULT_DB_URL,
    "--db",
    envvar="INFERBENCH_DB",
    callback=store_url,
    help="Database URL: sqlite:///file.sqlite (default under runs/) or postgresql+psycopg://..."
    ", or a SQLite file's path",
)


def _identity(value: str | None) -> dict[str, Any] | None:
    if not value:
        return None
    path = Path(value)
    if path.suffix in (".yaml", ".yml"):
        from ruamel.yaml import YAML, YAMLError

        from inferbench.core.fsread import MAX_CONFIG_BYTES, read_text_file

        text = read_text_file(path, MAX_CONFIG_BYTES, what="identity file", option="--identity")
        try:
            loaded = YAML(typ="safe").load(text)
        except YAMLError as exc:
            raise InputError(f"invalid YAML: {exc}", location=Location(file=path)) from None
        if not isinstance(loaded, dict):
            raise InputError("identity YAML must be a mapping", location=Location(file=path))
        return {str(k): v for k, v in loaded.items()}
    from inferbench.results.identity import parse_identity_arg

    return parse_identity_arg(value)


def _runs_line(run_ids: tuple[str, ...], most: int = 5) -> str:
    if not run_ids:
        return ""
    more = f" (+{len(run_ids) - most} more)" if len(run_ids) > most else ""
    return f"; runs: {', '.join(run_ids[:most])}{more}"


def ingest(
    paths: list[Path] = typer.Argument(..., help="Run directories, result files or folders."),
    db: str = DB_OPTION,
    identity: str | None = typer.Option(
        None, "--identity", help="key=value,... or a YAML file: identity for plain sa-bench files."
    ),
    strict: bool = typer.Option(False, "--strict", help="Write nothing if any point is invalid."),
) -> None:
    """Ingest benchmark points (idempotent: the same point twice is stored once)."""
    from inferbench.results.ingest import ingest_paths

    console = Console(stderr=True)
    # Refreshed from the callback, not by Rich's thread: with no other thread alive the
    # ingest may fork reading processes.
    with Progress(
        TextColumn("ingesting"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        auto_refresh=False,
    ) as progress:
        task = progress.add_task("ingest", total=None)

        def on_progress(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total, refresh=True)

        report = ingest_paths(
            paths, db, identity=_identity(identity), strict=strict, on_progress=on_progress
        )
    for skipped in report.skipped:
        console.print(f"[red]skipped[/] {escape(skipped.reason)}", markup=True, highlight=False)
    written = not (strict and report.skipped)
    typer.echo(
        f"{report.found} points found: {report.inserted} new, {report.updated} updated, "
        f"{report.unchanged} unchanged, {len(report.skipped)} skipped"
        + (f", {report.evals} accuracy evals" if report.evals else "")
        + (
            f", {report.predicted} predicted points of adaptive runs (kept apart: "
            "`results predicted`)"
            if report.predicted
            else ""
        )
        + ("" if written else " (strict: nothing written)")
        + _runs_line(report.run_ids)
    )
    if report.skipped:
        raise typer.Exit(2)


def _filter(
    run: str | None,
    tag: str | None,
    model: str | None,
    precision: str | None,
    framework: str | None,
    hardware: str | None,
    isl: int | None,
    osl: int | None,
) -> RecordFilter:
    return RecordFilter(
        run_id=run,
        tag=tag,
        model_prefix=model,
        precision=precision,
        framework=framework,
        hardware=hardware,
        isl=isl,
        osl=osl,
    )


# Columns of `results list`: (row key, header, priority); at 80 columns the later-ranked go
# first (fit.py), and no model, hardware or run name is broken across lines.
_POINT_COLUMNS = (
    ("id", "id", KEEP),
    ("run_id", "run", 5),
    ("model_prefix", "model", KEEP),
    ("hardware", "hw", KEEP),
    ("planned_hardware", "planned", KEEP),  # the entry's hardware, measured on other
    ("framework", "fw", 3),
    ("precision", "prec", 4),
    ("isl", "isl", 2),
    ("osl", "osl", 2),
    ("topology", "topology", 6),
    ("concurrency", "conc", KEEP),
    ("total_tput_per_gpu", "tok/s/gpu", KEEP),
    ("interactivity_median", "tok/s/user", KEEP),
    ("failure_rate", "failed", 1),
    ("valid", "valid", 1),
    ("official", "official", 7),
)
_EVAL_COLUMNS = (
    ("run_id", "run", 5),
    ("model_prefix", "model", KEEP),
    ("hardware", "hw", KEEP),
    ("framework", "fw", 3),
    ("precision", "prec", 4),
    ("concurrency", "conc", KEEP),
    ("task", "task", KEEP),
    ("score", "score", KEEP),
    ("stderr", "±", 2),
    ("samples", "n", 6),
    ("status", "status", KEEP),
)


def list_cmd(
    db: str = DB_OPTION,
    fmt: str = typer.Option(
        "table", "--format", help="table, or json: {points: [...], evals: [...]}"
    ),
    run: str | None = typer.Option(None, "--run", help="only this run id"),
    tag: str | None = typer.Option(None, "--tag", help="only runs with this tag"),
    model: str | None = typer.Option(
        None, "--model-prefix", help="only this model prefix (InferenceX's, e.g. dsr1)"
    ),
    precision: str | None = typer.Option(None, "--precision", help="only this precision"),
    framework: str | None = typer.Option(None, "--framework", help="only this framework"),
    hardware: str | None = typer.Option(None, "--hardware", help="only this hardware"),
    isl: int | None = typer.Option(None, "--isl", help="only this input length"),
    osl: int | None = typer.Option(None, "--osl", help="only this output length"),
    limit: int = typer.Option(200, "--limit", min=0, help="rows in table format (0 = all)"),
) -> None:
    """List stored points and the accuracy evals beside them."""
    from inferbench.core.fsio import write_output_chunks
    from inferbench.results.evalcompare import eval_row
    from inferbench.results.export import list_json_chunks

    if fmt not in ("table", "json"):
        raise InputError(f"unknown --format {fmt!r}", hint="use table or json")
    flt = _filter(run, tag, model, precision, framework, hardware, isl, osl)
    store = open_store(db, create=False)
    evals = [eval_row(e) for e in store.evals(flt)]
    if fmt == "json":  # every point, streamed a page at a time
        write_output_chunks("-", list_json_chunks(store.iter_records(flt), evals))
        return
    _print_points(store, flt, limit)
    if evals:
        for e in evals:
            e["status"] = "simulated" if e["simulated"] else e["status"]
        _print_rows(f"{len(evals)} accuracy evals", _EVAL_COLUMNS, set(), evals)


def _print_points(store: Store, flt: RecordFilter, limit: int) -> None:
    """The first `limit` matching points (0: all): only those are read and parsed; the
    count and the runs come from the database."""
    from inferbench.results.export import flat_row

    total = store.count_matching(flt)
    runs = store.run_ids_matching(flt, most=2)
    rows = [flat_row(s) for s in store.iter_records(flt, limit=limit or None)]
    skip = {"run_id"} if len(runs) == 1 else set()  # one run goes in the title instead
    # shown only when some row says something
    for key in ("failure_rate", "official", "planned_hardware"):
        if not any(r[key] for r in rows):
            skip.add(key)
    if all(r["valid"] for r in rows):
        skip.add("valid")
    title = f"{total} points" + (f" of run {runs[0]}" if len(runs) == 1 else "")
    shown = "" if len(rows) == total else f" of the {len(rows)} shown"
    if shown:
        title += f" (the first {len(rows)}; --limit 0 lists all)"
    _print_rows(title, _POINT_COLUMNS, skip, rows)
    invalid = [str(r["id"]) for r in rows if not r["valid"]]
    if invalid:
        typer.echo(
            f"{len(invalid)} invalid{shown} (never drawn or compared; `results show ID` or"
            f" --format json says why): {', '.join(invalid[:10])}"
            f"{' ...' if len(invalid) > 10 else ''}"
        )


def _print_rows(
    title: str,
    columns: tuple[tuple[str, str, int], ...],
    skip: set[str],
    rows: list[dict[str, Any]],
) -> None:
    """A table of `rows` fitted to the terminal: numbers right-aligned, nothing broken."""
    shown = [(key, header, rank) for key, header, rank in columns if key not in skip]
    numeric = {k for k, _, _ in shown if any(isinstance(r[k], int | float) for r in rows)}
    cols = [
        Col(header, priority=rank, justify="right" if key in numeric else "left")
        for key, header, rank in shown
    ]
    cells = [[_fmt(row[key]) for key, _, _ in shown] for row in rows]
    print_table(Console(), cols, cells, title=title, wider="--format json has every field")


def _fmt(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return "-" if value is None else str(value)


def show(
    record_id: int = typer.Argument(
        ..., min=1, max=MAX_ROW_ID, help="Record id from `results list`."
    ),
    db: str = DB_OPTION,
) -> None:
    """Show one stored point in full (JSON)."""
    found = open_store(db, create=False).get(record_id)
    if found is None:
        raise InputError(
            f"no stored result with id {record_id}", hint="see `inferbench results list`"
        )
    typer.echo(found.record.model_dump_json(indent=2))


def export(
    fmt: str = typer.Option(..., "--format", help="csv, json or parquet"),
    output: Path = typer.Option(
        ..., "--output", "-o", parser=output_file("--output"), help="File to write (- is stdout)."
    ),
    db: str = DB_OPTION,
    run: str | None = typer.Option(None, "--run", help="only this run id"),
    tag: str | None = typer.Option(None, "--tag", help="only runs with this tag"),
    evals: bool = typer.Option(
        False, "--evals", help="Export the accuracy evals instead of the points."
    ),
) -> None:
    """Export stored points (or, with --evals, the accuracy evals)."""
    from inferbench.results.export import export_evals, export_records

    flt = RecordFilter(run_id=run, tag=tag)
    store = open_store(db, create=False)
    if evals:
        found_evals = store.evals(flt)
        _refuse_empty_export(len(found_evals), "evals", run, tag)
        count = export_evals(found_evals, fmt, output)
        typer.echo(f"wrote {count} evals to {output}")
        return
    found = store.iter_records(flt)  # streamed: read a page at a time as it is written
    first = next(found, None)
    _refuse_empty_export(0 if first is None else 1, "points", run, tag)
    count = export_records(found if first is None else chain([first], found), fmt, output)
    typer.echo(f"wrote {count} points to {output}")


def _refuse_empty_export(count: int, what: str, run: str | None, tag: str | None) -> None:
    """A filter that selects nothing is a mistyped run id or tag (or the wrong --db), not a
    result: an empty file with exit 0 would pass for one. Nothing is written. (An empty
    store, unfiltered, exports as empty: that is what it holds.)"""
    given = [f"{flag} {value}" for flag, value in (("--run", run), ("--tag", tag)) if value]
    if count or not given:
        return
    raise InputError(
        f"no stored {what} match {' '.join(given)}",
        location=Location(key=given[0].split()[0]),
        hint="see `inferbench results list` for the runs and tags stored, or check --db",
    )


@dataclass(frozen=True)
class NoiseFlags:
    """How sure `results compare` must be before it calls a change."""

    confidence: Annotated[
        float, typer.Option("--confidence", help="of each change's bootstrap interval (two-sided)")
    ] = 0.95
    min_samples: Annotated[
        int,
        typer.Option(
            "--min-samples", min=2, help="requests a side needs for a metric to be judged"
        ),
    ] = 30
    resamples: Annotated[
        int,
        typer.Option("--resamples", min=100, max=100_000, help="bootstrap draws (seeded)"),
    ] = 1000

    def model(self) -> NoiseModel:
        from inferbench.results.noise import NoiseModel

        return NoiseModel(
            confidence=self.confidence, min_samples=self.min_samples, resamples=self.resamples
        )


@dataclass(frozen=True)
class AccuracyRule:
    """When an accuracy drop is a regression."""

    accuracy_z: Annotated[
        float,
        typer.Option("--accuracy-z", help="an accuracy drop beyond z x stderr is a regression"),
    ] = 1.96
    accuracy_drop: Annotated[
        float | None,
        typer.Option("--accuracy-drop", help="instead: an absolute score drop (e.g. 0.02)"),
    ] = None


@with_options
def compare(
    base: str = typer.Argument(
        ...,
        help="run id, run:<id>, latest (the newest run; latest~1 the one before), tag:<name> "
        "or key=value,... filters",
    ),
    head: str = typer.Argument(..., help="same forms as BASE"),
    db: str = DB_OPTION,
    threshold: float = typer.Option(
        0.05,
        "--threshold",
        help="tolerance: a change is a regression only when its whole confidence interval "
        "lies beyond it",
    ),
    *,
    noise_flags: NoiseFlags,
    fmt: str = typer.Option(
        "table", "--format", help="table, markdown, or json (every change with its interval)"
    ),
    at: float | None = typer.Option(
        None,
        "--at",
        help="interactivity (tok/s/user) to compare each series' frontier at "
        "(default: a round value in the middle of the range both runs cover)",
    ),
    fail_on_regression: bool = typer.Option(
        False, "--fail-on-regression", help="exit 1 on any regression (throughput or accuracy)"
    ),
    accuracy: AccuracyRule,
    verbose: bool = typer.Option(
        False, "--verbose", help="table: every metric's base, head and interval"
    ),
) -> None:
    """Per-point deltas between two sets of results (regressions first), and accuracy."""
    from inferbench.results.compare import check_noise, check_threshold, compare_selectors

    if fmt not in ("table", "markdown", "json"):
        raise InputError(f"unknown --format {fmt!r}", hint="use table, markdown or json")
    check_threshold(threshold)  # a bad value is named before the store is opened
    noise = check_noise(noise_flags.model())
    store = open_store(db, create=False)
    cmp = compare_selectors(store, base, head, threshold=threshold, at=at, noise=noise)
    acc, rule = _eval_comparison(store, base, head, accuracy.accuracy_z, accuracy.accuracy_drop)
    _print_comparison(cmp, acc, rule, base, head, fmt, verbose)
    acc_regressions = acc.count("regression") if acc is not None else 0
    if fail_on_regression and (cmp.count("regression") or acc_regressions):
        raise typer.Exit(1)


def _print_comparison(
    cmp: Comparison,
    acc: EvalComparison | None,
    rule: str,
    base: str,
    head: str,
    fmt: str,
    verbose: bool,
) -> None:
    if fmt == "json":
        from inferbench.results.compare_json import comparison_document

        sys.stdout.buffer.write(comparison_document(cmp, acc, eval_rule=rule))
        return
    if fmt == "markdown":
        from inferbench.report.markdown import comparison_markdown

        typer.echo(comparison_markdown(cmp), nl=False)
    else:
        from inferbench.cli.compare_table import print_comparison

        print_comparison(Console(highlight=False), cmp, verbose=verbose)
    if acc is not None:
        _print_evals(acc, rule, base, head, fmt)


def _eval_comparison(
    store: Store, base: str, head: str, z: float, min_drop: float | None
) -> tuple[EvalComparison | None, str]:
    """The accuracy comparison (None unless both sides have evals) and its rule."""
    from inferbench.results.compare import parse_selector, resolve_selector
    from inferbench.results.evalcompare import compare_evals

    rule = f"drop > {min_drop:g}" if min_drop is not None else f"outside {z:g} x stderr"
    b, h = (store.evals(parse_selector(resolve_selector(store, s))) for s in (base, head))
    if not b or not h:
        return None, rule
    return compare_evals(b, h, z=z, min_drop=min_drop), rule


def _print_evals(cmp: EvalComparison, rule: str, base: str, head: str, fmt: str) -> None:
    """The accuracy comparison as a markdown section or a table."""
    if fmt == "markdown":
        lines = [f"\n### Accuracy ({rule})\n", "| verdict | eval | base | head | change |"]
        lines.append("|---|---|---|---|---|")
        for d in cmp.deltas:
            base_s = f"{d.base:.4f}" if d.base is not None else "-"
            head_s = f"{d.head:.4f}" if d.head is not None else "-"
            change = f"{d.change:+.4f}" if d.change is not None else d.note
            lines.append(f"| {d.verdict} | {d.label} | {base_s} | {head_s} | {change} |")
        typer.echo("\n".join(lines))
    else:
        cols = [Col("verdict"), Col("eval", wrap=True), Col("base", justify="right")]
        cols += [Col("head", justify="right"), Col("change", wrap=True)]
        rows = [
            [
                d.verdict,
                d.label,
                _fmt(d.base),
                _fmt(d.head),
                f"{d.change:+.4f}" if d.change is not None else d.note,
            ]
            for d in cmp.deltas
        ]
        title = f"accuracy: {head} vs {base} ({rule})"
        print_table(Console(highlight=False), cols, rows, title=title)
        typer.echo(f"{cmp.count('regression')} accuracy regressions")


_PREDICTED_COLUMNS = (
    ("run_id", "run", 5),
    ("label", "job", KEEP),
    ("concurrency", "conc", KEEP),
    ("hardware", "hw", 3),
    ("tok_s_gpu", "tok/s/gpu (predicted)", KEEP),
    ("interactivity", "tok/s/user (predicted)", KEEP),
    ("status", "status", KEEP),
    ("reason", "why", 1),
)


def predicted_cmd(
    db: str = DB_OPTION,
    fmt: str = typer.Option("table", "--format", help="table, or json: a list of points"),
    run: str | None = typer.Option(None, "--run", help="only this run id"),
) -> None:
    """List the points adaptive runs left to the simulator: predictions with their
    intervals and why each was not measured (never mixed with measured points)."""
    if fmt not in ("table", "json"):
        raise InputError(f"unknown --format {fmt!r}", hint="use table or json")
    points = open_store(db, create=False).predicted(run)
    if fmt == "json":
        data = [p.model_dump(mode="json") for p in points]
        typer.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
        return
    rows: list[dict[str, object]] = []
    for p in points:
        row: dict[str, object] = p.model_dump()
        row["tok_s_gpu"] = f"{p.tok_s_gpu:,.1f} [{p.tok_s_gpu_low:,.0f}-{p.tok_s_gpu_high:,.0f}]"
        row["interactivity"] = (
            f"{p.interactivity:,.1f} [{p.interactivity_low:,.0f}-{p.interactivity_high:,.0f}]"
        )
        rows.append(row)
    _print_rows(f"{len(rows)} predicted points", _PREDICTED_COLUMNS, set(), rows)


def register(app: typer.Typer) -> None:
    """Add `inferbench results ...` to the root app."""
    results_app.command("ingest")(ingest)
    results_app.command("list")(list_cmd)
    results_app.command("show")(show)
    results_app.command("export")(export)
    results_app.command("compare")(compare)
    results_app.command("predicted")(predicted_cmd)
    app.add_typer(results_app, name="results")
