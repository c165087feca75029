"""One deployment = the sweep jobs that share a fingerprint (one server, several concurrencies).

A single-node sweep emits one job per concurrency; a multinode sweep one job with a list.
Both become one `Deployment`: the server is started once and driven at each concurrency.
The deployment reads the job through its JSON form (InferenceX field names), the contract
the matrix stage publishes, so it does not depend on the Job model's attribute names.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from inferbench.errors import InputError, Location


class JobLike(Protocol):
    """What the launch stage needs of `inferbench.matrix.job.Job`."""

    def model_dump(
        self, *, mode: str = ..., by_alias: bool = ..., exclude_none: bool = ...
    ) -> dict[str, Any]: ...


@dataclass(frozen=True)
class WorkerPool:
    """A prefill or decode pool of a multinode job (InferenceX `prefill:` / `decode:`)."""

    num_worker: int
    tp: int
    ep: int
    dp_attn: bool
    pp: int = 1


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
    tp: int = 1
    pp: int = 1
    ep: int = 1
    dp_attn: bool = False
    spec_decoding: str = "none"
    max_model_len: int | None = None
    config_key: str | None = None
    prefill: WorkerPool | None = None
    decode: WorkerPool | None = None
    settings: Mapping[str, str] = field(default_factory=dict)  # additional-settings K=V
    config_file: str | None = None  # the srt-slurm recipe, relative to the tree root
    config_selector: str | None = None  # `override_x` of `file.yaml:override_x`
    scenario: str = "fixed-seq-len"
    job_json: str = "{}"  # the first job of the group, as the matrix wrote it
    eval_concurrencies: tuple[int, ...] = ()  # of the jobs marked `run-eval`
    eval_only: bool = False  # every job of the group is `eval-only`


def _int(data: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = data.get(key)
    value = default if value is None else value
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(
            f"job field {key!r} must be an integer, got {value!r}", location=Location(key=key)
        )
    return value


def _pool(data: Any, key: str) -> WorkerPool | None:
    if not isinstance(data, Mapping):
        return None
    return WorkerPool(
        num_worker=_int(data, "num-worker", 1),
        tp=_int(data, "tp", 1),
        ep=_int(data, "ep", 1),
        dp_attn=bool(data.get("dp-attn", False)),
        pp=_int(data, "pp", 1),
    )


def _settings(blocks: Iterable[Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for block in blocks:
        if not isinstance(block, Mapping):
            continue
        for item in block.get("additional-settings") or ():
            name, sep, value = str(item).partition("=")
            if sep:
                out.setdefault(name.strip(), value.strip())
    return out


def _concurrencies(values: Iterable[Any]) -> tuple[int, ...]:
    out: set[int] = set()
    for value in values:
        items = value if isinstance(value, list | tuple) else [value]
        out.update(int(v) for v in items)
    return tuple(sorted(out))


def _str(data: Mapping[str, Any], key: str, default: str = "") -> str:
    value = data.get(key, default)
    return default if value is None else str(value)


def deployment_from_dicts(dumps: list[dict[str, Any]]) -> Deployment:
    """Build one deployment from the JSON forms of jobs sharing one fingerprint."""
    first = dumps[0]
    fingerprint = _str(first, "fingerprint")
    if not fingerprint:
        raise InputError("job has no fingerprint", location=Location(key="fingerprint"))
    multinode = "prefill" in first or "decode" in first
    scenario = _str(first, "scenario-type", "fixed-seq-len")
    isl, osl = _int(first, "isl", 0), _int(first, "osl", 0)  # agentic jobs have no lengths
    resolved = first.get("resolved-settings") or {}
    settings = _settings([first.get("prefill"), first.get("decode"), first])
    settings.update({str(k): str(v) for k, v in (resolved.get("env") or {}).items()})
    return Deployment(
        fingerprint=fingerprint,
        model=_str(first, "model"),
        model_prefix=_str(first, "model-prefix"),
        image=_str(first, "image"),
        precision=_str(first, "precision"),
        framework=_str(first, "framework"),
        runner=_str(first, "runner"),
        isl=isl,
        osl=osl,
        concurrencies=_concurrencies(d.get("conc", []) for d in dumps),
        multinode=multinode,
        disagg=bool(first.get("disagg", False)),
        tp=_int(first, "tp", 1),
        pp=_int(first, "pp", 1),
        ep=_int(first, "ep", 1),
        dp_attn=bool(first.get("dp-attn", False)),
        spec_decoding=_str(first, "spec-decoding", "none"),
        max_model_len=first.get("max-model-len") or isl + osl + 256,
        config_key=first.get("config-key") or None,
        prefill=_pool(first.get("prefill"), "prefill"),
        decode=_pool(first.get("decode"), "decode"),
        settings=settings,
        config_file=resolved.get("config-file") or None,
        config_selector=resolved.get("config-selector") or None,
        scenario=scenario,
        job_json=json.dumps(first, indent=2, sort_keys=True) + "\n",
        eval_concurrencies=_eval_concurrencies(dumps),
        eval_only=all(bool(d.get("eval-only")) for d in dumps),
    )


def _eval_concurrencies(dumps: list[dict[str, Any]]) -> tuple[int, ...]:
    """Where the evals run: a multinode job's `eval-conc`, else each marked job's `conc`."""
    out: set[int] = set()
    for d in dumps:
        if d.get("run-eval") or d.get("eval-only"):
            value = d.get("eval-conc") or d.get("conc")
            items = value if isinstance(value, list | tuple) else [value]
            out.update(int(v) for v in items if isinstance(v, int) and not isinstance(v, bool))
    return tuple(sorted(out))


def group_jobs(jobs: Iterable[JobLike]) -> list[Deployment]:
    """Group sweep jobs into deployments by fingerprint, keeping the sweep's order."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for job in jobs:
        dump = job.model_dump(mode="json", by_alias=True, exclude_none=True)
        groups.setdefault(str(dump.get("fingerprint", "")), []).append(dump)
    return [deployment_from_dicts(dumps) for dumps in groups.values()]
