"""Roofline-style cost of one engine step on one worker.

A worker is `tp x dp x pp` GPUs running one model replica: `dp` data-parallel
attention ranks, each `tp` GPUs wide and `pp` stages deep, sharing the routed
experts over all `tp x dp` GPUs (expert parallel, or tensor-parallel experts when
EP is off). One step runs a batch on every rank in lockstep (the MoE layers
synchronise them), so the worker's step takes as long as its slowest rank.

Per GPU and step: compute = linear FLOPs (2 x active params x tokens, shared out
by the parallelism) + attention FLOPs (grow with context); memory = weights the
GPU holds that the batch touches + the KV cache its batch reads; the GPU takes
max(compute, memory) (a roofline, both overlapped). Communication (TP
all-reduce, EP all-to-all, PP hand-offs) is added, not overlapped. Every
efficiency is a named field of `EfficiencyParams`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from inferbench.catalog.schema import WEIGHT_BYTES, GpuSpec, ModelSpec, Precision


class EfficiencyParams(BaseModel):
    """The fractions of the roofline a real engine reaches, and fixed overheads."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gemm_efficiency: float = Field(
        0.55, gt=0, le=1, description="fraction of dense peak FLOP/s linear layers reach"
    )
    attention_efficiency: float = Field(
        0.4, gt=0, le=1, description="fraction of bf16 peak attention kernels reach"
    )
    memory_efficiency: float = Field(
        0.75, gt=0, le=1, description="fraction of HBM bandwidth weight and KV reads reach"
    )
    link_efficiency: float = Field(
        0.6, gt=0, le=1, description="fraction of scale-up bandwidth collectives reach"
    )
    network_efficiency: float = Field(
        0.5, gt=0, le=1, description="fraction of scale-out bandwidth transfers reach"
    )
    collective_latency_s: float = Field(
        8e-6, ge=0, description="fixed latency of one collective call"
    )
    step_overhead_s: float = Field(
        1.5e-3, ge=0, description="per-step CPU work: scheduling, sampling, launch"
    )
    moe_imbalance: float = Field(1.15, ge=1, description="busiest expert rank's load over the mean")
    activation_reserve_gb: float = Field(
        4.0, ge=0, description="per-GPU memory kept for activations and graphs"
    )
    kv_transfer_latency_s: float = Field(
        2e-3, ge=0, description="fixed setup time of one KV transfer"
    )
    activation_bytes: float = Field(
        2.0, gt=0, description="bytes per activation element sent in collectives"
    )


@dataclass(frozen=True)
class Parallelism:
    """How one worker splits the model: tensor, data (attention), expert, pipeline."""

    tp: int = 1
    dp: int = 1
    pp: int = 1
    expert_parallel: bool = False

    @property
    def gpus(self) -> int:
        return self.tp * self.dp * self.pp

    @property
    def ep(self) -> int:
        """Expert-parallel group size (vLLM: tp x dp when expert parallel is on)."""
        return self.tp * self.dp if self.expert_parallel else 1


@dataclass(frozen=True)
class RankBatch:
    """What one DP rank runs in a step: prefill chunks and decode sequences."""

    prefill_tokens: int = 0
    # sum over prefill chunks of chunk x (tokens before it + chunk / 2): causal attention work
    prefill_attention_ctx: float = 0.0
    # context tokens the prefill chunks read back from KV (earlier chunks)
    prefill_kv_read_tokens: int = 0
    decode_seqs: int = 0
    decode_ctx_tokens: int = 0  # sum of the decode sequences' context lengths

    @property
    def tokens(self) -> int:
        return self.prefill_tokens + self.decode_seqs


class StepModel:
    """Step time of one worker for one model, GPU, layout and precision."""

    def __init__(
        self,
        model: ModelSpec,
        gpu: GpuSpec,
        par: Parallelism,
        *,
        precision: Precision,
        kv_precision: Precision,
        eff: EfficiencyParams,
        multi_node: bool = False,
    ) -> None:
        self.model, self.gpu, self.par, self.eff = model, gpu, par, eff
        self.precision, self.kv_precision = precision, kv_precision
        wbytes = WEIGHT_BYTES[precision]
        tp, pp, moe_group = par.tp, par.pp, par.tp * par.dp
        expert_active = model.expert_params * (
            model.experts_per_token / model.experts if model.is_moe else 0.0
        )
        dense_active = max(model.active_params_b * 1e9 - expert_active, 0.0)
        self.dense_weight_bytes = model.dense_params * wbytes / (tp * pp)
        self.expert_weight_bytes = model.expert_params * wbytes / (moe_group * pp)
        self._gemm_flops_s = gpu.flops(precision) * eff.gemm_efficiency
        self._attn_flops_s = gpu.flops(Precision.BF16) * eff.attention_efficiency
        self._mem_bw = gpu.hbm_tbps * 1e12 * eff.memory_efficiency
        self._dense_flops_per_token = 2.0 * dense_active / (tp * pp)
        self._expert_flops_per_token = 2.0 * expert_active / (moe_group * pp) * eff.moe_imbalance
        qk, v = model.attention.score_dims
        self._attn_flops_per_ctx = 2.0 * model.attention.heads * (qk + v) * model.layers / (tp * pp)
        kv_split = min(tp, model.attention.kv_heads)  # heads beyond kv_heads replicate KV
        self.kv_bytes_per_token_gpu = model.kv_bytes(kv_precision) / (kv_split * pp)
        link = gpu.scale_up_gbps if not multi_node else gpu.scale_out_gbps
        link_eff = eff.link_efficiency if not multi_node else eff.network_efficiency
        self._link_bw = link * 1e9 * link_eff
        self._route_p = model.experts_per_token / model.experts if model.is_moe else 0.0
        self._comm_fixed, self._comm_per_token = self._comm_coefficients()

    @property
    def weight_bytes_per_gpu(self) -> float:
        return self.dense_weight_bytes + self.expert_weight_bytes

    def kv_capacity_tokens(self, gpu_memory_utilization: float) -> int:
        """Tokens of KV one DP rank can hold (each of its GPUs holds its share)."""
        free = (
            self.gpu.hbm_bytes * gpu_memory_utilization
            - self.weight_bytes_per_gpu
            - self.eff.activation_reserve_gb * 1e9
        )
        return max(int(free // self.kv_bytes_per_token_gpu), 0)

    def rank_time(self, batch: RankBatch, worker_tokens: int) -> float:
        """Seconds one DP rank needs for `batch` while the worker routes `worker_tokens`."""
        tokens = batch.tokens
        if tokens == 0 and worker_tokens == 0:
            return 0.0
        attn_ctx = batch.prefill_attention_ctx + batch.decode_ctx_tokens
        compute = (
            tokens * self._dense_flops_per_token + worker_tokens * self._expert_flops_per_token
        ) / self._gemm_flops_s + attn_ctx * self._attn_flops_per_ctx / self._attn_flops_s
        memory = self.dense_weight_bytes if tokens else 0.0
        if self._route_p:
            touched = 1.0 - (1.0 - self._route_p) ** worker_tokens
            memory += self.expert_weight_bytes * touched
        kv_tokens = batch.decode_ctx_tokens + batch.prefill_kv_read_tokens + tokens
        memory += kv_tokens * self.kv_bytes_per_token_gpu
        return max(compute, memory / self._mem_bw) + self.comm_time(tokens)

    def comm_time(self, tokens: int) -> float:
        """Seconds of communication for a rank batch of `tokens` (linear in tokens)."""
        return self._comm_fixed + self._comm_per_token * tokens if tokens else 0.0

    def _comm_coefficients(self) -> tuple[float, float]:
        """TP all-reduce (2 per layer), EP all-to-all (dispatch + combine per MoE layer), PP.

        Returns (fixed latency, seconds per token) of one step's collectives.
        """
        par, m, eff = self.par, self.model, self.eff
        act = m.hidden_size * eff.activation_bytes  # bytes per token
        layers = m.layers / par.pp
        fixed = per_token = 0.0
        if par.tp > 1:
            per_token += 2 * layers * 2.0 * (par.tp - 1) / par.tp * act / self._link_bw
            fixed += 2 * layers * eff.collective_latency_s
        if m.is_moe and par.ep > 1:
            remote = (par.ep - 1) / par.ep
            per_token += layers * 2.0 * act * m.experts_per_token * remote / par.tp / self._link_bw
            fixed += layers * 2 * eff.collective_latency_s
        elif m.is_moe and par.dp > 1:  # experts tensor-parallel over the DP ranks: all-gather
            per_token += layers * act * par.dp / self._link_bw
            fixed += layers * eff.collective_latency_s
        if par.pp > 1:
            per_token += (par.pp - 1) * act / self._link_bw
            fixed += (par.pp - 1) * eff.collective_latency_s
        return fixed, per_token

    def step_time(self, batches: list[RankBatch]) -> float:
        """One worker step: the slowest rank (lockstep), pipeline stages in sequence."""
        worker_tokens = sum(b.tokens for b in batches)
        if worker_tokens == 0:
            return 0.0
        slowest = max(self.rank_time(b, worker_tokens) for b in batches)
        return slowest * self.par.pp + self.eff.step_overhead_s


def kv_transfer_time(
    model: ModelSpec,
    tokens: int,
    *,
    kv_precision: Precision,
    link_gbps: float,
    parallel_links: int,
    eff: EfficiencyParams,
    network: bool,
) -> float:
    """Seconds to move `tokens` of KV from a prefill rank to a decode rank."""
    bw = link_gbps * 1e9 * (eff.network_efficiency if network else eff.link_efficiency)
    return eff.kv_transfer_latency_s + tokens * model.kv_bytes(kv_precision) / (bw * parallel_links)
