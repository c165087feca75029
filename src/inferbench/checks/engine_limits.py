"""Per-engine meaning of the limits the checks compare: context length, batch, cudagraph, spec.

Flag lookup (abbreviations, `_` vs `-`) and the parallel layout come from
`inferbench.config.engine_flags` / `inferbench.config.layout`; this adds which flag names each
engine uses for the few limits a check reads, and how many schedulers share a worker's batch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inferbench.config.engine_flags import EngineFlags, FlagHit
from inferbench.config.layout import WorkerLayout
from inferbench.config.recipe import Recipe, WorkerMode

MAX_MODEL_LEN: Mapping[str, tuple[str, ...]] = {
    "vllm": ("max-model-len",),
    "sglang": ("context-length",),
    "trtllm": ("max-seq-len",),
}
MAX_NUM_SEQS: Mapping[str, tuple[str, ...]] = {
    "vllm": ("max-num-seqs",),
    "sglang": ("max-running-requests",),
    "trtllm": ("max-batch-size",),
}
CUDAGRAPH: Mapping[str, tuple[str, ...]] = {
    "vllm": ("max-cudagraph-capture-size", "cuda-graph-sizes", "compilation-config"),
    "sglang": ("cuda-graph-max-bs", "cuda-graph-bs"),
    "trtllm": ("cuda-graph-config",),
}
SPECULATIVE: Mapping[str, tuple[str, ...]] = {
    "vllm": ("speculative-config",),
    "sglang": ("speculative-algorithm",),
    "trtllm": ("speculative-config",),
}
_NESTED_CUDAGRAPH = ("max_cudagraph_capture_size", "cudagraph_capture_sizes", "max_batch_size",
                     "batch_sizes")  # fmt: skip


def as_int(value: Any) -> int | None:
    """An int from an int, a digit string, or the largest of a list of them."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, list | tuple):
        ints = [v for v in (as_int(x) for x in value) if v is not None]
        return max(ints) if ints else None
    if isinstance(value, Mapping):  # vLLM compilation-config, TRT-LLM cuda_graph_config
        for name in _NESTED_CUDAGRAPH:
            found = as_int(value.get(name))
            if found is not None:
                return found
    return None


def _first(flags: EngineFlags, names: tuple[str, ...]) -> FlagHit | None:
    for name in names:
        hit = flags.find(name)
        if hit is not None and hit.value is not None:
            return hit
    return None


def _enabled(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "0", "no", "none", "off")
    return bool(value)


@dataclass(frozen=True)
class RoleLimits:
    """The limits of one worker role of a recipe, with the flag each came from."""

    mode: WorkerMode
    engine: str
    layout: WorkerLayout
    max_model_len: FlagHit | None
    max_num_seqs: FlagHit | None
    cudagraph: FlagHit | None
    speculative: FlagHit | None

    @property
    def schedulers(self) -> int:
        """Schedulers in one worker that each admit `max_num_seqs`: vLLM and TRT-LLM run one
        per attention-DP rank; SGLang's max-running-requests is the total of its DP ranks."""
        return 1 if self.engine == "sglang" else self.layout.dp

    @property
    def capacity(self) -> int | None:
        """Requests one worker holds at once, or None when no batch limit is set."""
        seqs = as_int(self.max_num_seqs.value) if self.max_num_seqs else None
        return None if seqs is None else seqs * self.schedulers

    @property
    def cudagraph_max(self) -> int | None:
        return as_int(self.cudagraph.value) if self.cudagraph else None

    @property
    def has_speculative(self) -> bool:
        return self.speculative is not None and _enabled(self.speculative.value)


def role_limits(recipe: Recipe, mode: WorkerMode) -> RoleLimits:
    engine = recipe.backend.type
    flags = recipe.flags(mode)
    return RoleLimits(
        mode=mode,
        engine=engine,
        layout=recipe.layout(mode),
        max_model_len=_first(flags, MAX_MODEL_LEN[engine]),
        max_num_seqs=_first(flags, MAX_NUM_SEQS[engine]),
        cudagraph=_first(flags, CUDAGRAPH[engine]),
        speculative=_first(flags, SPECULATIVE[engine]),
    )


def flag_path(recipe: Recipe, mode: WorkerMode, hit: FlagHit | None) -> tuple[str, ...]:
    """Key path of a flag as written (or of the role's flag map when absent)."""
    role = ("backend", f"{recipe.backend.type}_config", mode)
    return (*role, hit.written) if hit is not None else role
