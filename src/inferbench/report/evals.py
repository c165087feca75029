"""The accuracy table of the report: each stored eval beside the curves, newest per point.

Rendered once, as static HTML (escaped), under the points table: model, hardware,
engine, precision, lengths, concurrency, task, score +/- stderr, questions, status and
run. A simulated eval says so instead of showing a score as an accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from inferbench.evals.result import EvalStatus
from inferbench.results.evalcompare import eval_row
from inferbench.results.evalrecord import EvalRecord

_COLUMNS = ("model", "hardware", "framework", "precision", "isl/osl", "conc", "task")


def latest_evals(evals: Sequence[EvalRecord]) -> list[EvalRecord]:
    """The newest eval of each point and task (the store returns them oldest first)."""
    return list({e.point_key(): e for e in evals}.values())


def eval_status(e: EvalRecord) -> str:
    if e.result.simulated:
        return "simulated (random tokens: not an accuracy)"
    if e.result.status is EvalStatus.OK:
        return "ok"
    return f"{e.result.status.value}: {e.result.reason or ''}"


def evals_payload(evals: Sequence[EvalRecord]) -> list[dict[str, Any]]:
    """The accuracy view's bars: the newest eval of each configuration and task."""
    rows = []
    for e in latest_evals(evals):
        r, i = eval_row(e), e.identity
        rows.append(
            {
                "config": f"{i.model_prefix} {i.isl}/{i.osl} {i.hardware()} {i.framework} "
                f"{i.precision} {i.topology()} conc {i.concurrency}",
                "hw": i.hardware(),
                "task": r["task"],
                "metric": r["metric"],
                "score": r["score"],
                "stderr": r["stderr"],
                "n": r["samples"],
                "status": eval_status(e),
                "ok": e.ok and not e.result.simulated,
                "run": r["run_id"],
            }
        )
    return rows


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
        status = eval_status(e)
        tds = "".join(f"<td>{escape(str(c))}</td>" for c in cells)
        tds += f'<td class="num">{score}</td><td class="num">{stderr}</td>'
        tds += f'<td class="num">{escape(str(r["samples"] or "-"))}</td>'
        tds += f"<td>{escape(status)}</td><td>{escape(str(r['run_id']))}</td>"
        rows.append(f"<tr>{tds}</tr>")
    return (
        '<h2>Scores</h2>\n<p class="note">lm-eval scores of the configurations '
        "(primary metric: GSM8K exact match after the strict #### filter); "
        "see docs/evals.md</p>\n"
        f'<table id="evals"><thead><tr>{head}</tr></thead><tbody>'
        + "".join(rows)
        + "</tbody></table>"
    )
