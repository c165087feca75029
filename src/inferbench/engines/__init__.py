"""Everything inferbench knows about each serving engine, one module per engine.

`registry` lists them (`vllm`, `sglang`, `trtllm`, `atom`, `sim`); each module's `SPEC`
(`spec.EngineSpec`) holds the engine's aliases, flag names, aliases and limits, how its flags
describe a worker's layout, its server command line and KV-offload flags, the simulator's
flag map, its cache metric names, its environment prefixes and its release images. A new
engine is one module plus its entry in `registry.ENGINES`.

This package imports nothing of inferbench but `core` and `errors`, so every stage can ask it.
"""

from __future__ import annotations

from inferbench.engines.registry import (
    ENGINES,
    engine,
    env_prefixes,
    find_engine,
    flag_engines,
    serving_engine,
)
from inferbench.engines.server import EngineArgs, Offload, ServerCommand
from inferbench.engines.spec import CacheMetricNames, CacheTiers, EngineSpec, Limit

__all__ = [
    "ENGINES",
    "CacheMetricNames",
    "CacheTiers",
    "EngineArgs",
    "EngineSpec",
    "Limit",
    "Offload",
    "ServerCommand",
    "engine",
    "env_prefixes",
    "find_engine",
    "flag_engines",
    "serving_engine",
]
