"""A comparison as markdown fit for a PR comment: regressions first, worst first."""

from __future__ import annotations

from inferbench.core.printable import printable
from inferbench.results.compare import Comparison, Delta, PointDelta, point_label, verdict_of
from inferbench.results.equal import PairAt
from inferbench.results.validity import validity_of

_ICON = {"regression": "🔴", "improvement": "🟢", "noise": "⚪", "unjudged": "❔"}
_SHOWN = (
    "total_tput_per_gpu",
    "interactivity_median",
    "ttft_median",
    "tpot_median",
    "e2el_median",
    "failure_rate",
)


def change_text(d: Delta) -> str:
    """`+6.6% [-1.2%, +14.0%]`: the change and its interval (or why it has none)."""
    if d.change is None:
        return "-"
    change = f"{d.change:+.1%}" if d.metric.name != "failure_rate" else f"{d.change:+.1%} pts"
    return f"{change} {d.interval_text()}".rstrip()


def _cell(d: Delta) -> str:
    if d.base is None or d.head is None or d.change is None:
        return "-"
    if d.metric.name == "failure_rate":
        text = f"{d.base:.1%} → {d.head:.1%} ({change_text(d)})"
    else:
        text = f"{d.base:.4g} → {d.head:.4g} ({change_text(d)})"
    return f"**{text}**" if d.verdict == "regression" else text


def _row(p: PointDelta) -> str:
    cells = [_cell(d) for d in p.deltas if d.metric.name in _SHOWN]
    # a judged change of a metric without a column (the p90s) is named beside the point,
    # so a row marked as a regression always shows what regressed
    others = [
        f"{d.metric.label} {_cell(d)}"
        for d in p.deltas
        if d.metric.name not in _SHOWN and d.verdict in ("regression", "improvement")
    ]
    label = p.label + (f" ({'; '.join(others)})" if others else "")
    return f"| {_ICON[p.verdict]} | {label} | " + " | ".join(cells) + " |"


def at_sentence(a: PairAt) -> str:
    """`at 50 tok/s/user, <series>: head 4,210 tok/s/GPU, 1.08x base (3,898)`."""
    return (
        f"at {a.target:g} tok/s/user, {a.key.label()}: head {a.head:,.4g} tok/s/GPU, "
        f"{a.ratio:.2f}x base ({a.base:,.4g})"
    )


def at_lines(cmp: Comparison) -> list[str]:
    if not cmp.at:
        return []
    lines = ["", "Throughput per GPU at equal interactivity (frontiers interpolated, PCHIP):", ""]
    for a in cmp.at:
        icon = _ICON[verdict_of(a.ratio - 1, higher_is_better=True, threshold=cmp.threshold)]
        lines.append(f"- {icon} {at_sentence(a)}")
    return lines


def comparison_markdown(cmp: Comparison, *, max_rows: int = 60) -> str:
    reg, imp, noise, unjudged = (
        cmp.count(v) for v in ("regression", "improvement", "noise", "unjudged")
    )
    lines = [
        f"### inferbench: `{cmp.head_label}` vs `{cmp.base_label}`",
        "",
        f"{len(cmp.points)} matched points: **{reg} regressions**, {imp} improvements, "
        f"{noise} within noise, {unjudged} not judged. A change counts only when its "
        f"{cmp.noise.confidence:.0%} bootstrap interval (in brackets) lies beyond the "
        f"±{cmp.threshold:.0%} tolerance; fewer than {cmp.noise.min_samples} requests a side "
        "are not judged.",
    ]
    if cmp.only_base or cmp.only_head:
        lines.append(
            f"{len(cmp.only_base)} points only in base (missing from head), "
            f"{len(cmp.only_head)} only in head."
        )
    if cmp.invalid:
        lines.append(
            f"{len(cmp.invalid)} invalid points left out (never compared as valid): "
            + "; ".join(
                f"{side} {point_label(r)}: {', '.join(validity_of(r).reasons)}"
                for side, r in cmp.invalid[:max_rows]
            )
        )
    if cmp.points:
        header = [d.metric.label for d in cmp.points[0].deltas if d.metric.name in _SHOWN]
        lines += ["", "| | point | " + " | ".join(header) + " |", "|---" * (len(header) + 2) + "|"]
        shown = [p for p in cmp.points if p.verdict != "noise"][:max_rows]
        lines += [_row(p) for p in shown]
        hidden = len(cmp.points) - len(shown)
        if hidden:
            lines.append(f"| | … {hidden} more points within noise or beyond {max_rows} rows | |")
    lines += at_lines(cmp)
    if cmp.only_base:
        lines += ["", "<details><summary>Missing from head</summary>", ""]
        lines += [
            f"- {p.identity.model_prefix} {p.identity.topology()} conc {p.identity.concurrency}"
            for p in cmp.only_base[:max_rows]
        ]
        lines += ["", "</details>"]
    # stored labels and identities are anyone's text: no ESC or bidi override in a comment
    return "\n".join(printable(line) for line in lines) + "\n"
