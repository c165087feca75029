"""What a job asks of the engine beyond layout and limits: speculative decoding, and the
flags the simulator does not model (each becomes a warning in the output and result file).
Each engine's module reads its own flags (`EngineSpec.sim_readers`); this costs what they say.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inferbench.catalog.schema import ModelSpec
from inferbench.core.errors import InputError
from inferbench.engines.registry import find_engine
from inferbench.engines.simprofile import SimReaders
from inferbench.engines.values import FlagGetter, flag_int, switch_on
from inferbench.sim.perf import Speculation

# Acceptance of the first draft token when the job does not give one: DeepSeek-V3 Technical
# Report (arXiv:2412.19437), section 5.4.3: "the acceptance rate of the second token
# prediction ranges between 85% and 90%"; we take the low end, since sa-bench's random
# prompts are harder to draft than the report's evaluation prompts.
DEFAULT_ACCEPTANCE = 0.85
# Each later draft position is accepted less often: DeepSeek's MTP module is trained for the
# next token and reused autoregressively for the later ones. The decay is the one that gives
# the mean accepted length published for the original DeepSeek-V3 MTP module at 7 draft
# tokens: 3.09 tokens per step at temperature 1 (3.20 at temperature 0; nebius/MTP-DeepSeek-V3-0324
# model card, "Original MTP" row, after Samarin et al., "LK Losses: Direct Acceptance Rate
# Optimization for Speculative Decoding", 2026): 0.85 x 0.84^(i-1) per position i gives
# 3.08. Conditional acceptance by position: 0.85, 0.71, 0.60, 0.50, ...; 1 draft token
# yields 1.85 tokens per step (as before), 3 yield 2.78 (a constant 0.85 gave 3.19).
DEFAULT_ACCEPTANCE_DECAY = 0.84
# Draft tokens when a job says only `spec-decoding: mtp` (InferenceX's MTP points run one).
DEFAULT_DRAFT_TOKENS = 1
_COSTED_METHODS = frozenset({"mtp", "nextn", "eagle", "eagle3", "deepseek_mtp", "qwen3_next_mtp"})


def _readers(engine: str) -> SimReaders:
    spec = find_engine(engine)
    if spec is None or spec.sim_readers is None:
        raise InputError(f"no flags of engine {engine!r} are known to the simulator")
    return spec.sim_readers


def speculation_from_flags(
    engine: str, get: FlagGetter, model: ModelSpec, acceptance: Acceptance
) -> tuple[Speculation | None, list[str]]:
    """The speculative decoding an engine's flags turn on, and warnings about its costing."""
    drafting = _readers(engine).speculation(get)
    if drafting is None:
        return None, []
    return _speculation(drafting.method, drafting.drafts, model, acceptance)


def speculation_from_job(
    value: Any, model: ModelSpec, drafts: int | None, acceptance: Acceptance
) -> tuple[Speculation | None, list[str]]:
    """A sweep job's `spec-decoding` (`none`, `mtp`, ...) as a Speculation."""
    if value is None or str(value).lower() in ("", "none", "false"):
        if drafts:
            return _speculation("mtp", drafts, model, acceptance)
        return None, []
    return _speculation(str(value).lower(), drafts, model, acceptance)


Acceptance = float | Sequence[float] | None


def _speculation(
    method: str, drafts: int | None, model: ModelSpec, acceptance: Acceptance
) -> tuple[Speculation, list[str]]:
    """`acceptance`: one rate for every position (constant), one per position, or None for
    the default curve (DEFAULT_ACCEPTANCE decaying by DEFAULT_ACCEPTANCE_DECAY)."""
    warnings: list[str] = []
    k = drafts or DEFAULT_DRAFT_TOKENS
    rates: tuple[float, ...] = ()
    decay = 1.0
    if acceptance is None:
        first, decay = DEFAULT_ACCEPTANCE, DEFAULT_ACCEPTANCE_DECAY
        curve = ", ".join(f"{first * decay**i:.2f}" for i in range(k))
        warnings.append(
            f"speculative decoding ({method}, {k} draft token(s)): acceptance rate not given, "
            f"assumed the default curve {curve} by draft position (pass --spec-acceptance or "
            "a job's spec-acceptance)"
        )
    elif isinstance(acceptance, int | float):
        first = float(acceptance)
    else:
        rates = tuple(float(a) for a in acceptance)
        if not rates:
            raise InputError("spec acceptance by position needs at least one rate")
        first = rates[0]
    if method not in _COSTED_METHODS:
        warnings.append(
            f"speculative method {method!r} is costed as a one-layer draft head (MTP/EAGLE); "
            "a separate draft model's own cost is not modelled"
        )
    for rate in rates or (first,):
        if not 0 <= rate <= 1:
            raise InputError(f"spec acceptance must be in [0, 1], got {rate}")
    spec = Speculation(
        draft_tokens=k,
        acceptance=first,
        acceptance_decay=decay,
        acceptances=rates,
        draft_layers=max(model.mtp_layers, 1),
        method=method,
    )
    return spec, warnings


def expert_slots_from_flags(engine: str, get: FlagGetter, model: ModelSpec) -> int:
    """Physical expert slots per MoE layer when the flags turn on expert-parallel load
    balancing (EPLB), else 0 (each engine's own spelling: its `SimReaders`)."""
    return _readers(engine).expert_slots(get, model.experts) if model.is_moe else 0


def unmodelled_flags(engine: str, get: FlagGetter) -> list[str]:
    """Warnings for flags that turn on something the simulator does not model."""
    out: list[str] = []
    for flag, what in _readers(engine).unmodelled.items():
        value = get(flag)
        if value is None:
            continue
        on = (flag_int(value) or 0) > 1 if flag.endswith("-size") else switch_on(value)
        if on:
            out.append(f"--{flag} is set but not modelled: {what}")
    return out
