"""The run directory layout (a shared contract; the results store reads it).

    runs/<run-id>/run.json                    RunInfo: every setting `--resume` takes back
    runs/<run-id>/jobs.json                   the run's deployments (their jobs), in order
    runs/<run-id>/state.json                  RunState (see state.py)
    runs/<run-id>/run.lock                    held by the live orchestrator (see lock.py)
    runs/<run-id>/<fp>/job.json               the sweep Job (InferenceX names)
    runs/<run-id>/<fp>/plan.json              the Plan that ran
    runs/<run-id>/<fp>/rendered/              recipe.yaml, srtslurm.yaml, sbatch.sh, ...
    runs/<run-id>/<fp>/logs/                  server.log, client.log, ...
    runs/<run-id>/<fp>/results/conc<C>.json   one bench result file per concurrency
    runs/<run-id>/<fp>/outcome.json           Outcome
    runs/<run-id>/<fp>/env.json               environment and versions (no secrets)

`<fp>` is the job's 12-digit short fingerprint.
"""

from __future__ import annotations

import json
import os
import platform
import re
import secrets
import socket
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator

from inferbench import __version__
from inferbench.bench.naming import point_stem
from inferbench.core.accelerator import Accelerator
from inferbench.core.errors import InputError, Location, validation_summary
from inferbench.core.fsio import atomic_write_text
from inferbench.core.fsread import MAX_RUN_FILE_BYTES, read_file
from inferbench.core.job import short_fingerprint
from inferbench.core.model import FrozenModel
from inferbench.core.redact import REDACTED, Redactor, looks_secret
from inferbench.engines.registry import env_prefixes
from inferbench.power.hostzone import host_zone

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,80}$")
# Environment variables worth recording; the value of one whose name looks secret (TOKEN,
# KEY, SECRET, PASSWORD, HEADERS, ...) is redacted whatever this list says, and so is any
# configured API key found inside another value.
# the GPU stack's, Slurm's allocation and the offline switch, then every engine's own
_ENV_KEEP = re.compile(
    "^("
    + "|".join(("CUDA_", "NCCL_", "SLURM_JOB", "SLURM_NODELIST", "HF_HUB_OFF", *env_prefixes()))
    + ")"  # fmt: skip
)


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


class RunSettings(FrozenModel):
    """The options of a run besides its tree, filters, backend, engine and cluster."""

    retries: int = 0
    fail_fast: bool = False
    max_jobs: int | None = None
    plan: dict[str, Any] = Field(default_factory=dict)  # PlanOptions fields
    local: dict[str, Any] = Field(default_factory=dict)  # LocalOptions fields
    slurm_poll_s: float = 1.0
    # srtctl backend: the srt-slurm sources recipes come from (`--srt-slurm`, as given)
    srt_slurm: tuple[str, ...] = ()

    @field_validator("srt_slurm", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        """A run.json of an older inferbench kept one checkout (or null)."""
        if value is None:
            return ()
        return (value,) if isinstance(value, str) else value

    adaptive: dict[str, Any] | None = None  # `run --adaptive`: the planner's settings


class RunInfo(FrozenModel):
    """`run.json`: what was asked for, by whom, with which inferbench."""

    run_id: str
    created: str
    backend: str
    engine: str | None
    root: str
    filters: dict[str, object] = Field(default_factory=dict)
    version: str = __version__
    host: str = Field(default_factory=socket.gethostname)
    cluster: str | None = None
    commit: str | None = None  # the benchmark tree's git commit, when it is a checkout
    settings: RunSettings = Field(default_factory=RunSettings)


@dataclass(frozen=True)
class JobDir:
    path: Path

    @property
    def job_json(self) -> Path:
        return self.path / "job.json"

    @property
    def plan_json(self) -> Path:
        return self.path / "plan.json"

    @property
    def rendered(self) -> Path:
        return self.path / "rendered"

    @property
    def logs(self) -> Path:
        return self.path / "logs"

    @property
    def results(self) -> Path:
        return self.path / "results"

    @property
    def outcome_json(self) -> Path:
        return self.path / "outcome.json"

    @property
    def env_json(self) -> Path:
        return self.path / "env.json"

    def result_file(self, concurrency: int) -> Path:
        return self.results / f"{point_stem(concurrency)}.json"

    def make(self) -> None:
        for folder in (self.rendered, self.logs, self.results):
            folder.mkdir(parents=True, exist_ok=True)


@dataclass(frozen=True)
class RunDir:
    path: Path

    @property
    def run_id(self) -> str:
        return self.path.name

    @property
    def run_json(self) -> Path:
        return self.path / "run.json"

    @property
    def state_json(self) -> Path:
        return self.path / "state.json"

    @property
    def jobs_json(self) -> Path:
        return self.path / "jobs.json"

    def job(self, fingerprint: str) -> JobDir:
        return JobDir(self.path / short_fingerprint(fingerprint))


def run_dir(runs_dir: Path, run_id: str) -> RunDir:
    if not _RUN_ID.match(run_id):
        raise InputError(
            f"run id {run_id!r} is not a plain name",
            location=Location(key="--resume"),
            hint="pass the run id that `inferbench run` printed, a folder name under --runs-dir",
        )
    return RunDir(runs_dir / run_id)


def read_run_info(run: RunDir) -> RunInfo:
    if not run.run_json.is_file():
        raise InputError(
            f"no run {run.run_id!r} under {run.path.parent}",
            location=Location(file=run.run_json),
            hint="pass the run id printed by `inferbench run` and the same --runs-dir",
        )
    try:
        return RunInfo.model_validate_json(read_file(run.run_json, MAX_RUN_FILE_BYTES))
    except (InputError, ValidationError) as exc:
        why = exc.message if isinstance(exc, InputError) else validation_summary(exc)
        raise InputError(
            f"run.json of run {run.run_id} is damaged: {why}",
            location=Location(file=run.run_json),
            hint="run.json keeps the run's settings: restore it from a backup, or start a new "
            "run with the same flags (this run's finished results stay where they are)",
        ) from None


def tree_commit(root: Path | str) -> str | None:
    """The commit checked out at `root` (what the report's history names), or None when
    the tree is not a git checkout or git is missing."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--verify", "--quiet", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = proc.stdout.strip()
    return sha if proc.returncode == 0 and re.fullmatch(r"[0-9a-f]{40,64}", sha) else None


def write_run_info(run: RunDir, info: RunInfo) -> None:
    atomic_write_text(run.run_json, info.model_dump_json(indent=2) + "\n")


def environment_record(
    extra: dict[str, str] | None = None, accelerator: Accelerator | None = None
) -> dict[str, object]:
    """`env.json`: versions, the accelerator the engine runs on (None: not known here, e.g.
    Slurm's nodes until the allocation records theirs) and the relevant environment, secret
    values redacted."""
    redact = Redactor.from_env(os.environ)
    env = {
        k: REDACTED if looks_secret(k) else redact(v)
        for k, v in sorted(os.environ.items())
        if _ENV_KEEP.match(k)
    }
    return {
        "inferbench": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "host": socket.gethostname(),
        # raw nvidia-smi power logs are stamped in this zone, without saying so
        "timezone": host_zone(),
        "accelerator": accelerator.model_dump(mode="json") if accelerator else None,
        "environment": env,
        **(extra or {}),
    }


def record_accelerator(job_dir: JobDir, accelerator: Accelerator) -> None:
    """Set `env.json`'s accelerator where the engine runs (inside a Slurm allocation: the
    node's, not the login node's)."""
    try:
        data = json.loads(read_file(job_dir.env_json, MAX_RUN_FILE_BYTES))
    except (InputError, ValueError):
        data = None
    record = data if isinstance(data, dict) else environment_record()
    write_json(job_dir.env_json, {**record, "accelerator": accelerator.model_dump(mode="json")})


def write_json(path: Path, data: object) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
