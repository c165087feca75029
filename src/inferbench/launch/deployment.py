"""One deployment = the sweep jobs that share a fingerprint (one server, several concurrencies).

A single-node sweep emits one job per concurrency; a multinode sweep one job with a list.
Both become one `Deployment`: the server is started once and driven at each concurrency.
The deployment is built from the typed wire `Job` (`inferbench.core.job`), the contract the
matrix stage publishes; it keeps the group's first job to write it into the job directory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from inferbench.config.agentic import SCENARIO
from inferbench.core.errors import InputError, Location
from inferbench.core.job import Job, JobWorkerBlock
from inferbench.core.lengths import served_max_model_len
from inferbench.engines.server import Offload


@dataclass(frozen=True)
class Deployment:
    fingerprint: str
    model: str
    model_prefix: str
    image: str
    precision: str
    framework: str
    runner: str
    isl: int
    osl: int
    concurrencies: tuple[int, ...]
    multinode: bool
    disagg: bool
    job: Job  # the first job of the group, as the matrix wrote it
    tp: int = 1
    pp: int = 1
    ep: int = 1
    dp_attn: bool = False
    spec_decoding: str = "none"
    max_model_len: int | None = None
    config_key: str | None = None
    prefill: JobWorkerBlock | None = None
    decode: JobWorkerBlock | None = None
    settings: Mapping[str, str] = field(default_factory=dict)  # additional-settings K=V
    config_file: str | None = None  # the srt-slurm recipe, relative to the tree root
    config_selector: str | None = None  # `override_x` of `file.yaml:override_x`
    scenario: str = "fixed-seq-len"
    eval_concurrencies: tuple[int, ...] = ()  # of the jobs marked `run-eval`
    eval_only: bool = False  # every job of the group is `eval-only`
    offload: Offload | None = None  # agentic jobs: prefix caching, KV offload, duration

    @property
    def agentic(self) -> bool:
        return self.scenario == SCENARIO

    @property
    def job_json(self) -> str:
        """The job as `job.json` holds it (InferenceX names, None fields left out)."""
        return self.job.model_dump_json(by_alias=True, exclude_none=True, indent=2) + "\n"


def _offload(job: Job) -> Offload | None:
    if job.scenario != SCENARIO:
        return None
    backend = job.kv_offload_backend
    return Offload(
        tier=job.kv_offloading or "none",
        backend=backend.name if backend is not None else None,
        backend_version=backend.version if backend is not None else None,
        total_cpu_dram_gb=job.total_cpu_dram_gb or 0,
        duration_s=job.duration or 3600,
    )


def _settings(job: Job) -> dict[str, str]:
    """additional-settings K=V of both pools (prefill first), then the resolved env."""
    out: dict[str, str] = {}
    for block in (job.prefill, job.decode):
        for item in (block.additional_settings or ()) if block is not None else ():
            name, sep, value = item.partition("=")
            if sep:
                out.setdefault(name.strip(), value.strip())
    if job.resolved_settings is not None:
        out.update(job.resolved_settings.env)
    return out


def deployment_from_jobs(jobs: Sequence[Job]) -> Deployment:
    """Build one deployment from the jobs sharing one fingerprint."""
    first = jobs[0]
    isl, osl = first.isl or 0, first.osl or 0  # agentic jobs have no lengths
    resolved = first.resolved_settings
    return Deployment(
        fingerprint=first.fingerprint,
        model=first.model,
        model_prefix=first.model_prefix,
        image=first.image,
        precision=first.precision,
        framework=first.framework,
        runner=first.runner,
        isl=isl,
        osl=osl,
        concurrencies=tuple(sorted({c for job in jobs for c in job.concurrencies})),
        multinode=first.is_multinode,
        disagg=first.disagg,
        job=first,
        tp=first.tp or 1,
        pp=first.pp or 1,
        ep=first.ep or 1,
        dp_attn=bool(first.dp_attn),
        spec_decoding=first.spec_decoding,
        max_model_len=served_max_model_len(first.max_model_len, isl, osl),
        config_key=first.config_key,
        prefill=first.prefill,
        decode=first.decode,
        settings=_settings(first),
        config_file=resolved.config_file if resolved else None,
        config_selector=resolved.config_selector if resolved else None,
        scenario=first.scenario,
        eval_concurrencies=_eval_concurrencies(jobs),
        eval_only=all(job.eval_only for job in jobs),
        offload=_offload(first),
    )


def _eval_concurrencies(jobs: Sequence[Job]) -> tuple[int, ...]:
    """Where the evals run: a multinode job's `eval-conc`, else each marked job's `conc`."""
    out: set[int] = set()
    for job in jobs:
        if job.run_eval or job.eval_only:
            out.update((job.eval_conc,) if job.eval_conc is not None else job.concurrencies)
    return tuple(sorted(out))


def deployment_from_dicts(dumps: Sequence[Mapping[str, Any]]) -> Deployment:
    """Build one deployment from jobs in their JSON form (e.g. a `job.json` read back)."""
    try:
        jobs = [Job.model_validate(dict(d)) for d in dumps]
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or None
        raise InputError(f"invalid job: {err['msg']}", location=Location(key=key)) from None
    return deployment_from_jobs(jobs)


def group_jobs(jobs: Iterable[Job]) -> list[Deployment]:
    """Group sweep jobs into deployments by fingerprint, keeping the sweep's order."""
    groups: dict[str, list[Job]] = {}
    for job in jobs:
        groups.setdefault(job.fingerprint, []).append(job)
    return [deployment_from_jobs(group) for group in groups.values()]
