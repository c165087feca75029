"""Engine flag maps of a recipe (`vllm_config.decode: {...}`), looked up as the engine would.

Engines parse their flags with argparse, which accepts a unique prefix of a long
flag (`--speculative-algo` for `--speculative-algorithm`) and, in YAML configs,
both `max-model-len` and `max_model_len`. `EngineFlags.get` applies the same
rules, so a check asks for the full flag name and finds the abbreviated one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
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

_MIN_PREFIX = 3


def normalize_flag(name: str) -> str:
    """`--Max_Model_Len` -> `max-model-len`."""
    return name.strip().lstrip("-").replace("_", "-").lower()


@dataclass(frozen=True)
class FlagHit:
    """A flag found in the map: the key as written, its canonical name, its value."""

    written: str
    name: str
    value: Any


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

    def find(self, name: str) -> FlagHit | None:
        """The flag `name` (full name, any spelling), or a unique abbreviation of it."""
        canon: dict[str, str] = self.__dict__["_canon"]
        wanted = normalize_flag(name)
        wanted = ALIASES.get(self.engine, {}).get(wanted, wanted)
        written = canon.get(wanted)
        if written is None:
            written = self._abbreviation(wanted, canon)
        if written is None:
            return None
        return FlagHit(written, wanted, self.flags[written])

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
        known = KNOWN_FLAGS.get(self.engine, frozenset()) | {wanted}
        hits = [
            written
            for name, written in canon.items()
            if len(name) >= _MIN_PREFIX
            and wanted.startswith(name)
            and name not in known
            and sum(1 for flag in known if flag.startswith(name)) == 1
        ]
        return hits[0] if len(hits) == 1 else None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.flags)
