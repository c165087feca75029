"""`state.json`: per job, its status, attempts and finished points; rewritten atomically.

The state is written after every finished concurrency point, so a run killed at any moment
(SIGKILL included) resumes where it stopped. A point counts as finished only once its result
file is on disk; `reconcile` trusts the files over the state for the one gap between writing
a result and recording it, so a resumed run neither redoes nor duplicates a point.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from inferbench.core.errors import InputError, Location, validation_summary
from inferbench.core.fsio import atomic_write_text
from inferbench.core.fsread import MAX_RUN_FILE_BYTES, read_file
from inferbench.core.status import RETRYABLE, JobStatus, RunPhase

_CONC = re.compile(r"^conc(\d+)\.json$")
# What a resume runs again (its unfinished points only): never started, cut short (a kill,
# a Ctrl-C), or ended by the infrastructure. A failure of the configuration stays recorded.
RESUMABLE: frozenset[RunPhase | JobStatus] = frozenset(
    (RunPhase.PENDING, RunPhase.RUNNING, JobStatus.INTERRUPTED, *RETRYABLE)
)


class JobState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: RunPhase | JobStatus = RunPhase.PENDING  # interrupted: to resume
    attempts: int = 0
    finished: list[int] = Field(default_factory=list)  # concurrencies with a result file
    failed: list[int] = Field(default_factory=list)  # of those, the ones that failed the gate
    slurm_job_id: str | None = None

    @property
    def done(self) -> bool:
        """Nothing left to run: it ended, and not by a stop or an infrastructure failure."""
        return self.status not in RESUMABLE


class RunState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    jobs: dict[str, JobState] = Field(default_factory=dict)


def _read_state(path: Path) -> RunState:
    try:
        return RunState.model_validate_json(read_file(path, MAX_RUN_FILE_BYTES))
    except (InputError, ValidationError) as exc:
        why = exc.message if isinstance(exc, InputError) else validation_summary(exc)
        raise InputError(
            f"state.json is damaged: {why}",
            location=Location(file=path),
            hint=f"move it aside (mv {path} {path}.bad) and resume again: the resume "
            "rebuilds it from the result files on disk",
        ) from None


class StateFile:
    """The run's state and the one place that writes it."""

    def __init__(self, path: Path, run_id: str) -> None:
        self.path = path
        if path.exists() or path.is_symlink():
            self.state = _read_state(path)
        else:
            self.state = RunState(run_id=run_id)

    def job(self, fingerprint: str) -> JobState:
        return self.state.jobs.setdefault(fingerprint, JobState())

    def save(self) -> None:
        atomic_write_text(self.path, self.state.model_dump_json(indent=2) + "\n")

    def start_attempt(self, fingerprint: str) -> int:
        job = self.job(fingerprint)
        job.attempts += 1
        job.status = RunPhase.RUNNING
        self.save()
        return job.attempts

    def point_finished(self, fingerprint: str, concurrency: int, ok: bool) -> None:
        job = self.job(fingerprint)
        if concurrency not in job.finished:
            job.finished.append(concurrency)
        if not ok and concurrency not in job.failed:
            job.failed.append(concurrency)
        self.save()

    def job_finished(self, fingerprint: str, status: JobStatus) -> None:
        self.job(fingerprint).status = status
        self.save()

    def set_slurm_job(self, fingerprint: str, job_id: str | None) -> None:
        self.job(fingerprint).slurm_job_id = job_id
        self.save()

    def reconcile(self, fingerprint: str, results_dir: Path) -> JobState:
        """Count result files on disk as finished (a kill between the two writes)."""
        job = self.job(fingerprint)
        on_disk = sorted(
            int(m.group(1)) for p in results_dir.glob("conc*.json") if (m := _CONC.match(p.name))
        )
        missing = [c for c in on_disk if c not in job.finished]
        if missing:
            job.finished.extend(missing)
            self.save()
        return job
