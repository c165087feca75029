"""Job outcomes as the report counts them: a job succeeded only if its status says
every point ran and passed (`completed`); any other recorded status is a failure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from inferbench.core.outcome import StoredOutcome

MAX_LISTED = 50


def succeeded(outcome: StoredOutcome) -> bool:
    return not outcome.status.failed


def outcomes_payload(outcomes: Sequence[StoredOutcome]) -> dict[str, Any]:
    """Totals, counts by status, per-run counts and the first failures, for the header."""
    failed = [o for o in outcomes if not succeeded(o)]
    runs: dict[str, dict[str, int]] = {}
    for o in outcomes:
        row = runs.setdefault(o.run_id, {"jobs": 0, "failed": 0})
        row["jobs"] += 1
        row["failed"] += 0 if succeeded(o) else 1
    return {
        "total": len(outcomes),
        "failed": len(failed),
        "by_status": dict(sorted(Counter(str(o.status) for o in outcomes).items())),
        "runs": [{"run": run, **counts} for run, counts in runs.items()],
        "failures": [
            f"{o.run_id} {o.label}: {o.status}" + (f" ({o.reason})" if o.reason else "")
            for o in failed[:MAX_LISTED]
        ],
    }
