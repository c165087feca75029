"""Accuracy evals in tables and comparisons: flat rows, and BASE vs HEAD per task.

A drop counts as a regression when HEAD's score is below BASE's by more than the
stderr-based interval, `z * sqrt(se_base^2 + se_head^2)` (z = 1.96 by default, a 95%
interval for the difference of two means), or, with `min_drop`, by more than that
absolute amount. Simulated evals and evals that did not run are shown, never compared.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from inferbench.results.evalrecord import EvalRecord

Verdict = Literal["regression", "improvement", "noise", "not compared"]
DEFAULT_Z = 1.96


def eval_row(e: EvalRecord) -> dict[str, object]:
    """One eval as a flat row (for `results list`, exports and the report)."""
    i, r, p = e.identity, e.result, e.result.primary
    return {
        "run_id": e.provenance.run_id,
        "model_prefix": i.model_prefix,
        "hardware": i.hardware(),
        "framework": i.framework,
        "precision": i.precision,
        "isl": i.isl,
        "osl": i.osl,
        "concurrency": i.concurrency,
        "task": r.task,
        "metric": f"{r.primary_metric},{r.primary_filter}",
        "score": p.value if p else None,
        "stderr": p.stderr if p else None,
        "samples": p.samples if p else None,
        "status": r.status.value,
        "simulated": r.simulated,
        "reason": r.reason,
        "image": i.image,
    }


@dataclass(frozen=True)
class EvalDelta:
    label: str
    task: str
    base: float | None
    head: float | None
    allowed_drop: float | None  # the interval (or min_drop) the change is judged against
    verdict: Verdict
    note: str = ""

    @property
    def change(self) -> float | None:
        return None if self.base is None or self.head is None else self.head - self.base


@dataclass(frozen=True)
class EvalComparison:
    deltas: tuple[EvalDelta, ...]

    def count(self, verdict: Verdict) -> int:
        return sum(1 for d in self.deltas if d.verdict == verdict)


def _comparable(e: EvalRecord) -> str | None:
    """Why an eval cannot be compared, or None."""
    if e.result.simulated:
        return "simulated"
    if not e.ok or e.result.primary is None:
        return e.result.status.value
    return None


def compare_evals(
    base: Sequence[EvalRecord],
    head: Sequence[EvalRecord],
    *,
    z: float = DEFAULT_Z,
    min_drop: float | None = None,
) -> EvalComparison:
    """HEAD's evals against BASE's, matched by point and task (the newest of each)."""
    b = {e.point_key(): e for e in base}
    deltas = []
    for e in {e.point_key(): e for e in head}.values():
        old = b.get(e.point_key())
        if old is None:
            continue
        why = _comparable(e) or _comparable(old)
        bp, hp = old.result.primary, e.result.primary
        if why or bp is None or hp is None:
            deltas.append(
                EvalDelta(e.label(), e.task, bp.value if bp else None, hp.value if hp else None,
                          None, "not compared", why or "no score")
            )  # fmt: skip
            continue
        allowed = (
            min_drop
            if min_drop is not None
            else z * math.sqrt((bp.stderr or 0.0) ** 2 + (hp.stderr or 0.0) ** 2)
        )
        change = hp.value - bp.value
        verdict: Verdict = (
            "regression" if change < -allowed else "improvement" if change > allowed else "noise"
        )
        deltas.append(EvalDelta(e.label(), e.task, bp.value, hp.value, allowed, verdict))
    rank = {"regression": 0, "improvement": 1, "noise": 2, "not compared": 3}
    return EvalComparison(tuple(sorted(deltas, key=lambda d: (rank[d.verdict], d.label))))
