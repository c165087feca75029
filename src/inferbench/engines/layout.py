"""One explicit engine layout per worker, whichever way the config spelled it.

Master configs write data-parallel-attention + expert-parallel (DEP) two ways:
`tp: N, ep: N, dp-attn: true` (tp is the worker's GPUs; most entries) and
`tp: 1, ep: N, dp-attn: true` (tp is the engine's attention TP). Recipes spell
the same thing in each engine's own flags. Both sides are normalised here into
`WorkerLayout`, so every comparison uses one definition (each engine module reads its own
flags into one: `EngineSpec.layout`):

    gpus = tp * dp * pp * pcp      (dcp reuses the TP GPUs)
    tp   attention tensor-parallel width of one data-parallel rank
    dp   attention data-parallel ranks
    ep   expert-parallel width (1 = experts not split across GPUs)
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Spelling(StrEnum):
    """How the source wrote the layout."""

    TP = "tp"  # plain tensor parallel
    TEP = "tep"  # tensor-parallel attention, expert-parallel MoE
    DEP_TP_IS_GPUS = "dep-tp-is-gpus"  # tp: N, ep: N, dp-attn: true
    DEP_ENGINE_TP = "dep-engine-tp"  # tp: 1, ep: N, dp-attn: true
    ENGINE_FLAGS = "engine-flags"  # an engine's own flags (a recipe, a launch script)


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
