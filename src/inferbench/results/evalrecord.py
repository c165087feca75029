"""A stored accuracy eval: the job's identity, where it came from, and lm-eval's scores.

Kept beside the throughput records (table `eval_results`), keyed the same way: one row
per (run, point, task), so a re-ingest replaces and a later run is compared by its
`point_key`. Simulated evals (answered by `inferbench sim serve`) are stored and shown,
labelled, and never compared as an accuracy.
"""

from __future__ import annotations

import orjson

from inferbench.core.model import FrozenModel
from inferbench.evals.result import EvalResult, EvalStatus
from inferbench.results.record import Identity, Provenance, _digest

EVAL_SCHEMA_VERSION = 1


class EvalRecord(FrozenModel):
    schema_version: int = EVAL_SCHEMA_VERSION
    identity: Identity  # concurrency: the eval's concurrency
    provenance: Provenance
    result: EvalResult

    def natural_key(self) -> str:
        return _digest(
            {"run": self.provenance.run_id, "point": self.identity._dump, "task": self.task}
        )

    def point_key(self) -> str:
        """The same configuration and task across runs (image and recipe may change)."""
        skip = {"image", "recipe_fingerprint", "model"}
        ident = {k: v for k, v in self.identity._dump.items() if k not in skip}
        return _digest({"point": ident, "task": self.task})

    @property
    def task(self) -> str:
        return self.result.task

    @property
    def ok(self) -> bool:
        return self.result.status is EvalStatus.OK

    def label(self) -> str:
        i = self.identity
        return (
            f"{i.model_prefix} {i.hardware()} {i.framework} {i.precision} "
            f"{i.isl}/{i.osl} conc {i.concurrency} {self.task}"
        )


def eval_record_from_json(payload: str | bytes) -> EvalRecord:
    return EvalRecord.model_validate(orjson.loads(payload))
