"""What the simulator runs: a typed deployment (model, GPU, pools, engine limits, workload).

Built from an srt-slurm recipe, a sweep job (InferenceX field names) or flags;
`validate` refuses topologies a real cluster would refuse, naming the limit and
by how much it is missed.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from inferbench.bench.preset import SA_BENCH
from inferbench.catalog.schema import GpuSpec, ModelSpec, Precision
from inferbench.config.topology import topology_label, worker_word
from inferbench.core.errors import InputError, Location
from inferbench.core.model import FrozenModel
from inferbench.engines.layout import WorkerLayout
from inferbench.sim.engine import EngineLimits
from inferbench.sim.engines import engine_profile
from inferbench.sim.perf import EfficiencyParams, Parallelism, Speculation, StepModel
from inferbench.sim.prefix import CacheSpec


class Mode(StrEnum):
    AGGREGATED = "aggregated"
    DISAGGREGATED = "disaggregated"


class PoolSpec(FrozenModel):
    """A pool of identical workers and the engine flags they run with."""

    role: str  # prefill, decode or aggregated
    workers: int = Field(ge=1)
    tp: int = Field(1, ge=1)
    dp: int = Field(1, ge=1)
    pp: int = Field(1, ge=1)
    expert_parallel: bool = False
    max_num_seqs: int = Field(256, ge=1)
    max_num_batched_tokens: int = Field(8192, ge=1)
    max_model_len: int | None = Field(None, ge=1)
    gpu_memory_utilization: float = Field(0.9, gt=0, le=1)
    block_size: int = Field(16, ge=1)
    kv_cache_dtype: Precision | None = None
    stream_interval: int = Field(1, ge=1)
    speculation: Speculation | None = None
    expert_slots: int = Field(0, ge=0)  # expert slots per MoE layer with EPLB on; 0: off
    chunked_prefill: bool | None = None  # None: the engine's default (its `SimProfile`)
    batch_wait_iters: int = Field(0, ge=0)  # TRT-LLM batch_wait_timeout_iters
    batch_wait_tokens_ratio: float = Field(0.0, ge=0, le=1)  # batch_wait_max_tokens_ratio

    @property
    def gpus_per_worker(self) -> int:
        return self.tp * self.dp * self.pp

    @property
    def gpus(self) -> int:
        return self.workers * self.gpus_per_worker

    @property
    def parallelism(self) -> Parallelism:
        return Parallelism(self.tp, self.dp, self.pp, self.expert_parallel)

    @property
    def layout(self) -> WorkerLayout:
        ep = self.tp * self.dp if self.expert_parallel else 1
        return WorkerLayout(self.gpus_per_worker, self.tp, self.dp, ep, self.pp)

    def describe(self) -> str:
        """One worker's word (`DEP8`, `TEP4`, `TP8`), as every command prints it."""
        return worker_word(self.layout)


class SimWorkload(FrozenModel):
    """The load: lengths (sa-bench random: U[floor(L*r), L]) and concurrencies."""

    isl: int = Field(ge=1)
    osl: int = Field(ge=1)
    concurrencies: tuple[int, ...] = Field(min_length=1)
    num_prompts: int | None = Field(None, ge=1)  # None: concurrency x num_prompts_mult
    num_prompts_mult: int = Field(SA_BENCH.prompts_per_conc, ge=1)
    random_range_ratio: float = Field(SA_BENCH.range_ratio, ge=0, le=1)

    def prompts_for(self, concurrency: int) -> int:
        return self.num_prompts or concurrency * self.num_prompts_mult


class SimDeployment(FrozenModel):
    """Everything one simulated deployment needs, validated and frozen."""

    name: str
    served_model: str  # the id the server answers to (the recipe's model.path)
    model: ModelSpec
    gpu: GpuSpec
    precision: Precision
    gpus_per_node: int = Field(ge=1)
    mode: Mode
    prefill: PoolSpec | None = None
    decode: PoolSpec  # the aggregated pool when mode is aggregated
    workload: SimWorkload
    efficiency: EfficiencyParams = EfficiencyParams()
    engine: str = "vllm"  # the registry key of the engine whose simulator profile costs it
    source: str = "flags"
    # what the job asks for that the model does not cover; printed and written to results
    warnings: tuple[str, ...] = ()
    cache: CacheSpec | None = None  # prefix caching and DRAM offload (agentic jobs)

    @property
    def prompt_pool(self) -> PoolSpec:
        """The pool that computes prompts (and holds the prefix caches): the prefill pool of a
        disaggregated deployment, else the aggregated one."""
        return self.prefill or self.decode

    @property
    def pools(self) -> tuple[PoolSpec, ...]:
        return (self.prefill, self.decode) if self.prefill else (self.decode,)

    @property
    def total_gpus(self) -> int:
        return sum(p.gpus for p in self.pools)

    @property
    def max_model_len(self) -> int:
        """The context a request may have: the limit of the pool that holds the whole
        sequence (decode, or the aggregated pool). A prefill-only pool holds the prompt
        alone and is judged on it (`validate`)."""
        return self.decode.max_model_len or self.workload.isl + self.workload.osl

    @property
    def stream_interval(self) -> int:
        return self.decode.stream_interval

    def describe(self) -> str:
        """The topology label every command prints: `TP8`, `2xTP8`, `2P1D DEP2/DEP8`."""
        if self.prefill is None:
            return topology_label(self.decode.layout, decode_workers=self.decode.workers)
        return topology_label(
            self.decode.layout,
            prefill=self.prefill.layout,
            prefill_workers=self.prefill.workers,
            decode_workers=self.decode.workers,
        )

    def step_model(self, pool: PoolSpec) -> StepModel:
        return StepModel(
            self.model,
            self.gpu,
            pool.parallelism,
            precision=self.precision,
            kv_precision=pool.kv_cache_dtype or Precision.BF16,
            eff=self.efficiency,
            # a worker inside one scale-up domain (an NVL72 rack) talks over NVLink even
            # when it spans compute trays; only beyond the domain does it use the NICs
            multi_node=pool.gpus_per_worker > max(self.gpus_per_node, self.gpu.scale_up_domain),
            spec=pool.speculation,
            expert_slots=pool.expert_slots if pool.expert_parallel else 0,
        )

    @property
    def typical_context(self) -> float:
        """Tokens a typical sequence holds at its end (sizes per-sequence KV memory)."""
        return float(self.workload.isl + self.workload.osl)

    def chunked_prefill(self, pool: PoolSpec) -> bool:
        if pool.chunked_prefill is not None:
            return pool.chunked_prefill
        return engine_profile(self.engine).chunked_prefill

    def limits(self, pool: PoolSpec) -> EngineLimits:
        budget = max(pool.max_num_batched_tokens, pool.max_num_seqs)
        # TRT-LLM holds contexts only when both knobs are set, and never with attention DP
        waits = pool.batch_wait_iters > 0 and pool.batch_wait_tokens_ratio > 0 and pool.dp == 1
        return EngineLimits(
            max_num_seqs=pool.max_num_seqs,
            max_num_batched_tokens=budget,
            block_size=pool.block_size,
            gpu_memory_utilization=pool.gpu_memory_utilization,
            max_model_len=pool.max_model_len or self.max_model_len,
            stream_interval=pool.stream_interval,
            chunked_prefill=self.chunked_prefill(pool),
            batch_wait_iters=pool.batch_wait_iters if waits else 0,
            batch_wait_tokens=int(pool.batch_wait_tokens_ratio * budget) if waits else 0,
            kv_admission=engine_profile(self.engine).kv_admission,
        )


def _refuse(message: str, hint: str, where: str) -> InputError:
    return InputError(message, hint=hint, location=Location(key=where))


def validate(dep: SimDeployment) -> SimDeployment:
    """Refuse an impossible topology, saying which limit and by how much."""
    for pool in dep.pools:
        _check_pool(dep, pool)
    prefill = dep.prefill
    if prefill is not None and prefill.max_model_len and dep.workload.isl > prefill.max_model_len:
        over = dep.workload.isl - prefill.max_model_len
        raise _refuse(
            f"isl = {dep.workload.isl} tokens is above the prefill workers' max-model-len "
            f"{prefill.max_model_len} by {over}; they would refuse every prompt",
            "raise the prefill pool's max-model-len (max_seq_len) or shorten isl",
            "prefill",
        )
    want = dep.workload.isl + dep.workload.osl
    if want > dep.max_model_len:
        raise _refuse(
            f"isl + osl = {want} tokens is above max-model-len {dep.max_model_len} "
            f"by {want - dep.max_model_len}; a server would answer every request with 400",
            "raise max-model-len or shorten isl/osl",
            "max-model-len",
        )
    return dep


def _check_pool(dep: SimDeployment, pool: PoolSpec) -> None:
    m, g, where = dep.model, dep.gpu, pool.role
    gpus = pool.gpus_per_worker
    if gpus > dep.gpus_per_node and gpus > g.scale_up_domain:
        raise _refuse(
            f"a {where} worker needs {gpus} GPUs but a {g.key} node holds {dep.gpus_per_node} "
            f"({gpus - dep.gpus_per_node} over) and its scale-up domain is {g.scale_up_domain}",
            "lower tp x dp x pp of the worker",
            where,
        )
    heads = m.attention.heads
    if heads % pool.tp:
        raise _refuse(
            f"{where} tensor-parallel-size {pool.tp} does not divide the {heads} attention heads "
            f"of {m.key} ({heads} % {pool.tp} = {heads % pool.tp})",
            "pick a TP that divides the head count",
            where,
        )
    if m.is_moe and pool.expert_parallel and m.experts % (pool.tp * pool.dp):
        raise _refuse(
            f"{where} expert-parallel size {pool.tp * pool.dp} does not divide the {m.experts} "
            f"experts of {m.key}",
            "pick an EP size that divides the expert count",
            where,
        )
    model = dep.step_model(pool)
    pool_bytes = model.kv_pool_bytes(pool.gpu_memory_utilization)
    if pool_bytes <= 0:
        eff = dep.efficiency
        rule = (
            f"(HBM {g.hbm_gb:g} GB - weights - {eff.activation_reserve_gb:g} GB activations) x "
            f"memory fraction {pool.gpu_memory_utilization}"
            if eff.fraction_after_weights
            else f"HBM {g.hbm_gb:g} GB x memory fraction {pool.gpu_memory_utilization} - "
            f"{eff.activation_reserve_gb:g} GB activations - weights"
        )
        raise _refuse(
            f"{m.key} at {dep.precision.value} needs {model.weight_bytes_per_gpu / 1e9:.1f} GB of "
            f"weights per GPU in the {where} pool and leaves no KV cache on a {g.key} "
            f"({dep.engine}: KV = {rule}): {-pool_bytes / 1e9:.1f} GB over",
            "use more GPUs per worker (TP/EP), a smaller precision, a bigger GPU or a higher "
            "memory fraction",
            where,
        )
    prefills = pool.role != "decode"  # a disaggregated decode pool receives its KV
    if (
        prefills
        and not dep.chunked_prefill(pool)
        and dep.workload.isl > pool.max_num_batched_tokens
    ):
        raise _refuse(
            f"{where} prompts of {dep.workload.isl} tokens do not fit the step's token budget "
            f"of {pool.max_num_batched_tokens} ({dep.workload.isl - pool.max_num_batched_tokens} "
            f"over), and {dep.engine} without chunked prefill schedules a prompt whole",
            "raise max_num_tokens (max-num-batched-tokens) or enable chunked prefill",
            where,
        )
    max_len = pool.max_model_len or dep.max_model_len
    capacity = model.kv_capacity_tokens(pool.gpu_memory_utilization, max_len)
    if capacity < max_len:
        raise _refuse(
            f"max-model-len {max_len} needs {max_len} tokens of KV for one sequence but a "
            f"{where} rank holds only {capacity} ({max_len - capacity} short)",
            "lower max-model-len, raise gpu-memory-utilization, use fp8 KV or more TP",
            where,
        )
