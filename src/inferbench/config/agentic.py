"""Conventions of agentic-coding jobs that several stages share (sim, launch, results)."""

from __future__ import annotations

# An agentic job names no max-model-len (it has no isl/osl); InferenceX's launchers serve the
# model's long context and the traces are capped at 256k or 1M tokens. inferbench serves
# 131,072 tokens unless the job says otherwise; longer trace requests meet the context rule.
AGENTIC_MAX_MODEL_LEN = 131072
SCENARIO = "agentic-coding"
