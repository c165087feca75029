"""The capacity report as text (a few lines per answer) or as its JSON document."""

from __future__ import annotations

from inferbench.capacity.request import CapacityAnswer, CapacityReport
from inferbench.core.printable import printable


def render_report(report: CapacityReport, fmt: str = "table") -> str:
    if fmt == "json":
        return report.model_dump_json(indent=2, by_alias=True) + "\n"
    lines = []
    for answer in (report.predicted, report.measured):
        if answer is not None:
            lines += _answer_lines(answer)
    return "\n".join(printable(line) for line in lines) + "\n"


def _answer_lines(a: CapacityAnswer) -> list[str]:
    r = a.result
    load = "agent sessions" if a.unit == "agents" else "concurrency"
    head = f"{a.kind} capacity within {', '.join(r.targets)}:"
    if r.capacity is None:
        return [head, f"  none: {r.confidence()}"]
    lines = [head, f"  {load} {r.capacity} (binding: {r.binding})"]
    figures = []
    if a.users_per_gpu is not None:
        figures.append(
            f"{a.users_per_gpu:.3g} {a.unit}/GPU ({a.gpus} GPU{'s' if a.gpus != 1 else ''})"
        )
    if a.tok_s_per_gpu is not None:
        figures.append(f"{a.tok_s_per_gpu:,.0f} tok/s/GPU")
    if a.users_per_mw is not None and a.tok_s_per_mw is not None:
        figures.append(
            f"{a.users_per_mw:,.0f} {a.unit}/MW, {a.tok_s_per_mw:,.0f} tok/s/MW"
            f" (at {a.kw_per_gpu:g} kW/GPU provisioned)"
        )
    if figures:
        lines.append("  " + "; ".join(figures))
    lines.append(f"  measured {r.measured_loads} of {len(r.grid)} loads ({r.measurements} runs)")
    lines.append(f"  {r.confidence()}")
    return lines
