"""One explicit engine layout per worker, whichever way the config spelled it.

Master configs write data-parallel-attention + expert-parallel (DEP) two ways:
`tp: N, ep: N, dp-attn: true` (tp is the worker's GPUs; most entries) and
`tp: 1, ep: N, dp-attn: true` (tp is the engine's attention TP). Recipes spell
the same thing in each engine's own flags. Both sides are normalised here into
`WorkerLayout`, so every comparison uses one definition:

    gpus = tp * dp * pp * pcp      (dcp reuses the TP GPUs)
    tp   attention tensor-parallel width of one data-parallel rank
    dp   attention data-parallel ranks
    ep   expert-parallel width (1 = experts not split across GPUs)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from inferbench.config.engine_flags import switch_on


class Spelling(StrEnum):
    """How the source wrote the layout."""

    TP = "tp"  # plain tensor parallel
    TEP = "tep"  # tensor-parallel attention, expert-parallel MoE
    DEP_TP_IS_GPUS = "dep-tp-is-gpus"  # tp: N, ep: N, dp-attn: true
    DEP_ENGINE_TP = "dep-engine-tp"  # tp: 1, ep: N, dp-attn: true
    VLLM = "vllm-flags"
    SGLANG = "sglang-flags"
    TRTLLM = "trtllm-flags"


@dataclass(frozen=True)
class WorkerLayout:
    """The engine layout of one worker (one engine instance)."""

    gpus: int
    tp: int
    dp: int = 1
    ep: int = 1
    pp: int = 1
    dcp: int = 1
    pcp: int = 1
    spelling: Spelling = Spelling.TP

    @property
    def dp_attention(self) -> bool:
        return self.dp > 1

    @property
    def expert_parallel(self) -> bool:
        return self.ep > 1

    def same_shape(self, other: WorkerLayout) -> bool:
        """Equal GPUs, TP, DP, EP and PP (the spelling does not matter)."""
        return (self.gpus, self.tp, self.dp, self.ep, self.pp) == (
            other.gpus,
            other.tp,
            other.dp,
            other.ep,
            other.pp,
        )

    def describe(self) -> str:
        parts = [f"{self.gpus} GPU{'s' if self.gpus != 1 else ''}", f"TP{self.tp}"]
        for name, value in (("DP", self.dp), ("EP", self.ep), ("PP", self.pp), ("PCP", self.pcp)):
            if value > 1:
                parts.append(f"{name}{value}")
        if self.dcp > 1:
            parts.append(f"DCP{self.dcp}")
        return " ".join(parts)


def worker_layout(
    tp: int,
    ep: int = 1,
    dp_attn: bool = False,
    pp: int = 1,
    pcp: int = 1,
    dcp: int = 1,
) -> WorkerLayout:
    """Normalise a master-config worker (`tp`, `ep`, `dp-attn`, `pp`, `pcp-size`, `dcp-size`)."""
    if not dp_attn:
        spelling = Spelling.TEP if ep > 1 else Spelling.TP
        return WorkerLayout(tp * pp * pcp, tp, 1, ep, pp, dcp, pcp, spelling)
    if tp == 1 and ep > 1:
        # engine-TP spelling: one attention rank per GPU, ep counts the GPUs
        return WorkerLayout(ep * pp * pcp, 1, ep, ep, pp, dcp, pcp, Spelling.DEP_ENGINE_TP)
    # tp counts the worker's GPUs; each one is an attention data-parallel rank
    return WorkerLayout(tp * pp * pcp, 1, tp, ep, pp, dcp, pcp, Spelling.DEP_TP_IS_GPUS)


FlagGetter = Callable[[str], Any]


def _int(value: Any, default: int = 1) -> int:
    if value is None or isinstance(value, bool):
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def vllm_layout(get: FlagGetter) -> WorkerLayout:
    """From vLLM flags: tensor/data/pipeline-parallel-size, enable-expert-parallel."""
    tp = _int(get("tensor-parallel-size"))
    dp = _int(get("data-parallel-size"))
    pp = _int(get("pipeline-parallel-size"))
    pcp = _int(get("prefill-context-parallel-size"))
    dcp = _int(get("decode-context-parallel-size"))
    ep = tp * dp if switch_on(get("enable-expert-parallel")) else 1
    return WorkerLayout(tp * dp * pp * pcp, tp, dp, ep, pp, dcp, pcp, Spelling.VLLM)


def sglang_layout(get: FlagGetter) -> WorkerLayout:
    """From SGLang flags: tp-size is the worker's GPUs; dp-size with enable-dp-attention."""
    tp_size = _int(get("tp-size"))
    dp = _int(get("dp-size"))
    pp = _int(get("pp-size"))
    ep = _int(get("ep-size"))
    if switch_on(get("enable-dp-attention")) and dp > 1:
        return WorkerLayout(
            tp_size * pp, max(tp_size // dp, 1), dp, ep, pp, spelling=Spelling.SGLANG
        )
    return WorkerLayout(tp_size * dp * pp, tp_size, dp, ep, pp, spelling=Spelling.SGLANG)


def trtllm_layout(get: FlagGetter) -> WorkerLayout:
    """From TRT-LLM config: tensor_parallel_size counts the GPUs; enable_attention_dp."""
    tp = _int(get("tensor_parallel_size"))
    pp = _int(get("pipeline_parallel_size"))
    ep = _int(get("moe_expert_parallel_size"))
    if switch_on(get("enable_attention_dp")) and tp > 1:
        return WorkerLayout(tp * pp, 1, tp, ep, pp, spelling=Spelling.TRTLLM)
    return WorkerLayout(tp * pp, tp, 1, ep, pp, spelling=Spelling.TRTLLM)


ENGINE_LAYOUTS: Mapping[str, Callable[[FlagGetter], WorkerLayout]] = {
    "vllm": vllm_layout,
    "sglang": sglang_layout,
    "trtllm": trtllm_layout,
}


def engine_layout(backend: str, get: FlagGetter) -> WorkerLayout:
    """The layout an engine's flags describe; `backend` is a recipe `backend.type`."""
    try:
        return ENGINE_LAYOUTS[backend](get)
    except KeyError:
        raise ValueError(f"unknown backend type {backend!r}") from None
