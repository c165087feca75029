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
from typing import Annotated

from pydantic import Field

from inferbench.catalog.schema import (
    KV_BYTES_PER_ELEMENT,
    WEIGHT_BYTES,
    GpuSpec,
    ModelSpec,
    Precision,
)
from inferbench.core.model import FrozenModel

Rate = Annotated[float, Field(ge=0, le=1)]


class EfficiencyParams(FrozenModel):
    """The fractions of the roofline a real engine reaches, and fixed overheads.

    Defaults are the engine-neutral starting point; `inferbench.sim.engines` sets the
    per-engine ones (each engine's `SimProfile`) and a calibration file replaces the fitted ones.
    """

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
    layer_overhead_s: float = Field(
        2e-5, ge=0, description="fixed per-layer time of one step: launches, gaps, small ops"
    )
    expert_overhead_s: float = Field(
        0.0,
        ge=0,
        description="per-step time per layer for each routed expert a rank runs: a fused-MoE "
        "kernel handles every expert the batch touches as its own small GEMM, whose fixed cost "
        "does not shrink with the expert's size",
    )
    seq_overhead_s: float = Field(
        0.0,
        ge=0,
        description="per-step time per scheduled sequence (decoding or prefilling a chunk) "
        "of the busiest rank: sampling, scheduling, input preparation and output processing "
        "grow with the batch",
    )
    chunk_overhead_s: float = Field(
        0.0,
        ge=0,
        description="per-step time per prefill chunk of the busiest rank beyond the "
        "per-sequence part: the chunk's host-side input preparation (its tokens' positions "
        "and slots, its attention metadata), paid once per chunk, so a prompt split into "
        "small chunks pays it once per step it spans",
    )
    front_latency_s: float = Field(
        0.0,
        ge=0,
        description="fixed latency before a request's first token that the GPU does not see: "
        "HTTP front end, tokenisation, the scheduler's receive interval",
    )
    moe_imbalance: float = Field(1.15, ge=1, description="busiest expert rank's load over the mean")
    eplb_imbalance: float = Field(
        1.05, ge=1, description="the same with expert-parallel load balancing (EPLB) on"
    )
    activation_reserve_gb: float = Field(
        0.0, ge=0, description="per-GPU memory the engine keeps out of the KV pool (activations)"
    )
    fraction_after_weights: bool = Field(
        False,
        description="the engine's memory fraction is of the memory left after weights "
        "(TensorRT-LLM free_gpu_memory_fraction), not of all HBM (vLLM, SGLang)",
    )
    kv_transfer_latency_s: float = Field(
        2e-3, ge=0, description="fixed setup time of one KV transfer"
    )
    activation_bytes: float = Field(
        2.0, gt=0, description="bytes per activation element sent in collectives"
    )


class Speculation(FrozenModel):
    """Speculative decoding (MTP, EAGLE, draft models): `draft_tokens` proposed per step.

    Draft position i (1-based) is accepted with probability a_i given that the ones before
    it were: `acceptances` when given (one per position, the last repeated), else
    `acceptance` x `acceptance_decay`^(i-1). A step yields 1 + sum_i prod_{j<=i} a_j tokens
    on average (the accepted prefix plus the target model's bonus token). A draft head
    reused for later positions drafts them worse (see features.DEFAULT_ACCEPTANCE_DECAY),
    so a constant rate (decay 1) overstates what 3 draft tokens yield.
    """

    draft_tokens: int = Field(ge=1, le=16)
    acceptance: float = Field(ge=0, le=1)  # the first draft position's
    acceptance_decay: float = Field(1.0, gt=0, le=1)
    acceptances: tuple[Rate, ...] = ()  # per position; overrides acceptance and decay
    draft_layers: int = Field(1, ge=1)  # layers of the draft module, costed like the target's
    method: str = "mtp"

    def position_acceptance(self) -> tuple[float, ...]:
        """The conditional acceptance of each of the `draft_tokens` positions."""
        k = self.draft_tokens
        if self.acceptances:
            given = self.acceptances
            return tuple(given[min(i, len(given) - 1)] for i in range(k))
        return tuple(self.acceptance * self.acceptance_decay**i for i in range(k))

    @property
    def tokens_per_step(self) -> float:
        total, reach = 1.0, 1.0
        for a in self.position_acceptance():
            reach *= a
            total += reach
        return total


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


@dataclass(slots=True)  # not frozen: a rank refills its decode-only batch every step
class RankBatch:
    """What one DP rank runs in a step: prefill chunks and decode sequences."""

    prefill_tokens: int = 0
    # sum over prefill chunks of chunk x (tokens before it + chunk / 2): causal attention work
    prefill_attention_ctx: float = 0.0
    # context tokens the prefill chunks read back from KV (earlier chunks)
    prefill_kv_read_tokens: int = 0
    decode_seqs: int = 0
    decode_ctx_tokens: int = 0  # sum of the decode sequences' context lengths
    # sequences with a prefill chunk in the step: vLLM computes logits and samples for every
    # scheduled request, a partial prefill's discarded, so each pays the per-sequence work
    prefill_seqs: int = 0

    @property
    def tokens(self) -> int:
        return self.prefill_tokens + self.decode_seqs


class StepModel:
    """Step time of one worker for one model, GPU, layout and precision.

    With speculative decoding the scheduler still sees one token per sequence per step:
    a step's decode part is costed at its real width (1 + draft tokens verified, plus the
    draft passes) and divided by the tokens it yields, so token times, KV growth and
    throughput follow the mean tokens per step.
    """

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
        spec: Speculation | None = None,
        expert_slots: int = 0,
    ) -> None:
        """`expert_slots`: physical expert slots per MoE layer with EPLB on (routed experts
        plus redundant copies; 0: EPLB off). EPLB places the copies where the load is, so
        the busiest rank's load drops to `eplb_imbalance`, and every slot holds weights."""
        self.model, self.gpu, self.par, self.eff = model, gpu, par, eff
        self.precision, self.kv_precision, self.spec = precision, kv_precision, spec
        dense_prec = model.weight_precision(precision, experts=False)
        tp, pp, moe_group = par.tp, par.pp, par.tp * par.dp
        expert_active = model.expert_params * (
            model.experts_per_token / model.experts if model.is_moe else 0.0
        )
        dense_active = max(model.active_params_b * 1e9 - expert_active, 0.0)
        self.dense_weight_bytes = model.dense_params * WEIGHT_BYTES[dense_prec] / (tp * pp)
        # what a step streams of them: an untied input embedding is gathered, not read
        self._dense_read_bytes = model.streamed_dense_params * WEIGHT_BYTES[dense_prec] / (tp * pp)
        slots = max(expert_slots, model.experts) if expert_slots and model.is_moe else 0
        replicas = slots / model.experts if slots else 1.0
        self.expert_weight_bytes = (
            model.expert_params * replicas * WEIGHT_BYTES[precision] / (moe_group * pp)
        )
        imbalance = eff.eplb_imbalance if slots else eff.moe_imbalance
        # the experts (or expert slices, with tensor-parallel experts) one rank holds
        self._rank_experts = (slots or model.experts) / par.ep if model.is_moe else 0.0
        self.draft_weight_bytes = 0.0
        if spec is not None:  # the draft module's layers are held beside the target's
            per_layer = (self.dense_weight_bytes + self.expert_weight_bytes) * pp / model.layers
            self.draft_weight_bytes = spec.draft_layers * per_layer
        self._dense_flops_s = gpu.flops(dense_prec) * eff.gemm_efficiency
        self._expert_flops_s = gpu.flops(precision) * eff.gemm_efficiency
        self._attn_flops_s = gpu.flops(Precision.BF16) * eff.attention_efficiency
        self._mem_bw = gpu.hbm_tbps * 1e12 * eff.memory_efficiency
        self._dense_flops_per_token = 2.0 * dense_active / (tp * pp)
        self._expert_flops_per_token = 2.0 * expert_active / (moe_group * pp) * imbalance
        qk, v = model.attention.score_dims
        per_layer_attn = 2.0 * model.attention.heads * (qk + v) / (tp * pp)
        self._full_attn_flops = per_layer_attn * model.full_attention_layers
        pqk, pv = model.attention.prefill_score_dims
        prefill_layer_attn = 2.0 * model.attention.heads * (pqk + pv) / (tp * pp)
        self._prefill_attn_flops = prefill_layer_attn * model.full_attention_layers
        self._window_attn_flops = per_layer_attn * model.sliding_window_layers
        self._window = model.sliding_window
        self._topk = model.sparse_attention_topk
        kv_split = min(tp, model.attention.kv_heads)  # heads beyond kv_heads replicate KV
        self.kv_bytes_per_token_gpu = model.kv_bytes(kv_precision) / (kv_split * pp)
        window_layer_bytes = (
            model.attention.kv_elements_per_layer * KV_BYTES_PER_ELEMENT[kv_precision]
        )
        self._window_bytes_per_token = (
            model.sliding_window_layers * window_layer_bytes / (kv_split * pp)
        )
        # full-attention layers alone: what a decode step reads per context token
        self._full_kv_bytes_per_token = (
            model.full_attention_layers * model.kv_bytes_per_layer(kv_precision) / (kv_split * pp)
        )
        # compressed-KV layers (DeepSeek-V4): per group, attention FLOPs (decode, prefill) and
        # bytes per compressed entry read; every such layer also attends a raw window
        self._compressed = tuple(
            (
                group,
                per_layer_attn * group.layers,
                prefill_layer_attn * group.layers,
                model.compressed_entry_bytes(group, kv_precision) * group.layers / (kv_split * pp),
            )
            for group in model.compressed_layers
        )
        self._cwindow = model.compressed_window
        self._cwindow_attn_flops = per_layer_attn * model.compressed_attention_layers
        self._cwindow_bytes_per_token = (
            model.compressed_attention_layers * window_layer_bytes / (kv_split * pp)
        )
        self._state_bytes = model.linear_attention_layers * model.linear_state_bytes / (tp * pp)
        # a linear-attention layer updates and reads its state: about 4 FLOPs per state element
        self._state_flops_per_token = 2.0 * self._state_bytes
        self._stage_layers = model.layers / pp
        self._layer_fixed = eff.layer_overhead_s * self._stage_layers
        link = gpu.scale_up_gbps if not multi_node else gpu.scale_out_gbps
        link_eff = eff.link_efficiency if not multi_node else eff.network_efficiency
        self._link_bw = link * 1e9 * link_eff
        self._route_p = model.experts_per_token / model.experts if model.is_moe else 0.0
        self._comm_fixed, self._comm_per_token = self._comm_coefficients()
        # what every step reads, gathered once: `_decode_roofline_step`'s inlined rank, and
        # the expert terms of each worker token count seen (`_expert_terms`)
        self._decode_constants = (
            not (self._window or self._compressed or self._cwindow),
            self._topk,
            self._state_bytes,
            self._dense_flops_per_token,
            self._state_flops_per_token,
            self._dense_flops_s,
            self._full_attn_flops,
            self._attn_flops_s,
            self.kv_bytes_per_token_gpu,
            self._full_kv_bytes_per_token,
            self._mem_bw,
            self._comm_fixed,
            self._comm_per_token,
            self._layer_fixed,
            eff.seq_overhead_s,
            eff.chunk_overhead_s,
        )
        self._worker_terms: dict[int, tuple[float, float, float]] = {}
        self._capped_rank_times: dict[int, dict[int, float]] = {}

    @property
    def weight_bytes_per_gpu(self) -> float:
        return self.dense_weight_bytes + self.expert_weight_bytes + self.draft_weight_bytes

    def expert_fixed_time(self, worker_tokens: float) -> float:
        """Seconds of a step's fixed per-expert cost on one rank: each expert it holds that
        the worker's `worker_tokens` touch, in every layer of its stage."""
        if not self.eff.expert_overhead_s:
            return 0.0
        return self.eff.expert_overhead_s * self._stage_layers * self.touched_experts(worker_tokens)

    def touched_experts(self, worker_tokens: float) -> float:
        """Experts (or expert slices) of one rank that `worker_tokens` routed over the worker
        touch in one layer, on average."""
        if not self._route_p or worker_tokens <= 0:
            return 0.0
        return self._rank_experts * (1.0 - (1.0 - self._route_p) ** worker_tokens)

    def kv_bytes_per_seq_gpu(self, context: float) -> float:
        """Per-GPU bytes a sequence of `context` tokens holds: full KV, window, state."""
        window = min(context, self._window) if self._window else 0.0
        raw = min(context, self._cwindow) if self._cwindow else 0.0
        return (
            context * self.kv_bytes_per_token_gpu
            + window * self._window_bytes_per_token
            + raw * self._cwindow_bytes_per_token
            + self._state_bytes
        )

    def kv_pool_bytes(self, gpu_memory_utilization: float) -> float:
        """Per-GPU bytes the engine gives its KV cache, by the engine's memory rule."""
        hbm, weights = self.gpu.hbm_bytes, self.weight_bytes_per_gpu
        reserve = self.eff.activation_reserve_gb * 1e9
        if self.eff.fraction_after_weights:
            return (hbm - weights - reserve) * gpu_memory_utilization
        return hbm * gpu_memory_utilization - weights - reserve

    def kv_capacity_tokens(self, gpu_memory_utilization: float, context: float = 0.0) -> int:
        """Tokens of KV one DP rank can hold (each of its GPUs holds its share).

        Sliding-window and linear-attention memory is per sequence; it is spread over
        the tokens of a sequence of `context` tokens (the workload's typical length).
        """
        free = self.kv_pool_bytes(gpu_memory_utilization)
        per_token = self.kv_bytes_per_token_gpu
        if context > 0:
            per_token = self.kv_bytes_per_seq_gpu(context) / context
        return max(int(free // per_token), 0)

    def _roofline(
        self,
        tokens: float,
        worker_tokens: float,
        prefill_tokens: int,
        prefill_attn_ctx: float,
        prefill_kv_read: int,
        decode_seqs: int,
        decode_ctx: int,
        width: int,
    ) -> float:
        """max(compute, memory) of one rank; decode sequences verify `width` tokens each."""
        compute_flops = tokens * self._dense_flops_per_token
        expert_flops = worker_tokens * self._expert_flops_per_token
        attn = prefill_attn_ctx * self._prefill_attn_flops
        kv_tokens = prefill_kv_read + tokens
        kv_read = 0.0  # bytes decode attention reads
        if decode_seqs:
            avg = decode_ctx / decode_seqs
            full_ctx = decode_ctx if not self._topk else decode_seqs * min(avg, self._topk)
            attn += width * full_ctx * self._full_attn_flops
            kv_read += full_ctx * self._full_kv_bytes_per_token
            if self._window:
                seen = decode_seqs * min(avg, self._window)
                attn += width * seen * self._window_attn_flops
            for group, flops, _, entry_bytes in self._compressed:
                entries = decode_seqs * group.entries(avg)
                attn += width * entries * flops
                kv_read += entries * entry_bytes
            if self._cwindow:
                seen = decode_seqs * min(avg, self._cwindow)
                attn += width * seen * self._cwindow_attn_flops
                kv_read += seen * self._cwindow_bytes_per_token
        if self._window and prefill_tokens:
            attn += min(prefill_attn_ctx, prefill_tokens * self._window) * self._window_attn_flops
        if self._compressed and prefill_tokens:
            for group, _, prefill_flops, _ in self._compressed:
                pairs = prefill_attn_ctx / group.ratio
                if group.topk:
                    pairs = min(pairs, prefill_tokens * group.topk)
                attn += pairs * prefill_flops
            if self._cwindow:
                raw = min(prefill_attn_ctx, prefill_tokens * self._cwindow)
                attn += raw * self._cwindow_attn_flops
        compute = (
            (compute_flops + tokens * self._state_flops_per_token) / self._dense_flops_s
            + expert_flops / self._expert_flops_s
            + attn / self._attn_flops_s
        )
        memory = self._dense_read_bytes if tokens else 0.0
        if self._route_p:
            touched = 1.0 - (1.0 - self._route_p) ** worker_tokens
            memory += self.expert_weight_bytes * touched
        memory += kv_tokens * self.kv_bytes_per_token_gpu + kv_read
        if decode_seqs:
            if self._window:
                memory += (
                    decode_seqs
                    * min(decode_ctx / decode_seqs, self._window)
                    * (self._window_bytes_per_token)
                )
            memory += 2.0 * decode_seqs * self._state_bytes
        return max(compute, memory / self._mem_bw)

    def rank_time(self, batch: RankBatch, worker_tokens: int) -> float:
        """Seconds one DP rank needs for `batch` while the worker routes `worker_tokens`."""
        return self.rank_times(batch, worker_tokens)[0]

    def rank_times(self, batch: RankBatch, worker_tokens: float) -> tuple[float, float]:
        """(whole step, its decode part alone) of one rank, at the real verify width."""
        width = 1 + self.spec.draft_tokens if self.spec else 1
        tokens = batch.prefill_tokens + batch.decode_seqs * width
        if tokens == 0 and worker_tokens == 0:
            return 0.0, 0.0
        whole = self._roofline(
            tokens,
            worker_tokens,
            batch.prefill_tokens,
            batch.prefill_attention_ctx,
            batch.prefill_kv_read_tokens,
            batch.decode_seqs,
            batch.decode_ctx_tokens,
            width,
        )
        whole += self.comm_time(tokens) + (self._layer_fixed if tokens else 0.0)
        if self.spec is None or not batch.decode_seqs:
            return whole, 0.0
        if not batch.prefill_tokens:
            return whole, whole
        dec_tokens = batch.decode_seqs * width
        share = worker_tokens * dec_tokens / tokens
        decode = self._roofline(
            dec_tokens, share, 0, 0.0, 0, batch.decode_seqs, batch.decode_ctx_tokens, width
        )
        return whole, decode + self.comm_time(dec_tokens) + self._layer_fixed

    def comm_time(self, tokens: float) -> float:
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
        if self.spec is not None:
            return self._spec_step_time(batches)
        worker_tokens = 0
        for b in batches:
            worker_tokens += b.prefill_tokens + b.decode_seqs
        if worker_tokens == 0:
            return 0.0
        terms = self._worker_terms.get(worker_tokens)
        if terms is None:
            terms = self._worker_terms[worker_tokens] = self._expert_terms(worker_tokens)
        if self._window or self._topk or self._state_bytes or self._compressed:
            return self._decode_roofline_step(batches, worker_tokens, terms)
        expert_compute, expert_memory, expert_fixed = terms
        slowest = busiest = 0.0
        seq_s, chunk_s = self.eff.seq_overhead_s, self.eff.chunk_overhead_s
        for b in batches:
            n = b.decode_seqs
            if b.prefill_tokens:
                t = self.rank_times(b, worker_tokens)[0]
            elif not n:
                t = 0.0
            else:  # the common case, a plain decode batch, inlined
                ctx = b.decode_ctx_tokens
                compute = (
                    n * self._dense_flops_per_token / self._dense_flops_s
                    + expert_compute
                    + ctx * self._full_attn_flops / self._attn_flops_s
                )
                memory = (
                    self._dense_read_bytes + expert_memory + (ctx + n) * self.kv_bytes_per_token_gpu
                ) / self._mem_bw
                t = (
                    (compute if compute > memory else memory)
                    + self._comm_fixed
                    + self._comm_per_token * n
                    + self._layer_fixed
                )
            if t > slowest:
                slowest = t
            seqs = seq_s * (n + b.prefill_seqs) + chunk_s * b.prefill_seqs
            if seqs > busiest:
                busiest = seqs
        return slowest * self.par.pp + (self.eff.step_overhead_s + busiest + expert_fixed)

    def _expert_terms(self, worker_tokens: int) -> tuple[float, float, float]:
        """The parts of a step that depend on the worker's token count alone, computed once
        per count (steps repeat counts): the routed experts' compute and the weight bytes
        of the experts touched, shared by every rank, and the per-expert fixed time of all
        pipeline stages."""
        compute = worker_tokens * self._expert_flops_per_token / self._expert_flops_s
        memory = 0.0
        if self._route_p:
            memory = self.expert_weight_bytes * (1.0 - (1.0 - self._route_p) ** worker_tokens)
        return compute, memory, self.expert_fixed_time(worker_tokens) * self.par.pp

    def _overhead_time(self, batches: list[RankBatch], worker_tokens: float) -> float:
        """A step's time beyond its rooflines: the fixed part, the per-sequence part and the
        per-expert part (paid in every pipeline stage)."""
        return (
            self.eff.step_overhead_s
            + self._seq_time(batches)
            + self.expert_fixed_time(worker_tokens) * self.par.pp
        )

    def _seq_time(self, batches: list[RankBatch]) -> float:
        """The per-sequence part of a step's overhead: the busiest rank's scheduled
        sequences, a prefill chunk's among them (its logits are computed and sampled too)."""
        seq, chunk = self.eff.seq_overhead_s, self.eff.chunk_overhead_s
        if not seq and not chunk:
            return 0.0
        return max(seq * (b.decode_seqs + b.prefill_seqs) + chunk * b.prefill_seqs for b in batches)

    def _decode_roofline_step(
        self, batches: list[RankBatch], worker_tokens: int, terms: tuple[float, float, float]
    ) -> float:
        """`step_time` for models with sparse, sliding-window, linear or compressed layers.

        A decode-only rank of a model with sparse attention (top-k) or linear-attention
        state is `rank_times` of it inlined: the very same operations in the same order,
        so the same floats, without a call and a tuple per rank and step. Once a rank's
        mean context exceeds top-k, its time depends on its sequence count and the worker's
        token count alone, and is computed once per pair.
        """
        expert_compute, expert_memory, expert_fixed = terms
        (
            inline,
            topk,
            state,
            dense_fpt,
            state_fpt,
            dense_s,
            attn_f,
            attn_s,
            kv_bpt,
            full_kv,
            mem_bw,
            comm_fixed,
            comm_pt,
            layer_fixed,
            seq_s,
            chunk_s,
        ) = self._decode_constants
        memory_base = self._dense_read_bytes
        if self._route_p:
            memory_base += expert_memory
        # a capped sparse rank's time, by its sequence count, for this worker token count
        capped = self._capped_rank_times.setdefault(worker_tokens, {})
        slowest = busiest = 0.0
        for b in batches:
            n = b.decode_seqs
            if b.prefill_tokens or not n or not inline:
                t = self.rank_times(b, worker_tokens)[0]
            else:
                ctx = b.decode_ctx_tokens
                full_ctx: float
                known = None
                if topk:
                    avg = ctx / n
                    if topk < avg:  # min(avg, topk) is topk: the time depends on n alone
                        full_ctx = n * topk
                        known = capped.get(n)
                    else:
                        full_ctx = n * avg
                else:
                    full_ctx = ctx
                if known is not None:
                    t = known
                else:
                    compute = (
                        (n * dense_fpt + n * state_fpt) / dense_s
                        + expert_compute
                        + full_ctx * attn_f / attn_s
                    )
                    memory = memory_base
                    memory += n * kv_bpt + full_ctx * full_kv
                    memory += 2.0 * n * state
                    memory /= mem_bw
                    t = (compute if memory <= compute else memory) + (
                        comm_fixed + comm_pt * n + layer_fixed
                    )
                    if topk and topk < avg:
                        capped[n] = t
            if t > slowest:
                slowest = t
            seqs = seq_s * (n + b.prefill_seqs) + chunk_s * b.prefill_seqs
            if seqs > busiest:
                busiest = seqs
        return slowest * self.par.pp + (self.eff.step_overhead_s + busiest + expert_fixed)

    def _spec_step_time(self, batches: list[RankBatch]) -> float:
        spec = self.spec
        assert spec is not None
        width = 1 + spec.draft_tokens
        worker_tokens = sum(b.prefill_tokens + b.decode_seqs * width for b in batches)
        if worker_tokens == 0:
            return 0.0
        pp = self.par.pp
        # the per-sequence and per-expert parts are paid per verification step, like the
        # fixed part
        overhead = self._overhead_time(batches, worker_tokens)
        times = [self.rank_times(b, worker_tokens) for b in batches]
        whole = max(t[0] for t in times) * pp + overhead
        decode = max(t[1] for t in times) * pp
        if decode == 0.0:
            return whole
        decode += overhead
        # the draft passes: `draft_layers` layer-equivalents of a one-token decode, per draft
        single = max(
            self._roofline(
                b.decode_seqs,
                b.decode_seqs * len(batches),
                0,
                0.0,
                0,
                b.decode_seqs,
                b.decode_ctx_tokens,
                1,
            )
            for b in batches
        )
        per_layer = (single * pp) / self.model.layers + self.eff.layer_overhead_s
        draft = spec.draft_tokens * spec.draft_layers * per_layer
        return (decode + draft) / spec.tokens_per_step + (whole - decode)


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
