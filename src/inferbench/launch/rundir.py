"""The run directory layout (a shared contract; the results store reads it).

    runs/<run-id>/run.json                    RunInfo: every setting `--resume` takes back
    runs/<run-id>/jobs.json                   JobsEntry list: the run's deployments, in order
    runs/<run-id>/state.json                  RunState (see state.py)
    runs/<run-id>/run.lock                    held by the live orchestrator (see lock.py)
    runs/<run-id>/<fp>/job.json               the sweep Job (InferenceX names)
    runs/<run-id>/<fp>/plan.json              the Plan that ran
    runs/<run-id>/<fp>/rendered/              recipe.yaml, srtslurm.yaml, sbatch.sh, ...
    runs/<run-id>/<fp>/logs/                  server.log, client.log, ...
    runs/<run-id>/<fp>/results/conc<C>.json   one bench result file per concurrency
    runs/<run-id>/<fp>/outcome.json           Outcome
    runs/<run-id>/<fp>/env.json               EnvRecord: environment and versions (no secrets)

`<fp>` is the job's 12-digit short fingerprint. The files' records are typed in
`inferbench.core.rundir`, which reads and writes them (the results store reads them there).
"""

from __future__ import annotations

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

from inferbench import __version__
from inferbench.bench.naming import point_stem
from inferbench.core.accelerator import Accelerator
from inferbench.core.errors import InputError, Location
from inferbench.core.job import short_fingerprint
from inferbench.core.redact import REDACTED, Redactor, looks_secret
from inferbench.core.rundir import EnvRecord, RunInfo, read_record, write_record
from inferbench.engines.registry import env_prefixes
from inferbench.power.hostzone import host_zone

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,80}$")
# Environment variables worth recording; the value of one whose name looks secret (TOKEN,
# KEY, SECRET, PASSWORD, HEADERS, ...) is redacted whatever this list says, and so is any
# configured API key found inside another value.
# the GPU stack's, Slurm's allocation and the offline switch, then every engine's own
_ENV_KEEP_BASE = ("CUDA_", "NCCL_", "SLURM_JOB", "SLURM_NODELIST", "HF_HUB_OFF")


def _env_keep(name: str) -> bool:
    """Whether env.json keeps `name` (read at each use: an engine may be registered later)."""
    return name.startswith((*_ENV_KEEP_BASE, *env_prefixes()))


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


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
        return read_record(run.run_json, RunInfo, "run.json")
    except InputError as exc:
        why = exc.message.removeprefix("run.json is damaged: ")
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
    write_record(run.run_json, info)


def environment_record(
    extra: dict[str, str] | None = None, accelerator: Accelerator | None = None
) -> EnvRecord:
    """`env.json`: versions, the accelerator the engine runs on (None: not known here, e.g.
    Slurm's nodes until the allocation records theirs) and the relevant environment, secret
    values redacted."""
    redact = Redactor.from_env(os.environ)
    env = {
        k: REDACTED if looks_secret(k) else redact(v)
        for k, v in sorted(os.environ.items())
        if _env_keep(k)
    }
    return EnvRecord.model_validate(
        {
            "inferbench": __version__,
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "host": socket.gethostname(),
            "timezone": host_zone(),
            "accelerator": accelerator,
            "environment": env,
            **(extra or {}),
        }
    )


def record_accelerator(job_dir: JobDir, accelerator: Accelerator) -> None:
    """Set `env.json`'s accelerator where the engine runs (inside a Slurm allocation: the
    node's, not the login node's)."""
    try:
        record = read_record(job_dir.env_json, EnvRecord, "env.json")
    except InputError:  # none written yet, or damaged: this node's record
        record = environment_record()
    write_record(job_dir.env_json, record.model_copy(update={"accelerator": accelerator}))
