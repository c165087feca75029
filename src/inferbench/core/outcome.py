"""Outcomes: what happened to one deployment and to each of its points, recorded whatever
happened (`outcome.json` of a job directory), and the row the results store keeps of it."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from inferbench.core.model import FrozenModel
from inferbench.core.status import JobStatus, PointStatus


class PointOutcome(FrozenModel):
    """One concurrency point of a job."""

    concurrency: int
    status: PointStatus
    reason: str = ""
    result_file: str | None = None  # relative to the job directory

    @model_validator(mode="before")
    @classmethod
    def _legacy_ok(cls, data: Any) -> Any:
        """outcome.json files written before PointStatus carried `ok: true|false`."""
        if isinstance(data, dict) and "ok" in data and "status" not in data:
            data = dict(data)
            data["status"] = PointStatus.PASSED if data.pop("ok") else PointStatus.FAILED
        return data

    @property
    def ok(self) -> bool:
        return self.status.ok


class SlurmJobRecord(FrozenModel):
    """One of the Slurm jobs a deployment ran as: srtctl submits a recipe file with several
    variants (override / zip_override sections) as one job per variant."""

    job_id: str
    name: str = ""  # srtctl's job name (the variant's)
    state: str = ""  # Slurm's final state
    source: str = ""  # which of Slurm's records said so
    note: str = ""  # what inferbench did to it (cancelled: it could never start here)
    output_dir: str = ""  # where srtctl wrote its logs and results
    concurrencies: tuple[int, ...] = ()  # the points it left a result for


class Outcome(FrozenModel):
    """`outcome.json` of a job directory."""

    status: JobStatus
    attempt: int
    backend: str
    engine: str
    host: str
    cluster: str | None = None
    started: str
    finished: str
    reason: str = ""
    log_tail: str = ""
    points: tuple[PointOutcome, ...] = ()
    slurm_job_id: str | None = None
    slurm_jobs: tuple[SlurmJobRecord, ...] = ()  # srtctl: every job submitted, in order
    base_url: str | None = None
    timings_s: dict[str, float] = Field(default_factory=dict)
    # the simulator costed the job's engine as this one (it has no simulator profile)
    costed_as: str | None = None

    @property
    def retryable(self) -> bool:
        return self.status.retryable


class StoredOutcome(FrozenModel):
    """A job's final state as the results store keeps it (so failure rates stay visible)."""

    run_id: str
    job_fingerprint: str
    label: str
    status: JobStatus
    attempt: int
    reason: str | None = None

    @field_validator("status", mode="before")
    @classmethod
    def _any_status(cls, value: Any) -> JobStatus:
        """Outcome files of other tools (and older stores) spell success their own way."""
        return JobStatus.parse(value)
