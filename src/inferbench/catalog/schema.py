"""Typed, frozen entries of the hardware and model catalogs (the YAML data files)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, model_validator

from inferbench.core.model import FrozenModel


class Precision(StrEnum):
    """Precision of weights or of tensor-core math."""

    BF16 = "bf16"
    FP8 = "fp8"
    FP4 = "fp4"


# Spellings engines and recipes use for the three precisions we model.
PRECISION_SPELLINGS: dict[str, Precision] = {
    "bf16": Precision.BF16,
    "fp16": Precision.BF16,
    "bfloat16": Precision.BF16,
    "float16": Precision.BF16,
    "auto": Precision.BF16,
    "fp8": Precision.FP8,
    "fp8_e4m3": Precision.FP8,
    "fp8_e5m2": Precision.FP8,
    "mxfp8": Precision.FP8,
    "fp4": Precision.FP4,
    "nvfp4": Precision.FP4,
    "mxfp4": Precision.FP4,
}

# Bytes per weight: NVFP4 stores 4 bits plus one FP8 scale per 16 values (4.5 bits).
WEIGHT_BYTES: dict[Precision, float] = {
    Precision.BF16: 2.0,
    Precision.FP8: 1.0,
    Precision.FP4: 0.5625,
}


class GpuSpec(FrozenModel):
    """One GPU: dense tensor throughput, HBM, scale-up and scale-out links."""

    key: str
    name: str
    aliases: tuple[str, ...] = ()
    tflops: dict[Precision, Annotated[float, Field(gt=0)]]
    hbm_gb: float = Field(gt=0)
    hbm_tbps: float = Field(gt=0)
    scale_up_gbps: float = Field(gt=0)
    scale_up_domain: int = Field(ge=1)
    scale_out_gbps: float = Field(gt=0)
    gpus_per_node: int = Field(ge=1)
    provisioned_kw: float | None = Field(default=None, gt=0, le=100)  # all-in, per GPU
    sources: dict[str, str]

    @property
    def vendor(self) -> str:
        """`nvidia` or `amd` (the first word of the name), for calibration fallbacks."""
        return self.name.split()[0].lower()

    @property
    def hbm_bytes(self) -> float:
        # memory capacities are binary: a "141 GB" H200 holds 141 x 2^30 bytes (hardware.yaml)
        return self.hbm_gb * 2**30

    def flops(self, precision: Precision) -> float:
        """Dense FLOP/s at `precision`; a GPU without that format runs it at the next wider one."""
        for p in (precision, Precision.FP8, Precision.BF16):
            if p in self.tflops and _wider_or_equal(p, precision):
                return self.tflops[p] * 1e12
        return self.tflops[Precision.BF16] * 1e12

    @model_validator(mode="after")
    def _needs_bf16(self) -> GpuSpec:
        if Precision.BF16 not in self.tflops:
            raise ValueError("tflops must give at least bf16")
        return self


def _wider_or_equal(have: Precision, want: Precision) -> bool:
    order = [Precision.FP4, Precision.FP8, Precision.BF16]
    return order.index(have) >= order.index(want)


class GqaAttention(FrozenModel):
    kind: Literal["gqa", "mha"]
    heads: int = Field(ge=1)
    kv_heads: int = Field(ge=1)
    head_dim: int = Field(ge=1)
    # one cached vector serves as both key and value (DeepSeek-V4's multi-query attention)
    shared_kv: bool = False

    @property
    def kv_elements_per_layer(self) -> int:
        return (1 if self.shared_kv else 2) * self.kv_heads * self.head_dim

    @property
    def score_dims(self) -> tuple[int, int]:
        """(q.k width, p.v width) per head, for attention FLOPs per context token."""
        return self.head_dim, self.head_dim

    @property
    def prefill_score_dims(self) -> tuple[int, int]:
        return self.score_dims


class MlaAttention(FrozenModel):
    kind: Literal["mla"]
    heads: int = Field(ge=1)
    kv_lora_rank: int = Field(ge=1)
    qk_rope_head_dim: int = Field(ge=0)
    # per-head widths after up-projection (DeepSeek-V3 config: 128 and 128)
    qk_nope_head_dim: int = Field(128, ge=1)
    v_head_dim: int = Field(128, ge=1)

    @property
    def kv_heads(self) -> int:
        return 1  # one latent shared by all heads

    @property
    def kv_elements_per_layer(self) -> int:
        return self.kv_lora_rank + self.qk_rope_head_dim

    @property
    def score_dims(self) -> tuple[int, int]:
        # absorbed MLA (decode): scores against the latent plus rope part, values from it
        return self.kv_lora_rank + self.qk_rope_head_dim, self.kv_lora_rank

    @property
    def prefill_score_dims(self) -> tuple[int, int]:
        # prefill runs MLA unabsorbed, as multi-head attention on up-projected heads
        # (FlashAttention-style kernels in SGLang, vLLM and TRT-LLM)
        return self.qk_nope_head_dim + self.qk_rope_head_dim, self.v_head_dim


Attention = Annotated[GqaAttention | MlaAttention, Field(discriminator="kind")]

KV_BYTES_PER_ELEMENT: dict[Precision, float] = {
    Precision.BF16: 2.0,
    Precision.FP8: 1.0,
    Precision.FP4: 0.5625,
}


class CompressedLayers(FrozenModel):
    """Layers that cache one KV entry per `ratio` tokens (DeepSeek-V4's CSA and HCA).

    Attention reads every compressed entry, or only `topk` of them when an indexer picks
    them (`topk` 0: all); the indexer caches `index_bytes_per_entry` per entry.
    """

    layers: int = Field(ge=1)
    ratio: int = Field(ge=2)
    topk: int = Field(0, ge=0)
    index_bytes_per_entry: int = Field(0, ge=0)

    def entries(self, context: float) -> float:
        """Compressed entries one query reads at `context` tokens."""
        kept = context / self.ratio
        return min(kept, self.topk) if self.topk else kept


class ModelSpec(FrozenModel):
    """One model architecture, enough for a roofline: sizes, attention shape, experts."""

    key: str
    name: str
    aliases: tuple[str, ...] = ()
    params_b: float = Field(gt=0)
    active_params_b: float = Field(gt=0)
    expert_params_b: float = Field(ge=0)
    layers: int = Field(ge=1)
    hidden_size: int = Field(ge=1)
    vocab_size: int = Field(ge=1)
    attention: Attention
    experts: int = Field(ge=0)
    experts_per_token: int = Field(ge=0)
    kv_bytes_per_token: dict[Precision, int] = Field(default_factory=dict)
    # Layers that are not full attention (the rest are): sliding-window layers keep at most
    # `sliding_window` tokens of KV per sequence; linear-attention (Gated DeltaNet) layers keep
    # a fixed recurrent state of `linear_state_bytes` per sequence instead of a KV cache.
    sliding_window_layers: int = Field(0, ge=0)
    sliding_window: int = Field(0, ge=0)
    linear_attention_layers: int = Field(0, ge=0)
    linear_state_bytes: int = Field(0, ge=0)
    # Sparse attention (DeepSeek Sparse Attention): each query reads only `topk` cached tokens,
    # picked by an indexer whose keys add `index_bytes_per_token` per full layer.
    sparse_attention_topk: int = Field(0, ge=0)
    sparse_index_bytes_per_token: int = Field(0, ge=0)
    # Compressed-KV layers (DeepSeek-V4): each group caches one entry per `ratio` tokens,
    # and every compressed layer also keeps the last `compressed_window` raw tokens.
    compressed_layers: tuple[CompressedLayers, ...] = ()
    compressed_window: int = Field(0, ge=0)
    # Mixed-precision checkpoints: the precision the weights outside the routed experts
    # (attention, shared experts, dense layers) keep, per checkpoint precision.
    dense_precision: dict[Precision, Precision] = Field(default_factory=dict)
    # Multi-token-prediction modules shipped with the checkpoint (DeepSeek's MTP: 1).
    mtp_layers: int = Field(0, ge=0)
    # The context an engine serves when not told less (config.json max_position_embeddings);
    # None: not known, so a server needs its max-model-len given.
    context_length: int | None = Field(None, ge=1)
    # False: the input embedding is its own table (config.json tie_word_embeddings false), of
    # which a step gathers only its tokens' rows, so it is held but not streamed every step;
    # True or None (not recorded): every dense weight is read each step, as the LM head reads
    # a tied table in full.
    tied_embeddings: bool | None = None
    source: str

    @model_validator(mode="after")
    def _consistent(self) -> ModelSpec:
        if self.active_params_b > self.params_b:
            raise ValueError("active_params_b exceeds params_b")
        if self.expert_params_b >= self.params_b:
            raise ValueError("expert_params_b must be below params_b")
        if (self.experts == 0) != (self.expert_params_b == 0):
            raise ValueError("experts and expert_params_b must both be zero or both positive")
        if self.experts and not 0 < self.experts_per_token <= self.experts:
            raise ValueError("experts_per_token must be in 1..experts")
        if self.sliding_window_layers + self.linear_attention_layers >= self.layers:
            raise ValueError(
                "sliding_window_layers + linear_attention_layers must leave a full layer"
            )
        if self.full_attention_layers < 0:
            raise ValueError(
                "sliding_window_layers + linear_attention_layers + compressed_layers exceed layers"
            )
        if self.compressed_window and not self.compressed_layers:
            raise ValueError("compressed_window needs compressed_layers")
        if bool(self.sliding_window_layers) != bool(self.sliding_window):
            raise ValueError("sliding_window_layers and sliding_window go together")
        if bool(self.linear_attention_layers) != bool(self.linear_state_bytes):
            raise ValueError("linear_attention_layers and linear_state_bytes go together")
        for precision, given in self.kv_bytes_per_token.items():
            want = self.kv_bytes(precision)
            if abs(given - want) > 0.5:
                raise ValueError(
                    f"kv_bytes_per_token.{precision.value} is {given} but the attention shape "
                    f"gives {want:.0f}"
                )
        return self

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def dense_params(self) -> float:
        """Parameters outside the routed experts (attention, embeddings, shared experts)."""
        return (self.params_b - self.expert_params_b) * 1e9

    @property
    def streamed_dense_params(self) -> float:
        """Dense parameters a step reads in full: all but an untied input embedding table."""
        table = self.vocab_size * self.hidden_size if self.tied_embeddings is False else 0
        return self.dense_params - table

    @property
    def expert_params(self) -> float:
        return self.expert_params_b * 1e9

    @property
    def params_per_expert(self) -> float:
        return self.expert_params / self.experts if self.experts else 0.0

    @property
    def compressed_attention_layers(self) -> int:
        return sum(group.layers for group in self.compressed_layers)

    @property
    def full_attention_layers(self) -> int:
        return (
            self.layers
            - self.sliding_window_layers
            - self.linear_attention_layers
            - self.compressed_attention_layers
        )

    def kv_bytes_per_layer(self, precision: Precision) -> float:
        """KV bytes one token occupies in one attention layer (plus its sparse-index key)."""
        return (
            self.attention.kv_elements_per_layer * KV_BYTES_PER_ELEMENT[precision]
            + self.sparse_index_bytes_per_token
        )

    def compressed_entry_bytes(self, group: CompressedLayers, precision: Precision) -> float:
        """Bytes one compressed KV entry (with its index key) takes in one layer."""
        per_layer = self.attention.kv_elements_per_layer * KV_BYTES_PER_ELEMENT[precision]
        return per_layer + group.index_bytes_per_entry

    def kv_bytes(self, precision: Precision) -> float:
        """KV bytes one token occupies, summed over the full-attention and compressed layers.

        Sliding-window layers, the compressed layers' raw window and linear-attention
        state are per sequence, not per token: see `per_seq_kv_bytes`.
        """
        compressed = sum(
            group.layers * self.compressed_entry_bytes(group, precision) / group.ratio
            for group in self.compressed_layers
        )
        return float(self.full_attention_layers * self.kv_bytes_per_layer(precision) + compressed)

    def per_seq_kv_bytes(self, precision: Precision, context: float) -> float:
        """Bytes a sequence of `context` tokens holds outside the per-token KV."""
        per_layer = self.attention.kv_elements_per_layer * KV_BYTES_PER_ELEMENT[precision]
        window = self.sliding_window_layers * min(context, self.sliding_window) * per_layer
        raw = self.compressed_attention_layers * min(context, self.compressed_window) * per_layer
        return window + raw + self.linear_attention_layers * self.linear_state_bytes

    def weight_precision(self, checkpoint: Precision, *, experts: bool) -> Precision:
        """The precision routed-expert (`experts`) or other weights have in a checkpoint."""
        return checkpoint if experts else self.dense_precision.get(checkpoint, checkpoint)
