"""A multinode master entry against the recipe its CONFIG_FILE names: the same deployment?"""

from __future__ import annotations

from collections.abc import Iterator

from inferbench.checks.engine_limits import flag_path, serving_limits
from inferbench.checks.finding import Severity
from inferbench.checks.registry import Problem, rule
from inferbench.checks.subjects import DeploymentSubject
from inferbench.config.images import same_image
from inferbench.config.master import MasterWorkerBlock
from inferbench.config.recipe import WorkerMode, locate
from inferbench.engines import Limit, flag_engines


def _shapes_differ(d: DeploymentSubject) -> bool:
    """Aggregated on one side, disaggregated on the other (worker-count-mismatch says so)."""
    return d.space.aggregated == d.recipe.disaggregated


def paired_modes(d: DeploymentSubject) -> list[tuple[str, MasterWorkerBlock, WorkerMode]]:
    """(master block name, block, recipe mode): prefill/decode, or prefill -> aggregated;
    none when the shapes differ, as then no worker has a counterpart."""
    if _shapes_differ(d):
        return []
    if d.recipe.disaggregated:
        return [("prefill", d.space.prefill, "prefill"), ("decode", d.space.decode, "decode")]
    return [("prefill", d.space.prefill, "aggregated")]


# the `resources` keys of each worker mode's count and GPUs
_WORKER_KEYS = {"prefill": "prefill_workers", "decode": "decode_workers",
                "aggregated": "agg_workers"}  # fmt: skip
_GPU_KEYS = {"prefill": "gpus_per_prefill", "decode": "gpus_per_decode",
             "aggregated": "gpus_per_agg"}  # fmt: skip

_SPECULATIVE_FLAGS = ", ".join(
    f"{spec.display} {spec.spelled(spec.limit_flags[Limit.SPECULATIVE][0])}"
    for spec in flag_engines()
)


@rule(
    "IB301",
    "container-mismatch",
    Severity.ERROR,
    DeploymentSubject,
    "the recipe container is the master image (compared normalised, aliases resolved)",
    hint="use the master entry's image as the recipe's model.container (or an alias the "
    "cluster maps to it)",
)
def container_mismatch(d: DeploymentSubject) -> Iterator[Problem]:
    container = d.recipe.model.container
    if any(container in cf.cluster.image_aliases for cf in d.target.clusters):
        return  # the cluster's srtslurm.yaml maps the alias to the job's image
    for cluster in d.target.clusters:
        container = cluster.cluster.containers.get(container, container)
    sources = {table.container_source(container) for table in d.target.launchers}
    if sources & {"image", "other"}:
        # an alias the launcher's srtslurm.yaml maps to the squash file of the job's image
        # (or to a file it picks itself, which cannot be compared)
        return
    if container.endswith(".sqsh"):
        return  # a squashfs file on the cluster: nothing to compare
    image = d.config.entry.image
    if not same_image(image, container):
        yield Problem(
            f"recipe container {d.recipe.model.container!r} differs from the master image "
            f"{image!r} of {d.config.key}",
            locate(d.recipe, ("model", "container")),
            hint=f"use {image!r} in both places",
        )


@rule(
    "IB302",
    "precision-mismatch",
    Severity.ERROR,
    DeploymentSubject,
    "the recipe precision is the master precision",
    hint="make the recipe's model.precision and the master entry's precision the same",
)
def precision_mismatch(d: DeploymentSubject) -> Iterator[Problem]:
    recipe_precision, master = d.recipe.model.precision, d.config.entry.precision
    # InferenceX's fp4 covers both 4-bit formats a recipe may name (nvfp4, mxfp4)
    written = recipe_precision.lower().removeprefix("nv").removeprefix("mx")
    if written != master.lower():
        yield Problem(
            f"recipe precision {recipe_precision!r} differs from {d.config.key} precision "
            f"{master!r}",
            locate(d.recipe, ("model", "precision")),
        )


def _replicas_in_one_engine(
    d: DeploymentSubject, block: MasterWorkerBlock, mode: WorkerMode
) -> bool:
    """The master counts data-parallel replicas as workers where the recipe runs them inside
    one engine (`vllm serve --data-parallel-size 2` owning 2 x TP16): the same GPUs."""
    res, layout = d.recipe.resources, d.recipe.layout(mode)
    if layout.dp <= 1 or res.workers(mode) * layout.dp != block.num_worker:
        return False
    return res.gpus_per_worker(mode) == block.layout.gpus * layout.dp


@rule(
    "IB303",
    "worker-count-mismatch",
    Severity.ERROR,
    DeploymentSubject,
    "recipe worker counts equal the master num-worker (decode 0 = aggregated)",
    hint="make the recipe's prefill_workers/decode_workers (agg_workers) equal the master "
    "entry's num-worker",
)
def worker_count_mismatch(d: DeploymentSubject) -> Iterator[Problem]:
    if _shapes_differ(d):
        shape = "aggregated" if d.space.aggregated else "disaggregated"
        other = "disaggregated" if d.recipe.disaggregated else "aggregated"
        yield Problem(
            f"{d.config.key} is {shape} (decode num-worker {d.space.decode.num_worker}) but "
            f"the recipe is {other}",
            locate(d.recipe, ("resources",)),
        )
        return
    res = d.recipe.resources
    for name, block, mode in paired_modes(d):
        if res.workers(mode) != block.num_worker and not _replicas_in_one_engine(d, block, mode):
            key = _WORKER_KEYS[mode]
            yield Problem(
                f"recipe {key} is {res.workers(mode)} but {d.config.key} {name} num-worker is "
                f"{block.num_worker}",
                locate(d.recipe, ("resources", key)),
            )


@rule(
    "IB304",
    "worker-gpus-mismatch",
    Severity.ERROR,
    DeploymentSubject,
    "recipe GPUs per worker equal the master tp (or ep for DEP) of that worker",
    hint="make the recipe's gpus_per_prefill/gpus_per_decode equal the master worker's tp "
    "(ep for DEP)",
)
def worker_gpus_mismatch(d: DeploymentSubject) -> Iterator[Problem]:
    res = d.recipe.resources
    for name, block, mode in paired_modes(d):
        want, have = block.layout.gpus, res.gpus_per_worker(mode)
        # ep wider than tp: the experts span tp x dp ranks (TP4 x DP4 = EP16), one worker
        spans_ep = block.ep > block.tp and have == block.ep
        if want != have and not spans_ep and not _replicas_in_one_engine(d, block, mode):
            key = _GPU_KEYS[mode]
            yield Problem(
                f"recipe {mode} workers have {have} GPUs but {d.config.key} {name} is "
                f"{block.layout.describe()} (tp {block.tp}, ep {block.ep}, dp-attn "
                f"{str(block.dp_attn).lower()})",
                locate(d.recipe, ("resources", key)),
            )


@rule(
    "IB305",
    "expert-parallel-mismatch",
    Severity.ERROR,
    DeploymentSubject,
    "expert parallel is on in the recipe exactly when the master ep > 1",
    hint="turn expert parallel on in the recipe exactly when the master entry's ep is above 1",
)
def expert_parallel_mismatch(d: DeploymentSubject) -> Iterator[Problem]:
    for name, block, mode in paired_modes(d):
        if not len(d.recipe.flags(mode)):
            continue
        recipe_ep = d.recipe.layout(mode).expert_parallel
        if recipe_ep != (block.ep > 1):
            state = "on" if recipe_ep else "off"
            yield Problem(
                f"recipe {mode} expert parallel is {state} but {d.config.key} {name} ep is "
                f"{block.ep}",
                locate(d.recipe, flag_path(d.recipe, mode, None)),
            )


@rule(
    "IB306",
    "spec-decoding-mismatch",
    Severity.ERROR,
    DeploymentSubject,
    "spec-decoding in the master entry has a speculative config in the recipe (and back)",
    hint="make the master entry's spec-decoding and the recipe's speculative setting agree",
)
def spec_decoding_mismatch(d: DeploymentSubject) -> Iterator[Problem]:
    limits = serving_limits(d.recipe)
    mode = limits.mode
    wanted = d.space.spec_decoding != "none"
    if wanted and not limits.has_speculative:
        yield Problem(
            f"{d.config.key} sets spec-decoding: {d.space.spec_decoding} but the recipe's "
            f"{mode} config has no speculative setting",
            locate(d.recipe, flag_path(d.recipe, mode, None)),
            hint=f"add the engine's speculative flag ({_SPECULATIVE_FLAGS})",
        )
    elif not wanted and limits.has_speculative and limits.speculative is not None:
        yield Problem(
            f"the recipe's {mode} config enables speculative decoding but {d.config.key} "
            "sets no spec-decoding",
            locate(d.recipe, flag_path(d.recipe, mode, limits.speculative)),
            hint="set spec-decoding on the master entry, or drop the flag",
        )


@rule(
    "IB307",
    "concurrency-mismatch",
    Severity.ERROR,
    DeploymentSubject,
    "the recipe concurrencies equal the master's",
    hint="make conc-list (or conc-start/conc-end) and benchmark.concurrencies agree",
)
def concurrency_mismatch(d: DeploymentSubject) -> Iterator[Problem]:
    bench = d.recipe.benchmark
    if bench is None or bench.concurrencies is None:
        return
    recipe_conc, master = sorted(set(bench.concurrencies)), sorted(set(d.concurrencies))
    # srt-slurm's TRT-LLM recipes state the total for a master conc per decode worker
    # (c16 ctx1_gen3 runs 48): the same load, written per worker
    workers = d.recipe.resources.workers(d.recipe.modes[-1])
    per_worker = sorted({c * workers for c in master})
    if recipe_conc != master and recipe_conc != per_worker:
        yield Problem(
            f"recipe concurrencies {recipe_conc} differ from {d.config.key} {master}",
            locate(d.recipe, ("benchmark", "concurrencies")),
            hint="make conc-list (or conc-start/conc-end) and benchmark.concurrencies agree",
        )


@rule(
    "IB308",
    "seq-len-mismatch",
    Severity.ERROR,
    DeploymentSubject,
    "the recipe isl/osl equal the master scenario's",
    hint="make the recipe's benchmark isl/osl equal the master scenario's isl/osl",
)
def seq_len_mismatch(d: DeploymentSubject) -> Iterator[Problem]:
    bench = d.recipe.benchmark
    if bench is None:
        return
    for name, recipe_value, master_value in (
        ("isl", bench.isl, d.point.isl),
        ("osl", bench.osl, d.point.osl),
    ):
        if recipe_value is not None and master_value is not None and recipe_value != master_value:
            yield Problem(
                f"recipe benchmark {name} {recipe_value} differs from {d.config.key} "
                f"{name} {master_value}",
                locate(d.recipe, ("benchmark", name)),
            )
