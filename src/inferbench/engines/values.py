"""How an engine flag's value is read, whatever the engine: ints, switches, enabling values.

The spellings of flag names (`--Max_Model_Len` -> `max-model-len`) are one rule too."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

# a flag map's lookup: the value of a flag by its full name (None: not given)
FlagGetter = Callable[[str], Any]

# Batch-size keys inside a mapping-valued CUDA graph flag (vLLM compilation-config, TRT-LLM
# cuda_graph_config), in lookup order.
_NESTED_BATCH_SIZES = ("max_cudagraph_capture_size", "cudagraph_capture_sizes", "max_batch_size",
                       "batch_sizes")  # fmt: skip
_OFF_WORDS = frozenset({"", "false", "0", "no", "none", "off"})
_ON_WORDS = frozenset({"true", "1", "yes", "on", ""})


def normalize_flag(name: str) -> str:
    """`--Max_Model_Len` -> `max-model-len`."""
    return name.strip().lstrip("-").replace("_", "-").lower()


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


def count_flag(value: Any, default: int = 1) -> int:
    """A parallel size from a flag value; `default` when absent or not a number."""
    if value is None or isinstance(value, bool):
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


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
