"""The max-model-len convention: what a server must hold for one fixed-seq-len request."""

from __future__ import annotations

# InferenceX's generator sets `max-model-len` = isl + osl + 256 (headroom for the chat
# template and special tokens); launchers, checks and synthetic runs all use the same margin.
MAX_MODEL_LEN_MARGIN = 256


def max_model_len(isl: int, osl: int) -> int:
    """isl + osl + MAX_MODEL_LEN_MARGIN."""
    return isl + osl + MAX_MODEL_LEN_MARGIN
