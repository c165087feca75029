"""The files of a run directory as typed records: written by launch, read back by `--resume`
and by the results store (see `launch/rundir.py` for the layout).

    run.json            RunInfo: every setting `--resume` takes back (RunHeader: what the
                        results store reads of it, whoever wrote it)
    jobs.json           JobsEntry per deployment, in order
    <job>/outcome.json  core.outcome.Outcome as written; OutcomeRecord as the store reads it
    <job>/env.json      EnvRecord: versions, accelerator, time zone, environment
    <job>/plan.json     PlanCommand: the command lines a stored point keeps

Older inferbench versions and other tools' run directories spell some keys their own way
(`run-id`, `inferbench_version`, `git_commit`, `times.start`, ...): the validators here are
the one place that knows those spellings; the readers get one field each.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from inferbench import __version__
from inferbench.core.accelerator import Accelerator
from inferbench.core.errors import InputError, Location, validation_summary
from inferbench.core.fsio import atomic_write_text
from inferbench.core.fsread import MAX_RUN_FILE_BYTES, read_file
from inferbench.core.model import FrozenModel, LenientModel
from inferbench.core.status import JobStatus

# run.json keys as older versions and other tools wrote them, after the name read now
RUN_SPELLINGS: dict[str, tuple[str, ...]] = {
    "run_id": ("run-id", "id"),
    "version": ("inferbench_version",),
    "commit": ("git_commit", "git-commit"),
}
# outcome.json's times: top-level or under `times` (which wins), in any of these spellings
STARTED_SPELLINGS = ("started", "start", "started_at")
FINISHED_SPELLINGS = ("ended", "finished", "end", "ended_at")
# plan.json keys holding the deployment's command lines (one, or one per process)
COMMAND_SPELLINGS = ("command", "commands", "server_command")
MAX_COMMAND_CHARS = 2000


def _empty(value: object) -> bool:
    return value is None or value == ""


def _first(data: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    return next((data[k] for k in keys if not _empty(data.get(k))), None)


def _respell(data: Any, spellings: Mapping[str, tuple[str, ...]]) -> Any:
    """`data` with each old spelling's value under the name read now (the first one set),
    the old keys dropped."""
    if not isinstance(data, Mapping):
        return data
    out = dict(data)
    for name, old in spellings.items():
        found = _first(out, (name, *old))
        for key in old:
            out.pop(key, None)
        if found is not None:
            out[name] = found
    return out


# -- run.json -----------------------------------------------------------------------------


class RunSettings(FrozenModel):
    """The options of a run besides its tree, filters, backend, engine and cluster."""

    retries: int = 0
    fail_fast: bool = False
    max_jobs: int | None = None
    plan: dict[str, Any] = Field(default_factory=dict)  # launch.planner.PlanOptions fields
    local: dict[str, Any] = Field(default_factory=dict)  # launch.local.LocalOptions fields
    slurm_poll_s: float = 1.0
    # srtctl backend: the srt-slurm sources recipes come from (`--srt-slurm`, as given)
    srt_slurm: tuple[str, ...] = ()
    adaptive: dict[str, Any] | None = None  # `run --adaptive`: the planner's settings

    @field_validator("srt_slurm", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        """A run.json of an older inferbench kept one checkout (or null)."""
        if value is None:
            return ()
        return (value,) if isinstance(value, str) else value


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

    @model_validator(mode="before")
    @classmethod
    def _old_spellings(cls, data: Any) -> Any:
        return _respell(data, RUN_SPELLINGS)


class RunHeader(LenientModel):
    """What the results store reads of a `run.json`: any inferbench version's, or another
    tool's in the same layout (nothing required; a missing file reads as all None)."""

    run_id: str | None = None
    backend: str | None = None
    engine: str | None = None
    host: str | None = None
    cluster: str | None = None
    version: str | None = None
    commit: str | None = None
    official: bool = False

    @model_validator(mode="before")
    @classmethod
    def _old_spellings(cls, data: Any) -> Any:
        data = _respell(data, RUN_SPELLINGS)
        if isinstance(data, dict):
            data = {k: (None if _empty(v) else v) for k, v in data.items()}
            data["official"] = data.get("official") in (True, "true")
            for key in ("run_id", "backend", "engine", "host", "cluster", "version", "commit"):
                if data.get(key) is not None:
                    data[key] = str(data[key])
        return data


# -- jobs.json ----------------------------------------------------------------------------


class JobsEntry(FrozenModel):
    """One deployment of a run: its first job (InferenceX names) and every concurrency."""

    job: dict[str, Any]
    concurrencies: tuple[int, ...]


JOBS_FILE = TypeAdapter(list[JobsEntry])


# -- <job>/outcome.json -------------------------------------------------------------------


def parse_stamp(value: Any) -> datetime | None:
    """A time as outcome files hold one: epoch seconds, ISO 8601 (`Z` or an offset; naive
    is UTC) or `YYYYmmdd-HHMMSS`; None when it is none of those."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, tz=UTC)
    if isinstance(value, str) and value:
        try:
            stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            try:
                stamp = datetime.strptime(value, "%Y%m%d-%H%M%S")
            except ValueError:
                return None
        return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
    return None


class OutcomeRecord(LenientModel):
    """What the results store reads of a job's `outcome.json`: core.outcome.Outcome as this
    version writes it, or an older / other tool's (status spelled its own way, times under
    `times`, fields missing)."""

    status: JobStatus = JobStatus.UNKNOWN
    attempt: int = 1
    backend: str | None = None
    engine: str | None = None
    host: str | None = None
    cluster: str | None = None
    started: datetime | None = None
    finished: datetime | None = None
    reason: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _old_spellings(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        times = data.get("times")
        both = {**data, **times} if isinstance(times, Mapping) else dict(data)
        out = {k: (None if _empty(v) else v) for k, v in data.items() if k in cls.model_fields}
        out["status"] = JobStatus.parse(data.get("status"))
        out["attempt"] = data.get("attempt") or 1
        out["started"] = parse_stamp(_first(both, STARTED_SPELLINGS))
        out["finished"] = parse_stamp(_first(both, FINISHED_SPELLINGS))
        for key in ("backend", "engine", "host", "cluster", "reason"):
            if out.get(key) is not None:
                out[key] = str(out[key])
        return out


# -- <job>/env.json -----------------------------------------------------------------------


class ZoneRecord(LenientModel):
    """The host's time zone: its IANA name when it has one, and the UTC offset then."""

    name: str | None = None
    utc_offset_s: int | None = None

    @field_validator("name", mode="before")
    @classmethod
    def _a_name(cls, value: Any) -> Any:
        return value if isinstance(value, str) and value else None

    @field_validator("utc_offset_s", mode="before")
    @classmethod
    def _an_offset(cls, value: Any) -> Any:
        """Seconds within a day; anything else is no offset."""
        plain = isinstance(value, int | float) and not isinstance(value, bool)
        return int(value) if plain and abs(value) < 86400 else None


class EnvRecord(BaseModel):
    """`env.json`: versions, the accelerator the engine ran on (None: not known where it
    was written, e.g. a Slurm login node), the host's zone and the relevant environment
    (secret values redacted by the writer). A damaged zone or accelerator reads as None:
    it costs that field, never the job's points. Other keys (the backend) are kept."""

    model_config = ConfigDict(extra="allow", frozen=True)

    inferbench: str | None = None
    python: str | None = None
    platform: str | None = None
    host: str | None = None
    timezone: ZoneRecord | None = None  # raw nvidia-smi power logs are stamped in this zone
    accelerator: Accelerator | None = None
    environment: dict[str, str] = Field(default_factory=dict)

    @field_validator("timezone", "accelerator", mode="wrap")
    @classmethod
    def _damaged_is_none(cls, value: Any, handler: Any) -> Any:
        if not isinstance(value, Mapping | BaseModel):
            return None
        try:
            return handler(value)
        except ValidationError:
            return None

    @field_validator("inferbench", "python", "platform", "host", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return None if _empty(value) else str(value)

    @field_validator("environment", mode="before")
    @classmethod
    def _plain(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return {}
        return {str(k): str(v) for k, v in value.items()}


# -- <job>/plan.json ----------------------------------------------------------------------


class PlanCommand(LenientModel):
    """The deployment's command lines as a plan.json lists them (`command`, `commands` or
    `server_command`: a string, or a list of strings or argv lists), at most
    MAX_COMMAND_CHARS."""

    command: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _old_spellings(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        cmd = _first(data, COMMAND_SPELLINGS)
        if isinstance(cmd, list):
            parts = [" ".join(map(str, c)) if isinstance(c, list) else str(c) for c in cmd]
            return {"command": " && ".join(parts)[:MAX_COMMAND_CHARS] or None}
        return {"command": str(cmd)[:MAX_COMMAND_CHARS] if cmd else None}


# -- reading and writing ------------------------------------------------------------------

Record = TypeVar("Record", bound=BaseModel)


def read_record(path: Path, model: type[Record], what: str) -> Record:
    """`path` read as `model`; InputError naming the file and the first bad key."""
    try:
        return model.model_validate_json(read_file(path, MAX_RUN_FILE_BYTES, what=what))
    except ValidationError as exc:
        raise InputError(
            f"{what} is damaged: {validation_summary(exc)}",
            location=Location(file=path),
            hint=f"{what} is written by `inferbench run`: restore it, or remove the run",
        ) from None


def read_optional(path: Path, model: type[Record], what: str) -> Record:
    """`read_record`, or the model's defaults when the file is not there."""
    if not path.is_file():
        return model()
    return read_record(path, model, what)


def write_record(path: Path, record: BaseModel) -> None:
    atomic_write_text(path, record.model_dump_json(indent=2) + "\n")


def read_jobs(path: Path) -> list[JobsEntry]:
    try:
        return JOBS_FILE.validate_json(read_file(path, MAX_RUN_FILE_BYTES, what="jobs.json"))
    except ValidationError as exc:
        raise InputError(
            f"jobs.json is damaged: {validation_summary(exc)}",
            location=Location(file=path),
            hint="start a new run; this one's directory was edited or truncated",
        ) from None


def write_jobs(path: Path, entries: list[JobsEntry]) -> None:
    atomic_write_text(path, JOBS_FILE.dump_json(entries, indent=2).decode() + "\n")
