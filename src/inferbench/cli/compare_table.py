"""`results compare` in a terminal: one line per point, or every metric with `--verbose`.

The compact table is grouped by verdict (a heading line per verdict, regressions first)
and gives each point one line: its throughput change, its most harmful other change (so
a row under "regressions" always says what regressed), then interactivity and TTFT where
the terminal has room. Both tables are fitted to the terminal (`cli.fit`): no number or
name is broken across lines.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from inferbench.cli.fit import Col, fit_table, print_table
from inferbench.core.printable import printable
from inferbench.report.markdown import at_sentence, change_text
from inferbench.results.compare import VERDICTS, Comparison, Delta, PointDelta, point_label
from inferbench.results.validity import validity_of

_HEADLINE = "total_tput_per_gpu"
# columns shown where the terminal has room, by priority (higher: dropped first)
_EXTRA = (("interactivity_median", 1), ("ttft_median", 2))
_STYLE = {"regression": "bold red", "improvement": "green"}
_HEADING = {
    "regression": "regressions",
    "improvement": "improvements",
    "noise": "within noise",
    "unjudged": "not judged",
}


def _change(d: Delta | None, *, name: bool = False) -> Text:
    """`+6.6%` (`TTFT p50 ms +6.6%` with `name`), coloured by its verdict; `?` marks a
    change with too few samples to judge."""
    if d is None or d.change is None:
        return Text("-")
    unit = " pts" if d.metric.name == "failure_rate" else ""
    mark = "?" if d.verdict == "unjudged" else ""
    label = f"{d.metric.label} " if name else ""
    return Text(f"{label}{d.change:+.1%}{unit}{mark}", style=_STYLE.get(d.verdict, ""))


def _harm(d: Delta) -> float:
    """How much worse the change made things (judged regressions above everything)."""
    change = d.change or 0.0
    harm = -change if d.metric.higher_is_better else change
    return harm + (1e9 if d.verdict == "regression" else 0.0)


def _worst(p: PointDelta) -> Delta | None:
    others = [d for d in p.deltas if d.metric.name != _HEADLINE and d.change is not None]
    return max(others, key=_harm, default=None)


def _value(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def print_compact(console: Console, cmp: Comparison, title: str) -> None:
    specs = {d.metric.name: d.metric.label for p in cmp.points for d in p.deltas}
    extras = [Col(specs.get(n, n), rank, justify="right") for n, rank in _EXTRA]
    rows: list[list[str | Text]] = []
    for verdict in VERDICTS:
        points = [p for p in cmp.points if p.verdict == verdict]
        if not points:
            continue
        heading = f"{_HEADING[verdict]} ({len(points)})"
        rows.append([Text(heading, style=_STYLE.get(verdict, "bold")), *[""] * (2 + len(extras))])
        for p in points:
            by_name = {d.metric.name: d for d in p.deltas}
            rows.append(
                [
                    p.label,
                    _change(by_name.get(_HEADLINE)),
                    _change(_worst(p), name=True),
                    *(_change(by_name.get(n)) for n, _ in _EXTRA),
                ]
            )

    def columns(wrap: bool) -> list[Col]:
        head = Col(specs.get(_HEADLINE, "tok/s/GPU"), justify="right")
        return [Col("point", wrap=wrap), head, Col("worst other", wrap=wrap), *extras]

    # the extra columns only where every point's label and worst change fit on one line;
    # a label too long for the terminal even alone then wraps between its words
    unbroken = fit_table(columns(False), rows, console.width)
    keep = [k for k, col in enumerate(columns(True)) if col.header not in unbroken.dropped]
    print_table(
        console,
        [columns(True)[k] for k in keep],
        [[row[k] for k in keep] for row in rows],
        title=title,
    )
    if unbroken.dropped:
        Console(stderr=True, highlight=False).print(
            f"({', '.join(unbroken.dropped)} not shown at {console.width} columns: --verbose"
            " has every metric)",
            markup=False,
            soft_wrap=True,
        )


def print_verbose(console: Console, cmp: Comparison, title: str) -> None:
    cols = [
        Col("verdict"),
        Col("point", wrap=True),
        Col("metric"),
        Col("base", justify="right"),
        Col("head", justify="right"),
        Col("change [interval]", wrap=True),
    ]
    rows: list[list[str | Text]] = []
    for p in cmp.points:  # a row per metric: every base, head and interval
        for k, d in enumerate(p.deltas):
            rows.append(
                [
                    Text(d.verdict, style=_STYLE.get(d.verdict, "")),
                    p.label if k == 0 else "",
                    d.metric.label,
                    _value(d.base),
                    _value(d.head),
                    change_text(d),
                ]
            )
    print_table(console, cols, rows, title=title, wider="--format json")


def print_comparison(console: Console, cmp: Comparison, *, verbose: bool) -> None:
    """The table, then the counts, the invalid points left out and the equal-interactivity
    sentences, each wrapped between words at the terminal's width."""
    labels = f"{cmp.head_label} vs {cmp.base_label}"
    tolerance = f"tolerance ±{cmp.threshold:.0%}"
    if verbose:
        interval = f"{cmp.noise.confidence:.0%} interval"
        print_verbose(console, cmp, f"{labels}: change [{interval}], {tolerance}")
    else:
        print_compact(console, cmp, f"{labels}: change, {tolerance} (--verbose: intervals)")
    counts = ", ".join(f"{cmp.count(v)} {_HEADING[v]}" for v in VERDICTS)
    lines = [
        f"{counts} (fewer than {cmp.noise.min_samples} samples); "
        f"{len(cmp.only_base)} only in base, {len(cmp.only_head)} only in head"
    ]
    for side, r in cmp.invalid:
        reasons = "; ".join(validity_of(r).reasons)
        lines.append(f"left out, invalid in {side}: {point_label(r)}: {reasons}")
    lines += [at_sentence(pair) for pair in cmp.at]
    for line in lines:
        console.print(Text(printable(line)), overflow="fold")
