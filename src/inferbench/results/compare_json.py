"""The `--format json` document of `results compare`: one JSON object on stdout.

    {"schema": "inferbench.compare/1", "base": "run-a", "head": "run-b",
     "threshold": 0.05, "confidence": 0.95,
     "counts": {"regression": 0, "improvement": 1, "noise": 3, "unjudged": 0},
     "points": [{"point": "...", "concurrency": 16, "verdict": "noise", "repeats": [3, 3],
                 "deltas": [{"metric": "total_tput_per_gpu", "label": "tok/s/GPU",
                             "higher_is_better": true, "base": 100.0, "head": 101.0,
                             "change": 0.01, "interval": [-0.02, 0.04],
                             "samples": [288, 288], "verdict": "noise",
                             "margin": 0.03}, ...]}],
     "only_base": [...], "only_head": [...], "invalid": [{side, point, reasons}],
     "at": [...], "evals": {...} | null}

What a CI job gating on a change reads instead of scraping the table: every metric's change
with its interval, and its `margin`: how far the interval's harmful end stays inside the
tolerance (negative: a regression; null: not judged), so how close a change came to failing
the gate is visible, not only whether it did. `change` is relative (head / base - 1),
except the failure rate's, which is in absolute points. Keys are only added within a schema
version; a renamed or removed key gets a new `schema`.
"""

from __future__ import annotations

from typing import Any

import orjson

from inferbench.results.compare import VERDICTS, Comparison, Delta, PointDelta, point_label
from inferbench.results.evalcompare import EvalComparison
from inferbench.results.validity import validity_of

SCHEMA = "inferbench.compare/1"


def _delta(d: Delta, threshold: float) -> dict[str, Any]:
    return {
        "metric": d.metric.name,
        "label": d.metric.label,
        "higher_is_better": d.metric.higher_is_better,
        "base": d.base,
        "head": d.head,
        "change": d.change,
        "interval": [d.interval.low, d.interval.high] if d.interval is not None else None,
        "samples": list(d.samples),
        "verdict": d.verdict,
        "margin": d.margin(threshold),
    }


def _point(p: PointDelta, threshold: float) -> dict[str, Any]:
    return {
        "point": p.label,
        "concurrency": p.head.identity.concurrency,
        "verdict": p.verdict,
        "repeats": list(p.repeats),
        "deltas": [_delta(d, threshold) for d in p.deltas],
    }


def _evals(acc: EvalComparison | None, rule: str) -> dict[str, Any] | None:
    if acc is None:
        return None
    return {
        "rule": rule,
        "regressions": acc.count("regression"),
        "deltas": [
            {
                "eval": d.label,
                "task": d.task,
                "base": d.base,
                "head": d.head,
                "change": d.change,
                "allowed_drop": d.allowed_drop,
                "verdict": d.verdict,
                "note": d.note,
            }
            for d in acc.deltas
        ],
    }


def comparison_document(
    cmp: Comparison, acc: EvalComparison | None = None, *, eval_rule: str = ""
) -> bytes:
    """The document, indented, with a final newline (non-finite numbers become null)."""
    doc = {
        "schema": SCHEMA,
        "base": cmp.base_label,
        "head": cmp.head_label,
        "threshold": cmp.threshold,
        "confidence": cmp.noise.confidence,
        "min_samples": cmp.noise.min_samples,
        "counts": {v: cmp.count(v) for v in VERDICTS},
        "points": [_point(p, cmp.threshold) for p in cmp.points],
        "only_base": [point_label(r) for r in cmp.only_base],
        "only_head": [point_label(r) for r in cmp.only_head],
        "invalid": [
            {"side": side, "point": point_label(r), "reasons": list(validity_of(r).reasons)}
            for side, r in cmp.invalid
        ],
        "at": [a.as_dict() for a in cmp.at],
        "evals": _evals(acc, eval_rule),
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
