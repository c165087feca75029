"""Everything inferbench knows about each serving engine, one module per engine.

`registry` lists them (`vllm`, `sglang`, `trtllm`, `atom`, `sim`); each module's `SPEC`
(`spec.EngineSpec`) holds the engine's aliases, flag names, aliases and limits, how its flags
describe a worker's layout, its server command line and KV-offload flags, how a benchmark
script starts it (the tree-script stubs), the simulator's profile, flag map and flag readers,
its cache metric names, its environment prefixes and its release images. A new engine is one
module plus its entry in `registry.BUILTIN`, or a module of another package named by an
`inferbench.engines` entry point (or passed to `registry.register`). `choice.Engine` is the
engine a plan serves with: one of the registry's keys.

This package imports nothing of inferbench but `core`, so every stage can ask it.
"""

from __future__ import annotations

from inferbench.engines.choice import Engine
from inferbench.engines.registry import (
    engine,
    engines,
    env_prefixes,
    find_engine,
    flag_engines,
    register,
    serving_engine,
)
from inferbench.engines.server import EngineArgs, Offload, ServerCommand
from inferbench.engines.simprofile import DraftFlags, SimProfile, SimReaders
from inferbench.engines.spec import CacheMetricNames, CacheTiers, EngineSpec, Limit, ScriptNames

__all__ = [
    "CacheMetricNames",
    "CacheTiers",
    "DraftFlags",
    "Engine",
    "EngineArgs",
    "EngineSpec",
    "Limit",
    "Offload",
    "ScriptNames",
    "ServerCommand",
    "SimProfile",
    "SimReaders",
    "engine",
    "engines",
    "env_prefixes",
    "find_engine",
    "flag_engines",
    "register",
    "serving_engine",
]
