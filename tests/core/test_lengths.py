"""max-model-len and fingerprint conventions: one definition each, used by every stage."""

from __future__ import annotations

from inferbench.core.job import short_fingerprint
from inferbench.core.lengths import (
    AGENTIC_MAX_MODEL_LEN,
    max_model_len,
    served_max_model_len,
)


def test_a_job_s_own_max_model_len_wins() -> None:
    assert served_max_model_len(4096, 1024, 1024) == 4096
    assert served_max_model_len(65536, None, None) == 65536


def test_fixed_seq_len_falls_back_to_inferencex_s_margin() -> None:
    assert served_max_model_len(None, 1024, 8192) == 1024 + 8192 + 256
    assert served_max_model_len(0, 1000, 1000) == max_model_len(1000, 1000) == 2256


def test_an_agentic_job_without_lengths_serves_the_long_context() -> None:
    assert served_max_model_len(None, None, None) == AGENTIC_MAX_MODEL_LEN == 131072
    assert served_max_model_len(None, 0, 0) == AGENTIC_MAX_MODEL_LEN  # a Deployment's 0s


def test_short_fingerprint_is_twelve_hex_digits() -> None:
    assert short_fingerprint("0123456789abcdef" * 4) == "0123456789ab"
