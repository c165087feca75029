"""A recipe on its own: workers fit their nodes, engine layout fills each worker, lengths and
batch limits hold the workload it serves."""

from __future__ import annotations

from collections.abc import Iterator

from inferbench.checks.engine_limits import (
    RoleLimits,
    flag_path,
    role_limits,
    serving_limits,
    written,
)
from inferbench.checks.finding import Severity
from inferbench.checks.registry import Problem, rule
from inferbench.checks.subjects import RecipeUse
from inferbench.config.recipe import WorkerMode, locate
from inferbench.config.recipe_schema import Recipe, Resources
from inferbench.core.lengths import MAX_MODEL_LEN_MARGIN


def nodes_needed(
    workers: int, gpus_per_worker: int, gpus_per_node: int, spread: bool = False
) -> int:
    """Nodes srtctl needs: workers of a node or more take whole nodes; smaller ones are packed
    by GPU offset, `gpus_per_node // gpus_per_worker` to a node, or one to a node with
    `resources.spread_workers`."""
    if workers <= 0 or gpus_per_worker <= 0:
        return 0
    if gpus_per_worker >= gpus_per_node:
        return workers * -(-gpus_per_worker // gpus_per_node)
    if spread:
        return workers
    per_node = gpus_per_node // gpus_per_worker
    return -(-workers // per_node)


def _pools(recipe: Recipe) -> list[tuple[str, int, int, tuple[WorkerMode, ...]]]:
    """(node key, nodes given, nodes needed, modes) per node pool."""
    res = recipe.resources
    gpn, spread = res.gpus_per_node, res.spread_workers
    if not res.disaggregated:
        need = nodes_needed(res.workers("aggregated"), res.gpus_per_agg_worker, gpn, spread)
        return [("agg_nodes", res.agg_nodes or 0, need, ("aggregated",))]
    prefill = (res.workers("prefill"), res.gpus_per_prefill_worker)
    decode = (res.workers("decode"), res.gpus_per_decode_worker)
    total = prefill[0] * prefill[1] + decode[0] * decode[1]
    # spread workers never share a node, so a shared pool needs a node per small worker
    spread_need = nodes_needed(*prefill, gpn, spread) + nodes_needed(*decode, gpn, spread)
    if res.decode_nodes and recipe.backend.colocates(total, gpn):
        # one pool of prefill_nodes + decode_nodes, workers packed contiguously
        given = (res.prefill_nodes or 0) + res.decode_nodes
        need = spread_need if spread else -(-total // gpn)
        return [("decode_nodes", given, need, ("prefill", "decode"))]
    if not res.decode_nodes:  # decode workers share the prefill nodes
        need = spread_need if spread else max(nodes_needed(*prefill, gpn), -(-total // gpn))
        return [("prefill_nodes", res.prefill_nodes or 0, need, ("prefill", "decode"))]
    return [
        ("prefill_nodes", res.prefill_nodes or 0, nodes_needed(*prefill, gpn, spread),
         ("prefill",)),
        ("decode_nodes", res.decode_nodes, nodes_needed(*decode, gpn, spread), ("decode",)),
    ]  # fmt: skip


def _describe(res: Resources, modes: tuple[WorkerMode, ...]) -> str:
    return " + ".join(f"{res.workers(m)} {m} x {res.gpus_per_worker(m)} GPUs" for m in modes)


@rule(
    "IB204",
    "workers-exceed-nodes",
    Severity.ERROR,
    RecipeUse,
    "the workers fit the nodes the recipe asks for",
    hint="raise the node count, or lower the workers or their GPUs",
)
def workers_exceed_nodes(use: RecipeUse) -> Iterator[Problem]:
    res = use.recipe.resources
    for key, given, need, modes in _pools(use.recipe):
        if need > given:
            yield Problem(
                f"{_describe(res, modes)} need {need} node(s) of {res.gpus_per_node} GPUs, "
                f"but {key} is {given}",
                locate(use.recipe, ("resources", key)),
            )


@rule(
    "IB205",
    "idle-nodes",
    Severity.WARNING,
    RecipeUse,
    "no allocated node is left without a worker",
    hint="lower the node count to what the workers use",
)
def idle_nodes(use: RecipeUse) -> Iterator[Problem]:
    res = use.recipe.resources
    for key, given, need, modes in _pools(use.recipe):
        if 0 < need < given:
            yield Problem(
                f"{_describe(res, modes)} use {need} node(s) but {key} is {given}: "
                f"{(given - need) * res.gpus_per_node} GPUs stay idle",
                locate(use.recipe, ("resources", key)),
            )


@rule(
    "IB206",
    "engine-parallel-mismatch",
    Severity.ERROR,
    RecipeUse,
    "engine TP x DP x PP equals the GPUs of each worker",
    hint="make the engine's parallel sizes multiply to the worker's GPUs",
)
def engine_parallel_mismatch(use: RecipeUse) -> Iterator[Problem]:
    recipe = use.recipe
    for mode in recipe.modes:
        if not len(recipe.flags(mode)) or recipe.resources.workers(mode) == 0:
            continue
        layout = recipe.layout(mode)
        gpus = recipe.resources.gpus_per_worker(mode)
        if layout.gpus != gpus:
            yield Problem(
                f"{mode} engine flags ask for {layout.describe()} but each {mode} worker has "
                f"{gpus} GPUs",
                locate(recipe, flag_path(recipe, mode, None)),
            )


@rule(
    "IB207",
    "max-model-len-short",
    Severity.ERROR,
    RecipeUse,
    "max-model-len (context length) holds the prompt on prefill workers, isl + osl elsewhere "
    "(the recipe's own benchmark lengths where it states them)",
    hint="raise max-model-len to isl + osl (the prompt alone on prefill workers)",
)
def max_model_len_short(use: RecipeUse) -> Iterator[Problem]:
    isl, osl = use.workload.isl, use.workload.osl
    if isl is None or osl is None:
        return
    recipe = use.recipe
    whose = "the recipe's benchmark" if use.workload.own_lengths else "the master scenario"
    for mode in recipe.modes:
        # a disaggregated prefill worker computes the prompt's KV and hands it to decode:
        # it never holds the output tokens, so the prompt is all it must fit
        need, what = (isl, f"isl = {isl}") if mode == "prefill" else (
            isl + osl, f"isl + osl = {isl} + {osl} = {isl + osl}")  # fmt: skip
        limits = role_limits(recipe, mode)
        value = limits.model_len
        if value is not None and value < need:
            yield Problem(
                f"{mode} {written(limits.max_model_len)} {value} is below {what} ({whose})",
                locate(recipe, flag_path(recipe, mode, limits.max_model_len)),
                hint=f"set it to at least {need}"
                + (
                    ""
                    if mode == "prefill"
                    else f" (InferenceX uses isl + osl + {MAX_MODEL_LEN_MARGIN} = "
                    f"{need + MAX_MODEL_LEN_MARGIN})"
                ),
            )


def _serving(use: RecipeUse) -> tuple[RoleLimits, int] | None:
    """The decoding role's limits and worker count, when it serves concurrent requests."""
    if not use.workload.concurrencies:
        return None
    limits = serving_limits(use.recipe)
    workers = use.recipe.resources.workers(limits.mode)
    return (limits, workers) if workers else None


# Queueing up to three quarters of a batch more than the decode workers hold is how the
# recipes keep every batch full at the top of a curve (TRT-LLM's `_333`/`_666` over 256/512
# slots, 1.3x; small-batch points up to 1.62x; SGLang's `maxtpt` 1.12-1.25x). Chosen from the
# real tree's decode-capacity defects read one by one (docs/conformance.md): precision 1.00
# and recall 0.71 at 1.75x (1.5x: 0.92, 0.71; 1.4x: 0.40, 0.71); the defects below it are
# slips of name or concurrency that IB602/IB307 report.
QUEUE_TOLERANCE = 1.75


@rule(
    "IB208",
    "decode-capacity-exceeded",
    Severity.WARNING,
    RecipeUse,
    f"the top concurrency a deployed recipe runs (its own benchmark's, else the master's) is "
    f"at most {QUEUE_TOLERANCE}x decode workers x DP ranks x max-num-seqs (deliberate queueing "
    "up to that); agentic users, idle between turns, are not requests in flight",
    hint="raise the batch limit or add decode workers, or lower the concurrency",
)
def decode_capacity_exceeded(use: RecipeUse) -> Iterator[Problem]:
    if not use.deployed or use.workload.agentic:  # nothing runs it / users, not requests
        return
    serving = _serving(use)
    if serving is None:
        return
    limits, workers = serving
    per_worker, top = limits.capacity, max(use.workload.concurrencies)
    if per_worker is None or top <= QUEUE_TOLERANCE * per_worker * workers:
        return
    capacity = per_worker * workers
    whose = "the recipe runs" if use.workload.own_concurrencies else "the master entry runs"
    yield Problem(
        f"concurrency {top} ({whose}) is {top / capacity:.2f}x the {limits.mode} capacity "
        f"{workers} worker(s) x {limits.schedulers} scheduler(s) x {limits.seqs} = {capacity} "
        f"(more than the {QUEUE_TOLERANCE}x that keeps batches full); requests will queue",
        locate(use.recipe, flag_path(use.recipe, limits.mode, limits.max_num_seqs)),
        hint=f"raise {written(limits.max_num_seqs, 'the batch limit')} to at least "
        f"{-(-top // (workers * limits.schedulers))} or add decode workers, if queueing is "
        "not the point",
    )


@rule(
    "IB209",
    "cudagraph-capture-short",
    Severity.WARNING,
    RecipeUse,
    "the cudagraph capture size covers the per-rank decode batch",
    hint="raise the cudagraph capture size to the per-rank decode batch",
)
def cudagraph_capture_short(use: RecipeUse) -> Iterator[Problem]:
    serving = _serving(use)
    if serving is None:
        return
    limits, workers = serving
    capture, seqs = limits.cudagraph_max, limits.seqs
    if capture is None:
        return
    ranks = workers * limits.layout.dp
    batch = -(-max(use.workload.concurrencies) // ranks)
    if seqs is not None:
        batch = min(batch, -(-seqs * limits.schedulers // limits.layout.dp))
    if capture < batch:
        yield Problem(
            f"{limits.mode} cudagraph capture size {capture} is below the per-rank batch "
            f"{batch} ({max(use.workload.concurrencies)} requests over {ranks} rank(s)); "
            "larger batches run without cudagraphs",
            locate(use.recipe, flag_path(use.recipe, limits.mode, limits.cudagraph)),
            hint=f"raise it to at least {batch}",
        )
