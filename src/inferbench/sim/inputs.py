"""Build a `SimDeployment` from an srt-slurm recipe, a sweep job JSON, or flags."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from inferbench.catalog import Catalog, load_catalog, parse_precision
from inferbench.catalog.schema import ModelSpec, Precision
from inferbench.config.recipe import Recipe, load_recipe, locate, split_reference
from inferbench.config.recipe_schema import WorkerMode
from inferbench.core.concurrency import parse_concurrency_list
from inferbench.core.errors import InputError, Location
from inferbench.core.fsread import MAX_CONFIG_BYTES, check_regular, read_text_file
from inferbench.core.lengths import served_max_model_len
from inferbench.core.model import FrozenModel
from inferbench.engines import Limit, find_engine
from inferbench.engines.flags import batch_schedulers, engine_layout
from inferbench.engines.layout import WorkerLayout, worker_layout
from inferbench.engines.values import flag_int, switch_on
from inferbench.sim.caching import cache_from_job
from inferbench.sim.calibration import efficiency_for
from inferbench.sim.deployment import Mode, PoolSpec, SimDeployment, SimWorkload, validate
from inferbench.sim.engines import costing_engine
from inferbench.sim.features import (
    expert_slots_from_flags,
    speculation_from_flags,
    speculation_from_job,
    unmodelled_flags,
)
from inferbench.sim.perf import Speculation


class Overrides(FrozenModel):
    """Command-line values that replace what the recipe or job says."""

    gpu: str | None = None
    model_spec: str | None = None
    isl: int | None = None
    osl: int | None = None
    concurrency: tuple[int, ...] | None = None
    num_prompts: int | None = None
    stream_interval: int | None = None
    catalog_files: tuple[str, ...] = ()
    kv_cache_dtype: str | None = None
    engine: str | None = None
    spec_draft_tokens: int | None = None
    spec_acceptance: float | None = None
    calibration: str | None = None  # a calibration file (`inferbench sim calibrate`)


AGENTIC_ISL, AGENTIC_OSL = 16384, 512  # sa-bench lengths an agentic deployment is sized by
# `sim serve` without --isl/--osl: requests bring their own lengths (up to the served context);
# these only size a typical sequence (the KV a windowed-attention layer keeps per sequence)
SERVE_ISL, SERVE_OSL = 8192, 1024

# PoolSpec field -> the engine limit that sets it (the config layer names its flags)
_LIMIT_FIELDS = {"max_num_seqs": Limit.MAX_NUM_SEQS, "max_model_len": Limit.MAX_MODEL_LEN}


def _field_flags(engine: str) -> dict[str, tuple[str, ...]]:
    """PoolSpec field -> the `engine` flags that set it, in lookup order (the first given wins).

    A dotted name (`kv-cache-config.dtype`) is a key inside a mapping-valued flag.
    """
    spec = find_engine(engine)
    if spec is None or not spec.known_flags:
        raise InputError(f"no flags of engine {engine!r} are known to the simulator")
    fields = {field: spec.limit_flags[limit] for field, limit in _LIMIT_FIELDS.items()}
    return fields | {field: (flag,) for field, flag in spec.sim_flags.items()}


def concurrency_list(value: Any, *, where: str = "--concurrency") -> tuple[int, ...]:
    """`2048`, `"4x8x16"` or `[4, 8]` -> (4, 8, 16); each a whole number of at least 1."""
    try:
        return parse_concurrency_list(value)
    except ValueError as exc:
        raise InputError(f"{where}: {exc}", hint="write e.g. 64, 4x8x16 or 4,8,16") from None


def _job_concurrencies(path: Path, value: Any) -> tuple[int, ...]:
    try:
        return concurrency_list(value, where="conc")
    except InputError as exc:
        raise InputError(exc.message, hint=exc.hint, location=Location(path, key="conc")) from None


def _flag(flags: Mapping[str, Any], name: str) -> Any:
    """A flag's value; `outer.inner` looks inside a mapping-valued flag (TRT-LLM's YAML)."""
    outer, _, inner = name.partition(".")
    value = flags.get(outer)
    if not inner:
        return value
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, Mapping):
        return None
    for key, item in value.items():
        if str(key).replace("_", "-").lower() == inner:
            return item
    return None


def _pool(
    role: str,
    workers: int,
    layout: WorkerLayout,
    flags: Mapping[str, Any],
    engine: str,
    speculation: Speculation | None = None,
    expert_slots: int = 0,
) -> PoolSpec:
    fields: dict[str, Any] = {
        "role": role,
        "workers": workers,
        "tp": layout.tp,
        "dp": layout.dp,
        "pp": layout.pp,
        "expert_parallel": layout.ep > 1,
    }
    for field, names in _field_flags(engine).items():
        value = next((v for n in names if (v := _flag(flags, n)) is not None), None)
        if value is not None:
            fields[field] = value
    given = flag_int(fields.get("max_num_seqs"))
    if given is not None and switch_on(flags.get("enable-dp-attention")):
        # The simulator's limit is per DP rank; with DP attention SGLang's batch limit is the
        # whole worker's, split over its ranks (plain DP replicas each keep the full limit).
        fields["max_num_seqs"] = max(1, given * batch_schedulers(engine, layout.dp) // layout.dp)
    kv = _flag(flags, "kv-cache-dtype") or _flag(flags, "kv-cache-config.dtype")
    if kv is not None:
        fields["kv_cache_dtype"] = parse_precision(str(kv), where="kv-cache-dtype")
    if speculation is not None and role != "prefill":
        fields["speculation"] = speculation
    if expert_slots and layout.ep > 1:
        fields["expert_slots"] = expert_slots
    try:
        return PoolSpec.model_validate(fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(
            f"{role} engine flags: {err['msg']}", location=Location(key=role)
        ) from None


# flags read besides the PoolSpec fields
_EXTRA_FLAGS = ("kv-cache-dtype", "enable-dp-attention")


def _catalog(overrides: Overrides) -> Catalog:
    return load_catalog(overrides.catalog_files)


def _override_drafts(
    spec: Speculation | None, overrides: Overrides, model: ModelSpec
) -> Speculation | None:
    """--spec-draft-tokens / --spec-acceptance replace what the recipe says."""
    if overrides.spec_draft_tokens is None:
        return spec
    if spec is None:
        spec = speculation_from_job("mtp", model, None, overrides.spec_acceptance)[0]
    assert spec is not None
    return spec.model_copy(update={"draft_tokens": overrides.spec_draft_tokens})


def from_recipe(spec: str, overrides: Overrides) -> SimDeployment:
    """`FILE[:selector]` (an srt-slurm recipe) -> a validated SimDeployment."""
    text, selector = split_reference(spec)
    if not Path(text).is_file():
        if os.path.lexists(text):  # a FIFO, device or folder: say which
            check_regular(text, option="--recipe")
        raise InputError(
            "recipe file not found",
            location=Location(Path(text), key="--recipe"),
            hint="give an srt-slurm recipe YAML as FILE or FILE:SELECTOR",
        )
    recipe = load_recipe(Path(text), selector)
    res, backend = recipe.resources, recipe.backend
    engine = overrides.engine or backend.type
    model = _catalog(overrides).model(overrides.model_spec or recipe.model.path)
    flag_engine = backend.type  # the flags are written for the recipe's backend
    names = {
        name.partition(".")[0] for group in _field_flags(flag_engine).values() for name in group
    }
    modes: tuple[WorkerMode, ...] = ("prefill", "decode") if res.disaggregated else ("aggregated",)
    pools: dict[str, PoolSpec] = {}
    warnings: list[str] = []
    for mode in modes:
        flags = backend.flags(mode)
        layout = engine_layout(backend.type, flags.get)
        _check_fits(recipe, mode, layout)
        wanted = {name: flags.get(name) for name in (*names, *_EXTRA_FLAGS)}
        drafting, notes = speculation_from_flags(
            flag_engine, flags.get, model, overrides.spec_acceptance
        )
        drafting = _override_drafts(drafting, overrides, model)
        notes += unmodelled_flags(flag_engine, flags.get)
        warnings += [f"{mode}: {n}" if len(modes) > 1 else n for n in notes]
        slots = expert_slots_from_flags(flag_engine, flags.get, model)
        pools["decode" if mode == "aggregated" else mode] = _pool(
            mode, res.workers(mode) or 1, layout, wanted, flag_engine, drafting, slots
        )
    bench = recipe.benchmark
    workload: dict[str, Any] = {"concurrencies": (1,)}
    if bench is not None:
        workload = {
            "isl": bench.isl,
            "osl": bench.osl,
            "concurrencies": bench.concurrencies or (1,),
            "num_prompts_mult": bench.num_prompts_mult,
            "random_range_ratio": bench.random_range_ratio,
        }
    return _build(
        name=recipe.name,
        served=recipe.model.path,
        precision=recipe.model.precision,
        gpu=res.gpu_type,
        per_node=res.gpus_per_node,
        pools=pools,
        workload=workload,
        overrides=overrides,
        source=f"recipe {text}" + (f":{selector}" if selector else ""),
        engine=engine,
        warnings=warnings,
    )


def _check_fits(recipe: Recipe, mode: WorkerMode, layout: WorkerLayout) -> None:
    """Engine TP x DP x PP must equal the worker's GPUs, and the workers must fit their nodes."""
    res = recipe.resources
    gpus, workers = res.gpus_per_worker(mode), res.workers(mode) or 1
    if layout.gpus != gpus:
        diff = abs(layout.gpus - gpus)
        raise InputError(
            f"{mode} engine layout {layout.describe()} uses {layout.gpus} GPUs but each {mode} "
            f"worker has {gpus} ({diff} {'over' if layout.gpus > gpus else 'idle'})",
            location=locate(recipe, ("backend", f"{recipe.backend.type}_config", mode)),
            hint="make tp x dp x pp equal the GPUs per worker",
        )
    nodes = {"prefill": res.prefill_nodes, "decode": res.decode_nodes, "aggregated": res.agg_nodes}
    have = (nodes[mode] or 0) * res.gpus_per_node
    if have and workers * gpus > have:
        raise InputError(
            f"{workers} {mode} workers x {gpus} GPUs need {workers * gpus} GPUs but "
            f"{nodes[mode]} node(s) hold {have} ({workers * gpus - have} over)",
            location=locate(recipe, ("resources",)),
            hint="add nodes or lower the workers",
        )


def _job_acceptance(value: Any, path: Path) -> float | tuple[float, ...] | None:
    """A job's `spec-acceptance`: one rate for every draft position, or a list by position."""
    if value is None:
        return None
    where = Location(path, key="spec-acceptance")
    items = value if isinstance(value, list | tuple) else [value]
    rates: list[float] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int | float) or not 0 <= item <= 1:
            raise InputError(
                f"spec-acceptance must be a rate in [0, 1] or a list of them, got {value!r}",
                location=where,
                hint="e.g. 0.8 (every draft position) or [0.85, 0.7, 0.6] (by position)",
            )
        rates.append(float(item))
    if not rates:
        raise InputError("spec-acceptance is an empty list", location=where)
    return rates[0] if not isinstance(value, list | tuple) else tuple(rates)


def from_job(spec: str, overrides: Overrides) -> SimDeployment:
    """A sweep job as JSON (one object, or a list with `FILE:INDEX`) -> a SimDeployment."""
    text, _, index = (
        spec.rpartition(":") if ":" in spec and not Path(spec).exists() else (spec, "", "")
    )
    path = Path(text)
    hint = "give a job JSON `inferbench sweep --format json` wrote, as FILE or FILE:INDEX"
    text = read_text_file(path, MAX_CONFIG_BYTES, what="sweep job file", option="--job")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(
            f"cannot read sweep job JSON: {exc}", location=Location(path, key="--job"), hint=hint
        ) from None
    if isinstance(data, list):
        pick = int(index) if index.isdigit() else -1 if index else 0
        if not 0 <= pick < len(data):
            raise InputError(
                f"no job {index or 0} in a list of {len(data)} jobs",
                location=Location(path, key="--job"),
                hint=f"give FILE:INDEX, INDEX from 0 to {len(data) - 1}" if data else hint,
            )
        data = data[pick]
    if not isinstance(data, dict):
        raise InputError("a sweep job is a JSON object", location=Location(path), hint=hint)
    return from_job_data(data, overrides, path=path)


def from_job_data(data: Mapping[str, Any], overrides: Overrides, *, path: Path) -> SimDeployment:
    """A sweep job's fields -> a SimDeployment. `sim-flags` (vLLM spelling) adds engine flags
    a job does not carry: the memory fraction, max-num-seqs, token budget, KV dtype."""
    pools: dict[str, PoolSpec] = {}
    model = _catalog(overrides).model(overrides.model_spec or str(data.get("model", "")))
    mml = data.get("max-model-len")
    concs = _job_concurrencies(path, data.get("conc", 1))
    # a job names no engine limits; InferenceX launch scripts size max-num-seqs to the load
    common: dict[str, Any] = {"max-num-seqs": max(256, *concs)}
    cache = cache_from_job(dict(data))
    if mml or cache is not None:
        common["max-model-len"] = served_max_model_len(mml, data.get("isl"), data.get("osl"))
    if data.get("kv-cache-dtype"):
        common["kv-cache-dtype"] = data["kv-cache-dtype"]
    extra = data.get("sim-flags") or {}
    if not isinstance(extra, Mapping):
        raise InputError("sim-flags must be a mapping", location=Location(path, key="sim-flags"))
    common.update(extra)
    acceptance: float | tuple[float, ...] | None = overrides.spec_acceptance
    if acceptance is None:
        acceptance = _job_acceptance(data.get("spec-acceptance"), path)
    drafting, warnings = speculation_from_job(
        data.get("spec-decoding"), model, overrides.spec_draft_tokens, acceptance
    )
    slots = expert_slots_from_flags("vllm", common.get, model)  # sim-flags: vLLM spelling
    if isinstance(data.get("decode"), dict):
        for role in ("prefill", "decode"):
            block = data.get(role) or {}
            layout = worker_layout(
                int(block.get("tp", 1)),
                int(block.get("ep", 1)),
                bool(block.get("dp-attn")),
                int(block.get("pp", 1)),
            )
            pools[role] = _pool(
                role, int(block.get("num-worker", 1)), layout, common, "vllm", drafting, slots
            )
    else:
        layout = worker_layout(
            int(data.get("tp", 1)),
            int(data.get("ep", 1)),
            bool(data.get("dp-attn")),
            int(data.get("pp", 1)),
        )
        pools["decode"] = _pool("aggregated", 1, layout, common, "vllm", drafting, slots)
    workload = {
        # an agentic job has no lengths; these only size the sa-bench view of the deployment
        "isl": data.get("isl") or (AGENTIC_ISL if cache is not None else None),
        "osl": data.get("osl") or (AGENTIC_OSL if cache is not None else None),
        "concurrencies": concs,
    }
    runner = str(data.get("runner", "")).removeprefix("cluster:")  # agentic: one fleet
    dep = _build(
        name=str(data.get("exp-name") or data.get("config-key") or path.stem),
        served=str(data.get("model", "")),
        precision=str(data.get("precision") or "bf16"),
        gpu=runner,
        per_node=0,
        pools=pools,
        workload=workload,
        overrides=overrides,
        source=f"job {path}",
        engine=overrides.engine or str(data.get("framework") or "vllm"),
        warnings=warnings,
    )
    return dep if cache is None else dep.model_copy(update={"cache": cache})


def from_flags(
    *,
    model: str,
    gpu: str,
    precision: str,
    tp: int,
    dp: int,
    pp: int,
    expert_parallel: bool,
    workers: int,
    engine: Mapping[str, Any],
    isl: int,
    osl: int,
    concurrency: tuple[int, ...],
    overrides: Overrides,
    check: bool = True,
) -> SimDeployment:
    """An aggregated deployment from command-line flags. `check=False` leaves its layout
    unchecked: a topology sweep builds its own layouts and checks each of them."""
    layout = WorkerLayout(tp * dp * pp, tp, dp, tp * dp if expert_parallel else 1, pp)
    spec_model = _catalog(overrides).model(overrides.model_spec or model)
    spec = _override_drafts(None, overrides, spec_model)
    warnings: list[str] = []
    if spec is not None and overrides.spec_acceptance is None:
        curve = ", ".join(f"{a:.2f}" for a in spec.position_acceptance())
        warnings.append(
            f"speculative decoding: acceptance rate not given, assumed the default curve "
            f"{curve} by draft position (pass --spec-acceptance)"
        )
    flags = dict(engine)
    if overrides.kv_cache_dtype:
        flags["kv-cache-dtype"] = overrides.kv_cache_dtype
    pools = {"decode": _pool("aggregated", workers, layout, flags, "vllm", spec)}
    workload = {"isl": isl, "osl": osl, "concurrencies": concurrency}
    return _build(
        name=f"{model}-{gpu}",
        served=model,
        precision=precision,
        gpu=gpu,
        per_node=0,
        pools=pools,
        workload=workload,
        overrides=overrides,
        source="flags",
        engine=overrides.engine or "vllm",
        warnings=warnings,
        check=check,
    )


def _build(
    *,
    name: str,
    served: str,
    precision: str,
    gpu: str,
    per_node: int,
    pools: dict[str, PoolSpec],
    workload: dict[str, Any],
    overrides: Overrides,
    source: str,
    engine: str,
    warnings: list[str],
    check: bool = True,
) -> SimDeployment:
    catalog: Catalog = _catalog(overrides)
    gpu_spec = catalog.gpu(overrides.gpu or gpu)
    model_spec = catalog.model(overrides.model_spec or served)
    for key, value in (
        ("isl", overrides.isl),
        ("osl", overrides.osl),
        ("concurrencies", overrides.concurrency),
        ("num_prompts", overrides.num_prompts),
    ):
        if value is not None:
            workload[key] = value
    if workload.get("isl") is None or workload.get("osl") is None:
        raise InputError("the workload needs isl and osl", hint="pass --isl and --osl")
    try:
        load = SimWorkload.model_validate(workload)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(f"workload: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    update: dict[str, Any] = {}
    if overrides.stream_interval is not None:
        update["stream_interval"] = overrides.stream_interval
    if overrides.kv_cache_dtype is not None:
        update["kv_cache_dtype"] = parse_precision(overrides.kv_cache_dtype, where="kv-cache-dtype")
    if update:
        pools = {role: pool.model_copy(update=update) for role, pool in pools.items()}
    engine_key, stand_in = costing_engine(engine)
    if stand_in is not None:
        warnings = [*warnings, stand_in]
    prec: Precision = parse_precision(precision)
    dep = SimDeployment(
        name=name,
        served_model=served or model_spec.key,
        model=model_spec,
        gpu=gpu_spec,
        precision=prec,
        gpus_per_node=per_node or gpu_spec.gpus_per_node,
        mode=Mode.DISAGGREGATED if "prefill" in pools else Mode.AGGREGATED,
        prefill=pools.get("prefill"),
        decode=pools["decode"],
        workload=load,
        efficiency=efficiency_for(engine_key, gpu_spec, overrides.calibration),
        engine=engine_key,
        source=source,
        warnings=tuple(warnings),
    )
    return validate(dep) if check else dep


def model_context(model: str, overrides: Overrides) -> int | None:
    """The catalog's context length of `model` (what an engine serves when not told less)."""
    return _catalog(overrides).model(overrides.model_spec or model).context_length


def serve_lengths(context: int | None) -> tuple[int, int]:
    """isl and osl that size a served deployment whose requests bring their own lengths:
    SERVE_ISL/SERVE_OSL, shortened to fit the served context."""
    if context is None:
        return SERVE_ISL, SERVE_OSL
    osl = max(1, min(SERVE_OSL, context // 8))
    return max(1, min(SERVE_ISL, context - osl)), osl


def for_serving(dep: SimDeployment) -> SimDeployment:
    """The deployment `sim serve` serves. Its context is the max-model-len the recipe, the job
    or --max-model-len sets, else the model's own (the catalog's `context_length`, what an
    engine serves when not told less): never isl + osl, which only describe an estimate's
    workload, so a replayed trace's long turns are not refused with 400."""
    if any(p.max_model_len for p in dep.pools):
        return dep
    context = dep.model.context_length
    if context is None:
        raise InputError(
            f"the served context of {dep.model.key} is not known: no max-model-len is set and "
            "its catalog entry has no context_length",
            location=Location(key="--max-model-len"),
            hint="pass --max-model-len N (the engine's), or add context_length to the model's "
            "catalog entry (--catalog FILE)",
        )
    update: dict[str, Any] = {"decode": dep.decode.model_copy(update={"max_model_len": context})}
    if dep.prefill is not None:
        update["prefill"] = dep.prefill.model_copy(update={"max_model_len": context})
    return validate(dep.model_copy(update=update))
