"""Predicted points: what an adaptive run skipped, kept apart from measurements.

An adaptive run (`inferbench run --adaptive`) measures only the points that can move the
frontier; the rest are simulator predictions with an interval. `results ingest` of its run
directory stores them in their own table (`predicted_points`, never `records`), so nothing
that reads measurements (compare, export, the regression gate) ever takes a prediction for
one; the report draws them beside the measured points, marked as predicted.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from inferbench.core.errors import InputError, Location
from inferbench.core.fsread import MAX_RUN_FILE_BYTES, read_file
from inferbench.core.model import FrozenModel

ADAPTIVE_JSON = "adaptive.json"


class PredictedPoint(FrozenModel):
    """One point an adaptive run did not measure: its prediction and why it was skipped."""

    run_id: str
    point: str  # "<fingerprint[:12]>@<concurrency>"
    label: str
    model_prefix: str
    isl: int
    osl: int
    concurrency: int
    hardware: str  # the simulator's GPU key
    engine: str
    gpus: int
    status: str  # dominated | near | budget | failed | open
    reason: str
    tok_s_gpu: float
    tok_s_gpu_low: float
    tok_s_gpu_high: float
    interactivity: float
    interactivity_low: float
    interactivity_high: float
    spread_source: str
    confidence: float

    def natural_key(self) -> str:
        return hashlib.sha256(f"{self.run_id}|{self.point}".encode()).hexdigest()

    @property
    def facet(self) -> str:
        return f"{self.model_prefix} {self.isl}/{self.osl}"


def read_predicted(run_path: Path) -> list[PredictedPoint]:
    """The points the adaptive run in `run_path` left predicted (none if it is not one)."""
    path = run_path / ADAPTIVE_JSON
    if not path.is_file():
        return []
    try:
        data = json.loads(read_file(path, MAX_RUN_FILE_BYTES, what=ADAPTIVE_JSON))
        confidence = float(data["settings"]["confidence"])
        return [
            _predicted(run_path.name, row, confidence)
            for row in data["points"]
            if "measured" not in row
        ]
    except (ValueError, KeyError, TypeError, ValidationError) as exc:
        raise InputError(
            f"{ADAPTIVE_JSON} is unreadable: {exc}",
            location=Location(file=path),
            hint="resume the adaptive run (`inferbench run --resume RUN-ID`) to rewrite it",
        ) from None


def _predicted(run_id: str, row: dict[str, Any], confidence: float) -> PredictedPoint:
    pred = row["predicted"]
    model, isl, osl = row["frontier"]
    return PredictedPoint(
        run_id=run_id,
        point=row["key"],
        label=row["label"],
        model_prefix=model,
        isl=isl,
        osl=osl,
        concurrency=row["concurrency"],
        hardware=row["gpu"],
        engine=row["engine"],
        gpus=row["gpus"],
        status=row["status"],
        reason=row["reason"],
        tok_s_gpu=pred["tok_s_gpu"],
        tok_s_gpu_low=pred["tok_s_gpu_interval"][0],
        tok_s_gpu_high=pred["tok_s_gpu_interval"][1],
        interactivity=pred["interactivity"],
        interactivity_low=pred["interactivity_interval"][0],
        interactivity_high=pred["interactivity_interval"][1],
        spread_source=row["spread"]["source"],
        confidence=confidence,
    )
