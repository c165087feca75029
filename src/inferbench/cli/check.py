"""`inferbench check`: run the static rules over a benchmark tree and render the findings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from inferbench.checks import result_cache
from inferbench.checks.finding import Finding
from inferbench.checks.render import RENDERERS
from inferbench.checks.report import CheckOptions, CheckReport, FailOn
from inferbench.checks.statistics import STATISTICS_RENDERERS
from inferbench.cli.options import with_options
from inferbench.cli.srt_option import SRT_SLURM
from inferbench.core.errors import InputError


def _split(values: list[str] | None) -> tuple[str, ...]:
    """`--select A,B --select C` -> (A, B, C)."""
    return tuple(part.strip() for v in values or [] for part in v.split(",") if part.strip())


def _refuse_clashes(base: str | None, baseline: Path | None, write: Path | None) -> None:
    if base is not None and baseline is not None:
        raise InputError(
            "--base and --baseline both name what to judge the change against",
            hint="pass one: --base REV with git history, --baseline FILE without",
        )
    if write is not None and (base is not None or baseline is not None):
        raise InputError(
            "--write-baseline records the tree as it is, not a change against a base",
            hint="drop --base/--baseline when recording a baseline",
        )


Renderer = Callable[[Sequence[Finding], Path], str]


def _renderer(output_format: str, statistics: bool) -> Renderer:
    renderer = RENDERERS.get(output_format)
    if renderer is None:
        raise InputError(
            f"unknown --format {output_format!r}", hint="use one of: " + ", ".join(RENDERERS)
        )
    if statistics:
        renderer = STATISTICS_RENDERERS.get(output_format)
        if renderer is None:
            raise InputError(
                f"--statistics prints {' or '.join(STATISTICS_RENDERERS)}, not {output_format}",
                hint="drop --statistics for GitHub annotations (they end with the summary)",
            )
    return renderer


def _check(where: Path, options: CheckOptions) -> CheckReport:
    # an unchanged tree's result comes from the cache without importing the checks at all
    lookup = result_cache.lookup(where, options)
    if lookup.report is not None:
        return lookup.report
    from inferbench.checks.engine import check_tree

    return check_tree(where, options, lookup=lookup)


def _write_baseline(path: Path, report: CheckReport, options: CheckOptions) -> None:
    from inferbench.checks.baseline import Baseline, write_baseline

    recorded = Baseline.of(report, options)
    write_baseline(path, recorded)
    count = len(recorded.findings)
    typer.echo(f"Recorded {count} finding{'' if count == 1 else 's'} in {path}.", err=True)


def _list_rules() -> None:
    from rich.console import Console

    from inferbench.checks.registry import all_rules
    from inferbench.cli.fit import Col, print_table

    cols = (
        Col("id"),
        Col("slug"),
        Col("severity"),
        Col("subject", priority=1),
        Col("checks", wrap=True),
    )
    rows = [(r.id, r.slug, r.severity.value, r.subject.__name__, r.title) for r in all_rules()]
    print_table(Console(highlight=False), cols, rows, box=None)


@dataclass(frozen=True)
class Against:
    """What `check` judges the change against, and what fails it."""

    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            help="Git revision to judge the change against (and read the changelog at): "
            "findings are new, fixed or pre-existing, and only new ones fail the run (see "
            "--fail-on).",
        ),
    ] = None
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            help="Judge the change against findings recorded with --write-baseline (where no "
            "git base exists), as --base does.",
        ),
    ] = None
    write_baseline: Annotated[
        Path | None,
        typer.Option(
            "--write-baseline",
            help="Record this tree's findings in FILE for a later --baseline; exit 0 once written.",
        ),
    ] = None
    show_all: Annotated[
        bool,
        typer.Option("--all", help="With --base/--baseline: list pre-existing findings too."),
    ] = False
    fail_on: Annotated[
        FailOn,
        typer.Option(
            "--fail-on",
            help="With --base/--baseline: fail on new findings only, or on any (as without a "
            "base).",
        ),
    ] = FailOn.NEW

    @property
    def a_change(self) -> bool:
        return self.base is not None or self.baseline is not None


@with_options
def check(
    tree: Path | None = typer.Argument(None, help="Benchmark tree (default: --root or .)."),
    root: Path | None = typer.Option(None, "--root", help="Benchmark tree root."),
    *,
    against: Against,
    output_format: str = typer.Option("text", "--format", help="text, json or github."),
    strict: bool = typer.Option(False, "--strict", help="Warnings fail the run too."),
    select: list[str] | None = typer.Option(None, "--select", help="Only these rule ids/slugs."),
    ignore: list[str] | None = typer.Option(None, "--ignore", help="Skip these rule ids/slugs."),
    srt_slurm: list[str] | None = SRT_SLURM,
    srtctl: bool = typer.Option(
        False,
        "--srtctl",
        help="Judge recipes with the installed srtctl's own loader (slower; srtctl must be "
        "importable) instead of inferbench's copy of srtctl's schema.",
    ),
    list_rules: bool = typer.Option(False, "--list-rules", help="Print the rule table and exit."),
    statistics: bool = typer.Option(
        False,
        "--statistics",
        help="Instead of each finding, how many each rule made (most first) and the summary; "
        "text or JSON. The exit code is the same.",
    ),
) -> None:
    """Check a benchmark tree: exit 0 clean, 1 on error findings (or warnings with --strict),
    2 on unreadable input. With --base or --baseline, only the change's new findings count."""
    if list_rules:
        _list_rules()
        return
    if tree is not None and root is not None and tree.resolve() != root.resolve():
        raise InputError(f"two trees given ({tree} and --root {root})", hint="pass only one")
    _refuse_clashes(against.base, against.baseline, against.write_baseline)
    renderer = _renderer(output_format, statistics)
    options = CheckOptions(
        base=against.base,
        srt_slurm=tuple(Path(s) for s in srt_slurm) if srt_slurm else None,
        select=_split(select),
        ignore=_split(ignore),
        srtctl=srtctl,
    )
    where = tree or root or Path(".")
    if against.a_change:
        code = _check_change(where, options, against, renderer, output_format, strict, statistics)
    else:
        code = _check_tree(where, options, against.write_baseline, renderer, strict)
    if code:
        # SystemExit, not typer.Exit: the root app runs with standalone_mode=False, where
        # click returns typer.Exit's code instead of exiting with it.
        raise SystemExit(code)


def _check_tree(
    where: Path, options: CheckOptions, write: Path | None, renderer: Renderer, strict: bool
) -> int:
    report = _check(where, options)
    # paths relative to the tree's root: what a reader of the tree (and GitHub, whose
    # annotations name files from the repository root) expects
    typer.echo(renderer(report.findings, report.root), nl=False)
    if write is not None:
        _write_baseline(write, report, options)
        return 0
    return report.exit_code(strict=strict)


def _check_change(
    where: Path,
    options: CheckOptions,
    against: Against,
    renderer: Renderer,
    output_format: str,
    strict: bool,
    statistics: bool,
) -> int:
    from inferbench.checks.delta import check_change
    from inferbench.checks.render_delta import DELTA_RENDERERS

    report, delta = check_change(where, options, baseline=against.baseline)
    if statistics:
        typer.echo(renderer(report.findings, report.root), nl=False)
    else:
        render = DELTA_RENDERERS[output_format]
        typer.echo(render(delta, report.root, against.show_all), nl=False)
    return delta.exit_code(report, strict=strict, fail_on=against.fail_on)


def register(app: typer.Typer) -> None:
    """Add `inferbench check` to the root app."""
    app.command("check")(check)
