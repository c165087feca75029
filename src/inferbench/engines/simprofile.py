"""How the simulator costs one engine: its memory rule, its overheads before calibration, its
prefill and admission defaults, each with its source (`docs/simulator.md`).

memory: how the engine's memory flag is read.
  total            -> KV pool = HBM x fraction - weights - activation_reserve_gb
  after_weights    -> KV pool = (HBM - weights - activation_reserve_gb) x fraction
The overheads are starting values only: a calibration file's fit replaces them
(`inferbench sim calibrate`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from inferbench.core.model import FrozenModel
from inferbench.engines.values import FlagGetter, flag_int, switch_on


class KvAdmission(FrozenModel):
    """The constants of SGLang's KV admission (SGLANG_* environment defaults): a request is
    admitted only while the free KV holds its prompt, its output and a share of what every
    running request may still generate (`inferbench.sim.admission`)."""

    init_ratio: float = Field(0.7, gt=0, le=1)  # SGLANG_INIT_NEW_TOKEN_RATIO
    min_ratio_factor: float = Field(0.14, gt=0, le=1)  # SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR
    decay_steps: int = Field(600, ge=1)  # SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS
    clip_tokens: int = Field(4096, ge=1)  # SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION
    retract_steps: int = Field(20, ge=0)  # SGLANG_RETRACT_DECODE_STEPS


class SimProfile(FrozenModel):
    """One engine as the simulator costs it."""

    memory: Literal["total", "after_weights"]
    memory_flag: str  # the flag that sets the fraction, in the engine's own spelling
    default_memory_fraction: float = Field(gt=0, le=1)
    activation_reserve_gb: float = Field(ge=0)
    step_overhead_s: float = Field(ge=0)
    layer_overhead_s: float = Field(ge=0)
    # the engine's default: without it a prompt is prefilled in one step and waits until the
    # step's token budget holds all of it
    chunked_prefill: bool = True
    kv_admission: KvAdmission | None = None  # SGLang's reservation; None: blocks for the chunk
    sources: dict[str, str]  # field (or topic) -> where the value comes from


@dataclass(frozen=True)
class DraftFlags:
    """The speculative decoding an engine's flags turn on, as the simulator costs it."""

    method: str  # lower case: `mtp`, `eagle`, `draft_model`
    drafts: int | None  # draft tokens per step (None: not written)


@dataclass(frozen=True)
class SimReaders:
    """What the simulator reads from an engine's flags beyond its layout and `sim_flags`."""

    speculation: Callable[[FlagGetter], DraftFlags | None]  # None: no speculative decoding
    # physical expert slots per MoE layer of a model of `experts` experts when the flags turn
    # on expert-parallel load balancing (EPLB), else 0
    expert_slots: Callable[[FlagGetter, int], int]
    # flag -> what the simulator leaves out when the flag turns it on (a `-size` flag: above 1)
    unmodelled: dict[str, str]


def as_mapping(value: Any) -> Mapping[str, Any] | None:
    """A mapping-valued flag (a JSON string or a YAML mapping); None for anything else."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, Mapping) else None


def key_of(mapping: Mapping[str, Any], name: str) -> Any:
    """`name` (snake case) in a mapping whose keys may be kebab or snake case, any case."""
    for key, value in mapping.items():
        if str(key).replace("-", "_").lower() == name:
            return value
    return None


def speculative_config(get: FlagGetter) -> DraftFlags | None:
    """A `speculative-config` mapping (vLLM's JSON, TRT-LLM's YAML): `method` or TRT-LLM's
    `decoding_type`, and the draft tokens under any of their names."""
    config = as_mapping(get("speculative-config"))
    if not config:
        return None
    method = key_of(config, "method") or key_of(config, "decoding_type") or "draft_model"
    drafts = flag_int(
        key_of(config, "num_speculative_tokens")
        or key_of(config, "num_nextn_predict_layers")
        or key_of(config, "max_draft_len")
    )
    return DraftFlags(str(method).lower(), drafts)


def eplb_slots(get: FlagGetter, experts: int) -> int:
    """vLLM-style EPLB: `enable-eplb` with `num-redundant-experts` (or `eplb-config`'s
    `num_redundant_experts`) extra slots per layer."""
    if not switch_on(get("enable-eplb")):
        return 0
    config = as_mapping(get("eplb-config")) or {}
    extra = flag_int(get("num-redundant-experts") or key_of(config, "num_redundant_experts"))
    return experts + (extra or 0)
