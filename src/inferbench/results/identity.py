"""Build an `Identity` from InferenceX job fields (job.json, file names, --identity).

The job uses InferenceX names: `model-prefix`, `conc`, `tp`/`ep`/`dp-attn` for a single
node, `prefill`/`decode` blocks (`num-worker`, `tp`, `ep`, `dp-attn`, `pp`, `pcp-size`,
`hardware`) for multinode. `num-worker: 0` on decode means aggregated.
Worker layouts and image references are normalised by the config layer
(`inferbench.config.layout`, `inferbench.config.images`), so the store, the checks
and the launcher agree on what "the same point" is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from inferbench.config.images import ImageRefError, normalize_image
from inferbench.core.errors import InputError, Location
from inferbench.engines.layout import Spelling, worker_layout
from inferbench.results.record import Identity, Pool, PoolRole

REQUIRED = ("model-prefix", "precision", "framework", "isl", "osl", "conc")

# The stored note for each ambiguous (DEP) spelling; part of the identity, so the
# text stays as first stored.
LAYOUT_NOTES = {
    Spelling.DEP_ENGINE_TP: "DEP written as tp=1 ep=N",
    Spelling.DEP_TP_IS_GPUS: "DEP written as tp=N ep=N",
}


def canonical_image(image: str) -> str:
    """The config layer's normalised reference; a non-reference (`.sqsh` path) as written."""
    try:
        return normalize_image(image).normalized
    except ImageRefError:
        return image.strip()


def parse_identity_arg(text: str) -> dict[str, str]:
    """`key=value,key=value` (dotted keys reach into pools: `prefill.tp=4`)."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise InputError(
                f"--identity expects key=value pairs, got {part!r}",
                hint="e.g. --identity model-prefix=dsr1,precision=fp8,framework=vllm",
            )
        out[key.strip()] = value.strip()
    return out


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """Turn `prefill.tp=4` style keys into nested blocks; nested input passes through."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        if "." in key:
            block, _, sub = key.partition(".")
            out.setdefault(block, {})[sub] = value
        elif isinstance(value, Mapping) and key in out:
            out[key].update(value)
        else:
            out[key] = dict(value) if isinstance(value, Mapping) else value
    return out


def _int(job: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = job.get(key, default)
    if value is None:
        raise InputError(f"identity is missing {key!r}", location=Location(key=key))
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InputError(
            f"identity field {key!r} must be an integer, got {value!r}", location=Location(key=key)
        ) from None


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in {"1", "true", "yes", "on"}


def hardware_of(job: Mapping[str, Any]) -> str:
    if job.get("hardware"):
        return str(job["hardware"])
    runner = str(job.get("runner") or "")
    runner = runner.removeprefix("cluster:")
    name = runner.split("-")[0].split("_")[0]
    if not name:
        raise InputError(
            "identity has neither 'hardware' nor 'runner'", location=Location(key="runner")
        )
    return name


def _pool(role: PoolRole, block: Mapping[str, Any], hardware: str) -> Pool:
    dp_attn = _bool(block.get("dp-attn", False))
    layout = worker_layout(
        tp=_int(block, "tp", block.get("gpus", 1)),
        ep=_int(block, "ep", 1),
        dp_attn=dp_attn,
        pp=_int(block, "pp", 1),
        pcp=_int(block, "pcp-size", 1),
    )
    workers = _int(block, "num-worker", 1)
    gpus_per_worker = layout.gpus
    note = LAYOUT_NOTES.get(layout.spelling)
    if "gpus" in block and "tp" not in block:
        # Only a GPU count is known (srt-slurm file names): one worker of that many GPUs.
        gpus_per_worker, workers = _int(block, "gpus"), 1
        note = "topology from GPU counts only"
    return Pool(
        role=role,
        workers=workers,
        gpus_per_worker=gpus_per_worker,
        tp=layout.tp,
        dp=layout.dp,
        ep=layout.ep,
        pp=layout.pp,
        pcp=layout.pcp,
        dp_attn=dp_attn,  # the flag as written (DP1 with dp-attn stays flagged)
        hardware=str(block.get("hardware") or hardware),
        layout_note=note,
    )


def _pools(job: Mapping[str, Any], hardware: str) -> tuple[Pool, ...]:
    prefill, decode = job.get("prefill"), job.get("decode")
    if isinstance(prefill, Mapping) and isinstance(decode, Mapping):
        pools = [_pool("prefill", prefill, hardware)]
        if _int(decode, "num-worker", 1) > 0:
            pools.append(_pool("decode", decode, hardware))
        return tuple(pools)
    block = dict(job)
    if "tp" not in block and "total-gpus" in block:
        block["gpus"] = block["total-gpus"]
    return (_pool("worker", block, hardware),)


def identity_from_job(
    job: Mapping[str, Any], *, concurrency: int | None = None, location: Location | None = None
) -> Identity:
    """Validate InferenceX job fields into an Identity; missing fields -> InputError."""
    job = nest(job)
    if concurrency is not None:
        job["conc"] = concurrency
    missing = [k for k in REQUIRED if job.get(k) in (None, "")]
    if missing:
        raise InputError(
            "result has no identity for: " + ", ".join(missing),
            location=location,
            hint="pass --identity key=value,... (or a YAML file), or keep InferenceX file names",
        )
    conc = job["conc"]
    if isinstance(conc, list):
        raise InputError(
            "a point needs one concurrency, got a list",
            location=location,
            hint="give conc one number (--identity conc=N)",
        )
    hardware = hardware_of(job)
    pools = _pools(job, hardware)
    prefill = next((p for p in pools if p.role != "decode"), pools[0])
    decode = next((p for p in pools if p.role == "decode"), prefill)
    try:
        return Identity(
            model=str(job.get("model") or job["model-prefix"]),
            model_prefix=str(job["model-prefix"]),
            precision=str(job["precision"]).lower(),
            framework=str(job["framework"]).lower(),
            image=canonical_image(str(job["image"])) if job.get("image") else None,
            hardware_prefill=prefill.hardware,
            hardware_decode=decode.hardware,
            runner=str(job["runner"]) if job.get("runner") else None,
            disagg=_bool(job.get("disagg", False)) and len(pools) > 1,
            pools=pools,
            spec_decoding=str(job.get("spec-decoding") or "none"),
            isl=_int(job, "isl"),
            osl=_int(job, "osl"),
            concurrency=_int(job, "conc"),
            range_ratio=float(job["random-range-ratio"]) if job.get("random-range-ratio") else None,
            range_mode=str(job["range-mode"]) if job.get("range-mode") else None,
            dataset=str(job.get("dataset") or "random"),
            recipe_fingerprint=_opt_str(job.get("recipe-fingerprint")),
            job_fingerprint=_opt_str(job.get("fingerprint")),
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        raise InputError(
            f"invalid identity: {key}: {first['msg']}",
            location=location,
            hint=f"correct {key} in the job's fields (job.json, the file name or --identity)",
        ) from None


def _opt_str(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
