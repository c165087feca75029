"""Upper bounds of the numbers a user gives: far above any real benchmark, far below what
would run a machine out of memory or overflow an engine's 32-bit flag.

Each bound is stated in the help of the options it limits and in docs/bench.md.
"""

from __future__ import annotations

from inferbench.core.concurrency import MAX_CONCURRENCY

MAX_PROMPTS = 1_000_000  # requests of one point (a million prompts: hours of load)
MAX_TOKENS = 10_000_000  # tokens of one request's input or output (10x any context window)
MAX_SESSIONS = 100_000  # agentic sessions of one trace set (synth: ~12 turns each)
MAX_TURNS = 10_000_000  # turns of one synthetic trace set (sessions x mean turns)
MAX_WORKERS = 1024  # client processes of one bench
MAX_ENGINE_INT = 2**31 - 1  # a parallelism or count handed to an engine's int flag
MAX_DURATION_S = 7 * 86_400.0  # seconds of one point (a week; InferenceX's agentic: 3600)
MAX_SEED = 2**63 - 1  # a seed is 0 ..; numpy's generators and a JSON int both take it

__all__ = [
    "MAX_CONCURRENCY",
    "MAX_DURATION_S",
    "MAX_ENGINE_INT",
    "MAX_PROMPTS",
    "MAX_SEED",
    "MAX_SESSIONS",
    "MAX_TOKENS",
    "MAX_TURNS",
    "MAX_WORKERS",
]
