"""Expand master entries into sweep jobs (InferenceX's `generate_sweep_configs.py` semantics).

- Fixed-seq-len single-node: one job per concurrency (`conc` an int).
- Fixed-seq-len multinode: one job per search-space entry, `conc` the whole list, run in
  sequence on one deployment.
- Agentic single-node: one job per concurrency; agentic multinode: one job per concurrency too
  (InferenceX allocates one deployment per agentic concurrency), `conc` a one-element list.
- `max-model-len` = isl + osl + 256; `exp-name` = `<model-prefix>_<seq-len name>` (fixed-seq-len),
  `<model-prefix>_tp<tp>_conc<c>_<kv>[_spec-<s>]` (agentic single-node) and
  `<model-prefix>_p<n>x<tp>[ep<e>][dpa]_d..._conc<c>[_kv...]` (agentic multinode), as InferenceX.
- `duration` (agentic): the scenario's `duration:` where it has one (InferenceX's format before
  AgentX v1.0, 2026-07-02), else 3600 s, InferenceX's default since; an `offloading:` of that
  format is passed on as the row's `offloading` (no kv-offloading), named `_offload<x>`.
- `total-cpu-dram-gb` (agentic): the runner's available CPU DRAM (capped at 3 TB) x the
  scenario's `dram-utilization` x the share of the node's GPUs one server uses; 0 without
  offloading.
Filters are described in `inferbench.matrix.filters`, eval marking in `inferbench.matrix.evals`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import PurePosixPath
from typing import Any

from inferbench.config.entry_problems import unsweepable
from inferbench.config.master import (
    AgenticMultiNodeSearchSpace,
    AgenticSingleNodeSearchSpace,
    MasterConfig,
    MasterWorkerBlock,
    MultiNodeSearchSpace,
    SearchSpacePoint,
    SingleNodeSearchSpace,
)
from inferbench.config.project import Project
from inferbench.config.runners import RunnerRegistry
from inferbench.core.concurrency import ConcRule, expand_concurrency
from inferbench.core.errors import ConfigError, InputError, Location
from inferbench.core.job import (
    Job,
    JobKvOffloadBackend,
    JobRouter,
    JobWorkerBlock,
    ResolvedSettings,
)
from inferbench.core.lengths import max_model_len
from inferbench.core.seqlen import inferencex_seq_len_name
from inferbench.matrix.evals import apply_eval_mode
from inferbench.matrix.filters import EvalMode, SweepFilters, select_keys

DEFAULT_AGENTIC_DURATION_S = 3600
MAX_AGENTIC_CPU_DRAM_MIB = 2_861_022  # 3 TB (decimal) in MiB, InferenceX's cap
_MIB, _GB = 1024 * 1024, 1_000_000_000


@dataclass(frozen=True)
class NodeHardware:
    """What agentic DRAM sizing needs from `runners.yaml` `hardware:`."""

    gpus_per_node: int
    available_cpu_dram_mib: int | None = None


HardwareLookup = Callable[[str], NodeHardware | None]
# CONFIG_FILE path as written -> tree-relative path; None for one that leaves the tree (InferenceX
# passes it on; `check` reports it, IB2xx config-file-outside-tree)
RecipeResolver = Callable[[str], str | None]


@dataclass(frozen=True)
class ExpandContext:
    """Everything expansion needs besides the master entries."""

    runner_labels: frozenset[str] = frozenset()
    hardware: HardwareLookup = lambda _label: None
    resolve_recipe: RecipeResolver = lambda path: path
    runner_nodes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # label -> machines


def expand_masters(
    masters: Mapping[str, MasterConfig],
    filters: SweepFilters,
    context: ExpandContext,
    *,
    require_conc: bool = True,
    invalid: Collection[str] = (),
) -> list[Job]:
    """All jobs of the selected master entries, filtered, with evals marked per the filters.
    `require_conc`: a `--concurrency` value that no selected entry runs is an error.
    `invalid`: the keys of entries that failed validation (a --config-keys naming one is no
    typo: its error is reported). An entry that makes no job (`tp: 0`) raises its error."""
    unknown = [r for r in filters.runner_types if r not in context.runner_labels]
    if unknown and context.runner_labels:
        raise InputError(
            f"unknown runner type {unknown[0]!r}",
            hint=f"runners.yaml defines: {', '.join(sorted(context.runner_labels))}",
        )
    if filters.runner_node_filter is not None:
        _check_node_filter(filters.runner_node_filter, context)
    keys = (
        select_keys(filters.config_keys, masters, invalid) if filters.config_keys else list(masters)
    )
    jobs: list[Job] = []
    for key in keys:
        config = masters[key]
        entry = config.entry
        for problem in unsweepable(config):
            raise problem.error()
        if not filters.wants_node_type(entry.multinode):
            continue
        if not filters.wants_entry(key, entry.precision, entry.framework, entry.runner):
            continue
        machines = _machines(entry.runner, filters, context)
        if machines is not None and not machines:
            continue  # no machine of this label matches --runner-node-filter
        for point in entry.search_spaces():
            if filters.wants_scenario(point.scenario):
                point_jobs = _point_jobs(config, point, filters, context)
                jobs.extend(_on_machines(point_jobs, machines, entry.multinode))
    if filters.conc and require_conc:
        _check_conc_found(masters, filters, context, jobs)
    return apply_eval_mode(jobs, filters.evals)


def _check_node_filter(text: str, context: ExpandContext) -> None:
    names = {*context.runner_nodes, *(m for ms in context.runner_nodes.values() for m in ms)}
    if not any(text in name for name in names):
        raise InputError(
            f"--runner-node-filter {text!r} matches no runner label or machine"
            + ("" if names else " (the tree has no runners.yaml)"),
            location=Location(key="--runner-node-filter"),
            hint="give part of a machine name listed under labels: in runners.yaml"
            if names
            else "add configs/runners.yaml, or pass --runner-config",
        )


def _machines(label: str, filters: SweepFilters, context: ExpandContext) -> list[str] | None:
    """The runner values a `--runner-node-filter` expands `label` to (None: no filter), as
    InferenceX's generator: the label's machines that contain the text; `test-config` (config
    keys given) puts the label itself first when it contains the text too."""
    text = filters.runner_node_filter
    if text is None:
        return None
    candidates = list(context.runner_nodes.get(label, ()))
    if filters.config_keys and text in label:
        candidates.insert(0, label)
    return [name for name in dict.fromkeys(candidates) if text in name]


def _on_machines(jobs: list[Job], machines: list[str] | None, multinode: bool) -> list[Job]:
    """Each job once per machine, in the generator's order: single-node jobs machine by
    machine within each concurrency, multinode ones concurrency by concurrency within each
    machine."""
    if machines is None:
        return jobs
    if multinode:
        return [job.evolve(runner=m) for m in machines for job in jobs]
    return [job.evolve(runner=m) for job in jobs for m in machines]


def _check_conc_found(
    masters: Mapping[str, MasterConfig],
    filters: SweepFilters,
    context: ExpandContext,
    jobs: list[Job],
) -> None:
    found = {c for job in jobs for c in job.concurrencies}
    missing = [c for c in filters.conc if c not in found]
    if not missing:
        return
    unfiltered = expand_masters(
        masters, replace(filters, conc=(), evals=EvalMode.NONE), context, require_conc=False
    )
    have = sorted({c for job in unfiltered for c in job.concurrencies})
    raise InputError(
        f"{', '.join(map(str, missing))}: no selected entry runs "
        f"{'this concurrency' if len(missing) == 1 else 'these concurrencies'}",
        location=Location(key="--concurrency"),
        hint="give values of the entries' conc-list or conc-start..conc-end range"
        + (f" ({', '.join(map(str, have))})" if have else " (the other filters select no job)"),
    )


def _concurrencies(space: Any, filters: SweepFilters) -> list[int]:
    if isinstance(space, AgenticSingleNodeSearchSpace | AgenticMultiNodeSearchSpace):
        rule = ConcRule.STRICT
    else:
        rule = ConcRule.FILTER if isinstance(space, MultiNodeSearchSpace) else ConcRule.CLAMP
    values = expand_concurrency(
        conc_list=space.conc_list,
        conc_start=space.conc_start,
        conc_end=space.conc_end,
        step=filters.step,
        min_conc=filters.min_conc,
        max_conc=filters.max_conc,
        rule=rule,
    )
    return [c for c in values if c in filters.conc] if filters.conc else values


def _common(config: MasterConfig, space: Any) -> dict[str, Any]:
    entry = config.entry
    router = entry.router_for(space)
    return dict(
        config_key=config.key,
        image=entry.image,
        model=entry.model,
        model_prefix=entry.model_prefix,
        precision=entry.precision,
        framework=entry.framework,
        runner=entry.runner,
        spec_decoding=space.spec_decoding,
        disagg=entry.disagg,
        router=JobRouter(name=router.name, version=router.version) if router else None,
    )


def _point_jobs(
    config: MasterConfig, point: SearchSpacePoint, filters: SweepFilters, context: ExpandContext
) -> list[Job]:
    space = point.space
    if point.scenario == "fixed-seq-len":
        assert point.isl is not None and point.osl is not None
        if not filters.wants_seq_len(point.isl, point.osl):
            return []
        fixed = dict(
            isl=point.isl,
            osl=point.osl,
            max_model_len=max_model_len(point.isl, point.osl),
            run_eval=False,  # InferenceX writes run-eval: false on every fixed-seq-len row
            exp_name=f"{config.entry.model_prefix}_{inferencex_seq_len_name(point.isl, point.osl)}",
        )
    else:  # agentic jobs have no lengths: --seq-lens keeps them, as in InferenceX
        fixed = {}
    if isinstance(space, MultiNodeSearchSpace):
        return _multinode_jobs(config, point, space, filters, context, fixed)
    assert isinstance(space, SingleNodeSearchSpace)
    agentic = isinstance(space, AgenticSingleNodeSearchSpace)
    if filters.max_tp is not None and space.tp > filters.max_tp and not agentic:
        return []  # InferenceX applies --max-tp to fixed-seq-len single-node entries only
    return _single_node_jobs(config, point, space, filters, context, fixed)


def _single_node_jobs(
    config: MasterConfig,
    point: SearchSpacePoint,
    space: SingleNodeSearchSpace,
    filters: SweepFilters,
    context: ExpandContext,
    fixed: dict[str, Any],
) -> list[Job]:
    base = _common(config, space)
    ep = space.ep
    if filters.max_ep is not None and not isinstance(space, AgenticSingleNodeSearchSpace):
        ep = min(ep, filters.max_ep)  # InferenceX caps fixed-seq-len ep, keeping the entry
    base.update(
        tp=space.tp,
        pp=space.pp,
        dcp_size=space.dcp_size,
        pcp_size=space.pcp_size,
        ep=ep,
        dp_attn=space.dp_attn,
    )
    concs = _concurrencies(space, filters)
    if isinstance(space, AgenticSingleNodeSearchSpace):
        agentic = _agentic_fields(
            config, point, space, context, space.tp * space.pp * space.pcp_size
        )
        prefix, kv = config.entry.model_prefix, _kv_suffix(space)
        spec = f"_spec-{space.spec_decoding}" if space.spec_decoding != "none" else ""
        if space.offloading is not None:  # the name InferenceX gave it before AgentX v1.0
            kv, spec = f"offload{space.offloading}", ""
        names = [f"{prefix}_tp{space.tp}_conc{c}_{kv}{spec}" for c in concs]
        return _per_conc(concs, names, lambda c, n: Job(**base, **agentic, conc=c, exp_name=n))
    return _per_conc(concs, None, lambda c, _n: Job(**base, **fixed, conc=c))


def _per_conc(
    concs: Sequence[int | tuple[int]], names: list[str] | None, build: Callable[[Any, str], Job]
) -> list[Job]:
    """One job per concurrency. They differ only in conc and exp-name, which the fingerprint
    leaves out, so the first is validated and the others are copies of it (5x faster)."""
    if not concs:
        return []
    first = build(concs[0], names[0] if names else "")
    jobs = [first]
    for i, conc in enumerate(concs[1:], start=1):
        changes: dict[str, Any] = {"conc": conc}
        if names:
            changes["exp_name"] = names[i]
        jobs.append(first.evolve(**changes))
    return jobs


def _multinode_jobs(
    config: MasterConfig,
    point: SearchSpacePoint,
    space: MultiNodeSearchSpace,
    filters: SweepFilters,
    context: ExpandContext,
    fixed: dict[str, Any],
) -> list[Job]:
    concs = _concurrencies(space, filters)
    if not concs:
        return []
    base = _common(config, space)
    base.update(
        prefill=_worker(space.prefill),
        decode=_worker(space.decode),
        kv_p2p_transfer=config.entry.kv_p2p_for(space),
        resolved_settings=_resolved_settings(config, point, space, context),
    )
    if not isinstance(space, AgenticMultiNodeSearchSpace):
        return [Job(**base, **fixed, conc=tuple(concs))]
    agentic = _agentic_fields(config, point, space, context, _replica_gpus(space.prefill))
    kv = f"_{_kv_suffix(space)}" if space.kv_offloading not in (None, "none") else ""
    tags = f"{_worker_tag(space.prefill, 'p')}_{_worker_tag(space.decode, 'd')}"
    names = [f"{config.entry.model_prefix}_{tags}_conc{c}{kv}" for c in concs]
    return _per_conc(
        [(c,) for c in concs], names, lambda c, n: Job(**base, **agentic, conc=c, exp_name=n)
    )


def _worker(block: MasterWorkerBlock) -> JobWorkerBlock:
    return JobWorkerBlock(
        num_worker=block.num_worker,
        tp=block.tp,
        ep=block.ep,
        dp_attn=block.dp_attn,
        pp=block.pp,
        dcp_size=block.dcp_size,
        pcp_size=block.pcp_size,
        hardware=block.hardware,
        additional_settings=tuple(block.additional_settings.raw)
        if "additional_settings" in block.model_fields_set
        else None,
    )


def _worker_tag(block: MasterWorkerBlock, role: str) -> str:
    tag = f"{role}{block.num_worker}x{block.tp}"
    if block.ep != 1:
        tag += f"ep{block.ep}"
    return tag + ("dpa" if block.dp_attn else "")


def _split_ref(text: str | None) -> tuple[str | None, str | None]:
    if text is None:
        return None, None
    path, sep, selector = text.rpartition(":")
    if sep and path and selector and "/" not in selector:
        return path, selector
    return text, None


def _resolved_settings(
    config: MasterConfig,
    point: SearchSpacePoint,
    space: MultiNodeSearchSpace,
    context: ExpandContext,
) -> ResolvedSettings:
    env: dict[str, str] = {}
    for block in (space.prefill, space.decode):
        for name, value in block.additional_settings.pairs():
            env.setdefault(name, value)
    config_file = space.config_file
    eval_path, eval_selector = _split_ref(env.get("EVAL_CONFIG_FILE"))
    try:
        return ResolvedSettings(
            env=env,
            config_file=context.resolve_recipe(config_file.path) if config_file else None,
            config_selector=config_file.selector if config_file else None,
            eval_config_file=context.resolve_recipe(eval_path) if eval_path else None,
            eval_config_selector=eval_selector,
        )
    except InputError as exc:
        raise ConfigError(exc.message, location=config.locate(point.path), hint=exc.hint) from None


def _kv_suffix(space: AgenticSingleNodeSearchSpace | AgenticMultiNodeSearchSpace) -> str:
    if space.kv_offloading in (None, "none") or space.kv_offload_backend is None:
        return "kvnone"
    return f"kv{space.kv_offloading}-{space.kv_offload_backend.name}"


def _replica_gpus(block: MasterWorkerBlock) -> int:
    """GPUs of one prefill replica (only prefill offloads KV to DRAM; it sizes the budget)."""
    return block.tp * block.pp * block.pcp_size


def _agentic_fields(
    config: MasterConfig,
    point: SearchSpacePoint,
    space: AgenticSingleNodeSearchSpace | AgenticMultiNodeSearchSpace,
    context: ExpandContext,
    server_gpus: int,
) -> dict[str, Any]:
    backend = space.kv_offload_backend
    older = space.offloading if isinstance(space, AgenticSingleNodeSearchSpace) else None
    return dict(
        scenario="agentic-coding",
        kv_offloading=None if older is not None else space.kv_offloading or "none",
        offloading=older,
        kv_offload_backend=JobKvOffloadBackend(name=backend.name, version=backend.version)
        if backend
        else None,
        duration=point.duration or DEFAULT_AGENTIC_DURATION_S,
        total_cpu_dram_gb=_dram_gb(config, point, space, context, server_gpus),
    )


def _dram_gb(
    config: MasterConfig,
    point: SearchSpacePoint,
    space: AgenticSingleNodeSearchSpace | AgenticMultiNodeSearchSpace,
    context: ExpandContext,
    server_gpus: int,
) -> int:
    if space.kv_offloading != "dram":
        return 0
    hardware = context.hardware(config.entry.runner)
    if hardware is None or hardware.available_cpu_dram_mib is None:
        # InferenceX's generator sized no multinode offload before upstream #2170 (2026-07-20)
        # and wrote 0; `check` reports the missing facts (IB154)
        if isinstance(space, AgenticMultiNodeSearchSpace):
            return 0
        raise ConfigError(
            f"runner {config.entry.runner!r} has no hardware facts to size the DRAM offload",
            location=config.locate((*point.path, "kv-offloading")),
            hint=f"add `{config.entry.runner}: {{gpus-per-node: N, available-cpu-dram-mib: M}}` "
            "under hardware: in runners.yaml (keyed by the exact runner label)",
        )
    gpus_per_node = hardware.gpus_per_node
    share = min(server_gpus, gpus_per_node)  # a server spanning nodes fills each of them
    available = min(hardware.available_cpu_dram_mib, MAX_AGENTIC_CPU_DRAM_MIB)
    utilization = Decimal(str(point.dram_utilization or 1))
    budget = Decimal(available) * _MIB * utilization * share / gpus_per_node
    return int(budget / _GB)


def registry_context(registry: RunnerRegistry | None, resolve: RecipeResolver) -> ExpandContext:
    """Runner labels and hardware facts from a runner registry, recipes resolved by `resolve`."""

    def hardware(label: str) -> NodeHardware | None:
        spec = registry.hardware_for(label) if registry is not None else None
        if spec is None:
            return None
        return NodeHardware(spec.gpus_per_node, spec.available_cpu_dram_mib)

    return ExpandContext(
        runner_labels=frozenset(registry.labels) if registry is not None else frozenset(),
        hardware=hardware,
        resolve_recipe=resolve,
        runner_nodes=registry.labels if registry is not None else {},
    )


def project_context(project: Project) -> ExpandContext:
    """Runner labels, hardware facts and recipe resolution, taken from a loaded tree."""
    root = project.root.resolve()
    registry = project.runners.registry if project.runners is not None else None

    recipes = PurePosixPath(project.layout.recipes)
    prefix = project.layout.recipe_prefix

    def resolve(reference: str) -> str | None:
        # Lexically, as `Project.resolve_recipe` maps it (prefix -> recipe folder) but without
        # its realpath and stat calls, a third of a sweep's time on a 500-recipe tree; anything
        # that would leave the tree goes through it for its error.
        relative = posixpath.normpath(reference.removeprefix(prefix))
        if relative.startswith(("/", "../")) or relative in ("..", ".") or recipes.is_absolute():
            try:
                path = project.resolve_recipe(reference).path
            except ConfigError:
                return None
            return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        return (recipes / relative).as_posix()

    return registry_context(registry, resolve)


def expand_project(project: Project, filters: SweepFilters) -> list[Job]:
    """Every job of a loaded benchmark tree that `filters` selects, evals marked."""
    invalid = {e.config_key for e in project.master_errors if e.config_key is not None}
    return expand_masters(project.masters, filters, project_context(project), invalid=invalid)
