"""Serving engines as the simulator costs them: each engine's `SimProfile` (its module under
`inferbench.engines`), by the framework or backend type a job names."""

from __future__ import annotations

from collections.abc import Mapping

from inferbench.core.errors import InputError
from inferbench.engines.registry import engines, find_engine, sim_costing
from inferbench.engines.simprofile import SimProfile


def engine_profiles() -> Mapping[str, SimProfile]:
    """Every registered engine that has a simulator profile, by key."""
    return {s.key: s.sim_profile for s in engines() if s.sim_profile is not None}


def engine_profile(name: str) -> SimProfile:
    """The profile of the engine a framework name (`sglang`, `dynamo-trt`, `vllm`, ...) runs."""
    spec = find_engine(name)
    if spec is not None and spec.sim_profile is not None:
        return spec.sim_profile
    raise InputError(
        f"unknown engine {name!r}" if spec is None else f"{spec.display} has no simulator profile",
        hint=f"use one of {', '.join(sorted(engine_profiles()))} (or a Dynamo front of one)",
    )


def costing_engine(name: str) -> tuple[str, str | None]:
    """The key of the engine whose profile costs what `name` runs, and the sentence saying so
    when that is another engine (no profile of its own, or no engine inferbench knows)."""
    spec, stand_in = sim_costing(name)
    return spec.key, stand_in
