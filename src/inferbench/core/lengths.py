"""The max-model-len convention: what a server must hold for one job's requests."""

from __future__ import annotations

# InferenceX's generator sets `max-model-len` = isl + osl + 256 (headroom for the chat
# template and special tokens); launchers, checks and synthetic runs all use the same margin.
MAX_MODEL_LEN_MARGIN = 256
# An agentic job names no max-model-len (it has no isl/osl); InferenceX's launchers serve the
# model's long context and the traces are capped at 256k or 1M tokens. inferbench serves
# 131,072 tokens unless the job says otherwise; longer trace requests meet the context rule.
AGENTIC_MAX_MODEL_LEN = 131072


def max_model_len(isl: int, osl: int) -> int:
    """isl + osl + MAX_MODEL_LEN_MARGIN."""
    return isl + osl + MAX_MODEL_LEN_MARGIN


def served_max_model_len(given: int | None, isl: int | None, osl: int | None) -> int:
    """The max-model-len a job's server is started with: the job's own; else, for a
    fixed-seq-len job, isl + osl + the margin; else (an agentic job, without lengths)
    AGENTIC_MAX_MODEL_LEN."""
    if given:
        return given
    if isl and osl:
        return max_model_len(isl, osl)
    return AGENTIC_MAX_MODEL_LEN
