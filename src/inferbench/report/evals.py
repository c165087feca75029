"""The accuracy table of the report: each stored eval beside the curves, newest per point.

Rendered once, as static HTML (escaped), under the points table: model, hardware,
engine, precision, lengths, concurrency, task, score +/- stderr, questions, status and
run. A simulated eval says so instead of showing a score as an accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from inferbench.evals.result import EvalStatus
from inferbench.results.evalcompare import eval_row
from inferbench.results.evalrecord import EvalRecord

_COLUMNS = ("model", "hardware", "framework", "precision", "isl/osl", "conc", "task")


def latest_evals(evals: Sequence[EvalRecord]) -> list[EvalRecord]:
    """The newest eval of each point and task (the store returns them oldest first)."""
    return list({e.point_key(): e for e in evals}.values())


def evals_html(evals: Sequence[EvalRecord]) -> str:
    if not evals:
        return ""
    head = "".join(f"<th>{c}</th>" for c in (*_COLUMNS, "score", "±", "n", "status", "run"))
    rows = []
    for e in latest_evals(evals):
        r = eval_row(e)
        cells = [
            r["model_prefix"], r["hardware"], r["framework"], r["precision"],
            f"{r['isl']}/{r['osl']}", r["concurrency"], r["task"],
        ]  # fmt: skip
        score = "-" if r["score"] is None else f"{r['score']:.4f}"
        stderr = "-" if r["stderr"] is None else f"{r['stderr']:.4f}"
        if e.result.simulated:
            status = "simulated (random tokens: not an accuracy)"
        elif e.result.status is EvalStatus.OK:
            status = "ok"
        else:
            status = f"{e.result.status.value}: {e.result.reason or ''}"
        tds = "".join(f"<td>{escape(str(c))}</td>" for c in cells)
        tds += f'<td class="num">{score}</td><td class="num">{stderr}</td>'
        tds += f'<td class="num">{escape(str(r["samples"] or "-"))}</td>'
        tds += f"<td>{escape(status)}</td><td>{escape(str(r['run_id']))}</td>"
        rows.append(f"<tr>{tds}</tr>")
    return (
        '<h2>Accuracy</h2>\n<p class="note">lm-eval scores of the configurations above '
        "(primary metric: GSM8K exact match after the strict #### filter); "
        "see docs/evals.md</p>\n"
        f'<table id="evals"><thead><tr>{head}</tr></thead><tbody>'
        + "".join(rows)
        + "</tbody></table>"
    )
