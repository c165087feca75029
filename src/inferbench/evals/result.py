"""The result of one eval: scores per metric and filter, with stderr and sample count.

Written as `eval_<task>.json` beside the throughput result files (`--result-dir`, a run's
`results/`), atomically. An eval that could not run or failed is a result too, with its
status and reason, so a sweep records it and goes on. An eval against the simulator is
marked `simulated`: its answers are random tokens, so its score is not an accuracy.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import orjson
from pydantic import AliasChoices, Field, ValidationError

from inferbench.core.errors import InputError, Location
from inferbench.core.fsio import atomic_write_bytes
from inferbench.core.fsread import MAX_RESULT_BYTES, read_file
from inferbench.core.model import FrozenModel
from inferbench.evals.spec import EvalSpec

# 2: lm-eval's version is `harness_version` (InferenceX's collector takes any file with a
# top-level `lm_eval_version` for lm-eval's own results file); version-1 files still read
SCHEMA_VERSION = 2
FILE_PREFIX = "eval_"


class EvalStatus(StrEnum):
    OK = "ok"
    FAILED = "failed"  # lm-eval ran and failed (server died, timeout, bad answers)
    UNAVAILABLE = "unavailable"  # lm-eval, the task or its data is missing


class EvalScore(FrozenModel):
    metric: str  # exact_match
    filter: str  # strict-match, flexible-extract, extract_abcd
    value: float
    stderr: float | None = None
    samples: int


class EvalResult(FrozenModel):
    schema_version: int = SCHEMA_VERSION
    kind: str = "inferbench-eval"
    task: str
    lm_eval_task: str
    status: EvalStatus
    reason: str | None = None
    simulated: bool = False  # answered by the simulator: a smoke test, not an accuracy
    scores: tuple[EvalScore, ...] = ()
    primary_metric: str
    primary_filter: str
    model: str
    base_url: str
    spec: EvalSpec
    harness_version: str | None = Field(
        default=None, validation_alias=AliasChoices("harness_version", "lm_eval_version")
    )
    started_at: str
    finished_at: str
    log_file: str | None = None
    samples_file: str | None = Field(default=None, description="lm-eval's per-question log")

    @property
    def primary(self) -> EvalScore | None:
        for s in self.scores:
            if (s.metric, s.filter) == (self.primary_metric, self.primary_filter):
                return s
        return None


def eval_file_name(task: str) -> str:
    return f"{FILE_PREFIX}{task}.json"


def write_eval_result(path: Path, result: EvalResult) -> None:
    data = result.model_dump(mode="json")
    atomic_write_bytes(Path(path), orjson.dumps(data, option=orjson.OPT_INDENT_2))


def is_eval_file(data: object) -> bool:
    return isinstance(data, dict) and data.get("kind") == "inferbench-eval"


_RERUN = "the file is truncated or was changed: rerun the eval, or remove the file"


def read_eval_result(path: Path) -> EvalResult:
    path = Path(path)
    raw = read_file(path, MAX_RESULT_BYTES, what="eval result")
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(
            f"cannot read eval result ({exc})", location=Location(file=path), hint=_RERUN
        ) from None
    if not is_eval_file(data):
        raise InputError(
            "not an inferbench eval result",
            location=Location(file=path),
            hint="eval_<task>.json is the file `inferbench eval` writes; rename or remove this one",
        )
    try:
        return EvalResult.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        raise InputError(
            f"invalid eval result: {err['msg']}", location=Location(file=path, key=key), hint=_RERUN
        ) from None
