"""Engine flag maps of a recipe (`vllm_config.decode: {...}`), looked up as the engine would.

Engines parse their flags with argparse, which accepts a unique prefix of a long
flag (`--speculative-algo` for `--speculative-algorithm`) and, in YAML configs,
both `max-model-len` and `max_model_len`. `EngineFlags.get` applies the same
rules, so a check asks for the full flag name and finds the abbreviated one.

This module is the one place that knows engine flags: their names and aliases per engine,
which flags set the limits the checks compare (`LIMIT_FLAGS`), and how a flag's value is read
(`flag_int`, `switch_on`, `enables`) or written (`batch_limit`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

# Long flags a check may ask about, per engine: a written key that is a prefix of
# more than one of these is ambiguous (argparse would refuse it) and never matches.
KNOWN_FLAGS: Mapping[str, frozenset[str]] = {
    "vllm": frozenset(
        {
            "tensor-parallel-size",
            "data-parallel-size",
            "data-parallel-size-local",
            "data-parallel-rank",
            "pipeline-parallel-size",
            "decode-context-parallel-size",
            "prefill-context-parallel-size",
            "enable-expert-parallel",
            "enable-eplb",
            "max-model-len",
            "max-num-seqs",
            "max-num-batched-tokens",
            "max-cudagraph-capture-size",
            "cuda-graph-sizes",
            "speculative-config",
            "kv-transfer-config",
            "gpu-memory-utilization",
            "kv-cache-dtype",
            "quantization",
            "enforce-eager",
            "compilation-config",
        }
    ),
    "sglang": frozenset(
        {
            "tp-size",
            "dp-size",
            "ep-size",
            "pp-size",
            "enable-dp-attention",
            "context-length",
            "max-running-requests",
            "max-total-tokens",
            "chunked-prefill-size",
            "cuda-graph-max-bs",
            "cuda-graph-bs",
            "speculative-algorithm",
            "speculative-num-steps",
            "speculative-eagle-topk",
            "speculative-num-draft-tokens",
            "speculative-draft-model-path",
            "mem-fraction-static",
            "moe-a2a-backend",
            "disaggregation-mode",
            "kv-cache-dtype",
            "quantization",
        }
    ),
    "trtllm": frozenset(
        {
            "tensor-parallel-size",
            "pipeline-parallel-size",
            "moe-expert-parallel-size",
            "enable-attention-dp",
            "max-batch-size",
            "max-num-tokens",
            "max-seq-len",
            "speculative-config",
            "cuda-graph-config",
            "kv-cache-config",
        }
    ),
}

# Alternative spellings each engine accepts for the same flag.
ALIASES: Mapping[str, Mapping[str, str]] = {
    "vllm": {
        "tp": "tensor-parallel-size",
        "dp": "data-parallel-size",
        "pp": "pipeline-parallel-size",
    },
    "sglang": {
        "tensor-parallel-size": "tp-size",
        "data-parallel-size": "dp-size",
        "expert-parallel-size": "ep-size",
        "pipeline-parallel-size": "pp-size",
        "tp": "tp-size",
        "dp": "dp-size",
        "ep": "ep-size",
        "pp": "pp-size",
    },
    "trtllm": {"tp-size": "tensor-parallel-size", "ep-size": "moe-expert-parallel-size"},
}


class Limit(StrEnum):
    """A limit of one worker that the checks compare with the workload it serves."""

    MAX_MODEL_LEN = "max-model-len"  # longest sequence, prompt + output
    MAX_NUM_SEQS = "max-num-seqs"  # requests one scheduler runs at once
    CUDAGRAPH = "cudagraph"  # largest batch captured in a CUDA graph
    SPECULATIVE = "speculative"  # speculative decoding


# The flags that set each limit, per engine, in lookup order (the first one given wins); each
# is one of KNOWN_FLAGS. Sources: `vllm serve --help`, SGLang's ServerArgs, TRT-LLM's LlmArgs.
LIMIT_FLAGS: Mapping[str, Mapping[Limit, tuple[str, ...]]] = {
    "vllm": {
        Limit.MAX_MODEL_LEN: ("max-model-len",),
        Limit.MAX_NUM_SEQS: ("max-num-seqs",),
        Limit.CUDAGRAPH: ("max-cudagraph-capture-size", "cuda-graph-sizes", "compilation-config"),
        Limit.SPECULATIVE: ("speculative-config",),
    },
    "sglang": {
        Limit.MAX_MODEL_LEN: ("context-length",),
        Limit.MAX_NUM_SEQS: ("max-running-requests",),
        Limit.CUDAGRAPH: ("cuda-graph-max-bs", "cuda-graph-bs"),
        Limit.SPECULATIVE: ("speculative-algorithm",),
    },
    "trtllm": {
        Limit.MAX_MODEL_LEN: ("max-seq-len",),
        Limit.MAX_NUM_SEQS: ("max-batch-size",),
        Limit.CUDAGRAPH: ("cuda-graph-config",),
        Limit.SPECULATIVE: ("speculative-config",),
    },
}

# Engines whose batch limit is the whole worker's, shared by its attention-DP ranks (SGLang's
# max-running-requests); vLLM and TRT-LLM give each DP rank a scheduler with the full limit.
_WORKER_WIDE_BATCH = frozenset({"sglang"})

# How messages name each engine, and the engines whose config files write flags snake_case
# (TRT-LLM's LLM-API YAML) rather than the command line's kebab-case.
ENGINE_NAMES: Mapping[str, str] = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TRT-LLM"}
_SNAKE_CASE = frozenset({"trtllm"})

# Batch-size keys inside a mapping-valued CUDA graph flag (vLLM compilation-config, TRT-LLM
# cuda_graph_config), in lookup order.
_NESTED_BATCH_SIZES = ("max_cudagraph_capture_size", "cudagraph_capture_sizes", "max_batch_size",
                       "batch_sizes")  # fmt: skip
_OFF_WORDS = frozenset({"", "false", "0", "no", "none", "off"})
_ON_WORDS = frozenset({"true", "1", "yes", "on", ""})

_MIN_PREFIX = 3


def normalize_flag(name: str) -> str:
    """`--Max_Model_Len` -> `max-model-len`."""
    return name.strip().lstrip("-").replace("_", "-").lower()


def spelled(engine: str, name: str) -> str:
    """A flag as the engine's config files write it: `speculative_config` for TRT-LLM."""
    flag = normalize_flag(name)
    return flag.replace("-", "_") if engine in _SNAKE_CASE else flag


def batch_schedulers(engine: str, dp: int) -> int:
    """Schedulers in one worker of `dp` attention-DP ranks that each admit the batch limit."""
    return 1 if engine in _WORKER_WIDE_BATCH else dp


def batch_limit(engine: str, per_rank: int, dp: int) -> int:
    """The batch-limit flag value that lets each of `dp` attention-DP ranks run `per_rank`."""
    return per_rank * dp // batch_schedulers(engine, dp)


def flag_int(value: Any) -> int | None:
    """An int from an int, a digit string, the largest of a list of them, or the batch size in
    a CUDA graph config mapping; None for anything else (booleans included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, list | tuple):
        ints = [v for v in (flag_int(x) for x in value) if v is not None]
        return max(ints) if ints else None
    if isinstance(value, Mapping):
        for name in _NESTED_BATCH_SIZES:
            found = flag_int(value.get(name))
            if found is not None:
                return found
    return None


def switch_on(value: Any) -> bool:
    """A boolean switch (`enable-expert-parallel`): on when true, or given without a value."""
    if value is None:
        return False
    if isinstance(value, str):
        return value.strip().lower() in _ON_WORDS
    return bool(value)


def enables(value: Any) -> bool:
    """A valued flag (`speculative-algorithm: EAGLE`, a speculative config) turns its feature
    on unless its value is empty or a word for off."""
    if isinstance(value, str):
        return value.strip().lower() not in _OFF_WORDS
    return bool(value)


@dataclass(frozen=True)
class FlagHit:
    """A flag found in the map: the key as written, its canonical name, its value."""

    written: str
    name: str
    value: Any


@functools.lru_cache(maxsize=4096)
def _known_with_prefix(engine: str, prefix: str) -> int:
    """How many of the engine's known flags start with `prefix` (abbreviation lookups repeat
    the same few prefixes thousands of times on a real tree)."""
    return sum(1 for flag in KNOWN_FLAGS.get(engine, frozenset()) if flag.startswith(prefix))


@dataclass(frozen=True)
class EngineFlags:
    """A read-only engine flag map (one of prefill / decode / aggregated)."""

    engine: str
    flags: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        canon: dict[str, str] = {}
        aliases = ALIASES.get(self.engine, {})
        for written in self.flags:
            name = normalize_flag(str(written))
            canon.setdefault(aliases.get(name, name), str(written))
        object.__setattr__(self, "_canon", canon)
        # find's answers: the rules ask each map for the same few dozen names many times
        object.__setattr__(self, "_found", {})

    def find(self, name: str) -> FlagHit | None:
        """The flag `name` (full name, any spelling), or a unique abbreviation of it."""
        found: dict[str, FlagHit | None] = self.__dict__["_found"]
        if name in found:
            return found[name]
        hit = found[name] = self._find(name)
        return hit

    def _find(self, name: str) -> FlagHit | None:
        canon: dict[str, str] = self.__dict__["_canon"]
        wanted = normalize_flag(name)
        wanted = ALIASES.get(self.engine, {}).get(wanted, wanted)
        written = canon.get(wanted)
        if written is None:
            written = self._abbreviation(wanted, canon)
        if written is None:
            return None
        return FlagHit(written, wanted, self.flags[written])

    def first(self, names: Iterable[str]) -> FlagHit | None:
        """The first of `names` that is given a value (not null)."""
        for name in names:
            hit = self.find(name)
            if hit is not None and hit.value is not None:
                return hit
        return None

    def limit(self, limit: Limit) -> FlagHit | None:
        """The flag that sets `limit` for this engine, when one is given."""
        return self.first(LIMIT_FLAGS.get(self.engine, {}).get(limit, ()))

    def get(self, name: str, default: Any = None) -> Any:
        hit = self.find(name)
        return default if hit is None else hit.value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.flags)

    def __len__(self) -> int:
        return len(self.flags)

    def _abbreviation(self, wanted: str, canon: dict[str, str]) -> str | None:
        known = KNOWN_FLAGS.get(self.engine, frozenset())
        extra = 0 if wanted in known else 1  # `wanted` itself is one flag with the prefix
        hits = [
            written
            for name, written in canon.items()
            if len(name) >= _MIN_PREFIX
            and wanted.startswith(name)
            and name != wanted
            and name not in known
            and _known_with_prefix(self.engine, name) + extra == 1
        ]
        return hits[0] if len(hits) == 1 else None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.flags)
