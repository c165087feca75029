"""What a job asks of the engine beyond layout and limits: speculative decoding, and the
flags the simulator does not model (each becomes a warning in the output and result file).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from inferbench.catalog.schema import ModelSpec
from inferbench.engines.values import flag_int, switch_on
from inferbench.errors import InputError
from inferbench.sim.perf import Speculation

# Acceptance rate of one draft token when the job does not give one: DeepSeek-V3 Technical
# Report (arXiv:2412.19437), section 5.4.3: "the acceptance rate of the second token
# prediction ranges between 85% and 90%"; we take the low end, since sa-bench's random
# prompts are harder to draft than the report's evaluation prompts.
DEFAULT_ACCEPTANCE = 0.85
# Draft tokens when a job says only `spec-decoding: mtp` (InferenceX's MTP points run one).
DEFAULT_DRAFT_TOKENS = 1
_COSTED_METHODS = frozenset({"mtp", "nextn", "eagle", "eagle3", "deepseek_mtp", "qwen3_next_mtp"})

# flag -> what the simulator leaves out when the flag turns it on (per engine's spelling)
_UNMODELLED: Mapping[str, str] = {
    "enable-eplb": "expert-parallel load balancing (EPLB): expert imbalance stays at the default",
    "enable-two-batch-overlap": "two-batch overlap: communication is not hidden behind compute",
    "enable-dp-lm-head": "a DP-sharded LM head",
    "decode-context-parallel-size": "decode context parallelism",
    "prefill-context-parallel-size": "prefill context parallelism",
    "enable-single-batch-overlap": "single-batch overlap",
}

FlagGetter = Callable[[str], Any]


def _as_mapping(value: Any) -> Mapping[str, Any] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, Mapping) else None


def _key(mapping: Mapping[str, Any], name: str) -> Any:
    for key, value in mapping.items():
        if str(key).replace("-", "_").lower() == name:
            return value
    return None


def speculation_from_flags(
    engine: str, get: FlagGetter, model: ModelSpec, acceptance: float | None
) -> tuple[Speculation | None, list[str]]:
    """The speculative decoding an engine's flags turn on, and warnings about its costing."""
    method: str | None = None
    drafts: int | None = None
    if engine == "sglang":
        algo = get("speculative-algorithm")
        if algo:
            method = str(algo).lower()
            steps = flag_int(get("speculative-num-steps"))
            tokens = flag_int(get("speculative-num-draft-tokens"))
            drafts = steps or (tokens - 1 if tokens and tokens > 1 else None)
    else:
        config = _as_mapping(get("speculative-config"))
        if config:
            method = str(
                _key(config, "method") or _key(config, "decoding_type") or "draft_model"
            ).lower()
            drafts = flag_int(
                _key(config, "num_speculative_tokens")
                or _key(config, "num_nextn_predict_layers")
                or _key(config, "max_draft_len")
            )
    if method is None:
        return None, []
    return _speculation(method, drafts, model, acceptance)


def speculation_from_job(
    value: Any, model: ModelSpec, drafts: int | None, acceptance: float | None
) -> tuple[Speculation | None, list[str]]:
    """A sweep job's `spec-decoding` (`none`, `mtp`, ...) as a Speculation."""
    if value is None or str(value).lower() in ("", "none", "false"):
        if drafts:
            return _speculation("mtp", drafts, model, acceptance)
        return None, []
    return _speculation(str(value).lower(), drafts, model, acceptance)


def _speculation(
    method: str, drafts: int | None, model: ModelSpec, acceptance: float | None
) -> tuple[Speculation, list[str]]:
    warnings: list[str] = []
    k = drafts or DEFAULT_DRAFT_TOKENS
    if acceptance is None:
        acceptance = DEFAULT_ACCEPTANCE
        warnings.append(
            f"speculative decoding ({method}, {k} draft token(s)): acceptance rate not given, "
            f"assumed {DEFAULT_ACCEPTANCE} per draft token (pass --spec-acceptance)"
        )
    if method not in _COSTED_METHODS:
        warnings.append(
            f"speculative method {method!r} is costed as a one-layer draft head (MTP/EAGLE); "
            "a separate draft model's own cost is not modelled"
        )
    if not 0 <= acceptance <= 1:
        raise InputError(f"spec acceptance must be in [0, 1], got {acceptance}")
    spec = Speculation(
        draft_tokens=k, acceptance=acceptance, draft_layers=max(model.mtp_layers, 1), method=method
    )
    return spec, warnings


def unmodelled_flags(get: FlagGetter) -> list[str]:
    """Warnings for flags that turn on something the simulator does not model."""
    out: list[str] = []
    for flag, what in _UNMODELLED.items():
        value = get(flag)
        if value is None:
            continue
        on = (flag_int(value) or 0) > 1 if flag.endswith("-size") else switch_on(value)
        if on:
            out.append(f"--{flag} is set but not modelled: {what}")
    return out
